"""What a click-mode build folder does on its own: staging with DESTDIR, the prefix, tests
left out, the variables a front end passes, the framework it reports, and the package's
architecture decided by what was compiled."""

from __future__ import annotations

import re
import shutil
from pathlib import Path

import pytest
from backend_helpers import control_field, data_members, only_click, verify_both
from cmake_support import CMAKE_DIR, build, cache, cmake, configure, flat, qml_app
from conftest import need, run

pytestmark = pytest.mark.slow

LOAD = "find_package(ClickBuild CONFIG REQUIRED)"
MANIFEST = ('click_manifest(NAME qmlapp.example TITLE "QML app" '
            'DESCRIPTION "A QML app for the tests" MAINTAINER "J D <j@example.com>")')
HOOK = "click_add_hook(qmlapp DESKTOP qmlapp.desktop APPARMOR qmlapp.apparmor)"
INSTALL = "install(FILES Main.qml icon.svg DESTINATION ${CLICK_INSTALL_DATADIR})"
HOST_ARCH = run(["dpkg", "--print-architecture"]).stdout.strip()
TESTS_OPTION = 'option(INSTALL_TESTS "Install the tests on make install" on)'


@pytest.fixture(autouse=True)
def _tools() -> None:
    need("cmake")
    need("ninja")


# ------------------------------------------------------------ staging with DESTDIR --

@pytest.mark.oracle
def test_absolute_destinations_land_in_the_package_not_on_the_host(tmp_path: Path) -> None:
    # A name of this test run's own, so that the host check cannot meet an old file.
    unique = f"click-build-test-{tmp_path.name}"
    src = qml_app(tmp_path / "app", "\n".join((
        LOAD, INSTALL, MANIFEST, HOOK,
        f"install(FILES extra.txt DESTINATION / RENAME {unique}.txt)",
        f"install(FILES extra.txt DESTINATION ${{CMAKE_INSTALL_PREFIX}}/{unique})",
        f"if(WITH_SHARE)\n  install(FILES extra.txt DESTINATION /share/{unique})\nendif()",
        "click_package()")), files={"extra.txt": "extra\n"})
    binary = tmp_path / "build"
    configure(src, binary, "-DWITH_SHARE=ON")
    build(binary)
    click = only_click(binary)
    verify_both(click)
    members = data_members(click)
    for member in (f"./{unique}.txt", f"./{unique}/extra.txt", f"./share/{unique}/extra.txt",
                   "./Main.qml"):
        assert member in members
    for host in (f"/{unique}.txt", f"/{unique}", f"/share/{unique}"):
        assert not Path(host).exists(), host
    # Pruning follows DESTDIR: a rule that goes away takes its file out of the stage.
    configure(src, binary, "-DWITH_SHARE=OFF")
    result = build(binary)
    assert "removing 1 file(s) no install rule produces any more" in result.stdout
    assert f"./share/{unique}/extra.txt" not in data_members(click)


def test_the_prefix_is_the_package_root_and_a_plain_install_needs_destdir(tmp_path: Path) -> None:
    src = qml_app(tmp_path / "app", "\n".join((LOAD, INSTALL, MANIFEST, HOOK, "click_package()")))
    binary = tmp_path / "build"
    configure(src, binary)
    assert cache(binary)["CMAKE_INSTALL_PREFIX"] == "/."
    result = cmake("--install", binary, check=False)
    assert result.returncode != 0
    assert (f"in CLICK_MODE the install prefix is the package root /, so this would write the "
            f"app into the system. Fix: cmake --build {binary} --target click, or give the tree "
            f"a place: DESTDIR=$PWD/tree cmake --install {binary}") in flat(result.stderr)
    assert not Path("/Main.qml").exists()
    # Both ways out work: DESTDIR (what the click target does) and another prefix.
    cmake("--install", binary, env={"DESTDIR": str(tmp_path / "tree")})
    assert (tmp_path / "tree" / "Main.qml").is_file()
    cmake("--install", binary, "--prefix", tmp_path / "prefix")
    assert (tmp_path / "prefix" / "manifest.json").is_file()


