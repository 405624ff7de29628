# ClickBuild.cmake: the click_* functions of the ClickBuild CMake package.
#
# Documented in the header of ClickBuildConfig.cmake and in docs/cmake.md.
# Load with find_package(ClickBuild CONFIG) or include(<dir>/ClickBuild.cmake),
# after project().  CMake here only stages files and calls the Python core
# (python -m click_build ...) for every packaging rule, so the two never drift.

include_guard(GLOBAL)

if(CMAKE_VERSION VERSION_LESS 3.19)
  message(FATAL_ERROR
    "ClickBuild needs CMake 3.19 or newer; this is CMake ${CMAKE_VERSION}. "
    "Fix: install a newer CMake (for example: python3 -m pip install cmake).")
endif()

# Functions remember the policies in effect where they are defined.
cmake_policy(PUSH)
cmake_policy(VERSION 3.19...3.31)

# Debian architectures and their multiarch triplets, index for index.
set(_CLICK_ARCHES amd64 arm64 armhf armel i386 ppc64el s390x riscv64 mips64el)
set(_CLICK_TRIPLETS
  x86_64-linux-gnu aarch64-linux-gnu arm-linux-gnueabihf arm-linux-gnueabi
  i386-linux-gnu powerpc64le-linux-gnu s390x-linux-gnu riscv64-linux-gnu
  mips64el-linux-gnuabi64)

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
      "(or include(\"${dir}/ClickBuild.cmake\")), or install the matching release "
      "into that Python: ${python} -m pip install click-build==${ClickBuild_VERSION}")
    _click_build_fail("${message}")
    return()
  endif()
  if(how STREQUAL "any Python")
    set(install "python3 -m pip install click-build")
  else()
    set(install "${Python3_EXECUTABLE} -m pip install click-build")
  endif()
  string(CONCAT message
    "ClickBuild: no Python with the click_build module was found (${how} was tried):"
    "${tried}\n"
    "Fix: install click-build for the Python you build with (${install}), "
    "or point CMake at a Python that has it: -DPython3_EXECUTABLE=/path/to/venv/bin/python")
  _click_build_fail("${message}")
endfunction()

# CLICK_ARCH and CLICK_ARCH_TRIPLET, in the order the documentation gives.
function(_click_detect_architecture)
  _click_user_value(CLICK_ARCH arch)
  set(from "CLICK_ARCH")
  if(arch STREQUAL "" AND NOT "$ENV{ARCH}" STREQUAL "")
    set(arch "$ENV{ARCH}")
    set(from "the ARCH environment variable")
  endif()
  _click_user_value(CLICK_ARCH_TRIPLET triplet)
  if(triplet STREQUAL "" AND NOT "$ENV{ARCH_TRIPLET}" STREQUAL "")
    set(triplet "$ENV{ARCH_TRIPLET}")
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
  _click_store(CLICK_ARCH "${arch}" STRING
    "Debian architecture of the package (amd64, arm64, armhf... or all)")
  _click_store(CLICK_ARCH_TRIPLET "${triplet}" STRING
    "Multiarch triplet of CLICK_ARCH (aarch64-linux-gnu...)")
endfunction()

function(_click_detect_framework)
  set(framework "ubuntu-sdk-20.04")
  if(NOT "$ENV{CLICK_FRAMEWORK}" STREQUAL "")
    set(framework "$ENV{CLICK_FRAMEWORK}")
  elseif(NOT "$ENV{SDK_FRAMEWORK}" STREQUAL "")
    set(framework "$ENV{SDK_FRAMEWORK}")
  endif()
  _click_store(CLICK_FRAMEWORK "${framework}" STRING
    "Framework the app is built for (ubuntu-sdk-20.04, ubuntu-touch-24.04-1.x...)")
  _click_user_value(CLICK_APPARMOR_POLICY policy)
  if(policy STREQUAL "")
    set(policy "$ENV{APPARMOR_POLICY}")
    if(policy STREQUAL "")
      _click_run_python(policy _cmake policy-version "${CLICK_FRAMEWORK}")
    endif()
  endif()
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
  "^libpulse" "^libasound")

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
  if(CLICK_MODE AND CMAKE_INSTALL_PREFIX_INITIALIZED_TO_DEFAULT)
    # The SDK installed to "/"; an install without --prefix must not touch the system.
    set(CMAKE_INSTALL_PREFIX "${stage}" CACHE PATH "Install path prefix" FORCE)
  endif()
  if(CLICK_ARCH_TRIPLET)
    set(shown "${CLICK_ARCH} (${CLICK_ARCH_TRIPLET})")
  else()
    set(shown "${CLICK_ARCH}")
  endif()
  message(STATUS "ClickBuild ${ClickBuild_VERSION}: ${shown}, ${CLICK_FRAMEWORK}, "
    "AppArmor policy ${CLICK_APPARMOR_POLICY}, Python ${Python3_EXECUTABLE}")
