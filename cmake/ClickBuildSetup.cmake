# ClickBuildSetup.cmake: what ClickBuild works out when it is loaded.
#
# Included by ClickBuild.cmake.  Finds the Python that runs click_build (and
# checks it is this release), fills CLICK_ARCH, CLICK_ARCH_TRIPLET,
# CLICK_FRAMEWORK, CLICK_APPARMOR_POLICY and the CLICK_INSTALL_* variables in the
# order ClickBuildConfig.cmake documents, and holds the helpers the click_*
# functions share.

# Debian architectures and their multiarch triplets, index for index.
# (Cache entries, so that functions see them from any directory.)
set(_CLICK_ARCHES amd64 arm64 armhf armel i386 ppc64el s390x riscv64 mips64el
  CACHE INTERNAL "")
set(_CLICK_TRIPLETS
  x86_64-linux-gnu aarch64-linux-gnu arm-linux-gnueabihf arm-linux-gnueabi
  i386-linux-gnu powerpc64le-linux-gnu s390x-linux-gnu riscv64-linux-gnu
  mips64el-linux-gnuabi64 CACHE INTERNAL "")

# ---------------------------------------------------------------- helpers --

# Report a setup problem: fatal, except for an optional find_package(), which
# then just says "not found" with this message.
function(_click_build_fail message)
  if(_CLICK_BUILD_VIA_FIND_PACKAGE AND NOT ClickBuild_FIND_REQUIRED)
    set_property(GLOBAL PROPERTY _CLICK_BUILD_NOT_FOUND_MESSAGE "${message}")
    if(NOT ClickBuild_FIND_QUIETLY)
      message(STATUS "ClickBuild not usable: ${message}")
    endif()
  else()
    message(FATAL_ERROR "${message}")
  endif()
endfunction()

# The value the user chose for VAR (-D or set()), or "" when the value is the
# one ClickBuild computed last time (kept in _VAR_AUTO) or nothing at all.
function(_click_user_value var out)
  set(value "${${var}}")
  if(NOT "${value}" STREQUAL "" AND NOT "${value}" STREQUAL "$CACHE{_${var}_AUTO}")
    set(${out} "${value}" PARENT_SCOPE)
  else()
    set(${out} "" PARENT_SCOPE)
  endif()
endfunction()

# Store a computed value unless the user chose one; remember it as computed.
function(_click_store var value type doc)
  _click_user_value(${var} user)
  if("${user}" STREQUAL "")
    set(${var} "${value}" CACHE ${type} "${doc}" FORCE)
    set(_${var}_AUTO "${value}" CACHE INTERNAL "")
  else()
    unset(_${var}_AUTO CACHE)
  endif()
endfunction()

# A Debian architecture for a Debian name, a processor name or a triplet; "" if unknown.
function(_click_debian_arch name out)
  string(TOLOWER "${name}" n)
  set(arch "")
  if(n IN_LIST _CLICK_ARCHES OR n STREQUAL "all")
    set(arch "${n}")
  elseif(n IN_LIST _CLICK_TRIPLETS)
    list(FIND _CLICK_TRIPLETS "${n}" i)
    list(GET _CLICK_ARCHES ${i} arch)
  elseif(n MATCHES "^(x86_64|amd64|x64)(-|$)")
    set(arch amd64)
  elseif(n MATCHES "^(aarch64|arm64|armv8)")
    set(arch arm64)
  elseif(n MATCHES "^arm.*-gnueabi$")
    set(arch armel)
  elseif(n MATCHES "^arm")
    set(arch armhf)
  elseif(n MATCHES "^(i[3-6]86|x86)(-|$)")
    set(arch i386)
  elseif(n MATCHES "^(ppc64le|powerpc64le|ppc64el)(-|$)")
    set(arch ppc64el)
  elseif(n MATCHES "^(s390x|riscv64|mips64el)(-|$)")
    set(arch "${CMAKE_MATCH_1}")
  endif()
  set(${out} "${arch}" PARENT_SCOPE)
endfunction()

function(_click_triplet_of arch out)
  list(FIND _CLICK_ARCHES "${arch}" i)
  if(i LESS 0)
    set(${out} "" PARENT_SCOPE)
  else()
    list(GET _CLICK_TRIPLETS ${i} triplet)
    set(${out} "${triplet}" PARENT_SCOPE)
  endif()