def test_the_prefix_follows_click_mode_unless_you_set_it(tmp_path: Path) -> None:
    src = qml_app(tmp_path / "app", LOAD)
    binary = tmp_path / "build"
    for mode, prefix in (("ON", "/."), ("OFF", "/usr/local"), ("ON", "/.")):
        configure(src, binary, f"-DCLICK_MODE={mode}")
        assert cache(binary)["CMAKE_INSTALL_PREFIX"] == prefix
    configure(src, binary, "-DCMAKE_INSTALL_PREFIX=/opt/app")
    configure(src, binary, "-DCLICK_MODE=OFF")
    assert cache(binary)["CMAKE_INSTALL_PREFIX"] == "/opt/app"


def test_the_build_type_is_the_backends_unless_you_choose_one(tmp_path: Path) -> None:
    """No CMAKE_BUILD_TYPE: Release, what python -m build uses, so a plain configure
    packs the backend's compiled bytes (tests/test_routes.py compares them)."""
    src = qml_app(tmp_path / "app", LOAD)
    binary = tmp_path / "build"
    said = configure(src, binary).stdout
    assert cache(binary)["CMAKE_BUILD_TYPE"] == "Release"
    assert "ClickBuild: CMAKE_BUILD_TYPE is Release, as python -m build builds" in said
    configure(src, binary, "-DCMAKE_BUILD_TYPE=Debug")
    assert cache(binary)["CMAKE_BUILD_TYPE"] == "Debug"
    configure(src, binary)
    assert cache(binary)["CMAKE_BUILD_TYPE"] == "Debug"  # a choice sticks
    desktop = tmp_path / "desktop"
    configure(src, desktop, "-DCLICK_MODE=OFF")
    assert cache(desktop).get("CMAKE_BUILD_TYPE", "") == ""  # not a package build: left alone


@pytest.mark.parametrize("generator", ["Ninja Multi-Config"])
def test_a_multi_config_build_without_config_packs_release(tmp_path: Path, generator: str) -> None:
    """Ninja Multi-Config builds the first of CMAKE_CONFIGURATION_TYPES (Debug) when
    --config is not given: the package of `cmake --build build --target click` was a
    Debug build, unlike the one of python -m build.  Release unless the user chooses."""
    src = qml_app(tmp_path / "app", "\n".join([
        LOAD, MANIFEST, HOOK, INSTALL,
        "add_executable(kind kind.cpp)",
        "install(TARGETS kind RUNTIME DESTINATION ${CLICK_INSTALL_BINDIR})",
        "click_package()"]), files={"kind.cpp": (
            '#include <cstdio>\n'
            '#ifdef NDEBUG\nstatic const char kind[] = "build-kind-RELEASE";\n'
            '#else\nstatic const char kind[] = "build-kind-DEBUG";\n#endif\n'
            'int main() { std::puts(kind); }\n')},
        project="project(qmlapp VERSION 2.1 LANGUAGES CXX)")
    binary = tmp_path / "build"
    said = cmake("-S", src, "-B", binary, "-G", generator,
                 f"-DClickBuild_DIR={CMAKE_DIR}").stdout
    assert cache(binary)["CMAKE_DEFAULT_BUILD_TYPE"] == "Release"
    assert "CMAKE_DEFAULT_BUILD_TYPE is Release" in flat(said)
    build(binary)
    assert any(name.endswith("/bin/kind") for name in data_members(next(binary.glob("*.click"))))
    program = next((binary / "click" / "stage").rglob("kind")).read_bytes()  # what was packed
    assert b"build-kind-RELEASE" in program and b"build-kind-DEBUG" not in program
    # --config still chooses, and a choice of the default sticks
    cmake("-S", src, "-B", binary, "-DCMAKE_DEFAULT_BUILD_TYPE=Debug")
    cmake("-S", src, "-B", binary)
    assert cache(binary)["CMAKE_DEFAULT_BUILD_TYPE"] == "Debug"


