"""The click_* functions of the ClickBuild CMake package, each on a real project."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

import pytest
from backend_helpers import data_members, member_text, only_click, verify_both
from cmake_support import DESKTOP, build, cache, cmake, configure, flat, qml_app
from conftest import need, run, write_tree

pytestmark = pytest.mark.slow

LOAD = "find_package(ClickBuild CONFIG REQUIRED)"
MAINTAINER = "Jane Doe <jane@example.com>"
MANIFEST = (f'click_manifest(NAME qmlapp.example TITLE "QML app" '
            f'DESCRIPTION "A QML app for the tests" MAINTAINER "{MAINTAINER}")')
HOOK = "click_add_hook(qmlapp DESKTOP qmlapp.desktop APPARMOR qmlapp.apparmor)"
INSTALL = "install(FILES Main.qml icon.svg DESTINATION ${CLICK_INSTALL_DATADIR})"
CXX = "project(cxxapp VERSION 1.0 LANGUAGES CXX)"
HOST_TRIPLET = run(["dpkg-architecture", "-qDEB_HOST_MULTIARCH"]).stdout.strip()


@pytest.fixture(autouse=True)
def _tools() -> None:
    need("cmake")
    need("ninja")


def app(tmp_path: Path, *lines: str, files: dict[str, str] | None = None,
        project: str = "project(qmlapp VERSION 2.1 LANGUAGES NONE)") -> Path:
    return qml_app(tmp_path / "app", "\n".join((LOAD, *lines)), files=files, project=project)


def manifest(binary: Path) -> dict[str, object]:
    return json.loads((binary / "click" / "manifest.json").read_text())


def failure(tmp_path: Path, *lines: str, files: dict[str, str] | None = None) -> str:
    """Configure a broken project; the error text with CMake's line wrapping undone."""
    result = configure(app(tmp_path, *lines, files=files), tmp_path / "build", check=False)
    assert result.returncode != 0, result.stdout
    assert "CMake Error" in result.stderr
    return flat(result.stderr)


# ---------------------------------------------------------------- click_manifest --

@pytest.mark.oracle
def test_manifest_from_arguments(tmp_path: Path) -> None:
    src = app(tmp_path, INSTALL, (
        f'click_manifest(NAME qmlapp.example TITLE "QML app" MAINTAINER "{MAINTAINER}" '
        'DESCRIPTION "Says hello;\\nin QML." FRAMEWORK ubuntu-sdk-16.04 ICON icon.svg)'),
        HOOK, "click_package()")
    binary = tmp_path / "build"
    result = configure(src, binary)
    assert "Warning" not in result.stderr, result.stderr  # a clean project configures cleanly
    assert manifest(binary) == {
        "name": "qmlapp.example", "title": "QML app", "version": "2.1",
        "maintainer": MAINTAINER, "description": "Says hello;\nin QML.",
        "framework": "ubuntu-sdk-16.04", "icon": "icon.svg", "architecture": "all",
        "hooks": {"qmlapp": {"apparmor": "qmlapp.apparmor", "desktop": "qmlapp.desktop"}},
    }
    # The policy follows the manifest's framework, not the CLICK_FRAMEWORK default.
    apparmor = json.loads((binary / "click/apparmor/qmlapp/qmlapp.apparmor").read_text())
    assert apparmor["policy_version"] == 16.04
    build(binary)
    verify_both(only_click(binary))


