# ClickPackage.cmake: the command of the click_package() target (cmake -P).
#
#   cmake -DCLICK_ARGUMENTS=<file> [-DCLICK_CONFIG=<config>] -P ClickPackage.cmake
#
# Installs the project into the staging folder (incrementally: unchanged files
# stay "Up-to-date"), removes files no install rule produces any more, and runs
# `python -m click_build build` on the folder -- only when something changed or
# the package is missing.  All packaging rules live in the Python core.

cmake_minimum_required(VERSION 3.19)

if(NOT CLICK_ARGUMENTS OR NOT EXISTS "${CLICK_ARGUMENTS}")
  message(FATAL_ERROR "click: ${CLICK_ARGUMENTS} is missing; reconfigure the build folder")
endif()
include("${CLICK_ARGUMENTS}")

# 1. Install.  DESTDIR from the caller's environment would send files elsewhere.
set(install "${CMAKE_COMMAND}" -E env --unset=DESTDIR
  "${CMAKE_COMMAND}" --install "${CLICK_BINARY_DIR}" --prefix "${CLICK_STAGE}")
if(CLICK_CONFIG)
  list(APPEND install --config "${CLICK_CONFIG}")
endif()
execute_process(COMMAND ${install} RESULT_VARIABLE rc OUTPUT_VARIABLE log ERROR_VARIABLE log)
if(NOT rc EQUAL 0)
  message("${log}")
  message(FATAL_ERROR "click: installing into ${CLICK_STAGE} failed (see above)")
endif()

# 2. Prune what earlier installs left behind.
get_filename_component(stage "${CLICK_STAGE}" ABSOLUTE)
file(STRINGS "${CLICK_BINARY_DIR}/install_manifest.txt" listed)
set(installed "")
foreach(path IN LISTS listed)
  get_filename_component(path "${path}" ABSOLUTE)
  list(APPEND installed "${path}")
endforeach()
file(GLOB_RECURSE present LIST_DIRECTORIES false "${stage}/*")
set(stale ${present})
if(installed)
  list(REMOVE_ITEM stale ${installed})
endif()
if(stale)
  list(LENGTH stale n)
  message(STATUS "click: removing ${n} file(s) no install rule produces any more")
  file(REMOVE ${stale})
endif()

# 3. Repack only when the tree or the package changed.
file(READ "${CLICK_ARGUMENTS}" state)
set(changed FALSE)
if(stale OR log MATCHES "-- Installing: " OR NOT log MATCHES "-- Up-to-date: ")
  set(changed TRUE)  # copied files, removed files, or an install that says nothing
elseif(NOT CLICK_PACKAGE_FILE OR NOT EXISTS "${CLICK_PACKAGE_FILE}")
  set(changed TRUE)
elseif(NOT EXISTS "${CLICK_STAMP}")
  set(changed TRUE)
else()
  file(READ "${CLICK_STAMP}" previous)
  if(NOT previous STREQUAL state)
    set(changed TRUE)
  endif()
endif()
if(NOT changed)
  message(STATUS "click: ${CLICK_PACKAGE_FILE} is up to date")
  return()
endif()
file(REMOVE "${CLICK_STAMP}")

# 4. Check the tree, then build the package with the Python core.
execute_process(
  COMMAND "${CLICK_PYTHON}" -m click_build _cmake check-tree "${stage}"
  RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "click: the installed tree ${stage} is not a valid package (see above)")
endif()
set(build "${CLICK_PYTHON}" -m click_build build "${stage}"
  --output-dir "${CLICK_OUTPUT_DIRECTORY}")
foreach(pattern IN LISTS CLICK_IGNORE)
  list(APPEND build --ignore "${pattern}")
endforeach()
file(MAKE_DIRECTORY "${CLICK_OUTPUT_DIRECTORY}")
execute_process(COMMAND ${build} RESULT_VARIABLE rc COMMAND_ECHO STDOUT)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "click: click-build could not build the package (see above)")
endif()
file(WRITE "${CLICK_STAMP}" "${state}")
