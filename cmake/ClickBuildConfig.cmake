#[=======================================================================[.rst:
ClickBuild
----------

Build Click packages (``.click``), the app packages of Ubuntu Touch, from a
CMake project.  Ships with click-build; the packaging itself is done by
``${Python3_EXECUTABLE} -m click_build``, with the finishing stage that
``click-build build`` uses, so CMake and the ``click-build`` command always
agree on the format.

Finding it::

  find_package(ClickBuild CONFIG REQUIRED)   # after project()

with ``-DClickBuild_DIR="$(click-build --cmake-dir)"`` (or that directory in
``CMAKE_PREFIX_PATH``); projects built through scikit-build-core find it with
no flags (``cmake.root`` entry point).  ``include(<dir>/ClickBuild.cmake)``
works too.  ``docs/cmake.md`` is the user guide.

Cache variables (each filled in this order: an explicit ``-D`` or ``set()``;
the environment the existing tooling exports; the toolchain; a default)

``CLICK_ARCH``
  Debian architecture of the package: env ``ARCH``; then
  ``CMAKE_LIBRARY_ARCHITECTURE`` or ``CMAKE_SYSTEM_PROCESSOR`` mapped to a
  Debian name; then ``dpkg-architecture``; ``all`` when the project compiles
  nothing (no language enabled, not cross-compiling).  When it came from the
  toolchain, the ``click`` target takes the package's architecture from the
  ELF files it installed (none: ``all``).
``CLICK_ARCH_TRIPLET``
  Multiarch triplet (``aarch64-linux-gnu``): env ``ARCH_TRIPLET``, else
  derived as above; empty for ``all``.
``CLICK_FRAMEWORK``
  env ``CLICK_FRAMEWORK``, then ``SDK_FRAMEWORK``; default: the templates'
  framework (``ubuntu-touch-24.04-1.x``).
``CLICK_APPARMOR_POLICY``
  env ``APPARMOR_POLICY``, else the policy version of ``CLICK_FRAMEWORK``
  (``ubuntu-sdk-16.04`` -> 16.04, ``ubuntu-touch-24.04-1.x`` -> 2404.1).
``CLICK_MODE`` (option, ON)
  Install into the click layout below, with the prefix ``/.`` (the package
  root; the ``click`` target stages with ``DESTDIR``, and a plain install
  without ``DESTDIR`` stops), and ``INSTALL_TESTS`` OFF.  OFF gives the usual
  GNUInstallDirs layout (to run the app from ``/usr/local`` on a desktop) and
  no package.
``CLICK_INSTALL_BINDIR``, ``CLICK_INSTALL_LIBDIR``, ``CLICK_INSTALL_QMLDIR``, ``CLICK_INSTALL_DATADIR``, ``CLICK_INSTALL_LOCALEDIR``
  Install destinations, relative to the package root: ``lib/<triplet>/bin``,
  ``lib/<triplet>``, ``lib/<triplet>`` (on ``QML2_IMPORT_PATH`` at run time),
  ``.`` and ``share/locale``.  Without a triplet (``all``): ``.``, ``lib``,
  ``qml``, ``.``, ``share/locale``.
``CLICK_FRAMEWORK_LIBRARIES``
  Regular expressions of the shared libraries every framework provides; they
  are never bundled by ``click_bundle_runtime_deps()``.

Also set: ``ClickBuild_VERSION``, ``CLICK_BUILD_CMAKE_DIR`` (this directory),
``CLICK_STAGING_DIR`` (the ``DESTDIR`` of the tree ``click_package()`` packs),
``Python3_EXECUTABLE`` (the
interpreter with click_build: ``-DPython3_EXECUTABLE``, else FindPython3,
else the one ``click-build`` on ``PATH`` runs with).

Functions

``click_manifest([INPUT] <manifest.json.in>)``
  Configure a manifest template (``@VAR@``, ``${VAR}`` and ``$ENV{VAR}``).
