# ClickBuildFinalize.cmake: what ClickBuild does once the whole project is known.
#
# Included by ClickBuild.cmake.  click_manifest(), click_add_hook(),
# click_translations() and click_package() only record what they were asked;
# _click_finalize() runs deferred at the end of the top-level CMakeLists.txt,
# so the order of those calls and the directory they are made in do not matter.

function(_click_finalize)
  _click_check_architecture()
  _click_finalize_translations()
  _click_finalize_hooks(hook_args apparmor_args)
  _click_finalize_manifest("${hook_args}" "${apparmor_args}" package_file from_elf)
  _click_finalize_packages("${package_file}" "${from_elf}")
endfunction()

# TRUE when the project builds executables or shared libraries: what an ELF file
# in the package comes from.
function(_click_builds_binaries out)
  _click_collect_targets("${CMAKE_SOURCE_DIR}" targets)
  foreach(target IN LISTS targets)
    get_target_property(type "${target}" TYPE)
    if(type MATCHES "^(EXECUTABLE|SHARED_LIBRARY|MODULE_LIBRARY)$")
      set(${out} TRUE PARENT_SCOPE)
      return()
    endif()
  endforeach()
  set(${out} FALSE PARENT_SCOPE)
endfunction()

# 'all' says the package holds no compiled code: refused when the project builds
# executables or libraries (enabled languages alone compile nothing: Clickable's QML-only
# template names C and CXX), with the reason of the 'all' and its fix.
function(_click_check_architecture)
  _click_builds_binaries(binaries)
  if(binaries AND CLICK_ARCH STREQUAL "all")
    set(source "$CACHE{_CLICK_ARCH_SOURCE}")
    if(source STREQUAL "nothing compiled")
      message(FATAL_ERROR
        "ClickBuild: CLICK_ARCH became 'all' because no language was enabled when "
        "ClickBuild was loaded, but the project builds executables or libraries. Fix: call "
        "find_package(ClickBuild) after project(... CXX) or enable_language(), or pass "
        "-DCLICK_ARCH=<architecture>")
    elseif(source STREQUAL "environment")
      message(FATAL_ERROR
        "ClickBuild: CLICK_ARCH is 'all' (no compiled code), from $CACHE{_CLICK_ARCH_FROM} "
        "(Clickable sets ARCH=all for QML-only and Python apps), but the project builds "
        "executables or libraries. Fix: unset ARCH and ARCH_TRIPLET, or set ARCH to the "
        "architecture the code is built for, or pass -DCLICK_ARCH=<architecture>")
    else()
      message(FATAL_ERROR
        "ClickBuild: CLICK_ARCH is 'all' (no compiled code), but the project builds "
        "executables or libraries. Fix: pass the architecture they are built for, "
        "-DCLICK_ARCH=<architecture>, or leave CLICK_ARCH out")
    endif()
  endif()
  _click_compiles(compiles)
  if(compiles AND NOT "${CLICK_ARCH_TRIPLET}" STREQUAL ""
     AND NOT "${CMAKE_LIBRARY_ARCHITECTURE}" STREQUAL ""
     AND NOT CLICK_ARCH_TRIPLET STREQUAL CMAKE_LIBRARY_ARCHITECTURE)
    message(WARNING
      "ClickBuild: the package is declared ${CLICK_ARCH} (${CLICK_ARCH_TRIPLET}), but the "
      "compiler builds for ${CMAKE_LIBRARY_ARCHITECTURE}. Fix: cross-compile with a "
      "toolchain file for ${CLICK_ARCH_TRIPLET}, or drop CLICK_ARCH / the ARCH and "
      "ARCH_TRIPLET environment variables")
  endif()
endfunction()

