"""The ClickBuild CMake package: how projects find it, how it ships, how it fails.

Every test runs the real cmake; the packages it builds are checked by the
original ``click`` and by ours.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import tempfile
import zipfile
from pathlib import Path

import pytest
from backend_helpers import control_field, only_click, verify_both
from cmake_support import (
    CMAKE_DIR,
    VENV_BIN,
    build,
    cache,
    click_build_copy,
    cmake,
    configure,
    fix_command,
    flat,
    qml_app,
)
from conftest import DEPENDENCY_WHEELS, ROOT, need, run, write_tree

import click_build

pytestmark = pytest.mark.slow

CMAKE_FILES = {
    "__init__.py",
    "ClickBuild.cmake",
    "ClickBuildConfig.cmake",
    "ClickBuildConfigVersion.cmake",
    "ClickBuildFinalize.cmake",
    "ClickBuildSetup.cmake",
    "ClickBuildSysroot.cmake",  # the body of click-build sysroot's toolchain files
    "ClickPackage.cmake",
}

APP = """
{load}
install(FILES Main.qml icon.svg DESTINATION ${{CLICK_INSTALL_DATADIR}})
click_manifest(NAME qmlapp.example TITLE "QML app" DESCRIPTION "A QML app for the tests" MAINTAINER "Jane Doe <jane@example.com>")
click_add_hook(qmlapp DESKTOP qmlapp.desktop APPARMOR qmlapp.apparmor)
click_package()
file(WRITE "${{CMAKE_BINARY_DIR}}/probe.txt" "${{ClickBuild_VERSION}}|${{CLICK_BUILD_CMAKE_DIR}}")
"""


@pytest.fixture(autouse=True)
def _tools() -> None:
    need("cmake")
    need("ninja")


def probe(binary: Path) -> list[str]:
    return (binary / "probe.txt").read_text().split("|")


def cli_cmake_dir(*prefix: str) -> str:
    # Outside the checkout, whose click_build/ would shadow the installed one.
    return run([*prefix, "--cmake-dir"], cwd=Path(tempfile.gettempdir())).stdout.strip()


def test_version_file_is_the_python_version() -> None:
    text = (CMAKE_DIR / "ClickBuildConfigVersion.cmake").read_text()
    assert re.search(r'set\(PACKAGE_VERSION "([^"]+)"\)', text).group(1) == click_build.__version__


def test_cmake_dir_flag_prints_the_package_directory() -> None:
    via_module = cli_cmake_dir(sys.executable, "-m", "click_build")
    via_script = cli_cmake_dir(str(VENV_BIN / "click-build"))
    assert via_module == via_script
    assert Path(via_module) == CMAKE_DIR  # the editable install maps click_build.cmake here
    assert (Path(via_module) / "ClickBuildConfig.cmake").is_file()
    templates = run([sys.executable, "-m", "click_build", "--templates-dir"],
                    cwd=Path(tempfile.gettempdir())).stdout.strip()
    assert Path(templates) == ROOT / "templates"


@pytest.mark.oracle
def test_find_package_through_cmake_prefix_path(tmp_path: Path) -> None:
    src = qml_app(tmp_path / "app", APP.format(load="find_package(ClickBuild CONFIG REQUIRED)"))
    binary = tmp_path / "build"
    prefix = cli_cmake_dir(str(VENV_BIN / "click-build"))
    configure(src, binary, locate=False, env={"CMAKE_PREFIX_PATH": prefix})
    assert probe(binary) == [click_build.__version__, str(CMAKE_DIR)]
    assert cache(binary)["ClickBuild_DIR"] == str(CMAKE_DIR)
    build(binary)
    click = only_click(binary)
    assert click.name == "qmlapp.example_2.1_all.click"
    verify_both(click)
    assert control_field(click, "Architecture") == "all"


@pytest.mark.oracle
def test_include_route(tmp_path: Path) -> None:
    load = 'include("${CLICK_BUILD_DIR}/ClickBuild.cmake")'
    src = qml_app(tmp_path / "app", APP.format(load=load))
    binary = tmp_path / "build"
    configure(src, binary, f"-DCLICK_BUILD_DIR={CMAKE_DIR}", locate=False)
    assert probe(binary) == [click_build.__version__, str(CMAKE_DIR)]
    build(binary)
    verify_both(only_click(binary))


@pytest.mark.parametrize(("request_", "ok"), [
    ("0.1", True), ("0.0.1", True), ("0.1.0...<0.2", True),
    ("0.2", False), ("1.0", False), ("0.0.1...0.0.9", False),
])
def test_version_requests(tmp_path: Path, request_: str, ok: bool) -> None:
    src = qml_app(tmp_path / "app", f"find_package(ClickBuild {request_} CONFIG REQUIRED)")
    result = configure(src, tmp_path / "build", check=False)
    if ok:
        assert result.returncode == 0, result.stderr
        return
    assert result.returncode != 0
    output = flat(result.stdout + result.stderr)
    assert f"does not satisfy the requested version {request_}" in output
    assert '-DClickBuild_DIR="$(/path/to/venv/bin/python -m click_build --cmake-dir)"' in output
    # click-build is not on PyPI: the fix installs from a wheel, never from the index.
    assert ("/path/to/venv/bin/python -m pip install --upgrade --no-index --find-links wheels "
            "click-build") in output
    assert "pip install click-build" not in output


def test_without_click_build_for_the_given_python(tmp_path: Path) -> None:
    python = "/usr/bin/python3"
    assert run([python, "-c", "import click_build"], cwd=tmp_path, check=False).returncode != 0
    src = qml_app(tmp_path / "app", APP.format(load="find_package(ClickBuild CONFIG REQUIRED)"))
    result = configure(src, tmp_path / "build", f"-DPython3_EXECUTABLE={python}", check=False)
    assert result.returncode != 0
    error = flat(result.stderr)
    assert "CMake Error" in error
    assert "no Python with the click_build module was found" in error
    assert f"{python}: ModuleNotFoundError: No module named 'click_build'" in error
    assert ("Fix: point CMake at the Python of a virtual environment that has click-build, "
            "-DPython3_EXECUTABLE=/path/to/venv/bin/python") in error
    assert fix_command(result.stderr) == (
        f"python3 -m venv venv && venv/bin/python -m pip wheel -w wheels {ROOT} && "
        "venv/bin/python -m pip install --no-index --find-links wheels click-build")


def test_without_click_build_anywhere(tmp_path: Path) -> None:
    src = qml_app(tmp_path / "app", APP.format(load="find_package(ClickBuild CONFIG REQUIRED)"))
    result = configure(src, tmp_path / "build", check=False, env={"PATH": "/usr/bin:/bin"})
    assert result.returncode != 0
    error = flat(result.stderr)
    assert "click-build: not found on PATH" in error
    assert "/usr/bin/python3: ModuleNotFoundError: No module named 'click_build'" in error
    assert "(any Python was tried)" in error and "not on PyPI" in error
    assert "pip install click-build" not in error


def test_python_found_through_the_click_build_command(tmp_path: Path) -> None:
    """No usable python3 on PATH, but click-build is: its interpreter is used."""
    bindir = write_tree(tmp_path / "bin", {"click-build": f"-> {VENV_BIN / 'click-build'}"})
    shebang = (VENV_BIN / "click-build").read_text().splitlines()[0][2:].strip()
    src = qml_app(tmp_path / "app", APP.format(load="find_package(ClickBuild CONFIG REQUIRED)"))
    binary = tmp_path / "build"
    configure(src, binary, env={"PATH": f"{bindir}:/usr/bin:/bin"})
    assert cache(binary)["Python3_EXECUTABLE"] == shebang


def test_optional_find_package_reports_not_found(tmp_path: Path) -> None:
    body = """
