"""`click-build -q build` of a CMake project prints only errors and warnings.

docs/building.md: -q prints nothing but errors and warnings. CMake's and the build
tool's progress (every `-- Installing:`) is held back; CMake's warnings still show, and
when a step fails, what it printed is shown on stderr before the error. Real cmake,
ninja and g++, driven by scikit-build-core.
"""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest
from backend_helpers import PACKAGES, copy_project, only_click
from conftest import CLICK_BUILD, need

pytestmark = pytest.mark.slow


@pytest.fixture(autouse=True)
def _tools() -> None:
    for tool in ("cmake", "ninja", "g++"):
        need(tool)


def click_build(*args: str | Path, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([*CLICK_BUILD, *map(str, args)], cwd=cwd, capture_output=True,
                          text=True)


def test_quiet_build_of_a_cmake_project_prints_nothing(tmp_path: Path) -> None:
    project = copy_project(PACKAGES / "cmake-hello", tmp_path / "cmake-hello")
    quiet = click_build("-q", "build", project, "-o", tmp_path / "q", cwd=tmp_path)
    assert quiet.returncode == 0, quiet.stderr
    assert (quiet.stdout, quiet.stderr) == ("", "")
    only_click(tmp_path / "q")
    # Without -q, CMake's and ninja's output is shown as it comes (here: the install).
    loud = click_build("build", project, "-o", tmp_path / "loud", cwd=tmp_path)
    assert loud.returncode == 0, loud.stderr
    assert "-- Installing: " in loud.stdout or "-- Up-to-date: " in loud.stdout
    assert only_click(tmp_path / "loud").read_bytes() == only_click(tmp_path / "q").read_bytes()


def test_quiet_build_shows_cmake_warnings(tmp_path: Path) -> None:
    project = copy_project(PACKAGES / "cmake-hello", tmp_path / "cmake-hello")
    lists = project / "CMakeLists.txt"
    lists.write_text(lists.read_text() + 'message(WARNING "heads up from the project")\n')
    quiet = click_build("-q", "build", project, "-o", tmp_path / "q", cwd=tmp_path)
    assert quiet.returncode == 0, quiet.stderr
    assert quiet.stdout == ""
    assert "CMake Warning" in quiet.stderr and "heads up from the project" in quiet.stderr
    assert "-- Installing: " not in quiet.stderr


def test_a_failing_quiet_build_shows_the_output_of_the_step_before_the_error(
        tmp_path: Path) -> None:
    project = copy_project(PACKAGES / "cmake-hello", tmp_path / "cmake-hello")
    (project / "main.cpp").write_text("int main() { return missing_function(); }\n")
    quiet = click_build("-q", "build", project, "-o", tmp_path / "q", cwd=tmp_path)
    assert quiet.returncode != 0
    assert quiet.stdout == ""
    err = quiet.stderr
    # The configure's lines and the compiler's, then click-build's error, last.
    assert "-- Configuring done" in err
    assert "missing_function" in err and "error:" in err
    assert err.rstrip().splitlines()[-1].startswith(
        "click-build: error: CMakeLists.txt: the build failed (see the compiler output above")
    assert err.index("missing_function") < err.index("click-build: error:")