endfunction()

# -------------------------------------------------------------- functions --

# Everything that needs the whole project (hooks from any directory, the
# translations, the manifest, the targets to depend on) happens once, at the
# end of the top-level CMakeLists.txt.
function(_click_defer_finalize)
  get_property(done GLOBAL PROPERTY _CLICK_FINALIZE_DEFERRED)
  if(NOT done)
    set_property(GLOBAL PROPERTY _CLICK_FINALIZE_DEFERRED TRUE)
    cmake_language(DEFER DIRECTORY "${CMAKE_SOURCE_DIR}" CALL _click_finalize)
  endif()
endfunction()

function(_click_reject_unparsed function)
  if(ARG_UNPARSED_ARGUMENTS)
    message(FATAL_ERROR
      "${function}(): unexpected argument(s) ${ARG_UNPARSED_ARGUMENTS}; see the header of "
      "${CMAKE_CURRENT_FUNCTION_LIST_DIR}/ClickBuildConfig.cmake for the signature")
  endif()
endfunction()

function(click_manifest)
  set(fields NAME TITLE VERSION MAINTAINER DESCRIPTION FRAMEWORK ICON)
  cmake_parse_arguments(PARSE_ARGV 0 ARG "" "INPUT;${fields}" "ARCHITECTURE")
  if(NOT ARG_INPUT AND ARG_UNPARSED_ARGUMENTS)
    list(POP_FRONT ARG_UNPARSED_ARGUMENTS ARG_INPUT)
  endif()
  _click_reject_unparsed(click_manifest)
  get_property(already GLOBAL PROPERTY _CLICK_MANIFEST_ARGS SET)
  if(already)
    message(FATAL_ERROR "click_manifest(): called twice; a package has one manifest")
  endif()
  # The version: CLICK_VERSION (a build front end may pass it), else project(VERSION).
  set(default_version "${PROJECT_VERSION}")
  if(NOT "${CLICK_VERSION}" STREQUAL "")
    set(default_version "${CLICK_VERSION}")
  endif()
  set(args "")
  if(ARG_INPUT)
    get_filename_component(input "${ARG_INPUT}" ABSOLUTE)
    if(NOT EXISTS "${input}")
      message(FATAL_ERROR "click_manifest(): ${input} does not exist; fix the INPUT path")
    endif()
    get_filename_component(name "${input}" NAME)
    string(REGEX REPLACE "\\.in$" "" name "${name}")
    set(configured "${CMAKE_CURRENT_BINARY_DIR}/click/${name}.configured")
    configure_file("${input}" "${configured}")
    file(RELATIVE_PATH shown "${CMAKE_SOURCE_DIR}" "${input}")
    list(APPEND args --input "${configured}" --source "${shown}")
    if(NOT default_version STREQUAL "")  # an empty argument would be dropped
      list(APPEND args --default version "${default_version}")
    endif()
  else()
    foreach(required NAME TITLE MAINTAINER)
      if(NOT ARG_${required})
        message(FATAL_ERROR
          "click_manifest(): ${required} is required when there is no INPUT "
          "manifest.json.in; give ${required} \"...\" or INPUT manifest.json.in")
      endif()
    endforeach()
    if(NOT ARG_VERSION)
      if(default_version STREQUAL "")
        message(FATAL_ERROR
          "click_manifest(): no VERSION and no project(... VERSION x.y); give one of them")
      endif()
      set(ARG_VERSION "${default_version}")
    endif()
    if(NOT DEFINED ARG_DESCRIPTION AND NOT "${PROJECT_DESCRIPTION}" STREQUAL "")
      set(ARG_DESCRIPTION "${PROJECT_DESCRIPTION}")
    endif()
    list(APPEND args --source "click_manifest()")
  endif()
  # Values go through files: a CMake list would split a description at its ';'.
  foreach(field IN LISTS fields)
    if(DEFINED ARG_${field})
      string(TOLOWER "${field}" key)
      set(value_file "${CMAKE_BINARY_DIR}/click/fields/${key}")
      file(WRITE "${value_file}" "${ARG_${field}}")
      list(APPEND args --set-file "${key}" "${value_file}")
    endif()
  endforeach()
  foreach(arch IN LISTS ARG_ARCHITECTURE)
    list(APPEND args --architecture "${arch}")
  endforeach()
  set_property(GLOBAL PROPERTY _CLICK_MANIFEST_ARGS "${args}")
  _click_defer_finalize()