def test_manifest_template_forms(tmp_path: Path) -> None:
    template = json.dumps({
        "name": "qmlapp.example", "version": "@PROJECT_VERSION@~${SUFFIX}",
        "title": "$ENV{APP_TITLE}", "maintainer": "Nobody <nobody@example.com>",
        "framework": "@CLICK_FRAMEWORK@", "x-source": "@CMAKE_PROJECT_NAME@",
    }, indent=4)
    src = app(tmp_path, 'set(SUFFIX "beta1")',
              f'click_manifest(manifest.json.in MAINTAINER "{MAINTAINER}")', HOOK,
              files={"manifest.json.in": template})
    binary = tmp_path / "build"
    configure(src, binary, env={"APP_TITLE": "Title from the environment"})
    assert manifest(binary) == {
        "name": "qmlapp.example", "version": "2.1~beta1", "title": "Title from the environment",
        "maintainer": MAINTAINER,  # an argument overrides the template
        "framework": "ubuntu-touch-24.04-1.x", "x-source": "qmlapp", "architecture": "all",
        "hooks": {"qmlapp": {"apparmor": "qmlapp.apparmor", "desktop": "qmlapp.desktop"}},
    }


def test_a_template_with_its_own_version_needs_no_project_version(tmp_path: Path) -> None:
    template = json.dumps({"name": "qmlapp.example", "version": "3.2", "title": "T",
                           "maintainer": MAINTAINER})
    src = qml_app(tmp_path / "app", "\n".join((LOAD, "click_manifest(manifest.json.in)", HOOK)),
                  project="project(qmlapp LANGUAGES NONE)", files={"manifest.json.in": template})
    configure(src, tmp_path / "build")
    assert manifest(tmp_path / "build")["version"] == "3.2"


def test_the_version_comes_from_click_version_when_a_front_end_sets_it(tmp_path: Path) -> None:
    src = app(tmp_path, MANIFEST, HOOK)
    configure(src, tmp_path / "build", "-DCLICK_VERSION=3.0.1")
    assert manifest(tmp_path / "build")["version"] == "3.0.1"


def test_an_architecture_list_makes_a_multi_package(tmp_path: Path) -> None:
    src = app(tmp_path, MANIFEST.replace(")", " ARCHITECTURE armhf arm64)"), HOOK,
              "click_package()")
    result = configure(src, tmp_path / "build")
    assert manifest(tmp_path / "build")["architecture"] == ["armhf", "arm64"]
    assert "-> qmlapp.example_2.1_multi.click" in result.stdout


def test_a_bad_manifest_fails_at_configure_time_with_every_problem(tmp_path: Path) -> None:
    template = json.dumps({"name": "Bad_Name", "version": "not a version", "title": "T",
                           "maintainer": "nobody", "framework": "ubuntu-sdk-20.04"})
    error = failure(tmp_path, "click_manifest(manifest.json.in)", HOOK, "click_package()",
                    files={"manifest.json.in": template})
    # every problem, on the one error line
    assert "click-build: error: manifest.json.in: name: 'Bad_Name' is not a valid package name" \
        in error
    assert "; version: 'not a version' is not a valid Debian version" in error
    assert "; maintainer: 'nobody' must look like 'Full Name <email@example.com>'" in error
    assert not (tmp_path / "build" / "click" / "stage").exists()


@pytest.mark.parametrize(("lines", "files", "expected"), [
    (("click_manifest(manifest.json.in)", HOOK), {"manifest.json.in": '{"name": "x",\n}'},
     "manifest.json.in: invalid JSON at line 2 column 1"),
    (('click_manifest(NAME qmlapp.example MAINTAINER "J <j@example.com>")',), {},
     'click_manifest(): TITLE is required when there is no INPUT manifest.json.in; give TITLE'),
    (("click_manifest(missing.json.in)",), {},
     "missing.json.in does not exist; fix the INPUT path"),
    ((MANIFEST, "click_add_hook(qmlapp DESKTOP nope.desktop APPARMOR qmlapp.apparmor)"), {},
     "nope.desktop does not exist. Fix the file name, or create the file"),
    ((MANIFEST, "click_add_hook(qmlapp DESKTOP qmlapp.desktop)"), {},
     "click_add_hook(qmlapp): every app needs an AppArmor policy; add APPARMOR qmlapp.apparmor"),
    ((MANIFEST, "click_add_hook(bad_app APPARMOR qmlapp.apparmor)"), {},
     "click_add_hook(): 'bad_app' is not a valid app name"),
    ((MANIFEST, HOOK, "click_add_hook(qmlapp APPARMOR qmlapp.apparmor)"), {},
     "click_add_hook(qmlapp): the apparmor hook is given twice"),
    ((HOOK,), {}, "click_add_hook() declares hooks, but the project has no click_manifest()"),
    ((MANIFEST, HOOK), {"qmlapp.apparmor": "{"},
     "qmlapp.apparmor: invalid JSON at line 1 column 2"),
    ((MANIFEST, HOOK), {"qmlapp.apparmor": '{"policy_groups": "networking"}'},
     "policy_groups: must be a list of policy group names"),
    ((MANIFEST, "click_add_hook(qmlapp APPARMOR qmlapp.apparmor HOOK urls)"), {},
     "HOOK takes pairs: HOOK <hook-name> <file>"),
    ((MANIFEST, HOOK, "click_package(BOGUS)"), {}, "click_package(): unexpected argument(s) BOGUS"),
])
def test_mistakes_name_their_fix(tmp_path: Path, lines: tuple[str, ...],
                                 files: dict[str, str], expected: str) -> None:
    assert expected in failure(tmp_path, *lines, files=files)