endfunction()

# TRUE when the project compiles something (a language is enabled) or names a
# target system in a toolchain file.
function(_click_compiles out)
  get_property(languages GLOBAL PROPERTY ENABLED_LANGUAGES)
  list(REMOVE_ITEM languages NONE)
  if(languages OR CMAKE_CROSSCOMPILING)
    set(${out} TRUE PARENT_SCOPE)
  else()
    set(${out} FALSE PARENT_SCOPE)
  endif()
endfunction()

function(_click_run_python out)
  execute_process(
    COMMAND "${Python3_EXECUTABLE}" -m click_build ${ARGN}
    RESULT_VARIABLE rc OUTPUT_VARIABLE stdout ERROR_VARIABLE stderr
    OUTPUT_STRIP_TRAILING_WHITESPACE)
  if(NOT rc EQUAL 0)
    string(STRIP "${stderr}" stderr)
    message(FATAL_ERROR "${stderr}")
  endif()
  if(NOT "${stderr}" STREQUAL "")
    message(WARNING "${stderr}")
  endif()
  set(${out} "${stdout}" PARENT_SCOPE)
endfunction()

# ----------------------------------------------------------------- set-up --

# Consider one interpreter: does it import the click_build of this release?
# A macro, so that it records into the caller's chosen / mismatch / tried.
macro(_click_consider_python python)
  execute_process(
    COMMAND "${python}" -c "import click_build, sys; sys.stdout.write(click_build.__version__)"
    RESULT_VARIABLE _click_rc OUTPUT_VARIABLE _click_version ERROR_VARIABLE _click_err)
  if(_click_rc EQUAL 0 AND _click_version STREQUAL ClickBuild_VERSION)
    set(chosen "${python}")
  elseif(_click_rc EQUAL 0)
    if(mismatch STREQUAL "")
      set(mismatch "${python};${_click_version}")
    endif()
    string(APPEND tried "\n  ${python}: click_build ${_click_version}")
  else()
    string(STRIP "${_click_err}" _click_err)
    string(REGEX REPLACE ".*\n" "" _click_err "${_click_err}")
    string(APPEND tried "\n  ${python}: ${_click_err}")
  endif()
endmacro()