endfunction()

set(_CLICK_HOOK_KEYWORDS
  APPARMOR apparmor  DESKTOP desktop  URLS urls  CONTENT_HUB content-hub
  PUSH_HELPER push-helper  ACCOUNT_APPLICATION account-application
  ACCOUNT_PROVIDER account-provider  ACCOUNT_QML_PLUGIN account-qml-plugin
  ACCOUNT_SERVICE account-service  ACCOUNTS accounts  PAY_UI pay-ui
  APPARMOR_PROFILE apparmor-profile)

function(click_add_hook)
  list(LENGTH _CLICK_HOOK_KEYWORDS n)
  math(EXPR last_keyword "${n} - 2")
  set(keywords "")
  foreach(i RANGE 0 ${last_keyword} 2)
    list(GET _CLICK_HOOK_KEYWORDS ${i} keyword)
    list(APPEND keywords ${keyword})
  endforeach()
  cmake_parse_arguments(PARSE_ARGV 0 ARG "" "APP;DESTINATION;${keywords}" "HOOK")
  if(NOT ARG_APP)
    list(POP_FRONT ARG_UNPARSED_ARGUMENTS ARG_APP)
  endif()
  _click_reject_unparsed(click_add_hook)
  set(app "${ARG_APP}")
  if(NOT app MATCHES "^[A-Za-z0-9+.-]+$")
    message(FATAL_ERROR
      "click_add_hook(): '${app}' is not a valid app name; use letters, digits, '+', '.' "
      "and '-', as in click_add_hook(myapp APPARMOR myapp.apparmor DESKTOP myapp.desktop)")
  endif()
  if(NOT ARG_APPARMOR AND NOT ARG_APPARMOR_PROFILE)
    message(FATAL_ERROR
      "click_add_hook(${app}): every app needs an AppArmor policy; add "
      "APPARMOR ${app}.apparmor (a JSON file such as {\"policy_groups\": [], "
      "\"template\": \"ubuntu-sdk\"})")
  endif()
  list(LENGTH ARG_HOOK n)
  math(EXPR odd "${n} % 2")
  if(odd)
    message(FATAL_ERROR "click_add_hook(${app}): HOOK takes pairs: HOOK <hook-name> <file>")
  endif()
  set(pairs "")
  foreach(i RANGE 0 ${last_keyword} 2)
    list(GET _CLICK_HOOK_KEYWORDS ${i} keyword)
    math(EXPR j "${i} + 1")
    list(GET _CLICK_HOOK_KEYWORDS ${j} hook)
    if(DEFINED ARG_${keyword})
      list(APPEND pairs "${hook}" "${ARG_${keyword}}")
    endif()
  endforeach()
  list(APPEND pairs ${ARG_HOOK})
  set(destination ".")
  if(ARG_DESTINATION)
    set(destination "${ARG_DESTINATION}")
  endif()
  get_property(recorded GLOBAL PROPERTY _CLICK_HOOKS)
  list(LENGTH pairs n)
  math(EXPR last "${n} - 1")
  foreach(i RANGE 0 ${last} 2)
    list(GET pairs ${i} hook)
    math(EXPR j "${i} + 1")
    list(GET pairs ${j} file)
    get_filename_component(source "${file}" ABSOLUTE)
    get_source_file_property(generated "${source}" GENERATED)
    if(NOT EXISTS "${source}" AND NOT generated)
      message(FATAL_ERROR
        "click_add_hook(${app}): the ${hook} file ${source} does not exist. "
        "Fix the file name, or create the file")
    endif()
    if(source MATCHES "[|;]")
      message(FATAL_ERROR "click_add_hook(${app}): file names with '|' or ';' are not supported")
    endif()
    set(original "${source}")
    get_filename_component(name "${source}" NAME)
    if(name MATCHES "^(.+)\\.in$")
      set(name "${CMAKE_MATCH_1}")
      set(configured "${CMAKE_CURRENT_BINARY_DIR}/click/hooks/${app}/${name}")
      configure_file("${source}" "${configured}" @ONLY)
      set(source "${configured}")
    endif()
    if(destination STREQUAL ".")
      set(path "${name}")
    else()
      string(REGEX REPLACE "^\\./|/$" "" path "${destination}/${name}")
    endif()
    foreach(entry IN LISTS recorded)
      string(FIND "${entry}" "${app}|${hook}|" at)
      if(at EQUAL 0)
        message(FATAL_ERROR "click_add_hook(${app}): the ${hook} hook is given twice")
      endif()
    endforeach()
    list(APPEND recorded "${app}|${hook}|${source}|${path}|${original}")
  endforeach()
  set_property(GLOBAL PROPERTY _CLICK_HOOKS "${recorded}")
  _click_defer_finalize()