function(_click_finalize_translations)
  get_property(spec GLOBAL PROPERTY _CLICK_TRANSLATIONS)
  if(NOT spec)
    return()
  endif()
  string(REPLACE "|" ";" spec "${spec}")
  list(GET spec 0 domain)
  list(GET spec 1 po_dir)
  list(GET spec 2 pot_target)
  list(GET spec 3 source_dir)
  get_property(po_files GLOBAL PROPERTY _CLICK_PO_FILES)
  get_property(sources GLOBAL PROPERTY _CLICK_TRANSLATION_SOURCES)

  # .mo files, and a LINGUAS folder for msgfmt --desktop's bulk mode.
  set(linguas_dir "${CMAKE_BINARY_DIR}/click/po")
  file(REMOVE_RECURSE "${linguas_dir}")
  file(MAKE_DIRECTORY "${linguas_dir}")
  set(languages "")
  set(outputs "")
  foreach(po IN LISTS po_files)
    get_filename_component(lang "${po}" NAME_WE)
    list(APPEND languages "${lang}")
    file(CREATE_LINK "${po}" "${linguas_dir}/${lang}.po" SYMBOLIC)
    set(mo "${CMAKE_BINARY_DIR}/click/locale/${lang}/LC_MESSAGES/${domain}.mo")
    get_filename_component(mo_dir "${mo}" DIRECTORY)
    add_custom_command(OUTPUT "${mo}"
      COMMAND "${CMAKE_COMMAND}" -E make_directory "${mo_dir}"
      COMMAND "${CLICK_MSGFMT_EXECUTABLE}" --check-format -o "${mo}" "${po}"
      DEPENDS "${po}"
      COMMENT "Compiling ${lang} translations"
      VERBATIM)
    install(FILES "${mo}" DESTINATION "${CLICK_INSTALL_LOCALEDIR}/${lang}/LC_MESSAGES")
    list(APPEND outputs "${mo}")
  endforeach()
  string(REPLACE ";" "\n" linguas "${languages}")
  file(WRITE "${linguas_dir}/LINGUAS" "${linguas}\n")
  if(outputs)
    add_custom_target(click_translations ALL DEPENDS ${outputs})
  endif()
  set_property(GLOBAL PROPERTY _CLICK_LINGUAS_DIR "${linguas_dir}")
  # The set of .po files, in a file rewritten only when the set changes (the glob of
  # click_translations() reconfigures when one comes or goes): the translated desktop
  # files depend on it, so a language removed is removed from them too.
  set(po_list "${CMAKE_BINARY_DIR}/click/po-files.txt")
  string(REPLACE ";" "\n" listed "${po_files}")
  set(previous "")
  if(EXISTS "${po_list}")
    file(READ "${po_list}" previous)
  endif()
  if(NOT previous STREQUAL "${listed}\n")
    file(WRITE "${po_list}" "${listed}\n")
  endif()
  set_property(GLOBAL PROPERTY _CLICK_PO_LIST "${po_list}")

  # The .pot template, written next to the .po files for translators by the extraction
  # of `click-build i18n` (Lomiri's and Qt's keywords, QML read as JavaScript, UTF-8).
  set(pot "${po_dir}/${domain}.pot")
  set(files "")
  foreach(source IN LISTS sources)
    file(RELATIVE_PATH rel "${source_dir}" "${source}")
    list(APPEND files "${rel}")
  endforeach()
  get_property(hooks GLOBAL PROPERTY _CLICK_HOOKS)
  foreach(entry IN LISTS hooks)
    string(REPLACE "|" ";" entry "${entry}")
    list(GET entry 1 hook)
    list(GET entry 4 original)
    if(hook STREQUAL "desktop")
      file(RELATIVE_PATH rel "${source_dir}" "${original}")
      list(APPEND files "${rel}")
    endif()
  endforeach()
  if(NOT files)
    message(FATAL_ERROR
      "click_translations(${domain}): nothing to translate; list the QML, JavaScript and "
      "C++ files with SOURCES (or add a DESKTOP file with click_add_hook())")
  endif()
  add_custom_target("${pot_target}"
    COMMAND "${Python3_EXECUTABLE}" -m click_build i18n extract --project "${source_dir}"
            --domain "${domain}" --output "${pot}" ${files}
    WORKING_DIRECTORY "${source_dir}"
    COMMENT "Extracting translatable strings into ${pot}"
    VERBATIM)
endfunction()

