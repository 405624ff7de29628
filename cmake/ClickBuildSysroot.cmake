# ClickBuildSysroot.cmake: the body of the CMake toolchain file of a root made by
# `click-build sysroot create`.  `click-build sysroot toolchain` writes a file that sets
# the variables below and then holds this text, so the file works on its own (and
# keeps working if this click-build is removed).
#
#   CLICK_SYSROOT              the root (the phone's libraries and headers)
#   CLICK_SYSROOT_PROCESSOR    CMAKE_SYSTEM_PROCESSOR (aarch64, armv7l)
#   CLICK_SYSROOT_TRIPLET      multiarch triplet (aarch64-linux-gnu)
#   CLICK_SYSROOT_COMPILER     gcc (the cross gcc links the root's glibc) or clang
#                              (the root's glibc is not the cross gcc's: clang + lld
#                              use the root's alone)
#   CLICK_SYSROOT_QT_BIN       where moc, rcc, uic... that run here are: the build
#                              machine's when its Qt is the root's, else wrappers that
#                              run the root's own through qemu
#   CLICK_SYSROOT_EMULATOR     how to run the root's programs here (qemu-ARCH-static
#                              -L ROOT with Qt's plugin and QML folders), or empty
#   CLICK_SYSROOT_CMAKE_DIR    ClickBuild's folder (find_package(ClickBuild) finds it)
#   CLICK_SYSROOT_LABEL        how messages name the root (debian-12 arm64 (approximate:
#                              ...)): ClickBuild says it when it configures

set(CMAKE_SYSTEM_NAME Linux)
set(CMAKE_SYSTEM_PROCESSOR "${CLICK_SYSROOT_PROCESSOR}")
set(CMAKE_LIBRARY_ARCHITECTURE "${CLICK_SYSROOT_TRIPLET}")
set(CMAKE_SYSROOT "${CLICK_SYSROOT}")

# Libraries, headers and CMake packages come from the root only; programs from here.
# ClickBuild's folder is a second root: with CMAKE_FIND_ROOT_PATH_MODE_PACKAGE ONLY,
# CMake re-roots every CMAKE_PREFIX_PATH entry under the roots, and a prefix inside
# one of them is kept as it is, so CMAKE_PREFIX_PATH="$(click-build --cmake-dir)"
# still finds ClickBuild (it would look for it inside the phone's root otherwise).
set(CMAKE_FIND_ROOT_PATH "${CLICK_SYSROOT}")
if(CLICK_SYSROOT_CMAKE_DIR)
  list(APPEND CMAKE_FIND_ROOT_PATH "${CLICK_SYSROOT_CMAKE_DIR}")
  if(NOT DEFINED ClickBuild_DIR AND EXISTS "${CLICK_SYSROOT_CMAKE_DIR}/ClickBuildConfig.cmake")
    set(ClickBuild_DIR "${CLICK_SYSROOT_CMAKE_DIR}" CACHE PATH
        "ClickBuild's folder (from the sysroot's toolchain file)")
  endif()
endif()
set(CMAKE_FIND_ROOT_PATH_MODE_PROGRAM NEVER)
set(CMAKE_FIND_ROOT_PATH_MODE_LIBRARY ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_INCLUDE ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_PACKAGE ONLY)

if(CLICK_SYSROOT_COMPILER STREQUAL "clang")
  set(CMAKE_C_COMPILER clang)
  set(CMAKE_CXX_COMPILER clang++)
  set(CMAKE_C_COMPILER_TARGET "${CLICK_SYSROOT_TRIPLET}")
  set(CMAKE_CXX_COMPILER_TARGET "${CLICK_SYSROOT_TRIPLET}")
  # --as-needed: lld would otherwise record every library named on the command line,
  # some of which (libQt5QmlModels) an older Qt on the phone does not have.
  foreach(kind EXE SHARED MODULE)
    set(CMAKE_${kind}_LINKER_FLAGS_INIT "-fuse-ld=lld -Wl,--as-needed")
  endforeach()
else()
  set(CMAKE_C_COMPILER "${CLICK_SYSROOT_TRIPLET}-gcc")
  set(CMAKE_CXX_COMPILER "${CLICK_SYSROOT_TRIPLET}-g++")
endif()

# pkg-config looks in the root only, and gives paths inside it.
set(ENV{PKG_CONFIG_SYSROOT_DIR} "${CLICK_SYSROOT}")
set(ENV{PKG_CONFIG_LIBDIR} "${CLICK_SYSROOT}/usr/lib/${CLICK_SYSROOT_TRIPLET}/pkgconfig:${CLICK_SYSROOT}/usr/lib/pkgconfig:${CLICK_SYSROOT}/usr/share/pkgconfig")
set(ENV{PKG_CONFIG_PATH} "")

# ctest and add_custom_command(COMMAND <target>) run the root's programs through qemu.
if(CLICK_SYSROOT_EMULATOR)
  set(CMAKE_CROSSCOMPILING_EMULATOR ${CLICK_SYSROOT_EMULATOR})
endif()

# Qt's code generators run here: Qt5's CMake files make Qt5::moc and friends only
# when no such target exists, so these win over the root's (which are ARM programs).
foreach(_click_tool qmake moc rcc uic qmlcachegen qmlimportscanner)
  if(EXISTS "${CLICK_SYSROOT_QT_BIN}/${_click_tool}" AND NOT TARGET Qt5::${_click_tool})
    add_executable(Qt5::${_click_tool} IMPORTED GLOBAL)
    set_target_properties(Qt5::${_click_tool} PROPERTIES
      IMPORTED_LOCATION "${CLICK_SYSROOT_QT_BIN}/${_click_tool}")
  endif()
endforeach()
unset(_click_tool)