endfunction()

function(click_install_qml_module dir)
  cmake_parse_arguments(PARSE_ARGV 1 ARG "" "PLUGIN;DESTINATION" "")
  _click_reject_unparsed(click_install_qml_module)
  get_filename_component(dir "${dir}" ABSOLUTE)
  if(NOT EXISTS "${dir}/qmldir")
    message(FATAL_ERROR
      "click_install_qml_module(): ${dir} has no qmldir file; a QML module directory "
      "starts with one whose first line is 'module Your.Module.Name'")
  endif()
  file(STRINGS "${dir}/qmldir" lines REGEX "^[ \t]*module[ \t]")
  list(LENGTH lines n)
  if(n EQUAL 0 OR NOT lines MATCHES "^[ \t]*module[ \t]+([A-Za-z_][A-Za-z0-9_.]*)[ \t]*$")
    message(FATAL_ERROR
      "click_install_qml_module(): ${dir}/qmldir has no 'module Name.Space' line; add one")
  endif()
  string(REPLACE "." "/" path "${CMAKE_MATCH_1}")
  if(ARG_DESTINATION)
    set(destination "${ARG_DESTINATION}")
  else()
    set(destination "${CLICK_INSTALL_QMLDIR}/${path}")
  endif()
  install(DIRECTORY "${dir}/" DESTINATION "${destination}"
    PATTERN "CMakeLists.txt" EXCLUDE PATTERN "*.cpp" EXCLUDE PATTERN "*.h" EXCLUDE)
  if(ARG_PLUGIN)
    if(NOT TARGET "${ARG_PLUGIN}")
      message(FATAL_ERROR "click_install_qml_module(): PLUGIN ${ARG_PLUGIN} is not a target")
    endif()
    install(TARGETS "${ARG_PLUGIN}" LIBRARY DESTINATION "${destination}"
      RUNTIME DESTINATION "${destination}")
  endif()
endfunction()