def test_a_hook_in_the_template_and_in_click_add_hook(tmp_path: Path) -> None:
    template = json.dumps({"name": "qmlapp.example", "title": "T", "maintainer": MAINTAINER,
                           "hooks": {"qmlapp": {"desktop": "other.desktop"}}})
    error = failure(tmp_path, "click_manifest(manifest.json.in)", HOOK,
                    files={"manifest.json.in": template})
    assert ("manifest.json.in: hooks.qmlapp.desktop: given both in the manifest "
            "('other.desktop') and by click_add_hook() ('qmlapp.desktop'); remove one") in error


# ---------------------------------------------------------------- click_add_hook --

@pytest.mark.oracle
def test_hooks_keywords_destination_and_configured_files(tmp_path: Path) -> None:
    src = app(tmp_path, INSTALL, MANIFEST,
              "click_add_hook(APP qmlapp DESTINATION meta DESKTOP qmlapp.desktop.in "
              "APPARMOR qmlapp.apparmor URLS qmlapp.url-dispatcher HOOK push-helper push.json)",
              "click_package()",
              files={"qmlapp.desktop.in": DESKTOP.replace("Name=QML app", "Name=@PROJECT_NAME@"),
                     "qmlapp.url-dispatcher": '[{"protocol": "qmlapp"}]\n',
                     "push.json": '{"exec": "push-helper"}\n'})
    binary = tmp_path / "build"
    configure(src, binary)
    # About the hook keywords: a push helper beside a desktop app, and no helper program,
    # are review errors (the stores want an app of its own for it), reported only here.
    refused = build(binary, check=False)
    assert refused.returncode != 0
    assert "build anyway with CLICK_BUILD_REVIEW=report" in flat(refused.stdout + refused.stderr)
    assert not list(binary.glob("*.click"))
    build(binary, env={"CLICK_BUILD_REVIEW": "report"})
    click = only_click(binary)
    verify_both(click)
    hooks = json.loads(run(["click", "info", str(click)]).stdout)["hooks"]
    assert hooks == {"qmlapp": {
        "apparmor": "meta/qmlapp.apparmor", "desktop": "meta/qmlapp.desktop",
        "urls": "meta/qmlapp.url-dispatcher", "push-helper": "meta/push.json"}}
    assert "Name=qmlapp\n" in member_text(click, "./meta/qmlapp.desktop")
    assert json.loads(member_text(click, "./meta/qmlapp.apparmor")) == {
        "policy_groups": [], "policy_version": 2404.1}


@pytest.mark.parametrize(("framework", "policy"), [
    ("ubuntu-touch-24.04-1.x", 2404.1), ("ubuntu-sdk-16.04", 16.04), ("ubuntu-sdk-14.04", 1.1)])