def test_the_packed_program_does_not_depend_on_the_build_folder(tmp_path: Path) -> None:
    """A program linked to the project's own library (in a subdirectory) had the build
    folder's RPATH cleared at install but its length kept: the bytes differed between
    `cmake -B build` and python -m build's build/click-<arch>/cmake, though both build
    Release to pack the same bytes."""
    files = {"core/CMakeLists.txt": "add_library(core SHARED core.cpp)\n"
                                    "install(TARGETS core LIBRARY DESTINATION ${CLICK_INSTALL_LIBDIR})\n",
             "core/core.cpp": "int core() { return 42; }\n",
             "main.cpp": "int core();\nint main() { return core() == 42 ? 0 : 1; }\n"}
    src = qml_app(tmp_path / "app", "\n".join([
        LOAD, MANIFEST, HOOK, INSTALL, "add_subdirectory(core)",
        "add_executable(prog main.cpp)", "target_link_libraries(prog PRIVATE core)",
        "install(TARGETS prog RUNTIME DESTINATION ${CLICK_INSTALL_BINDIR})",
        "click_package()"]), files=files, project="project(qmlapp VERSION 2.1 LANGUAGES CXX)")
    env = {"SOURCE_DATE_EPOCH": "1700000000"}
    programs = []
    for binary in (tmp_path / "b", tmp_path / "a much longer build folder" / "click-amd64"):
        configure(src, binary, env=env)
        build(binary, env=env)
        assert run([str(binary / "prog")]).returncode == 0  # still runs from the build tree
        programs.append(next((binary / "click" / "stage").rglob("prog")).read_bytes())
    assert programs[0] == programs[1]
    configure(src, tmp_path / "own", "-DCMAKE_BUILD_RPATH_USE_ORIGIN=OFF")
    assert cache(tmp_path / "own")["CMAKE_BUILD_RPATH_USE_ORIGIN"] == "OFF"  # a choice stays


# ---------------------------------------------------------------- INSTALL_TESTS --

@pytest.mark.parametrize(("order", "defines", "expected", "said"), [
    ((LOAD, TESTS_OPTION), (), "OFF", False),             # ClickBuild first: its default wins
    ((TESTS_OPTION, LOAD), (), "OFF", True),               # the app's option() first: overridden
    ((LOAD, TESTS_OPTION), ("-DINSTALL_TESTS=ON",), "ON", False),  # asked for
])
def test_install_tests_is_off_unless_asked_for(
        tmp_path: Path, order: tuple[str, ...], defines: tuple[str, ...], expected: str,
        said: bool) -> None:
    body = "\n".join((*order, 'file(WRITE "${CMAKE_BINARY_DIR}/tests.txt" "${INSTALL_TESTS}")'))
    src = qml_app(tmp_path / "app", body)
    binary = tmp_path / "build"
    result = configure(src, binary, *defines)
    assert (binary / "tests.txt").read_text() == expected
    assert ("ClickBuild: INSTALL_TESTS is OFF in CLICK_MODE" in result.stdout) == said
    if said:  # the way back it names works, and sticks
        configure(src, binary, "-DINSTALL_TESTS=ON")
        assert (binary / "tests.txt").read_text() == "ON"
        configure(src, binary)
        assert (binary / "tests.txt").read_text() == "ON"


def test_install_tests_is_the_apps_in_desktop_mode(tmp_path: Path) -> None:
    body = "\n".join((LOAD, TESTS_OPTION,
                      'file(WRITE "${CMAKE_BINARY_DIR}/tests.txt" "${INSTALL_TESTS}")'))
    binary = tmp_path / "build"
    configure(qml_app(tmp_path / "app", body), binary, "-DCLICK_MODE=OFF")
    assert (binary / "tests.txt").read_text() == "ON"


# --------------------------------------------------------- what a front end passes --

def test_every_variable_a_front_end_passes_is_used(tmp_path: Path) -> None:
    """A project that installs its own manifest still uses what clickable or the backend
    pass, so CMake does not ask the user to remove them."""
    src = qml_app(tmp_path / "app", "\n".join((
        LOAD, "install(FILES manifest.json qmlapp.desktop qmlapp.apparmor DESTINATION /)",
        "click_package()")), files={"manifest.json": "{}"})
    result = configure(src, tmp_path / "build", "-DCLICK_MODE=ON", "-DINSTALL_TESTS=OFF",
                       "-DCLICK_ARCH=arm64", "-DCLICK_ARCH_TRIPLET=aarch64-linux-gnu",
                       "-DCLICK_FRAMEWORK=ubuntu-sdk-20.04", "-DCLICK_APPARMOR_POLICY=20.04",
                       "-DCLICK_VERSION=1.0")
    assert "Manually-specified variables were not used" not in result.stderr
    assert "CMake Warning" not in result.stderr


# ----------------------------------------------------------------- the framework --

