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

include("${CMAKE_CURRENT_LIST_DIR}/ClickBuildSetup.cmake")

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
  # Is the architecture left to the build (no ARCHITECTURE, none or a placeholder in
  # the template)?  Then the click target may decide it from what was compiled.
  set(auto_arch TRUE)
  if(ARG_ARCHITECTURE)
    set(auto_arch FALSE)
  endif()
  if(ARG_INPUT)
    get_filename_component(input "${ARG_INPUT}" ABSOLUTE)
    if(NOT EXISTS "${input}")
      message(FATAL_ERROR "click_manifest(): ${input} does not exist; fix the INPUT path")
    endif()
    file(READ "${input}" raw)
    if(raw MATCHES "\"architecture\"[ \t\r\n]*:[ \t\r\n]*([^,}]*)")
      string(STRIP "${CMAKE_MATCH_1}" value)
      if(NOT value MATCHES "^\"(@CLICK_ARCH@|\\$\\{CLICK_ARCH\\}|\\$ENV\\{ARCH\\})?\"$")
        set(auto_arch FALSE)
      endif()
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
  set_property(GLOBAL PROPERTY _CLICK_MANIFEST_AUTO_ARCH "${auto_arch}")
  _click_defer_finalize()
endfunction()

set(_CLICK_HOOK_KEYWORDS
  APPARMOR apparmor  DESKTOP desktop  URLS urls  CONTENT_HUB content-hub
  PUSH_HELPER push-helper  ACCOUNT_APPLICATION account-application
  ACCOUNT_PROVIDER account-provider  ACCOUNT_QML_PLUGIN account-qml-plugin
  ACCOUNT_SERVICE account-service  ACCOUNTS accounts  PAY_UI pay-ui
  APPARMOR_PROFILE apparmor-profile CACHE INTERNAL "")

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
  set(directories ${ARG_DIRECTORIES})
  if(CMAKE_SYSROOT AND CMAKE_LIBRARY_ARCHITECTURE)
    # A build against the phone's root: the libraries are the root's, not this machine's.
    foreach(dir usr/lib lib)
      list(APPEND directories "${CMAKE_SYSROOT}/${dir}/${CMAKE_LIBRARY_ARCHITECTURE}")
    endforeach()
  endif()
  # Bracket arguments keep regexes and paths literal inside the install script.
  set(code "set(_click_x [==[${exclude}]==])\n")
  string(APPEND code "file(GET_RUNTIME_DEPENDENCIES\n")
  # One bracket argument per item: a bracket argument is one word, ';' and all.
  foreach(kind executables libraries modules directories)
    if(${kind})
      string(TOUPPER "${kind}" keyword)
      string(APPEND code "  ${keyword}")
      foreach(item IN LISTS ${kind})
        string(APPEND code " [==[${item}]==]")
      endforeach()
      string(APPEND code "\n")
    endif()
  endforeach()
  string(APPEND code
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
    # Called from po/CMakeLists.txt (where the Ubuntu SDK's projects did their
    # translations): the .po files are beside it, not in po/po.
    if(NOT IS_DIRECTORY "${CMAKE_CURRENT_SOURCE_DIR}/po")
      file(GLOB here "${CMAKE_CURRENT_SOURCE_DIR}/*.po" "${CMAKE_CURRENT_SOURCE_DIR}/*.pot")
      if(here)
        set(ARG_PO_DIR .)
      endif()
    endif()
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
  if(NOT IS_DIRECTORY "${po_dir}")
    message(WARNING
      "click_translations(${ARG_DOMAIN}): the PO_DIR ${po_dir} does not exist, so no "
      "translation is packed. Fix: give PO_DIR the folder of the .po files (relative to "
      "${CMAKE_CURRENT_SOURCE_DIR}), or create it: click-build i18n init <language>")
  endif()
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
