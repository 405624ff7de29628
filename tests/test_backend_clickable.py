"""Clickable's environment on the backend's routes (issue 27, wrong results 2 and 3).

Clickable exports what a build is for (``ARCH``, ``ARCH_TRIPLET``, ``CLICK_FRAMEWORK``,
``SDK_FRAMEWORK``...) and where it builds (``BUILD_DIR``, ``INSTALL_DIR``,
``CLICK_LD_LIBRARY_PATH``...); see its docs' "Placeholders & Environment Variables".
``python -m build`` and ``click-build build`` honour the first kind as Clickable means
it, say so on a line, and give a CMake project the second kind with their own folders.
A CMake project's own choice of framework stays unless click-build's settings name one.
The real-app fixtures are built by every route in test_routes.py.
"""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import pytest
from backend_helpers import (
    EXAMPLES,
    PACKAGES,
    assert_one_error,
    copy_project,
    host_arch,
    member_text,
    only_click,
    pybuild,
)
from conftest import CLICK_BUILD, need, run

from click_build.elf import ARCH_TRIPLETS

pytestmark = pytest.mark.slow


def _manifest(click: Path) -> dict[str, object]:
    data: dict[str, object] = json.loads(run(["dpkg-deb", "-I", str(click), "manifest"]).stdout)
    return data


def _click_build(*args: str | Path, env: dict[str, str] | None = None,
                 check: bool = True) -> subprocess.CompletedProcess[str]:
    return run([*CLICK_BUILD, *map(str, args)], env=env, check=check)


def _left_open(dest: Path, pyproject: bool = True) -> Path:
    """hello-qml with "architecture": "@CLICK_ARCH@", as a project or a plain tree."""
    project = copy_project(EXAMPLES / "hello-qml", dest)
    data = json.loads((project / "manifest.json").read_text())
    data["architecture"] = "@CLICK_ARCH@"
    if not pyproject:
        (project / "pyproject.toml").unlink()
        data["version"] = "1.0.0"
    (project / "manifest.json").write_text(json.dumps(data, indent=4))
    return project


# ------------------------------------------------------------- architecture

@pytest.mark.parametrize("env", [{"ARCH": "arm64"}, {"ARCH_TRIPLET": "aarch64-linux-gnu"}],
                         ids=["ARCH", "ARCH_TRIPLET"])
@pytest.mark.parametrize("route", ["wheel", "cli", "tree"])
def test_clickables_arch_fills_an_architecture_left_to_the_build(
        tmp_path: Path, route: str, env: dict[str, str]) -> None:
    project = _left_open(tmp_path / "p", pyproject=route != "tree")
    out = tmp_path / "out"
    if route == "wheel":
        result = pybuild(project, "--wheel", "-o", str(out), env=env)
    else:
        result = _click_build("build", project, "-o", out, env=env)
    click = only_click(out)
    assert click.name == "hello-qml.clickbuild_1.0.0_arm64.click"
    assert _manifest(click)["architecture"] == "arm64"
    var = next(iter(env))
    assert f"manifest.json: architecture arm64, from the environment ({var}, as Clickable " \
           "sets it)" in result.stdout
    assert result.stdout.count("from the environment") == 1  # said once, not per step


def test_a_setting_or_the_manifest_beats_the_environment(tmp_path: Path) -> None:
    project = _left_open(tmp_path / "p")
    pybuild(project, "--wheel", "-o", str(tmp_path / "a"), "-C", "click-build.architecture=all",
            env={"ARCH": "x86"})  # not even read
    assert only_click(tmp_path / "a").name.endswith("_all.click")
    plain = copy_project(EXAMPLES / "hello-qml", tmp_path / "q")  # no architecture: 'all'
    data = json.loads((plain / "manifest.json").read_text())
    (plain / "manifest.json").write_text(json.dumps(dict(data, architecture="all")))
    result = pybuild(plain, "--wheel", "-o", str(tmp_path / "b"), env={"ARCH": "arm64"})
    assert only_click(tmp_path / "b").name.endswith("_all.click")
    assert "from the environment" not in result.stdout


def test_an_arch_that_is_no_architecture_is_refused_by_name(tmp_path: Path) -> None:
    """A kernel developer's ARCH=x86 is not Clickable's: one line, naming the variable."""
    project = _left_open(tmp_path / "p")
    result = pybuild(project, "--wheel", "-o", str(tmp_path / "out"), env={"ARCH": "x86"},
                     check=False)
    assert_one_error(result, "environment: ARCH 'x86' is not 'all' or a Debian architecture",
                     "unset ARCH, or declare the architecture")