def test_policy_version_follows_the_framework(tmp_path: Path, framework: str,
                                             policy: float) -> None:
    src = app(tmp_path, MANIFEST, HOOK)
    configure(src, tmp_path / "build", f"-DCLICK_FRAMEWORK={framework}")
    built = json.loads((tmp_path / "build/click/apparmor/qmlapp/qmlapp.apparmor").read_text())
    assert built["policy_version"] == policy
    assert manifest(tmp_path / "build")["framework"] == framework


def test_a_policy_version_that_contradicts_the_framework_is_kept_and_flagged(
        tmp_path: Path) -> None:
    src = app(tmp_path, MANIFEST, HOOK,
              files={"qmlapp.apparmor": '{"policy_groups": [], "policy_version": 16.04}'})
    result = configure(src, tmp_path / "build")
    assert ("policy_version 16.04 does not match framework 'ubuntu-touch-24.04-1.x' (which "
            "uses 2404.1)") in flat(result.stderr)
    built = json.loads((tmp_path / "build/click/apparmor/qmlapp/qmlapp.apparmor").read_text())
    assert built["policy_version"] == 16.04


# ------------------------------------------------------ click_install_qml_module --

QMLDIR = {"Foo/Bar/qmldir": "module Foo.Bar\nplugin fooplugin\nWidget 1.0 Widget.qml\n",
          "Foo/Bar/Widget.qml": "import QtQuick 2.7\nItem {}\n",
          "Foo/Bar/CMakeLists.txt": "# not installed\n"}


def test_a_qml_module_goes_where_its_qmldir_says(tmp_path: Path) -> None:
    src = app(tmp_path, "click_install_qml_module(Foo/Bar)", files=QMLDIR)
    binary = tmp_path / "build"
    configure(src, binary)
    cmake("--install", binary, "--prefix", tmp_path / "p")
    assert sorted(p.name for p in (tmp_path / "p/qml/Foo/Bar").iterdir()) == ["Widget.qml",
                                                                              "qmldir"]


def test_a_qml_module_with_its_plugin(tmp_path: Path) -> None:
    src = app(tmp_path, "add_library(fooplugin MODULE plugin.cpp)",
              "click_install_qml_module(Foo/Bar PLUGIN fooplugin)",
              files={**QMLDIR, "plugin.cpp": "int foo() { return 1; }\n"}, project=CXX)
    binary = tmp_path / "build"
    configure(src, binary)
    cmake("--build", binary)
    cmake("--install", binary, "--prefix", tmp_path / "p")
    module = tmp_path / "p" / "lib" / HOST_TRIPLET / "Foo" / "Bar"
    assert sorted(p.name for p in module.iterdir()) == ["Widget.qml", "libfooplugin.so", "qmldir"]


@pytest.mark.parametrize(("files", "expected"), [
    ({"Foo/Bar/Widget.qml": "Item {}\n"}, "has no qmldir file"),
    ({"Foo/Bar/qmldir": "Widget 1.0 Widget.qml\n"}, "has no 'module Name.Space' line; add one"),
])
def test_a_qml_module_without_a_module_line(tmp_path: Path, files: dict[str, str],
                                            expected: str) -> None:
    assert expected in failure(tmp_path, "click_install_qml_module(Foo/Bar)", files=files)


# ----------------------------------------------------- click_bundle_runtime_deps --

def _third_party_library(tmp_path: Path) -> Path:
    """libthird.so.1, built and installed outside the app (as a -dev package would be)."""
    src = write_tree(tmp_path / "third", {
        "CMakeLists.txt": ("cmake_minimum_required(VERSION 3.19)\nproject(third CXX)\n"
                           "add_library(third SHARED third.cpp)\n"
                           "set_target_properties(third PROPERTIES VERSION 1.2.3 SOVERSION 1)\n"
                           "install(TARGETS third LIBRARY DESTINATION lib)\n"),
        "third.cpp": "int third() { return 3; }\n",
    })
    cmake("-S", src, "-B", tmp_path / "third-build", "-G", "Ninja")
    cmake("--build", tmp_path / "third-build")
    cmake("--install", tmp_path / "third-build", "--prefix", tmp_path / "prefix")
    return tmp_path / "prefix" / "lib"