function(click_bundle_runtime_deps)
  cmake_parse_arguments(PARSE_ARGV 0 ARG "" "DESTINATION" "TARGETS;DIRECTORIES;EXCLUDE")
  _click_reject_unparsed(click_bundle_runtime_deps)
  if(NOT ARG_TARGETS)
    message(FATAL_ERROR "click_bundle_runtime_deps(): give the targets: TARGETS app ...")
  endif()
  set(destination "${CLICK_INSTALL_LIBDIR}")
  if(ARG_DESTINATION)
    set(destination "${ARG_DESTINATION}")
  endif()
  set(executables "")
  set(libraries "")
  set(modules "")
  foreach(target IN LISTS ARG_TARGETS)
    if(NOT TARGET "${target}")
      message(FATAL_ERROR "click_bundle_runtime_deps(): ${target} is not a target")
    endif()
    get_target_property(type "${target}" TYPE)
    if(type STREQUAL "EXECUTABLE")
      list(APPEND executables "$<TARGET_FILE:${target}>")
    elseif(type STREQUAL "SHARED_LIBRARY")
      list(APPEND libraries "$<TARGET_FILE:${target}>")
    elseif(type STREQUAL "MODULE_LIBRARY")
      list(APPEND modules "$<TARGET_FILE:${target}>")
    else()
      message(FATAL_ERROR
        "click_bundle_runtime_deps(): ${target} is a ${type}; only executables and "
        "shared or module libraries have runtime dependencies")
    endif()
  endforeach()
  set(exclude ${CLICK_FRAMEWORK_LIBRARIES} ${ARG_EXCLUDE})
  # Bracket arguments keep regexes and paths literal inside the install script.
  set(code "set(_click_x [==[${exclude}]==])\n")
  string(APPEND code "file(GET_RUNTIME_DEPENDENCIES\n")
  foreach(kind executables libraries modules)
    if(${kind})
      string(TOUPPER "${kind}" keyword)
      string(APPEND code "  ${keyword} [==[${${kind}}]==]\n")
    endif()
  endforeach()
  string(APPEND code
    "  DIRECTORIES [==[${ARG_DIRECTORIES}]==]\n"
    "  PRE_EXCLUDE_REGEXES \${_click_x}\n"
    "  POST_EXCLUDE_REGEXES [==[^${CMAKE_BINARY_DIR}/]==]\n"
    "  RESOLVED_DEPENDENCIES_VAR _click_deps\n"
    "  UNRESOLVED_DEPENDENCIES_VAR _click_missing\n"
    "  CONFLICTING_DEPENDENCIES_PREFIX _click_conflict)\n"
    "if(_click_missing)\n"
    "  message(FATAL_ERROR \"click_bundle_runtime_deps(): cannot find \${_click_missing}; "
    "add the folder holding it with DIRECTORIES, or EXCLUDE it when the framework "
    "provides it\")\n"
    "endif()\n"
    "if(_click_conflict_FILENAMES)\n"
    "  message(FATAL_ERROR \"click_bundle_runtime_deps(): \${_click_conflict_FILENAMES} "
    "found in several places; pass the right one's folder first in DIRECTORIES\")\n"
    "endif()\n"
    "foreach(_click_dep IN LISTS _click_deps)\n"
    "  file(INSTALL DESTINATION \"\${CMAKE_INSTALL_PREFIX}/${destination}\"\n"
    "    TYPE SHARED_LIBRARY FOLLOW_SYMLINK_CHAIN FILES \"\${_click_dep}\")\n"
    "endforeach()\n")
  install(CODE "${code}")
endfunction()