# Choose the Python that runs click_build and check it is the same release:
# -DPython3_EXECUTABLE alone if given; else the interpreter of the click-build
# command on PATH (a venv's, pipx's), then FindPython3's (slower, so second).
function(_click_find_python ok)
  set(${ok} FALSE PARENT_SCOPE)
  set(chosen "")
  set(tried "")
  set(mismatch "")
  if(NOT "${Python3_EXECUTABLE}" STREQUAL "")
    set(how "the Python3_EXECUTABLE you gave")
    _click_consider_python("${Python3_EXECUTABLE}")
  else()
    set(how "any Python")
    find_program(CLICK_BUILD_EXECUTABLE click-build
      DOC "The click-build command; ClickBuild tries the Python it runs with")
    set(shebang_python "")
    if(CLICK_BUILD_EXECUTABLE)
      file(STRINGS "${CLICK_BUILD_EXECUTABLE}" shebang LIMIT_COUNT 1)
      if(shebang MATCHES "^#! *([^ ]+)$")
        set(shebang_python "${CMAKE_MATCH_1}")
      elseif(shebang MATCHES "^#! *[^ ]*/env +([^ ]+)$")
        find_program(shebang_python "${CMAKE_MATCH_1}" NO_CACHE)
      endif()
      if(shebang_python)
        _click_consider_python("${shebang_python}")
      endif()
    else()
      string(APPEND tried "\n  click-build: not found on PATH")
    endif()
    if(NOT chosen)
      find_package(Python3 3.10 COMPONENTS Interpreter QUIET)
      if(NOT Python3_Interpreter_FOUND)
        string(APPEND tried "\n  FindPython3: no Python 3.10 or newer found")
      elseif(NOT Python3_EXECUTABLE STREQUAL shebang_python)
        _click_consider_python("${Python3_EXECUTABLE}")
      endif()
    endif()
  endif()
  if(chosen)
    set(Python3_EXECUTABLE "${chosen}" CACHE FILEPATH "The Python interpreter that runs click_build")
    set(Python3_EXECUTABLE "${chosen}" PARENT_SCOPE)
    set(${ok} TRUE PARENT_SCOPE)
    return()
  endif()

  # click-build is not on PyPI: a Python gets it from a wheel of a checkout.
  get_filename_component(checkout "${CMAKE_CURRENT_FUNCTION_LIST_DIR}" DIRECTORY)
  if(NOT EXISTS "${checkout}/pyproject.toml" OR NOT EXISTS "${checkout}/click_build/__init__.py")
    set(checkout "/path/to/click-build")  # these files come from a wheel, not a checkout
  endif()
  if(mismatch)
    list(GET mismatch 0 python)
    list(GET mismatch 1 version)
    execute_process(COMMAND "${python}" -m click_build --cmake-dir
      OUTPUT_VARIABLE dir OUTPUT_STRIP_TRAILING_WHITESPACE RESULT_VARIABLE rc)
    if(NOT rc EQUAL 0)
      set(dir "$(${python} -m click_build --cmake-dir)")
    endif()
    string(CONCAT message
      "ClickBuild: these CMake files (ClickBuild ${ClickBuild_VERSION}, in "
      "${CMAKE_CURRENT_FUNCTION_LIST_DIR}) belong to another click-build than the "
      "click_build ${version} that ${python} imports.\n"
      "Fix: use the CMake files of that installation, -DClickBuild_DIR=\"${dir}\" "
      "(or include(\"${dir}/ClickBuild.cmake\")), or install this release into that "
      "Python from a wheel of its checkout:\n"
      "  ${python} -m pip wheel -w wheels ${checkout} && ${python} -m pip install "
      "--no-index --find-links wheels click-build==${ClickBuild_VERSION}")
    _click_build_fail("${message}")
    return()
  endif()
  string(CONCAT message
    "ClickBuild: no Python with the click_build module was found (${how} was tried):"
    "${tried}\n"
    "Fix: point CMake at the Python of a virtual environment that has click-build, "
    "-DPython3_EXECUTABLE=/path/to/venv/bin/python (or activate it before running cmake). "
    "To make one, run this and pass -DPython3_EXECUTABLE=$PWD/venv/bin/python "
    "(click-build is not on PyPI; it installs from a wheel of its checkout):\n"
    "  python3 -m venv venv && venv/bin/python -m pip wheel -w wheels ${checkout} && "
    "venv/bin/python -m pip install --no-index --find-links wheels click-build")
  _click_build_fail("${message}")
endfunction()