find_package(ClickBuild CONFIG)
set(first "${ClickBuild_FOUND}")
find_package(ClickBuild CONFIG QUIET)
file(WRITE "${CMAKE_BINARY_DIR}/found.txt" "${first}|${ClickBuild_FOUND}")
"""
    src = qml_app(tmp_path / "app", body)
    binary = tmp_path / "build"
    result = configure(src, binary, "-DPython3_EXECUTABLE=/usr/bin/python3")
    assert (binary / "found.txt").read_text() == "0|0"
    assert "ClickBuild not usable: ClickBuild: no Python with the click_build" in flat(result.stdout)


def test_version_mismatch_names_the_fix_and_the_fix_works(tmp_path: Path) -> None:
    other = click_build_copy(tmp_path / "other", "9.9.9")
    src = qml_app(tmp_path / "app", APP.format(load="find_package(ClickBuild CONFIG REQUIRED)"))
    env = {"PYTHONPATH": str(other)}
    python = f"-DPython3_EXECUTABLE={sys.executable}"
    result = configure(src, tmp_path / "build", python, env=env, check=False)
    assert result.returncode != 0
    error = flat(result.stderr)
    assert (f"these CMake files (ClickBuild {click_build.__version__}, in {CMAKE_DIR}) belong to "
            "another click-build than the click_build 9.9.9") in error
    assert fix_command(result.stderr) == (
        f"{sys.executable} -m pip wheel -w wheels {ROOT} && {sys.executable} -m pip install "
        f"--no-index --find-links wheels click-build=={click_build.__version__}")
    fix = re.search(r'-DClickBuild_DIR="([^"]+)"', error)
    assert fix and Path(fix.group(1)) == other / "click_build" / "cmake"
    # Applying the fix as printed: a fresh build folder configures.
    binary = tmp_path / "fixed"
    cmake("-S", src, "-B", binary, "-G", "Ninja", python, f"-DClickBuild_DIR={fix.group(1)}",
          env=env)
    assert probe(binary)[0] == "9.9.9"


def test_the_fix_installs_a_wheel_that_ships_the_cmake_package_and_templates(
        tmp_path: Path) -> None:
    """With no click_build anywhere, configure prints a fix (click-build is not on PyPI);
    pasted into a shell it makes a virtual environment with click-build from a wheel of the
    checkout. That wheel holds click_build/cmake/* and click_build/templates/**, and works."""
    source = tmp_path / "src"  # a checkout
    source.mkdir()
    for name in ("pyproject.toml", "README.md"):
        shutil.copy2(ROOT / name, source / name)
    ignore = shutil.ignore_patterns("__pycache__", "*.pyc")
    for name in ("click_build", "cmake", "templates"):
        shutil.copytree(ROOT / name, source / name, ignore=ignore)
    src = qml_app(tmp_path / "app", APP.format(load="find_package(ClickBuild CONFIG REQUIRED)"))
    system = {"PATH": "/usr/bin:/bin"}
    failed = configure(src, tmp_path / "failed", f"-DClickBuild_DIR={source / 'cmake'}",
                       locate=False, env=system, check=False)
    assert failed.returncode != 0
    scratch = write_tree(tmp_path / "scratch", {})
    run(["sh", "-c", fix_command(failed.stderr)], cwd=scratch, env=system)
    wheel = only_wheel(scratch / "wheels", "click_build", DEPENDENCY_WHEELS)  # pip wheel fetched zlib-ng
    with zipfile.ZipFile(wheel) as zf:
        names = set(zf.namelist())
    assert {n.split("/", 2)[2] for n in names if n.startswith("click_build/cmake/")} == CMAKE_FILES
    # the archive keys a sysroot is checked with (click_build/sysroot/keys.py pins them)
    assert {"click_build/sysroot/keys/debian-archive.asc",
            "click_build/sysroot/keys/ubuntu-archive.asc"} <= names
    expected = {
        "click_build/templates/" + p.relative_to(source / "templates").as_posix()
        for p in (source / "templates").rglob("*") if p.is_file()
    }
    assert {n for n in names if n.startswith("click_build/templates/")} == expected
    # Installed from the wheel: both flags print the shipped folder, and a project builds
    # with the -DPython3_EXECUTABLE the message names.
    venv = scratch / "venv"
    shipped = cli_cmake_dir(str(venv / "bin/click-build"))
    assert shipped == cli_cmake_dir(str(venv / "bin/python"), "-m", "click_build")
    assert Path(shipped).parent.parent.name == "site-packages"
    assert set(os.listdir(shipped)) - {"__pycache__"} == CMAKE_FILES
    binary = tmp_path / "build"
    configure(src, binary, f"-DPython3_EXECUTABLE={venv / 'bin/python'}", locate=False,
              env={"CMAKE_PREFIX_PATH": shipped, **system})
    assert probe(binary)[1] == shipped
    build(binary)
    only_click(binary)


def only_wheel(outdir: Path, name: str, dependencies: set[str] | None = None) -> Path:
    """The one wheel of project ``name`` in ``outdir``, where the others are exactly the
    wheels of ``dependencies`` (none by default)."""
    wheels = sorted(outdir.glob("*.whl"))
    ours = [w for w in wheels if w.name.startswith(f"{name}-")]
    assert len(ours) == 1, wheels
    assert {w.name.split("-")[0] for w in wheels if w not in ours} == (dependencies or set())
    return ours[0]


def test_scikit_build_core_finds_it_with_no_flags(tmp_path: Path) -> None:
    """The cmake.root entry point: a scikit-build-core project gets ClickBuild_ROOT."""
    import scikit_build_core  # noqa: F401  (the [cmake] extra; scripts/setup installs it)

    project = write_tree(tmp_path / "skb", {
        "pyproject.toml": (
            '[build-system]\nrequires = ["scikit-build-core"]\n'
            'build-backend = "scikit_build_core.build"\n\n'
            '[project]\nname = "probe"\nversion = "0.1"\n'),
        "CMakeLists.txt": (
            "cmake_minimum_required(VERSION 3.19)\nproject(probe LANGUAGES NONE)\n"
            "find_package(ClickBuild CONFIG REQUIRED)\n"
            'file(WRITE "${CMAKE_BINARY_DIR}/found.txt" "${ClickBuild_DIR}|${CLICK_ARCH}")\n'
            'install(FILES "${CMAKE_BINARY_DIR}/found.txt" DESTINATION probe)\n'),
    })
    env = {k: v for k, v in os.environ.items() if not k.startswith(("CMAKE_", "ClickBuild"))}
    result = subprocess.run(
        [sys.executable, "-m", "build", "--wheel", "-n", "-x", "--outdir", str(tmp_path / "dist")],
        cwd=project, capture_output=True, text=True, env=env)
    assert result.returncode == 0, result.stdout + result.stderr
    with zipfile.ZipFile(only_wheel(tmp_path / "dist", "probe")) as zf:
        found = zf.read("probe/found.txt").decode()
    assert found == f"{CMAKE_DIR}|all"