# Install every hook file; return the manifest's --hook and --apparmor arguments.
function(_click_finalize_hooks hook_args apparmor_args)
  if(NOT CLICK_MODE)
    include(GNUInstallDirs)  # its CMAKE_INSTALL_DATADIR is a variable of this scope
  endif()
  get_property(hooks GLOBAL PROPERTY _CLICK_HOOKS)
  get_property(linguas_dir GLOBAL PROPERTY _CLICK_LINGUAS_DIR)
  get_property(po_files GLOBAL PROPERTY _CLICK_PO_FILES)
  get_property(po_list GLOBAL PROPERTY _CLICK_PO_LIST)
  get_property(stage GLOBAL PROPERTY CLICK_STAGING_DIR)
  set(hooks_out "")
  set(apparmor_out "")
  set(desktop_outputs "")
  foreach(entry IN LISTS hooks)
    string(REPLACE "|" ";" entry "${entry}")
    list(GET entry 0 app)
    list(GET entry 1 hook)
    list(GET entry 2 source)
    list(GET entry 3 path)
    get_filename_component(name "${path}" NAME)
    get_filename_component(dir "${path}" DIRECTORY)
    if(dir STREQUAL "")
      set(dir ".")
    endif()
    list(APPEND hooks_out --hook "${app}" "${hook}" "${path}")
    set(file "${source}")
    if(hook STREQUAL "desktop" AND po_list)
      # Made at build time whenever the desktop file, a .po file or the set of them
      # changes; with no .po file (yet, or any more) it is the file as it is.
      set(file "${CMAKE_BINARY_DIR}/click/desktop/${app}/${name}")
      if(po_files)
        set(make "${CLICK_MSGFMT_EXECUTABLE}" --desktop "--template=${source}"
                 -d "${linguas_dir}" -o "${file}")
      else()
        set(make "${CMAKE_COMMAND}" -E copy "${source}" "${file}")
      endif()
      # The click target's copy goes with it: `cmake --install` tells files apart by
      # their times, to the second, and would keep the old one when both fall in the
      # same second.
      set(staged "")
      if(CLICK_MODE AND stage)
        set(staged COMMAND "${CMAKE_COMMAND}" -E rm -f "${stage}/${path}")
      endif()
      add_custom_command(OUTPUT "${file}"
        COMMAND "${CMAKE_COMMAND}" -E make_directory "${CMAKE_BINARY_DIR}/click/desktop/${app}"
        COMMAND ${make}
        ${staged}
        DEPENDS "${source}" ${po_files} "${po_list}"
        COMMENT "Translating ${name}"
        VERBATIM)
      list(APPEND desktop_outputs "${file}")
    elseif(hook STREQUAL "apparmor" AND EXISTS "${source}")
      set(file "${CMAKE_BINARY_DIR}/click/apparmor/${app}/${name}")
      list(APPEND apparmor_out --apparmor "${source}" "${file}")
    endif()
    if(NOT CLICK_MODE)
      if(hook STREQUAL "desktop")  # a desktop install: only the launcher makes sense
        install(FILES "${file}" DESTINATION "${CMAKE_INSTALL_DATADIR}/applications"
          RENAME "${name}")
      endif()
    elseif(IS_DIRECTORY "${file}")
      install(DIRECTORY "${file}/" DESTINATION "${path}")
    else()
      install(FILES "${file}" DESTINATION "${dir}" RENAME "${name}")
    endif()
  endforeach()
  if(desktop_outputs)
    add_custom_target(click_desktop_files ALL DEPENDS ${desktop_outputs})
  endif()
  set(${hook_args} "${hooks_out}" PARENT_SCOPE)
  set(${apparmor_args} "${apparmor_out}" PARENT_SCOPE)
endfunction()

# Assemble and validate manifest.json through the Python core; return the
# package's file name ("" when the project installs its own manifest), and the
# manifest architecture that the click target replaces by the one of the ELF files
# it finds ("" when the architecture is not ClickBuild's to decide).
function(_click_finalize_manifest hook_args apparmor_args package_file from_elf)
  set(${package_file} "" PARENT_SCOPE)
  set(${from_elf} "" PARENT_SCOPE)
  # CLICK_ARCH that ClickBuild chose from the toolchain: a guess about the package,
  # which the compiled files settle (none: 'all').
  set(auto_arch FALSE)
  if("$CACHE{_CLICK_ARCH_SOURCE}" STREQUAL "toolchain")
    set(auto_arch TRUE)
  endif()
  get_property(have GLOBAL PROPERTY _CLICK_MANIFEST_ARGS SET)
  if(NOT have)
    if(hook_args)
      message(FATAL_ERROR
        "ClickBuild: click_add_hook() declares hooks, but the project has no "
        "click_manifest(). Fix: add click_manifest(manifest.json.in) or "
        "click_manifest(NAME ... TITLE ... MAINTAINER ...)")
    endif()
    if(auto_arch)  # the project's own manifest.json, filled in with CLICK_ARCH
      set(${from_elf} "$CACHE{CLICK_ARCH}" PARENT_SCOPE)
    endif()
    return()
  endif()
  get_property(args GLOBAL PROPERTY _CLICK_MANIFEST_ARGS)
  get_property(manifest_auto GLOBAL PROPERTY _CLICK_MANIFEST_AUTO_ARCH)
  if(NOT manifest_auto)
    set(auto_arch FALSE)
  endif()
  set(output "${CMAKE_BINARY_DIR}/click/manifest.json")
  set(arch "${CLICK_ARCH}")
  if(auto_arch)
    _click_builds_binaries(binaries)
    if(NOT binaries)
      set(arch all)  # what the click target will find; it names the package now
      list(APPEND args --architecture all)
    endif()
  endif()
  list(APPEND args --default framework "${CLICK_FRAMEWORK}"
    --default architecture "${arch}" ${hook_args} ${apparmor_args})
  _click_user_value(CLICK_APPARMOR_POLICY policy)
  if(policy STREQUAL "")
    set(policy "$ENV{APPARMOR_POLICY}")
  endif()
  if(NOT policy STREQUAL "")
    list(APPEND args --policy-version "${policy}")
  endif()
  _click_run_python(summary _cmake manifest --output "${output}" ${args})
  foreach(key name version architecture framework filename)
    string(JSON ${key} GET "${summary}" ${key})
  endforeach()
  if(NOT architecture STREQUAL arch AND NOT architecture STREQUAL "multi")
    _click_builds_binaries(binaries)
    if(binaries)
      message(WARNING
        "ClickBuild: the manifest says architecture '${architecture}', but this build "
        "compiles for ${CLICK_ARCH}. Fix: write \"architecture\": \"@CLICK_ARCH@\" in "
        "the manifest template (or leave the field out)")
    endif()
  endif()
  string(JSON policy GET "${summary}" policy_version)
  if(CLICK_MODE)
    install(FILES "${output}" DESTINATION ".")
  endif()
  if(NOT policy STREQUAL "")
    set(policy ", AppArmor policy ${policy}")
  endif()
  message(STATUS "ClickBuild: ${name} ${version} for ${framework}${policy} -> ${filename}")
  set(${package_file} "${filename}" PARENT_SCOPE)
  if(auto_arch)
    set(${from_elf} "${architecture}" PARENT_SCOPE)
  endif()