# CLICK_ARCH and CLICK_ARCH_TRIPLET, in the order the documentation gives.
function(_click_detect_architecture)
  _click_user_value(CLICK_ARCH arch)
  set(from "CLICK_ARCH")
  set(source "you")
  if(arch STREQUAL "" AND NOT "$ENV{ARCH}" STREQUAL "")
    set(arch "$ENV{ARCH}")
    set(from "the ARCH environment variable")
    set(source "environment")
  endif()
  _click_user_value(CLICK_ARCH_TRIPLET triplet)
  # Clickable sets ARCH_TRIPLET to "all" with ARCH=all (QML-only and Python apps): no triplet.
  set(env_triplet "$ENV{ARCH_TRIPLET}")
  if(env_triplet STREQUAL "all")
    set(env_triplet "")
  endif()
  if(triplet STREQUAL "all")
    set(triplet "")
  endif()
  if(triplet STREQUAL "" AND NOT env_triplet STREQUAL "")
    set(triplet "${env_triplet}")
  endif()
  if(arch STREQUAL "" AND triplet STREQUAL "" AND "$ENV{ARCH_TRIPLET}" STREQUAL "all")
    set(arch all)
    set(from "the ARCH_TRIPLET environment variable")
    set(source "environment")
  elseif(arch STREQUAL "" AND triplet STREQUAL "")
    set(source "toolchain")
  elseif(arch STREQUAL "" AND NOT env_triplet STREQUAL "")
    set(from "the ARCH_TRIPLET environment variable")
    set(source "environment")
  endif()

  if(NOT arch STREQUAL "")
    _click_debian_arch("${arch}" debian)
    if(debian STREQUAL "" AND triplet STREQUAL "")
      message(FATAL_ERROR
        "ClickBuild: ${from} is '${arch}', which is not a Debian architecture this "
        "module knows (${_CLICK_ARCHES}). Fix: use one of those, or also give the "
        "multiarch triplet with -DCLICK_ARCH_TRIPLET=...")
    elseif(NOT debian STREQUAL "")
      set(arch "${debian}")
    endif()
  elseif(NOT triplet STREQUAL "")
    _click_debian_arch("${triplet}" arch)
    if(arch STREQUAL "")
      message(FATAL_ERROR
        "ClickBuild: cannot tell the Debian architecture of the triplet '${triplet}'. "
        "Fix: also pass -DCLICK_ARCH=<architecture>")
    endif()
  else()
    _click_compiles(compiles)
    if(NOT compiles)
      set(arch all)
      set(source "nothing compiled")
    elseif(NOT "${CMAKE_LIBRARY_ARCHITECTURE}" STREQUAL "")
      set(triplet "${CMAKE_LIBRARY_ARCHITECTURE}")
      _click_debian_arch("${triplet}" arch)
    endif()
    if(arch STREQUAL "" AND NOT "${CMAKE_SYSTEM_PROCESSOR}" STREQUAL "")
      _click_debian_arch("${CMAKE_SYSTEM_PROCESSOR}" arch)
      if(arch STREQUAL "" AND CMAKE_CROSSCOMPILING)
        message(FATAL_ERROR
          "ClickBuild: the toolchain's CMAKE_SYSTEM_PROCESSOR '${CMAKE_SYSTEM_PROCESSOR}' "
          "is not a processor this module can map to a Debian architecture. "
          "Fix: pass -DCLICK_ARCH=<architecture> -DCLICK_ARCH_TRIPLET=<triplet>")
      endif()
    endif()
    if(arch STREQUAL "")
      find_program(CLICK_DPKG_ARCHITECTURE dpkg-architecture)
      if(CLICK_DPKG_ARCHITECTURE)
        execute_process(COMMAND "${CLICK_DPKG_ARCHITECTURE}" -qDEB_HOST_ARCH
          OUTPUT_VARIABLE arch OUTPUT_STRIP_TRAILING_WHITESPACE ERROR_QUIET)
        execute_process(COMMAND "${CLICK_DPKG_ARCHITECTURE}" -qDEB_HOST_MULTIARCH
          OUTPUT_VARIABLE triplet OUTPUT_STRIP_TRAILING_WHITESPACE ERROR_QUIET)
      endif()
    endif()
    if(arch STREQUAL "")
      message(FATAL_ERROR
        "ClickBuild: cannot tell which Debian architecture this build is for. "
        "Fix: pass -DCLICK_ARCH=<architecture> (amd64, arm64, armhf...)")
    endif()
  endif()
  if(triplet STREQUAL "" AND NOT arch STREQUAL "all")
    _click_triplet_of("${arch}" triplet)
  endif()
  if(arch STREQUAL "all")
    set(triplet "")
  endif()
  if(source STREQUAL "environment")  # say where a value came from: it decides the package
    message(STATUS "ClickBuild: architecture ${arch}, from ${from} (as Clickable sets it)")
  endif()
  _click_store(CLICK_ARCH "${arch}" STRING
    "Debian architecture of the package (amd64, arm64, armhf... or all)")
  _click_store(CLICK_ARCH_TRIPLET "${triplet}" STRING
    "Multiarch triplet of CLICK_ARCH (aarch64-linux-gnu...)")
  # "toolchain": ClickBuild chose; the click target may then decide from what was
  # compiled (a tree without ELF files is an 'all' package).
  set(_CLICK_ARCH_SOURCE "${source}" CACHE INTERNAL "")
  set(_CLICK_ARCH_FROM "${from}" CACHE INTERNAL "")
endfunction()

