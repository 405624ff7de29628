"""The ``cmake`` kind with real cmake, ninja and g++ (scikit-build-core drives them)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from backend_helpers import (
    EXAMPLES,
    PACKAGES,
    assert_one_error,
    control_field,
    copy_project,
    data_members,
    host_arch,
    member_text,
    only_click,
    pybuild,
    verify_both,
)
from conftest import need, run

from click_build.elf import ARCH_TRIPLETS

pytestmark = pytest.mark.slow


@pytest.fixture(autouse=True)
def _tools() -> None:
    for tool in ("cmake", "ninja", "g++", "intltool-merge", "dpkg-architecture"):
        need(tool)


@pytest.mark.oracle
def test_plain_cmake_project(tmp_path: Path) -> None:
    project = copy_project(PACKAGES / "cmake-hello", tmp_path / "cmake-hello")
    pybuild(project, "-o", str(tmp_path / "full"))
    pybuild(project, "--wheel", "-o", str(tmp_path / "wheel"))
    click = only_click(tmp_path / "full")
    arch = host_arch()
    assert click.name == f"cmake-hello.clickbuild_2.0.1_{arch}.click"
    verify_both(click)
    assert control_field(click, "Architecture") == arch
    members = data_members(click)
    assert "./bin/cmake-hello" in members  # GNUInstallDirs under the "/." prefix: no usr/
    assert "./manifest.json" not in members
    extract = tmp_path / "x"
    run(["dpkg-deb", "-x", str(click), str(extract)])
    assert run([str(extract / "bin/cmake-hello")]).stdout == "Hello from C++\n"
    assert "ELF" in run(["file", "-b", str(extract / "bin/cmake-hello")]).stdout
    manifest = json.loads(run(["dpkg-deb", "-I", str(click), "manifest"]).stdout)
    assert manifest["architecture"] == arch  # "@CLICK_ARCH@" in a plain manifest.json
    assert manifest["framework"] == "ubuntu-touch-24.04-1.x"  # "@CLICK_FRAMEWORK@"
    assert json.loads(member_text(click, "./cmake-hello.apparmor"))["policy_version"] == 2404.1
    # the sdist rebuilds the very same package
    assert only_click(tmp_path / "wheel").read_bytes() == click.read_bytes()


def test_second_build_is_incremental(tmp_path: Path) -> None:
    project = copy_project(PACKAGES / "cmake-hello", tmp_path / "p")
    pybuild(project, "--wheel", "-o", str(tmp_path / "a"))
    objects = list((project / "build").rglob("*.o"))
    assert objects
    before = {o: o.stat().st_mtime_ns for o in objects}
    second = pybuild(project, "--wheel", "-o", str(tmp_path / "b"))
    assert "no work to do" in second.stdout
    assert {o: o.stat().st_mtime_ns for o in objects} == before
    assert only_click(tmp_path / "a").read_bytes() == only_click(tmp_path / "b").read_bytes()
    (project / "main.cpp").write_text((project / "main.cpp").read_text().replace("C++", "C+++"))
    third = pybuild(project, "--wheel", "-o", str(tmp_path / "c"))
    assert "Building CXX object" in third.stdout
    assert only_click(tmp_path / "c").read_bytes() != only_click(tmp_path / "a").read_bytes()


@pytest.mark.oracle
def test_existing_ubuntu_touch_project(tmp_path: Path) -> None:
    """Absolute destinations, forced prefix, manifest.json.in, intltool, .pot in the source
    tree, INSTALL_TESTS, $ENV{SDK_FRAMEWORK}, and manifest oddities that only warn.

    Like many real apps it has store errors (its push helper's exec is not installed, its
    AppArmor template is 'unconfined', which the stores review by hand): the review stops
    the build, and review=report builds it anyway."""
    project = copy_project(PACKAGES / "ut-legacy-cmake", tmp_path / "legacy")
    before = {p: p.read_bytes() for p in project.rglob("*") if p.is_file()}
    refused = pybuild(project, "--wheel", "-o", str(tmp_path / "refused"), check=False)
    assert_one_error(refused, "review: 2 errors, 1 warning")
    assert "[hooks.bad-value]" in refused.stderr
    assert "[security.template-unconfined]" in refused.stderr
    result = pybuild(project, "--wheel", "-o", str(tmp_path / "out"), "-C",
                     "click-build.review=report")
    arch = host_arch()
    click = only_click(tmp_path / "out")
    assert click.name == f"legacyapp.tester_3.5._{arch}.click"
    verify_both(click)
    members = data_members(click)
    triplet = ARCH_TRIPLETS[arch]
    assert f"./lib/{triplet}/bin/legacyapp" in members
    assert "./share/locale/de/LC_MESSAGES/legacyapp.tester.mo" in members
    assert "./push-helper.json" in members and "./legacyapp.desktop" in members
    assert not [m for m in members if "tests" in m]  # INSTALL_TESTS=OFF
    assert "Name[de]=Altlast" in member_text(click, "./legacyapp.desktop")
    assert json.loads(member_text(click, "./legacyapp.apparmor"))["policy_version"] == 16.04
    assert json.loads(member_text(click, "./push-apparmor.json"))["policy_version"] == 16.04
    manifest = json.loads(run(["dpkg-deb", "-I", str(click), "manifest"]).stdout)
    assert manifest["framework"] == "ubuntu-sdk-16.04" and manifest["architecture"] == arch
    assert manifest["x-source"] and manifest["x-test"]
    for fragment in ("version '3.5.' ends with '.'", "template 'unconfined'",
                     "'push-apparmor.json' is named *.json", "icon: 'assets/missing-logo.png'"):
        assert fragment in result.stderr, fragment
    assert "click-build: error" not in result.stderr
    # the build rewrote po/*.pot -- in its mirror, not in the checkout
    after = {p: p.read_bytes() for p in project.rglob("*")
             if p.is_file() and "build" not in p.relative_to(project).parts}
    assert after == before
    assert (project / "build" / f"click-{arch}" / "source" / "po" / "legacyapp.tester.pot").read_text() != \
        (project / "po" / "legacyapp.tester.pot").read_text()
    # "3.5." has no PEP 440 spelling: the sdist says to use --wheel
    assert_one_error(pybuild(project, check=False), "has no PEP 440 spelling", "--wheel")


@pytest.mark.parametrize("fixture", ["cmake-hello", "ut-legacy-cmake"])
def test_no_warning_asks_to_change_the_app(tmp_path: Path, fixture: str) -> None:
    """scikit-build-core's minimum-version/CMake-version warning and CMake's "Manually-
    specified variables were not used" told app authors to edit apps that are fine."""
    project = copy_project(PACKAGES / fixture, tmp_path / "p")
    result = pybuild(project, "--wheel", "-C", "click-build.review=report")
    output = result.stdout + result.stderr
    for noise in ("Manually-specified variables were not used", "Minimum CMake version",
                  "minimum-version", "CMake Warning"):
        assert noise not in output, noise


