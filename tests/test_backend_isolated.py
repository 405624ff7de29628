"""The isolated path a user takes: build-system.requires = ["click-build"] from a wheel."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
from backend_helpers import BOTH, EXAMPLES, check_pair, copy_project, only_click, pybuild, verify_both
from conftest import DEPENDENCY_WHEELS, run
from user_env import wheel_of_checkout


@pytest.fixture(scope="module")
def wheels(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A folder holding only a wheel of this checkout and of its dependencies: what
    ``PIP_FIND_LINKS`` names."""
    folder = wheel_of_checkout(tmp_path_factory.mktemp("our-wheel"))
    assert sorted(w.name.split("-")[0] for w in folder.glob("*.whl")) == sorted(
        {"click_build", *DEPENDENCY_WHEELS})
    return folder


def isolated_build(project: Path, wheels: Path, *args: str) -> str:
    """``python -m build`` in isolation where only our wheel can satisfy "click-build"
    (no index, just the folder, which holds its dependencies too); its output."""
    env = {"PIP_FIND_LINKS": str(wheels), "PIP_NO_INDEX": "1", "COLUMNS": "10000"}
    result = run([sys.executable, "-m", "build", *args], cwd=project, env=env)
    output = result.stdout + result.stderr
    assert "Installing packages in isolated environment" in output
    return output


@pytest.mark.slow
@pytest.mark.oracle
def test_isolated_build_from_our_wheel(tmp_path: Path, wheels: Path) -> None:
    project = copy_project(EXAMPLES / "hello-qml", tmp_path / "hello-qml")
    isolated_build(project, wheels, "-o", str(tmp_path / "isolated"))
    click = only_click(tmp_path / "isolated")
    verify_both(click)
    # The isolated build gives the same bytes as the one in the development venv.
    pybuild(project, "--wheel", "-o", str(tmp_path / "venv"))
    assert only_click(tmp_path / "venv").read_bytes() == click.read_bytes()


@pytest.mark.slow
@pytest.mark.oracle
def test_isolated_build_for_several_frameworks(tmp_path: Path, wheels: Path) -> None:
    """Both frameworks in one isolated command (sdist, then the packages from it): each
    package with its framework, AppArmor policy and version, 24.04's sorting higher
    (dpkg --compare-versions).  PEP 517 returns one file name, so build names the first
    package; the other is beside it (docs/backend.md says so)."""
    project = copy_project(EXAMPLES / "hello-qml", tmp_path / "hello-qml")
    out = tmp_path / "isolated"
    output = isolated_build(project, wheels, "-o", str(out),
                            "-C", f"click-build.frameworks={BOTH}")
    by_fw = check_pair(out, "1.0.0")
    first = by_fw["ubuntu-sdk-20.04"].name
    assert f"Successfully built hello_qml-1.0.0.tar.gz and {first}" in output
    assert by_fw["ubuntu-touch-24.04-1.x"].name not in output.split("Successfully built")[-1]
    assert sorted(p.name for p in out.iterdir()) == sorted(
        ["hello_qml-1.0.0.tar.gz", *(c.name for c in by_fw.values())])
    # The same bytes as the several-frameworks build in the development venv.
    pybuild(project, "--wheel", "-o", str(tmp_path / "venv"), "-C",
            f"click-build.frameworks={BOTH}")
    for click in by_fw.values():
        assert (tmp_path / "venv" / click.name).read_bytes() == click.read_bytes()