def test_configure_reports_the_framework_the_manifest_declares(tmp_path: Path) -> None:
    template = ('{"name": "qmlapp.example", "version": "1.0", "title": "T", '
                '"maintainer": "J D <j@example.com>", "framework": "ubuntu-sdk-16.04"}')
    src = qml_app(tmp_path / "app", "\n".join((LOAD, "click_manifest(manifest.json.in)", HOOK,
                                               "click_package()")),
                  files={"manifest.json.in": template})
    result = configure(src, tmp_path / "build")
    assert ("-- ClickBuild: qmlapp.example 1.0 for ubuntu-sdk-16.04, AppArmor policy 16.04 -> "
            "qmlapp.example_1.0_all.click") in result.stdout
    assert re.findall(r"ubuntu-(?:sdk|touch)-[\w.-]*\w", result.stdout) == ["ubuntu-sdk-16.04"]


# ------------------------------------------------ the architecture of what was built --

def _package(tmp_path: Path, *lines: str, files: dict[str, str] | None = None,
             env: dict[str, str] | None = None) -> tuple[str, Path]:
    """Configure and build a C/C++ project with a generated manifest; (output, package)."""
    src = qml_app(tmp_path / "app", "\n".join((LOAD, INSTALL, *lines, MANIFEST, HOOK,
                                               "click_package()")),
                  project="project(qmlapp VERSION 2.1 LANGUAGES C CXX)", files=files)
    binary = tmp_path / "build"
    configured = configure(src, binary, env=env)
    built = build(binary, env=env)
    return configured.stdout + built.stdout, only_click(binary)


@pytest.mark.oracle
def test_a_project_that_compiles_nothing_is_all_though_it_enables_cxx(tmp_path: Path) -> None:
    output, click = _package(tmp_path)
    assert "-> qmlapp.example_2.1_all.click" in output  # configure already says so
    assert click.name == "qmlapp.example_2.1_all.click"
    verify_both(click)
    assert control_field(click, "Architecture") == "all"
    assert "the installed files decided" not in output


def test_a_program_that_is_built_but_not_installed_leaves_the_package_all(tmp_path: Path) -> None:
    output, click = _package(tmp_path, "add_executable(generator main.cpp)",
                             files={"main.cpp": "int main() { return 0; }\n"})
    assert f"-> qmlapp.example_2.1_{HOST_ARCH}.click" in output  # the guess, from the targets
    assert click.name == "qmlapp.example_2.1_all.click"  # the answer, from the stage
    assert "the installed files decided the architecture" in flat(output)
    again = build(click.parent)
    assert f"{click} is up to date" in again.stdout


def test_an_installed_prebuilt_program_makes_it_the_hosts(tmp_path: Path) -> None:
    true = shutil.which("true")
    assert true
    _, click = _package(tmp_path, f'install(PROGRAMS "{true}" DESTINATION bin)')
    assert click.name == f"qmlapp.example_2.1_{HOST_ARCH}.click"
    assert control_field(click, "Architecture") == HOST_ARCH


def test_an_architecture_given_by_the_environment_stays(tmp_path: Path) -> None:
    _, click = _package(tmp_path, env={"ARCH": HOST_ARCH})
    assert control_field(click, "Architecture") == HOST_ARCH


def test_code_for_two_architectures_is_refused(tmp_path: Path) -> None:
    true, arm = shutil.which("true"), Path("/usr/aarch64-linux-gnu/lib/libc.so.6")
    need("aarch64-linux-gnu-g++")  # brings the arm64 C library
    src = qml_app(tmp_path / "app", "\n".join((
        LOAD, INSTALL, f'install(PROGRAMS "{true}" "{arm}" DESTINATION bin)', MANIFEST, HOOK,
        "click_package()")), project="project(qmlapp VERSION 2.1 LANGUAGES C CXX)")
    binary = tmp_path / "build"
    configure(src, binary)
    result = build(binary, check=False)
    assert result.returncode != 0
    output = flat(result.stdout + result.stderr)
    found = sorted(["bin/libc.so.6 (arm64)", f"bin/true ({HOST_ARCH})"],
                   key=lambda text: text.split("(")[1])
    assert ("manifest.json: architecture: the tree holds code for several architectures: "
            f"{found[0]}, {found[1]}; install the code of one") in output
    assert "Traceback" not in output