endfunction()

function(_click_collect_targets dir out)
  get_property(targets DIRECTORY "${dir}" PROPERTY BUILDSYSTEM_TARGETS)
  get_property(subdirectories DIRECTORY "${dir}" PROPERTY SUBDIRECTORIES)
  foreach(sub IN LISTS subdirectories)
    _click_collect_targets("${sub}" more)
    list(APPEND targets ${more})
  endforeach()
  set(${out} "${targets}" PARENT_SCOPE)
endfunction()

function(_click_finalize_packages package_file from_elf)
  get_property(packages GLOBAL PROPERTY _CLICK_PACKAGE_TARGETS)
  if(NOT packages)
    return()
  endif()
  # The package depends on what "all" builds, so `--target click` builds it first.
  _click_collect_targets("${CMAKE_SOURCE_DIR}" targets)
  set(built "")
  foreach(target IN LISTS targets)
    if(target IN_LIST packages)
      continue()
    endif()
    get_target_property(type "${target}" TYPE)
    get_target_property(excluded "${target}" EXCLUDE_FROM_ALL)
    if(NOT type STREQUAL "INTERFACE_LIBRARY" AND NOT excluded)
      list(APPEND built "${target}")
    endif()
  endforeach()
  get_property(stage GLOBAL PROPERTY CLICK_STAGING_DIR)
  foreach(package IN LISTS packages)
    get_property(spec GLOBAL PROPERTY _CLICK_PACKAGE_${package})
    get_property(ignore GLOBAL PROPERTY _CLICK_PACKAGE_${package}_IGNORE)
    string(REPLACE "|" ";" spec "${spec}")
    list(GET spec 0 outdir)
    list(GET spec 1 arguments)
    if(built)
      add_dependencies("${package}" ${built})
    endif()
    set(file "")
    if(package_file)
      set(file "${outdir}/${package_file}")
    endif()
    set_property(TARGET "${package}" PROPERTY CLICK_PACKAGE_FILE "${file}")
    file(WRITE "${arguments}"
      "# Written by ClickBuild at configure time; read by ClickPackage.cmake.\n"
      "set(CLICK_BINARY_DIR [==[${CMAKE_BINARY_DIR}]==])\n"
      "set(CLICK_STAGE [==[${stage}]==])\n"
      "set(CLICK_PYTHON [==[${Python3_EXECUTABLE}]==])\n"
      "set(CLICK_OUTPUT_DIRECTORY [==[${outdir}]==])\n"
      "set(CLICK_IGNORE [==[${ignore}]==])\n"
      "set(CLICK_PACKAGE_FILE [==[${file}]==])\n"
      "set(CLICK_ARCH_FROM_ELF [==[${from_elf}]==])\n"
      "set(CLICK_STAMP [==[${CMAKE_BINARY_DIR}/click/${package}.stamp]==])\n")
  endforeach()
endfunction()