def _bundling_app(tmp_path: Path, lib: Path, *extra: str) -> Path:
    return app(tmp_path,
               f'add_library(third SHARED IMPORTED)\nset_target_properties(third PROPERTIES '
               f'IMPORTED_LOCATION "{lib}/libthird.so.1" IMPORTED_SONAME libthird.so.1)',
               "add_executable(hello main.cpp)",
               "target_link_libraries(hello PRIVATE third)",
               "install(TARGETS hello RUNTIME DESTINATION ${CLICK_INSTALL_BINDIR})", INSTALL,
               *extra, MANIFEST.replace("qmlapp.example", "bundle.example"), HOOK,
               "click_package()",
               files={"main.cpp": "int third();\nint main() { return third() - 3; }\n"},
               project=CXX)


@pytest.mark.oracle
def test_runtime_dependencies_are_bundled_but_not_the_frameworks(tmp_path: Path) -> None:
    lib = _third_party_library(tmp_path)
    binary = tmp_path / "build"
    configure(_bundling_app(tmp_path, lib, "click_bundle_runtime_deps(TARGETS hello)"), binary)
    build(binary)
    click = only_click(binary)
    verify_both(click)
    listing = run(["dpkg-deb", "-c", str(click)]).stdout.splitlines()
    libs = sorted(line.split(None, 5)[5] for line in listing
                  if f"./lib/{HOST_TRIPLET}/lib" in line)
    assert libs == [f"./lib/{HOST_TRIPLET}/libthird.so.1 -> libthird.so.1.2.3",
                    f"./lib/{HOST_TRIPLET}/libthird.so.1.2.3"]
    # The bundled copy is what the packaged program runs with.
    run(["dpkg-deb", "-x", str(click), str(tmp_path / "x")])
    root = tmp_path / "x" / "lib" / HOST_TRIPLET
    run([str(root / "bin" / "hello")], env={"LD_LIBRARY_PATH": str(root)})


@pytest.mark.oracle
def test_excluded_runtime_dependencies_stay_out(tmp_path: Path) -> None:
    lib = _third_party_library(tmp_path)
    binary = tmp_path / "build"
    configure(_bundling_app(tmp_path, lib,
                            'click_bundle_runtime_deps(TARGETS hello EXCLUDE "^libthird")'), binary)
    # no framework has libthird: the review says the program will not load (the package
    # is written anyway in report mode)
    made = build(binary, env={"CLICK_BUILD_REVIEW": "report"})
    assert not any("libthird" in m for m in data_members(only_click(binary)))
    assert "needs libthird.so.1" in made.stderr and "[lint.abi-soname]" in made.stderr


@pytest.mark.oracle
def test_an_unresolvable_dependency_names_the_fix_and_directories_fix_it(tmp_path: Path) -> None:
    lib = _third_party_library(tmp_path)
    binary = tmp_path / "build"
    rpathless = "set_target_properties(hello PROPERTIES SKIP_BUILD_RPATH ON)"
    configure(_bundling_app(tmp_path, lib, rpathless,
                            "click_bundle_runtime_deps(TARGETS hello)"), binary)
    result = build(binary, check=False)
    assert result.returncode != 0
    assert ("click_bundle_runtime_deps(): cannot find libthird.so.1; add the folder holding it "
            "with DIRECTORIES") in flat(result.stdout + result.stderr)
    configure(_bundling_app(tmp_path, lib, rpathless,
                            f'click_bundle_runtime_deps(TARGETS hello DIRECTORIES "{lib}")'), binary)
    build(binary)
    assert f"./lib/{HOST_TRIPLET}/libthird.so.1.2.3" in data_members(only_click(binary))


# ------------------------------------------------------------ click_translations --