function(_click_detect_framework)
  _click_user_value(CLICK_FRAMEWORK framework)
  # Clickable sets both; SDK_FRAMEWORK is its older name.
  foreach(var CLICK_FRAMEWORK SDK_FRAMEWORK)
    if(framework STREQUAL "" AND NOT "$ENV{${var}}" STREQUAL "")
      set(framework "$ENV{${var}}")
      message(STATUS "ClickBuild: framework ${framework}, from the ${var} environment "
        "variable (as Clickable sets it)")
    endif()
  endforeach()
  _click_user_value(CLICK_APPARMOR_POLICY policy)
  if(policy STREQUAL "")
    set(policy "$ENV{APPARMOR_POLICY}")
  endif()
  if(framework STREQUAL "" OR policy STREQUAL "")
    # Without a framework: the default of click-build's table (the templates' one).
    _click_run_python(facts _cmake policy-version ${framework})
    string(REPLACE "\n" ";" facts "${facts}")
    if(framework STREQUAL "")
      list(GET facts 0 framework)
      list(GET facts 1 facts)
    endif()
    if(policy STREQUAL "")
      set(policy "${facts}")
    endif()
  endif()
  _click_store(CLICK_FRAMEWORK "${framework}" STRING
    "Framework the app is built for (ubuntu-touch-24.04-1.x, ubuntu-sdk-20.04...)")
  _click_store(CLICK_APPARMOR_POLICY "${policy}" STRING
    "AppArmor policy_version for the app's profile (default: the framework's)")
endfunction()

function(_click_install_dirs)
  if(CLICK_MODE)
    if(CLICK_ARCH_TRIPLET)
      set(bin "lib/${CLICK_ARCH_TRIPLET}/bin")
      set(lib "lib/${CLICK_ARCH_TRIPLET}")
      set(qml "lib/${CLICK_ARCH_TRIPLET}")
    else()
      set(bin ".")
      set(lib "lib")
      set(qml "qml")
    endif()
    set(data ".")
  else()
    include(GNUInstallDirs)
    set(bin "${CMAKE_INSTALL_BINDIR}")
    set(lib "${CMAKE_INSTALL_LIBDIR}")
    set(qml "${CMAKE_INSTALL_LIBDIR}/qml")
    set(data "${CMAKE_INSTALL_DATADIR}/${PROJECT_NAME}")
  endif()
  _click_store(CLICK_INSTALL_BINDIR "${bin}" STRING "Where executables go")
  _click_store(CLICK_INSTALL_LIBDIR "${lib}" STRING "Where shared libraries go")
  _click_store(CLICK_INSTALL_QMLDIR "${qml}" STRING "Where QML modules go")
  _click_store(CLICK_INSTALL_DATADIR "${data}" STRING "Where QML files and assets go")
  _click_store(CLICK_INSTALL_LOCALEDIR "share/locale" STRING "Where .mo files go")
endfunction()

# Libraries every Ubuntu Touch framework provides: never bundled.
set(_CLICK_FRAMEWORK_LIBRARIES_DEFAULT
  "^ld-linux" "^linux-vdso" "^libc\\.so" "^libm\\.so" "^libdl\\.so" "^libpthread\\.so"
  "^librt\\.so" "^libresolv\\.so" "^libutil\\.so" "^libanl\\.so" "^libstdc\\+\\+\\.so"
  "^libgcc_s\\.so" "^libatomic\\.so" "^libgomp\\.so" "^libQt5" "^libQt6" "^liblomiri"
  "^libubuntu" "^libGL" "^libEGL" "^libGLES" "^libOpenGL" "^libgbm" "^libdrm"
  "^libwayland-" "^libX" "^libxcb" "^libxkbcommon" "^libglib-2\\.0" "^libgobject-2\\.0"
  "^libgio-2\\.0" "^libgmodule-2\\.0" "^libgthread-2\\.0" "^libdbus-1" "^libsystemd"
  "^libudev" "^libicu" "^libz\\.so" "^libzstd" "^liblzma" "^libbz2" "^liblz4"
  "^libbrotli" "^libpcre" "^libssl" "^libcrypto" "^libffi" "^libmount" "^libblkid"
  "^libselinux" "^libuuid" "^libcap\\.so" "^libgcrypt" "^libgpg-error" "^libexpat"
  "^libdouble-conversion" "^libmd4c" "^libfreetype" "^libfontconfig" "^libharfbuzz"
  "^libpng16" "^libjpeg" "^libgraphite2" "^libbsd\\.so" "^libmd\\.so" "^libsqlite3"
  "^libpulse" "^libasound" CACHE INTERNAL "")