def test_failing_cmake_is_one_line(tmp_path: Path) -> None:
    project = copy_project(PACKAGES / "cmake-hello", tmp_path / "p")
    lists = project / "CMakeLists.txt"
    text = lists.read_text()
    lists.write_text(text + 'message(FATAL_ERROR "this project cannot be configured")\n')
    result = pybuild(project, "--wheel", check=False)
    assert_one_error(result, "CMakeLists.txt: CMake configuration failed")
    assert "this project cannot be configured" in result.stdout + result.stderr
    lists.write_text(text)
    (project / "main.cpp").write_text("int main( {\n")
    result = pybuild(project, "--wheel", check=False)
    assert_one_error(result, "CMakeLists.txt: the build failed")


def test_explicit_architecture_must_match_the_code(tmp_path: Path) -> None:
    """A toolchain file that compiles for this machine, named for another architecture."""
    project = copy_project(PACKAGES / "cmake-hello", tmp_path / "p")
    other = "arm64" if host_arch() != "arm64" else "amd64"
    lying = tmp_path / "lying.cmake"
    lying.write_text(f"set(CMAKE_C_COMPILER {shutil.which('gcc')})\n"
                     f"set(CMAKE_CXX_COMPILER {shutil.which('g++')})\n")
    result = pybuild(project, "--wheel", "-C", f"click-build.architecture={other}",
                     "-C", f"click-build.toolchains.{other}={lying}", check=False)
    assert_one_error(result, f"architecture is '{other}', but bin/cmake-hello is compiled for "
                             f"{host_arch()}")


