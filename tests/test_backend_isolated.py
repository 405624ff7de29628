"""The isolated path a user takes: build-system.requires = ["click-build"] from a wheel."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
from backend_helpers import EXAMPLES, copy_project, only_click, pybuild, verify_both
from conftest import ROOT, run


@pytest.mark.slow
@pytest.mark.oracle
def test_isolated_build_from_our_wheel(tmp_path: Path) -> None:
    wheels = tmp_path / "wheels"
    run([sys.executable, "-m", "pip", "wheel", "--no-deps", "-q", str(ROOT), "-w", str(wheels)])
    assert [w.name.split("-")[0] for w in wheels.glob("*.whl")] == ["click_build"]
    project = copy_project(EXAMPLES / "hello-qml", tmp_path / "hello-qml")
    # Only our wheel may satisfy "click-build": no index, just the folder.
    env = {"PIP_FIND_LINKS": str(wheels), "PIP_NO_INDEX": "1", "COLUMNS": "10000"}
    result = run([sys.executable, "-m", "build", "-o", str(tmp_path / "isolated")],
                 cwd=project, env=env)
    assert "Installing packages in isolated environment" in result.stdout + result.stderr
    click = only_click(tmp_path / "isolated")
    verify_both(click)
    # The isolated build gives the same bytes as the one in the development venv.
    pybuild(project, "--wheel", "-o", str(tmp_path / "venv"))
    assert only_click(tmp_path / "venv").read_bytes() == click.read_bytes()