def test_arch_all_with_compiled_code_names_the_variable(tmp_path: Path) -> None:
    need("cmake")
    project = copy_project(PACKAGES / "cmake-hello", tmp_path / "p")
    result = pybuild(project, "--wheel", "-o", str(tmp_path / "out"), env={"ARCH": "all"},
                     check=False)
    assert_one_error(result, "architecture is 'all' (no compiled code), from the environment "
                     f"(ARCH), but bin/cmake-hello is compiled for {host_arch()}; unset ARCH to "
                     f"leave the architecture to the build, or set ARCH={host_arch()}")


# ---------------------------------------------------------------- framework

#: ut-own-framework's default is 20.04, whose glibc (2.31) is older than this machine's: the
#: review must say so (lint.abi-glibc), and report mode packs it anyway, as a developer would
#: until the build uses a 20.04 sysroot (docs/phone.md).
ABI_REPORT = {"CLICK_BUILD_REVIEW": "report"}


def assert_only_the_glibc_finding(stderr: str) -> None:
    found = {line.rsplit("[", 1)[1].split("]")[0] for line in stderr.splitlines()
             if line.startswith("click-build: warning: review: ") and "[lint." in line}
    assert found == {"lint.abi-glibc"}, stderr

def test_click_framework_is_read_before_sdk_framework_as_clickbuild_does(tmp_path: Path) -> None:
    """Clickable sets both (SDK_FRAMEWORK is its older name); ClickBuild reads CLICK_FRAMEWORK
    first (test_cmake_arch), and so does the Python side."""
    tree = _left_open(tmp_path / "p", pyproject=False)
    data = json.loads((tree / "manifest.json").read_text())
    (tree / "manifest.json").write_text(json.dumps(dict(data, framework="@CLICK_FRAMEWORK@")))
    (tree / "hello-qml.apparmor").write_text('{"policy_groups": []}')
    out = tmp_path / "out"
    result = _click_build("build", tree, "-o", out, env={
        "CLICK_FRAMEWORK": "ubuntu-touch-24.04-1.x", "SDK_FRAMEWORK": "ubuntu-sdk-20.04"})
    click = only_click(out)
    assert _manifest(click)["framework"] == "ubuntu-touch-24.04-1.x"
    assert json.loads(member_text(click, "./hello-qml.apparmor"))["policy_version"] == 2404.1
    assert "framework ubuntu-touch-24.04-1.x, from the environment (CLICK_FRAMEWORK" \
        in result.stdout


@pytest.mark.parametrize("how", ["settings", "environment"])
def test_a_projects_own_framework_gives_way_to_one_the_user_sets(tmp_path: Path,
                                                                  how: str) -> None:
    """ut-own-framework takes $SDK_FRAMEWORK, else ubuntu-sdk-20.04 (test_routes checks
    that default on every route): the settings and the environment choose another."""
    need("cmake")
    project = copy_project(PACKAGES / "ut-own-framework", tmp_path / "p")
    chosen = "ubuntu-sdk-20.04.1"  # the same AppArmor policy as the app's own, 20.04
    if how == "settings":
        result = pybuild(project, "--wheel", "-o", str(tmp_path / "out"),
                         "-C", f"click-build.framework={chosen}", env=ABI_REPORT)
    else:
        result = pybuild(project, "--wheel", "-o", str(tmp_path / "out"),
                         env={"SDK_FRAMEWORK": chosen, **ABI_REPORT})
        assert f"framework {chosen}, from the environment (SDK_FRAMEWORK" in result.stdout
    click = only_click(tmp_path / "out")
    assert _manifest(click)["framework"] == chosen
    assert "chooses the framework" not in result.stdout
    assert_only_the_glibc_finding(result.stderr)


def test_without_a_choice_the_projects_default_stands_and_the_build_says_so(
        tmp_path: Path) -> None:
    need("cmake")
    project = copy_project(PACKAGES / "ut-own-framework", tmp_path / "p")
    result = pybuild(project, "--wheel", "-o", str(tmp_path / "out"), env=ABI_REPORT)
    assert_only_the_glibc_finding(result.stderr)
    assert ("* CMakeLists.txt chooses the framework (it tests Clickable's variables); "
            "[tool.click-build] framework chooses another") in result.stdout
    click = only_click(tmp_path / "out")
    assert _manifest(click)["framework"] == "ubuntu-sdk-20.04"
    assert json.loads(member_text(click, "./ownfw.apparmor"))["policy_version"] == 20.04


# ------------------------------------------------- Clickable's other variables