def test_another_architecture_without_a_toolchain_is_refused_before_configuring(
        tmp_path: Path) -> None:
    """The rule of a build for several targets, for a single one: this machine's compiler
    builds its own architecture only."""
    project = copy_project(PACKAGES / "cmake-hello", tmp_path / "p")
    other = "arm64" if host_arch() != "arm64" else "amd64"
    result = pybuild(project, "--wheel", "-C", f"click-build.architecture={other}", check=False)
    assert_one_error(result, "cannot build on this machine: ", f"/{other} (no toolchain named)",
                     f"This machine compiles for {host_arch()}")
    assert not (project / "build").exists()


@pytest.mark.oracle
def test_hello_cpp_example(tmp_path: Path) -> None:
    if not (EXAMPLES / "hello-cpp" / "pyproject.toml").is_file():
        pytest.skip("examples/hello-cpp has not landed yet (issue 5)")
    project = copy_project(EXAMPLES / "hello-cpp", tmp_path / "hello-cpp")
    pybuild(project, "-o", str(tmp_path / "full"))
    pybuild(project, "--wheel", "-o", str(tmp_path / "wheel"))
    click = only_click(tmp_path / "full")
    verify_both(click)
    assert control_field(click, "Architecture") == host_arch()
    extract = tmp_path / "x"
    run(["dpkg-deb", "-x", str(click), str(extract)])
    elves = [p for p in extract.rglob("*") if p.is_file() and p.read_bytes()[:4] == b"\x7fELF"]
    assert elves
    assert only_click(tmp_path / "wheel").read_bytes() == click.read_bytes()


def test_a_declared_architecture_keeps_clickbuilds_layout(tmp_path: Path) -> None:
    """A ClickBuild project whose library goes to GNUInstallDirs' CMAKE_INSTALL_LIBDIR: the
    backend passed CMAKE_INSTALL_LIBDIR=lib/<triplet> when the architecture was declared
    (-C click-build.architecture=..., the docs' cross build), so the library moved from lib/
    (its place on the CMake route and with the architecture left to the build)."""
    from cmake_support import build as cmake_build
    from cmake_support import configure
    from conftest import write_tree

    project = write_tree(tmp_path / "app", {
        "CMakeLists.txt": (
            "cmake_minimum_required(VERSION 3.19)\nproject(libapp VERSION 1.0 LANGUAGES CXX)\n"
            "find_package(ClickBuild CONFIG REQUIRED)\ninclude(GNUInstallDirs)\n"
            "add_subdirectory(core)\nadd_executable(libapp main.cpp)\n"
            "target_link_libraries(libapp PRIVATE core)\n"
            "install(TARGETS libapp RUNTIME DESTINATION ${CLICK_INSTALL_BINDIR})\n"
            "install(FILES libapp.svg DESTINATION ${CLICK_INSTALL_DATADIR})\n"
            'click_manifest(NAME libapp.example TITLE "Lib app" DESCRIPTION "Links a library" '
            'MAINTAINER "J D <j@example.com>")\n'
            "click_add_hook(libapp DESKTOP libapp.desktop APPARMOR libapp.apparmor)\n"
            "click_package()\n"),
        "core/CMakeLists.txt": ("add_library(core SHARED core.cpp)\n"
                                "install(TARGETS core LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR})\n"),
        "core/core.cpp": "int core() { return 7; }\n",
        "main.cpp": "int core();\nint main() { return core() == 7 ? 0 : 1; }\n",
        "libapp.desktop": ("[Desktop Entry]\nName=Lib app\nExec=libapp\nIcon=libapp.svg\n"
                           "Terminal=true\nType=Application\nX-Lomiri-Touch=true\n"),
        "libapp.apparmor": '{"policy_groups": []}\n',
        "libapp.svg": '<svg xmlns="http://www.w3.org/2000/svg" width="256" height="256"/>\n',
        "pyproject.toml": ('[build-system]\nrequires = ["click-build[cmake]"]\n'
                           'build-backend = "click_build.backend"\n[project]\nname = "libapp"\n'
                           'version = "1.0"\n[tool.click-build]\nkind = "cmake"\n'),
    })
    configure(project, tmp_path / "cmake-build")
    cmake_build(tmp_path / "cmake-build")
    expected = data_members(only_click(tmp_path / "cmake-build"))
    assert "./lib/libcore.so" in expected
    pybuild(project, "--wheel", "-o", str(tmp_path / "auto"))
    assert data_members(only_click(tmp_path / "auto")) == expected
    pybuild(project, "--wheel", "-C", f"click-build.architecture={host_arch()}",
            "-C", "click-build.build-dir=build/declared-{arch}", "-o", str(tmp_path / "declared"))
    assert data_members(only_click(tmp_path / "declared")) == expected