``click_manifest(NAME n TITLE t MAINTAINER m [VERSION v] [DESCRIPTION d] [FRAMEWORK f] [ICON i] [ARCHITECTURE a...])``
  Or generate it (``VERSION`` defaults to ``PROJECT_VERSION``, ``FRAMEWORK``
  to ``CLICK_FRAMEWORK``, ``ARCHITECTURE`` to ``CLICK_ARCH``); fields given
  with ``INPUT`` override the template.  Validated at configure time by
  click_build's rules, installed as ``manifest.json`` at the package root.
``click_add_hook(<app> APPARMOR f [DESKTOP f] [URLS f] [CONTENT_HUB f] [PUSH_HELPER f] [ACCOUNT_APPLICATION f] [ACCOUNT_PROVIDER f] [ACCOUNT_QML_PLUGIN f] [ACCOUNT_SERVICE f] [ACCOUNTS f] [PAY_UI f] [HOOK <name> f]... [DESTINATION dir])``
  Install the files (``*.in`` ones configured with ``@VAR@``) and declare
  the app's hooks in the manifest.  The AppArmor file gets ``policy_version``
  from the framework; desktop files are translated when
  ``click_translations()`` is used.  ``APP <app>`` is accepted too.
``click_install_qml_module(<dir> [PLUGIN target] [DESTINATION dir])``
  Install a QML module where its ``qmldir`` says (``module Foo.Bar`` ->
  ``${CLICK_INSTALL_QMLDIR}/Foo/Bar``), with its plugin target if any.
``click_bundle_runtime_deps(TARGETS t... [DIRECTORIES d...] [EXCLUDE regex...] [DESTINATION dir])``
  At install time, copy the shared libraries the targets need, except the
  framework's (``CLICK_FRAMEWORK_LIBRARIES``) and the project's own, into
  ``CLICK_INSTALL_LIBDIR``, using ``file(GET_RUNTIME_DEPENDENCIES)``.
``click_translations(DOMAIN d [PO_DIR po] SOURCES f... [POT_TARGET pot])``
  ``.mo`` files from ``<PO_DIR>/*.po`` into ``share/locale/*/LC_MESSAGES``,
  a ``pot`` target that runs xgettext (Qt and Lomiri keywords) over the
  sources and desktop files, and translated desktop files
  (``msgfmt --desktop``).
``click_package([TARGET click] [OUTPUT_DIRECTORY dir] [IGNORE pattern...])``
  A target that installs the project with ``DESTDIR=${CLICK_STAGING_DIR}``
  (absolute destinations land there too) and packs that tree as
  ``click-build build`` does, writing ``NAME_VERSION_ARCH.click``; it repacks
  only when the installed files changed.  The target's
  ``CLICK_PACKAGE_FILE`` property holds the file name.
#]=======================================================================]

# A failed first find_package(ClickBuild) must stay failed for later calls,
# which the include guard below would otherwise turn into "found".
get_property(_click_build_error GLOBAL PROPERTY _CLICK_BUILD_NOT_FOUND_MESSAGE)
if(_click_build_error)
  set(ClickBuild_FOUND FALSE)
  set(ClickBuild_NOT_FOUND_MESSAGE "${_click_build_error}")
  unset(_click_build_error)
  return()
endif()

include_guard(GLOBAL)

set(_CLICK_BUILD_VIA_FIND_PACKAGE TRUE)
include("${CMAKE_CURRENT_LIST_DIR}/ClickBuild.cmake")
unset(_CLICK_BUILD_VIA_FIND_PACKAGE)

get_property(_click_build_error GLOBAL PROPERTY _CLICK_BUILD_NOT_FOUND_MESSAGE)
if(_click_build_error)
  set(ClickBuild_FOUND FALSE)
  set(ClickBuild_NOT_FOUND_MESSAGE "${_click_build_error}")
endif()
unset(_click_build_error)