SEEN = ("ARCH", "ARCH_TRIPLET", "CLICK_FRAMEWORK", "SDK_FRAMEWORK", "CLICK_FRAMEWORK_BASE",
        "APPARMOR_POLICY", "ROOT", "SRC_DIR", "BUILD_DIR", "INSTALL_DIR",
        "CLICK_LD_LIBRARY_PATH", "CLICK_QML2_IMPORT_PATH", "CLICK_PATH", "NUM_PROCS")


def _env_recorder(dest: Path) -> Path:
    """A QML-only CMake project that writes what its configure sees of Clickable's
    variables into its build folder."""
    shutil.copytree(PACKAGES / "ut-clickable-qml", dest)
    lists = dest / "CMakeLists.txt"
    lists.write_text(lists.read_text() + "foreach(var " + " ".join(SEEN) + ")\n"
                     '  string(APPEND seen "${var}=$ENV{${var}}\\n")\nendforeach()\n'
                     'file(WRITE "${CMAKE_BINARY_DIR}/seen.txt" "${seen}")\n')
    return dest


def _seen(build: Path) -> dict[str, str]:
    lines = (build / "cmake" / "seen.txt").read_text().splitlines()
    return dict(line.split("=", 1) for line in lines)


@pytest.mark.parametrize("arch", ["all", "host"])
def test_a_cmake_project_gets_clickables_variables_with_this_builds_folders(
        tmp_path: Path, arch: str) -> None:
    """What Clickable would export for this build; the caller's Clickable folders are
    replaced, and nothing is written into them."""
    need("cmake")
    project = _env_recorder(tmp_path / "p")
    elsewhere = tmp_path / "clickable" / "install"
    env = {"INSTALL_DIR": str(elsewhere), "CLICK_LD_LIBRARY_PATH": f"{elsewhere}/lib",
           "BUILD_DIR": str(elsewhere.parent)}
    name = host_arch() if arch == "host" else "all"
    if arch == "all":
        env.update(ARCH="all", ARCH_TRIPLET="all")
    result = pybuild(project, "--wheel", "-o", str(tmp_path / "out"), env=env)
    assert ("* the project reads $ENV{APPARMOR_POLICY}, $ENV{CLICK_FRAMEWORK} with no default "
            "of its own: it gets ubuntu-touch-24.04-1.x, click-build's default") in result.stdout
    work = project / "build" / f"click-{name}"
    stage = work / "stage"
    triplet = ARCH_TRIPLETS.get(name, "")
    lib = f"{stage}/lib/{triplet}" if triplet else f"{stage}/lib"
    assert _seen(work) == {
        "ARCH": name, "ARCH_TRIPLET": triplet or "all",
        # nobody chose a framework: the templates read Clickable's, and get click-build's
        "CLICK_FRAMEWORK": "ubuntu-touch-24.04-1.x", "SDK_FRAMEWORK": "ubuntu-touch-24.04-1.x",
        "CLICK_FRAMEWORK_BASE": "24.04", "APPARMOR_POLICY": "2404.1",
        "ROOT": str(work / "source"), "SRC_DIR": str(work / "source"),
        "BUILD_DIR": str(work / "cmake"), "INSTALL_DIR": str(stage),
        "CLICK_LD_LIBRARY_PATH": lib,
        "CLICK_QML2_IMPORT_PATH": lib if triplet else f"{stage}/qml",
        "CLICK_PATH": f"{lib}/bin" if triplet else str(stage),
        "NUM_PROCS": _seen(work)["NUM_PROCS"],
    }
    assert int(_seen(work)["NUM_PROCS"]) >= 1
    assert not (tmp_path / "clickable").exists()
    assert only_click(tmp_path / "out").name == "clickqml.example_1.1.0_all.click"


def test_clickbuild_decides_an_architecture_nothing_declared(tmp_path: Path) -> None:
    """A project that loads ClickBuild gets no ARCH: ClickBuild decides ('all' here)."""
    need("cmake")
    project = _env_recorder(tmp_path / "p")
    lists = project / "CMakeLists.txt"
    lists.write_text(lists.read_text().replace(
        "project(clickqml C CXX)\n", "project(clickqml C CXX)\nfind_package(ClickBuild CONFIG "
        "REQUIRED)\n"))
    pybuild(project, "--wheel", "-o", str(tmp_path / "out"))
    seen = _seen(project / "build" / f"click-{host_arch()}")
    assert (seen["ARCH"], seen["ARCH_TRIPLET"]) == ("", "")
    assert seen["INSTALL_DIR"] == str(project / "build" / f"click-{host_arch()}" / "stage")
    assert only_click(tmp_path / "out").name == "clickqml.example_1.1.0_all.click"