function(_click_setup)
  if("${PROJECT_NAME}" STREQUAL "")
    message(FATAL_ERROR
      "ClickBuild is loaded before project(). Fix: call find_package(ClickBuild) "
      "(or include ClickBuild.cmake) after project(), so the toolchain is known.")
  endif()
  include("${CMAKE_CURRENT_FUNCTION_LIST_DIR}/ClickBuildConfigVersion.cmake")
  set(ClickBuild_VERSION "${PACKAGE_VERSION}")
  set(ClickBuild_VERSION "${PACKAGE_VERSION}" PARENT_SCOPE)
  set(CLICK_BUILD_CMAKE_DIR "${CMAKE_CURRENT_FUNCTION_LIST_DIR}" PARENT_SCOPE)
  _click_find_python(ok)
  if(NOT ok)
    return()
  endif()
  set(Python3_EXECUTABLE "${Python3_EXECUTABLE}" PARENT_SCOPE)
  _click_detect_architecture()
  _click_detect_framework()
  option(CLICK_MODE "Install into the click package layout (OFF: GNUInstallDirs layout)" ON)
  _click_install_dirs()
  if(NOT DEFINED CLICK_FRAMEWORK_LIBRARIES)
    set(CLICK_FRAMEWORK_LIBRARIES "${_CLICK_FRAMEWORK_LIBRARIES_DEFAULT}" CACHE STRING
      "Regexes of shared libraries the framework provides (never bundled)")
  endif()
  set(stage "${CMAKE_BINARY_DIR}/click/stage")
  set(CLICK_STAGING_DIR "${stage}" PARENT_SCOPE)
  set_property(GLOBAL PROPERTY CLICK_STAGING_DIR "${stage}")
  _click_mode_defaults("${stage}")
  # Inputs a front end may pass even when this project has no use for them: read them,
  # so that CMake does not tell the user to remove them ("not used by the project").
  if(INSTALL_TESTS OR CLICK_VERSION)
  endif()
  if(CLICK_ARCH_TRIPLET)
    set(shown "${CLICK_ARCH} (${CLICK_ARCH_TRIPLET})")
  else()
    set(shown "${CLICK_ARCH}")
  endif()
  message(STATUS "ClickBuild ${ClickBuild_VERSION}: ${shown}, Python ${Python3_EXECUTABLE}")
  if(CLICK_SYSROOT_LABEL AND CMAKE_SYSROOT)  # from a click-build sysroot toolchain file
    message(STATUS "ClickBuild: against the ${CLICK_SYSROOT_LABEL} root (${CMAKE_SYSROOT})")
  endif()
endfunction()

