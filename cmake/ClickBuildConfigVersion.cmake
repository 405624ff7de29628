# ClickBuildConfigVersion.cmake: the version of the ClickBuild CMake package.
#
# The contract of write_basic_package_version_file(COMPATIBILITY SameMajorVersion
# ARCH_INDEPENDENT): a request for X.Y is met by any X.* at least as new, and the
# package holds no binaries, so every target architecture may use it (there is
# no CMAKE_SIZEOF_VOID_P check).  PACKAGE_VERSION is click_build.__version__;
# tests/test_cmake_package.py keeps the two in step.

set(PACKAGE_VERSION "0.1.0")

if(PACKAGE_VERSION MATCHES "^([0-9]+)\\.")
  set(_click_build_major "${CMAKE_MATCH_1}")
else()
  set(_click_build_major "${PACKAGE_VERSION}")
endif()

if(PACKAGE_FIND_VERSION_RANGE)
  # find_package(ClickBuild 0.1...<1.0): the range says it all (as CMake's template).
  if((PACKAGE_FIND_VERSION_RANGE_MIN STREQUAL "INCLUDE"
        AND PACKAGE_VERSION VERSION_LESS PACKAGE_FIND_VERSION_MIN)
     OR (PACKAGE_FIND_VERSION_RANGE_MAX STREQUAL "INCLUDE"
        AND PACKAGE_VERSION VERSION_GREATER PACKAGE_FIND_VERSION_MAX)
     OR (PACKAGE_FIND_VERSION_RANGE_MAX STREQUAL "EXCLUDE"
        AND PACKAGE_VERSION VERSION_GREATER_EQUAL PACKAGE_FIND_VERSION_MAX))
    set(PACKAGE_VERSION_COMPATIBLE FALSE)
  else()
    set(PACKAGE_VERSION_COMPATIBLE TRUE)
  endif()
elseif(NOT PACKAGE_FIND_VERSION)
  set(PACKAGE_VERSION_COMPATIBLE TRUE)
elseif(PACKAGE_VERSION VERSION_LESS PACKAGE_FIND_VERSION
       OR NOT PACKAGE_FIND_VERSION_MAJOR STREQUAL _click_build_major)
  set(PACKAGE_VERSION_COMPATIBLE FALSE)
else()
  set(PACKAGE_VERSION_COMPATIBLE TRUE)
  if(PACKAGE_FIND_VERSION STREQUAL PACKAGE_VERSION)
    set(PACKAGE_VERSION_EXACT TRUE)
  endif()
endif()

if(NOT PACKAGE_VERSION_COMPATIBLE AND NOT ClickBuild_FIND_QUIETLY)
  # CMake's own error only lists the versions it saw; say what to do about it.
  if(PACKAGE_FIND_VERSION_RANGE)
    set(_click_build_wanted "${PACKAGE_FIND_VERSION_RANGE}")
  else()
    set(_click_build_wanted "${PACKAGE_FIND_VERSION}")
  endif()
  message(STATUS
    "ClickBuild ${PACKAGE_VERSION} in ${CMAKE_CURRENT_LIST_DIR} does not satisfy the "
    "requested version ${_click_build_wanted}. Fix: point CMake at the CMake files of a "
    "click-build that does, -DClickBuild_DIR=\"$(/path/to/venv/bin/python -m click_build "
    "--cmake-dir)\". click-build is not on PyPI; a virtual environment gets a newer one "
    "from a wheel of its checkout: /path/to/venv/bin/python -m pip wheel -w wheels "
    "/path/to/click-build && /path/to/venv/bin/python -m pip install --upgrade --no-index "
    "--find-links wheels click-build")
endif()
unset(_click_build_major)
unset(_click_build_wanted)