@pytest.mark.oracle
def test_translations_without_po_files_yet(tmp_path: Path) -> None:
    src = app(tmp_path, INSTALL, MANIFEST, HOOK,
              "click_translations(DOMAIN qmlapp.example SOURCES Main.qml)", "click_package()",
              files={"Main.qml": 'import QtQuick 2.7\nText { text: i18n.tr("Hi there") }\n',
                     "po/README": "translations go here\n"})
    binary = tmp_path / "build"
    configure(src, binary)
    build(binary)
    click = only_click(binary)
    assert member_text(click, "./qmlapp.desktop") == DESKTOP
    assert not any(m.endswith(".mo") for m in data_members(click))
    build(binary, "pot")
    pot = (src / "po" / "qmlapp.example.pot").read_text()
    assert 'msgid "Hi there"' in pot and 'msgid "QML app"' in pot


@pytest.mark.oracle
def test_translations_from_the_po_folders_own_cmakelists(tmp_path: Path) -> None:
    """The Ubuntu SDK's projects did their translations in po/CMakeLists.txt; there the
    default PO_DIR was po/po: no .mo file and an untranslated launcher, silently."""
    po = ('msgid ""\nmsgstr ""\n"Content-Type: text/plain; charset=UTF-8\\n"\n"Language: fr\\n"\n\n'
          'msgid "QML app"\nmsgstr "Appli QML"\n')
    src = app(tmp_path, INSTALL, MANIFEST, HOOK, "add_subdirectory(po)", "click_package()",
              files={"po/CMakeLists.txt":
                     "click_translations(DOMAIN qmlapp.example SOURCES ../Main.qml)\n",
                     "po/fr.po": po})
    binary = tmp_path / "build"
    said = configure(src, binary)
    assert "Warning" not in said.stderr, said.stderr
    build(binary)
    click = only_click(binary)
    assert "./share/locale/fr/LC_MESSAGES/qmlapp.example.mo" in data_members(click)
    assert "Name[fr]=Appli QML\n" in member_text(click, "./qmlapp.desktop")
    build(binary, "pot")
    assert (src / "po" / "qmlapp.example.pot").is_file() and not (src / "po" / "po").exists()


def test_a_po_dir_that_does_not_exist_is_named(tmp_path: Path) -> None:
    src = app(tmp_path, INSTALL, MANIFEST, HOOK,
              "click_translations(DOMAIN qmlapp.example PO_DIR translations SOURCES Main.qml)",
              "click_package()", files={"po/fr.po": 'msgid ""\nmsgstr ""\n'})
    said = flat(configure(src, tmp_path / "build").stderr)
    assert (f"click_translations(qmlapp.example): the PO_DIR {src}/translations does not "
            "exist, so no translation is packed. Fix: give PO_DIR") in said


def test_translations_need_a_domain(tmp_path: Path) -> None:
    assert "click_translations(): DOMAIN is required" in failure(
        tmp_path, "click_translations(SOURCES Main.qml)")


# ----------------------------------------------------------------- click_package --

@pytest.mark.oracle
def test_the_click_target_repacks_only_what_changed(tmp_path: Path) -> None:
    src = app(tmp_path, INSTALL, MANIFEST, HOOK,
              "if(WITH_EXTRA)\n  install(FILES extra.txt DESTINATION .)\nendif()",
              "add_custom_target(never COMMAND false)",  # not in "all": must not be built
              "click_package()", files={"extra.txt": "extra\n"})
    binary = tmp_path / "build"
    configure(src, binary, "-DWITH_EXTRA=ON")
    build(binary)
    click = only_click(binary)
    assert "./extra.txt" in data_members(click)
    first = click.stat()

    again = build(binary)
    assert f"{click} is up to date" in again.stdout
    assert (click.stat().st_ino, click.stat().st_mtime_ns) == (first.st_ino, first.st_mtime_ns)

    (src / "Main.qml").write_text("import QtQuick 2.7\nText { text: 'changed' }\n")
    # An edit made later, as a person makes it: file times tick coarsely, and an
    # edit within the build's own tick would look older than the outputs.
    later = first.st_mtime + 5
    os.utime(src / "Main.qml", (later, later))
    build(binary)
    assert click.stat().st_mtime_ns != first.st_mtime_ns  # rewritten (inode numbers get reused)
    assert "changed" in member_text(click, "./Main.qml")
    verify_both(click)

    configure(src, binary, "-DWITH_EXTRA=OFF")  # an install rule goes away
    result = build(binary)
    assert "removing 1 file(s) no install rule produces any more" in result.stdout
    assert "./extra.txt" not in data_members(click)
    assert not (binary / "click" / "stage" / "extra.txt").exists()