function(click_translations)
  cmake_parse_arguments(PARSE_ARGV 0 ARG "" "DOMAIN;PO_DIR;POT_TARGET" "SOURCES")
  _click_reject_unparsed(click_translations)
  if(NOT ARG_DOMAIN)
    message(FATAL_ERROR
      "click_translations(): DOMAIN is required (the gettext domain, usually the app's "
      "package name, as in i18n.domain)")
  endif()
  if(NOT ARG_PO_DIR)
    set(ARG_PO_DIR po)
  endif()
  if(NOT ARG_POT_TARGET)
    set(ARG_POT_TARGET pot)
  endif()
  find_program(CLICK_MSGFMT_EXECUTABLE msgfmt)
  find_program(CLICK_XGETTEXT_EXECUTABLE xgettext)
  if(NOT CLICK_MSGFMT_EXECUTABLE OR NOT CLICK_XGETTEXT_EXECUTABLE)
    message(FATAL_ERROR
      "click_translations(): msgfmt and xgettext were not found. Fix: install GNU "
      "gettext (sudo apt install gettext)")
  endif()
  get_filename_component(po_dir "${ARG_PO_DIR}" ABSOLUTE)
  get_property(already GLOBAL PROPERTY _CLICK_TRANSLATIONS SET)
  if(already)
    message(FATAL_ERROR "click_translations(): called twice; use one domain per package")
  endif()
  set(sources "")
  foreach(source IN LISTS ARG_SOURCES)
    get_filename_component(source "${source}" ABSOLUTE)
    list(APPEND sources "${source}")
  endforeach()
  file(GLOB po_files CONFIGURE_DEPENDS "${po_dir}/*.po")
  list(SORT po_files)
  set_property(GLOBAL PROPERTY _CLICK_TRANSLATIONS
    "${ARG_DOMAIN}|${po_dir}|${ARG_POT_TARGET}|${CMAKE_CURRENT_SOURCE_DIR}")
  set_property(GLOBAL PROPERTY _CLICK_TRANSLATION_SOURCES "${sources}")
  set_property(GLOBAL PROPERTY _CLICK_PO_FILES "${po_files}")
  _click_defer_finalize()
endfunction()

function(click_package)
  cmake_parse_arguments(PARSE_ARGV 0 ARG "" "TARGET;OUTPUT_DIRECTORY" "IGNORE")
  _click_reject_unparsed(click_package)
  if(NOT ARG_TARGET)
    set(ARG_TARGET click)
  endif()
  if(TARGET "${ARG_TARGET}")
    message(FATAL_ERROR "click_package(): a target named ${ARG_TARGET} exists already; "
      "choose another with TARGET <name>")
  endif()
  if(ARG_OUTPUT_DIRECTORY)
    get_filename_component(outdir "${ARG_OUTPUT_DIRECTORY}" ABSOLUTE
      BASE_DIR "${CMAKE_CURRENT_BINARY_DIR}")
  else()
    set(outdir "${CMAKE_BINARY_DIR}")
  endif()
  if(NOT CLICK_MODE)
    add_custom_target("${ARG_TARGET}"
      COMMAND "${CMAKE_COMMAND}" -E echo
        "click: CLICK_MODE is OFF, so nothing is laid out as a package; reconfigure with -DCLICK_MODE=ON"
      COMMAND "${CMAKE_COMMAND}" -E false
      VERBATIM)
    return()
  endif()
  set(arguments "${CMAKE_BINARY_DIR}/click/${ARG_TARGET}-arguments.cmake")
  add_custom_target("${ARG_TARGET}"
    COMMAND "${CMAKE_COMMAND}" "-DCLICK_ARGUMENTS=${arguments}" "-DCLICK_CONFIG=$<CONFIG>"
            -P "${CMAKE_CURRENT_FUNCTION_LIST_DIR}/ClickPackage.cmake"
    WORKING_DIRECTORY "${CMAKE_BINARY_DIR}"
    COMMENT "Packaging the click"
    USES_TERMINAL
    VERBATIM)
  get_property(recorded GLOBAL PROPERTY _CLICK_PACKAGE_TARGETS)
  list(APPEND recorded "${ARG_TARGET}")
  set_property(GLOBAL PROPERTY _CLICK_PACKAGE_TARGETS "${recorded}")
  set_property(GLOBAL PROPERTY _CLICK_PACKAGE_${ARG_TARGET} "${outdir}|${arguments}")
  set_property(GLOBAL PROPERTY _CLICK_PACKAGE_${ARG_TARGET}_IGNORE "${ARG_IGNORE}")
  _click_defer_finalize()
endfunction()

include("${CMAKE_CURRENT_LIST_DIR}/ClickBuildFinalize.cmake")

_click_setup()

cmake_policy(POP)
