# ClickPackage.cmake: the command of the click_package() target (cmake -P).
#
#   cmake -DCLICK_ARGUMENTS=<file> [-DCLICK_CONFIG=<config>] -P ClickPackage.cmake
#
# Installs the project into the staging folder with DESTDIR, the contract of the
# Ubuntu SDK's projects (`make install DESTDIR=...`): whatever the destinations
# (relative, "/", "/lib/<triplet>", a prefix of "/"), every file lands in the
# stage and nothing outside the build folder is written.  Incremental: unchanged
# files stay "Up-to-date", files no install rule produces any more are removed, and
# `python -m click_build _cmake package` runs only when something changed.  All
# packaging rules live in the Python core.

cmake_minimum_required(VERSION 3.19)

if(NOT CLICK_ARGUMENTS OR NOT EXISTS "${CLICK_ARGUMENTS}")
  message(FATAL_ERROR "click: ${CLICK_ARGUMENTS} is missing; reconfigure the build folder")
endif()
include("${CLICK_ARGUMENTS}")
get_filename_component(stage "${CLICK_STAGE}" ABSOLUTE)

# 1. Install under DESTDIR (the caller's own DESTDIR is replaced), prefix "/", stripped
# as the backend's scikit-build-core install is: every route packs the same bytes.
set(install "${CMAKE_COMMAND}" -E env "DESTDIR=${stage}"
  "${CMAKE_COMMAND}" --install "${CLICK_BINARY_DIR}" --prefix / --strip)
if(CLICK_CONFIG)
  list(APPEND install --config "${CLICK_CONFIG}")
endif()
file(MAKE_DIRECTORY "${stage}")
execute_process(COMMAND ${install} RESULT_VARIABLE rc OUTPUT_VARIABLE log ERROR_VARIABLE log)
if(NOT rc EQUAL 0)
  message("${log}")
  message(FATAL_ERROR "click: installing into ${stage} failed (see above)")
endif()

# 2. Prune what earlier installs left behind.  The install manifest lists the
# destinations without DESTDIR.
file(STRINGS "${CLICK_BINARY_DIR}/install_manifest.txt" listed)
set(installed "")
foreach(path IN LISTS listed)
  get_filename_component(path "${stage}/${path}" ABSOLUTE)
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

# 3. Repack only when the tree or the package changed.  The stamp holds the
# configuration it was made with and the package it made.
file(READ "${CLICK_ARGUMENTS}" state)
set(changed FALSE)
if(stale OR log MATCHES "-- Installing: " OR NOT log MATCHES "-- Up-to-date: ")
  set(changed TRUE)  # copied files, removed files, or an install that says nothing
elseif(NOT EXISTS "${CLICK_STAMP}")
  set(changed TRUE)
else()
  file(READ "${CLICK_STAMP}" previous)
  string(FIND "${previous}" "\n# package: " at REVERSE)
  if(at LESS 0)
    set(changed TRUE)
  else()
    string(SUBSTRING "${previous}" 0 ${at} previous_state)
    math(EXPR at "${at} + 12")
    string(SUBSTRING "${previous}" ${at} -1 made)
    if(NOT previous_state STREQUAL state OR made STREQUAL "" OR NOT EXISTS "${made}")
      set(changed TRUE)
    endif()
  endif()
endif()
if(NOT changed)
  message(STATUS "click: ${made} is up to date")
  return()
endif()
file(REMOVE "${CLICK_STAMP}")

# 4. Build the package with the Python core, in one process that reads each staged file
# once: it checks the tree (every hook file, every folder the desktop files name), decides
# the architecture from the ELF files when it was ClickBuild's guess, packs and reviews,
# then writes the package's file name and final manifest fields to the summary.
get_filename_component(folder "${CLICK_STAMP}" DIRECTORY)
get_filename_component(target "${CLICK_STAMP}" NAME_WLE)
set(summary "${folder}/${target}-package.json")  # one per click_package() target
file(REMOVE "${summary}")
set(build "${CLICK_PYTHON}" -m click_build _cmake package "${stage}"
  --output-dir "${CLICK_OUTPUT_DIRECTORY}" --summary "${summary}")
if(NOT CLICK_ARCH_FROM_ELF STREQUAL "")
  list(APPEND build --guessed-architecture "${CLICK_ARCH_FROM_ELF}")
endif()
foreach(pattern IN LISTS CLICK_IGNORE)
  list(APPEND build --ignore "${pattern}")
endforeach()
execute_process(COMMAND ${build} RESULT_VARIABLE rc)
if(NOT rc EQUAL 0 OR NOT EXISTS "${summary}")
  message(FATAL_ERROR "click: click-build could not build the package from ${stage} (see above)")
endif()
file(READ "${summary}" json)
foreach(key filename name version framework architecture)
  string(JSON ${key} ERROR_VARIABLE error GET "${json}" ${key})
endforeach()
set(package "${CLICK_OUTPUT_DIRECTORY}/${filename}")
if(NOT CLICK_PACKAGE_FILE)
  # The project installs its own manifest.json: say what it declares (configure could not).
  message(STATUS "click: ${name} ${version} for ${framework}, architecture ${architecture}")
elseif(NOT package STREQUAL CLICK_PACKAGE_FILE)
  message(STATUS "click: the installed files decided the architecture: the package is "
    "${package}, not ${CLICK_PACKAGE_FILE} as configured")
endif()
file(WRITE "${CLICK_STAMP}" "${state}\n# package: ${package}")