# What click mode means for the install.  The contract of the Ubuntu SDK and
# clickable: the install prefix is the package root "/", and the tree is staged with
# DESTDIR, so that absolute destinations (DESTINATION /, /lib/<triplet>,
# ${CMAKE_INSTALL_PREFIX}) land in it too.  And a package does not carry tests.
function(_click_mode_defaults stage)
  # "/." rather than "/": for "/", GNUInstallDirs moves everything under usr/.
  # (Build folders made before staging used DESTDIR have the stage as their prefix.)
  # A prefix ClickBuild set (remembered in _CLICK_PREFIX_AUTO) follows CLICK_MODE.
  set(prefix "$CACHE{CMAKE_INSTALL_PREFIX}")
  set(ours FALSE)
  if(CMAKE_INSTALL_PREFIX_INITIALIZED_TO_DEFAULT OR prefix STREQUAL stage
     OR prefix STREQUAL "$CACHE{_CLICK_PREFIX_AUTO}")
    set(ours TRUE)
  endif()
  if(ours AND CLICK_MODE AND NOT prefix STREQUAL "/.")
    set(CMAKE_INSTALL_PREFIX "/." CACHE PATH
      "Install path prefix; in CLICK_MODE the package root, staged with DESTDIR" FORCE)
    set(_CLICK_PREFIX_AUTO "/." CACHE INTERNAL "")
  elseif(ours AND NOT CLICK_MODE AND prefix STREQUAL "/.")
    set(CMAKE_INSTALL_PREFIX "/usr/local" CACHE PATH "Install path prefix" FORCE)
    set(_CLICK_PREFIX_AUTO "/usr/local" CACHE INTERNAL "")
  endif()
  if(NOT CLICK_MODE)
    return()
  endif()
  # A package is a release build: with no build type chosen, build what python -m build
  # builds (cmake.build-type, Release), so both routes pack the same bytes. A
  # multi-config generator chooses at build time (--config); Ninja Multi-Config's
  # default (a build without --config, the first of CMAKE_CONFIGURATION_TYPES) would be
  # Debug, so it becomes Release unless the user chose one.
  get_property(multi GLOBAL PROPERTY GENERATOR_IS_MULTI_CONFIG)
  if(NOT multi AND "${CMAKE_BUILD_TYPE}" STREQUAL "")
    set(CMAKE_BUILD_TYPE Release CACHE STRING
      "Choose the type of build (ClickBuild: Release, as python -m build)" FORCE)
    message(STATUS "ClickBuild: CMAKE_BUILD_TYPE is Release, as python -m build builds "
      "(-DCMAKE_BUILD_TYPE=Debug chooses another)")
  elseif(multi AND CMAKE_GENERATOR STREQUAL "Ninja Multi-Config"
         AND NOT DEFINED CMAKE_DEFAULT_BUILD_TYPE AND "Release" IN_LIST CMAKE_CONFIGURATION_TYPES)
    set(CMAKE_DEFAULT_BUILD_TYPE Release CACHE STRING
      "The configuration a build without --config builds (ClickBuild: Release, as python -m build)")
    message(STATUS "ClickBuild: CMAKE_DEFAULT_BUILD_TYPE is Release, as python -m build builds "
      "(--config Debug or -DCMAKE_DEFAULT_BUILD_TYPE=Debug chooses another)")
  endif()
  # The build tree's RPATH (to the project's own libraries) is cleared at install, but its
  # length stays in the installed ELF files: an absolute one made the program's bytes depend
  # on where the build folder is (build/ here, build/click-<arch>/cmake for python -m build).
  # Relative to $ORIGIN it is the same from any folder.
  if(NOT DEFINED CMAKE_BUILD_RPATH_USE_ORIGIN)
    set(CMAKE_BUILD_RPATH_USE_ORIGIN ON CACHE BOOL
      "Build-tree RPATH relative to \$ORIGIN (ClickBuild: the package's bytes do not depend on the build folder)")
  endif()
  # Installing into that prefix without DESTDIR would write the app into the system.
  set(build "${CMAKE_BINARY_DIR}")
  string(CONFIGURE [==[
if("$ENV{DESTDIR}" STREQUAL "" AND CMAKE_INSTALL_PREFIX MATCHES "^(/\\.?)?$")
  message(FATAL_ERROR "ClickBuild: in CLICK_MODE the install prefix is the package root /, "
    "so this would write the app into the system. Fix: cmake --build @build@ --target click, "
    "or give the tree a place: DESTDIR=\$PWD/tree cmake --install @build@")
endif()
]==] guard @ONLY)
  install(CODE "${guard}")
  # Tests are not part of a package (the backend passes INSTALL_TESTS=OFF too). A -D
  # given before the app's option() is kept, and so is any later change.
  if(NOT DEFINED CACHE{_CLICK_INSTALL_TESTS_SET})
    get_property(help CACHE INSTALL_TESTS PROPERTY HELPSTRING)
    if(NOT DEFINED CACHE{INSTALL_TESTS})
      set(INSTALL_TESTS OFF CACHE BOOL "Install the app's tests (OFF: a package does not carry them)")
    elseif(INSTALL_TESTS AND NOT help STREQUAL "No help, variable specified on the command line.")
      set(INSTALL_TESTS OFF CACHE BOOL "${help}" FORCE)
      message(STATUS "ClickBuild: INSTALL_TESTS is OFF in CLICK_MODE (a package does not "
        "carry the app's tests); -DINSTALL_TESTS=ON packages them")
    endif()
    set(_CLICK_INSTALL_TESTS_SET TRUE CACHE INTERNAL "")
  endif()
endfunction()