@pytest.mark.oracle
def test_click_package_options(tmp_path: Path) -> None:
    src = app(tmp_path, INSTALL, "install(FILES Main.qml DESTINATION . RENAME Main.qml.debug)",
              MANIFEST, HOOK, 'click_package(TARGET pack OUTPUT_DIRECTORY out IGNORE "*.debug")',
              'file(GENERATE OUTPUT "${CMAKE_BINARY_DIR}/file.txt" '
              'CONTENT "$<TARGET_PROPERTY:pack,CLICK_PACKAGE_FILE>")')
    binary = tmp_path / "build"
    configure(src, binary)
    build(binary, "pack")
    click = only_click(binary / "out")
    assert (binary / "file.txt").read_text() == str(click)
    assert (binary / "click" / "stage" / "Main.qml.debug").is_file()
    assert "./Main.qml.debug" not in data_members(click)


def test_a_project_that_installs_its_own_manifest(tmp_path: Path) -> None:
    hand_written = json.dumps({"name": "qmlapp.example", "version": "1.0", "title": "T",
                               "description": "A QML app for the tests",
                               "maintainer": MAINTAINER, "framework": "ubuntu-sdk-20.04",
                               "hooks": {"qmlapp": {"apparmor": "qmlapp.apparmor",
                                                    "desktop": "qmlapp.desktop"}}})
    src = app(tmp_path, INSTALL, "install(FILES manifest.json qmlapp.apparmor DESTINATION .)",
              "if(WITH_DESKTOP)\n  install(FILES qmlapp.desktop DESTINATION .)\nendif()",
              "click_package()", files={"manifest.json": hand_written})
    binary = tmp_path / "build"
    configure(src, binary, "-DWITH_DESKTOP=OFF")
    result = build(binary, check=False)
    assert result.returncode != 0
    assert (f"hooks.qmlapp.desktop: 'qmlapp.desktop' is not in the install tree "
            f"{binary / 'click' / 'stage'}; install it") in flat(result.stdout + result.stderr)
    configure(src, binary, "-DWITH_DESKTOP=ON")
    build(binary)
    assert only_click(binary).name == "qmlapp.example_1.0_all.click"


@pytest.mark.oracle
def test_destdir_in_the_environment_does_not_leak(tmp_path: Path) -> None:
    src = app(tmp_path, INSTALL, MANIFEST, HOOK, "click_package()")
    binary = tmp_path / "build"
    configure(src, binary)
    build(binary, env={"DESTDIR": str(tmp_path / "elsewhere")})
    assert not (tmp_path / "elsewhere").exists()
    assert "./Main.qml" in data_members(only_click(binary))


