# ClickPackage.cmake: the command of the click_package() target (cmake -P).
#
#   cmake -DCLICK_ARGUMENTS=<file> [-DCLICK_CONFIG=<config>] -P ClickPackage.cmake
#
# Installs the project into the staging folder with DESTDIR, the contract of the
# Ubuntu SDK's projects (`make install DESTDIR=...`): whatever the destinations
# (relative, "/", "/lib/<triplet>", a prefix of "/"), every file lands in the
# stage and nothing outside the build folder is written.  Incremental: unchanged
# files stay "Up-to-date", files no install rule produces any more are removed with the
# folders they leave empty (the stage is what a fresh build folder's is), and
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

# Folders, so that the tree is the one a fresh build folder gets.  The install names the
# folders it writes (its "Installing:" and "Up-to-date:" lines: those of install(DIRECTORY),
# empty ones included), and those stay.  A folder that held a stale file, or that an
# earlier install wrote, goes when it is left empty; others (made by install(CODE), say)
# are left alone.
get_filename_component(folder "${CLICK_STAMP}" DIRECTORY)
get_filename_component(target "${CLICK_STAMP}" NAME_WLE)
set(folders_file "${folder}/${target}-folders.txt")  # the folders the last install wrote
set(written "")
string(REGEX MATCHALL "-- (Installing|Up-to-date): [^\n]*" lines "${log}")
foreach(line IN LISTS lines)
  string(REGEX REPLACE "^-- [^:]*: " "" path "${line}")
  get_filename_component(path "${path}" ABSOLUTE)
  if(IS_DIRECTORY "${path}" AND NOT IS_SYMLINK "${path}")
    list(APPEND written "${path}")
  endif()
endforeach()
set(candidates "")
foreach(path IN LISTS stale)
  get_filename_component(path "${path}" DIRECTORY)
  list(APPEND candidates "${path}")
endforeach()
if(EXISTS "${folders_file}")
  file(STRINGS "${folders_file}" earlier)
  if(earlier AND written)
    list(REMOVE_ITEM earlier ${written})
  endif()
  list(APPEND candidates ${earlier})
endif()
set(emptied "")
if(candidates)
  # With every folder between them and the stage: children sort after their parents.
  set(all "")
  foreach(path IN LISTS candidates)
    while(path MATCHES "^(.+)/[^/]+$" AND NOT path STREQUAL stage)
      string(FIND "${path}" "${stage}/" at)
      if(NOT at EQUAL 0 OR path IN_LIST all)
        break()
      endif()
      list(APPEND all "${path}")
      set(path "${CMAKE_MATCH_1}")
    endwhile()
  endforeach()
  list(SORT all)
  list(REVERSE all)
  foreach(path IN LISTS all)
    if(IS_DIRECTORY "${path}" AND NOT IS_SYMLINK "${path}" AND NOT path IN_LIST written)
      file(GLOB inside LIST_DIRECTORIES true "${path}/*")
      if(NOT inside)
        file(REMOVE_RECURSE "${path}")
        list(APPEND emptied "${path}")
      endif()
    endif()
  endforeach()
endif()
if(emptied)
  list(LENGTH emptied n)
  message(STATUS "click: removing ${n} empty folder(s) no install rule makes any more")
endif()
string(REPLACE ";" "\n" listed "${written}")
file(WRITE "${folders_file}" "${listed}\n")

# 3. Repack only when the tree or the package changed.  The stamp holds the
# configuration it was made with and the package it made.
file(READ "${CLICK_ARGUMENTS}" state)
set(changed FALSE)
if(stale OR emptied OR log MATCHES "-- Installing: " OR NOT log MATCHES "-- Up-to-date: ")
  set(changed TRUE)  # copied files, removed files or folders, or an install that says nothing
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