def test_click_mode_off_is_a_desktop_install(tmp_path: Path) -> None:
    src = app(tmp_path, "add_executable(hello main.cpp)",
              "install(TARGETS hello RUNTIME DESTINATION ${CLICK_INSTALL_BINDIR})",
              MANIFEST, HOOK, "click_package()",
              files={"main.cpp": "int main() { return 0; }\n"}, project=CXX)
    binary = tmp_path / "build"
    configure(src, binary, "-DCLICK_MODE=OFF")
    values = cache(binary)
    assert values["CLICK_INSTALL_BINDIR"] == "bin"
    assert values["CLICK_INSTALL_DATADIR"] == "share/cxxapp"
    cmake("--build", binary)
    # Under DESTDIR, so that a destination outside the prefix could not reach the system.
    staged = tmp_path / "destdir"
    cmake("--install", binary, "--prefix", "/opt/cxxapp", env={"DESTDIR": str(staged)})
    installed = sorted(str(p.relative_to(staged)) for p in staged.rglob("*") if not p.is_dir())
    assert installed == ["opt/cxxapp/bin/hello", "opt/cxxapp/share/applications/qmlapp.desktop"]
    result = build(binary, check=False)
    assert result.returncode != 0
    assert "CLICK_MODE is OFF" in result.stdout and "-DCLICK_MODE=ON" in result.stdout


def test_the_python_helper_is_hidden_from_help() -> None:
    out = run([sys.executable, "-m", "click_build", "--help"]).stdout
    assert "_cmake" not in out


@pytest.mark.oracle
def test_folders_with_spaces_and_a_translated_desktop_file(tmp_path: Path) -> None:
    po = ('msgid ""\nmsgstr ""\n"Content-Type: text/plain; charset=UTF-8\\n"\n"Language: fr\\n"\n\n'
          'msgid "QML app"\nmsgstr "Appli QML"\n')
    src = qml_app(tmp_path / "my app", "\n".join((
        LOAD, INSTALL, MANIFEST, HOOK,
        "click_translations(DOMAIN qmlapp.example PO_DIR \"trans lations\" SOURCES Main.qml)",
        'click_package(OUTPUT_DIRECTORY "out dir")')),
        project="project(qmlapp VERSION 2.1 LANGUAGES NONE)",
        files={"trans lations/fr.po": po})
    binary = tmp_path / "my build"
    configure(src, binary)
    build(binary)
    click = only_click(binary / "out dir")
    verify_both(click)
    assert "Name[fr]=Appli QML\n" in member_text(click, "./qmlapp.desktop")
    assert "./share/locale/fr/LC_MESSAGES/qmlapp.example.mo" in data_members(click)


@pytest.mark.oracle
def test_loaded_in_one_folder_used_in_another(tmp_path: Path) -> None:
    """Everything the functions need is global: find_package in a sibling folder is enough."""
    src = write_tree(tmp_path / "app", {
        "CMakeLists.txt": ("cmake_minimum_required(VERSION 3.19)\n"
                           "project(qmlapp VERSION 2.1 LANGUAGES NONE)\n"
                           "add_subdirectory(finder)\nadd_subdirectory(app)\n"),
        "finder/CMakeLists.txt": f"{LOAD}\n",
        "app/CMakeLists.txt": "\n".join((INSTALL, MANIFEST, HOOK, "click_package()")),
        "app/Main.qml": "import QtQuick 2.7\nItem {}\n", "app/icon.svg": "<svg/>\n",
        "app/qmlapp.desktop": DESKTOP, "app/qmlapp.apparmor": '{"policy_groups": []}\n',
    })
    binary = tmp_path / "build"
    configure(src, binary)
    build(binary)
    assert {"./Main.qml", "./qmlapp.desktop", "./qmlapp.apparmor"} <= set(
        data_members(only_click(binary)))


def test_the_click_target_packs_what_click_build_build_makes_of_its_tree(
        tmp_path: Path) -> None:
    """docs/cmake.md: a package built by CMake is byte for byte what `click-build build`
    makes of the same install tree."""
    from conftest import CLICK_BUILD

    src = app(tmp_path, INSTALL, MANIFEST, HOOK, "click_package()")
    binary = tmp_path / "build"
    env = {**os.environ, "SOURCE_DATE_EPOCH": "1700000000"}
    configure(src, binary)
    build(binary, env=env)
    ours = only_click(binary)
    again = tmp_path / "again"
    run([*CLICK_BUILD, "build", str(binary / "click" / "stage"), "-o", str(again)], env=env)
    assert only_click(again).read_bytes() == ours.read_bytes()
