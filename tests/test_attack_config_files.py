"""Hostile configuration files: a FIFO or a link to /dev/zero planted as a framework
file or as a databases ``*.conf``.  Each command must finish at once (a blocking read
of a FIFO would hang it, holding the database lock when installing), read no more than
a configuration file's size, and treat the file as unreadable: absent, as the
original treats a file it cannot read."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from deadlines import seconds
from install_support import make_click

PLANTS = {"fifo": os.mkfifo, "zero": lambda path: os.symlink("/dev/zero", path)}


def _cli(*args: str, env_extra: dict[str, str]) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, **env_extra}
    return subprocess.run([sys.executable, "-m", "click_build", *args], env=env,
                          capture_output=True, text=True, timeout=seconds(30))


def _assert_one_error(result: subprocess.CompletedProcess[str], fragment: str) -> None:
    assert result.returncode != 0
    assert "Traceback" not in result.stderr, result.stderr
    errors = [line for line in result.stderr.splitlines()
              if line.startswith("click-build: error: ")]
    assert len(errors) == 1 and fragment in errors[0], result.stderr


@pytest.mark.parametrize("plant", sorted(PLANTS))
def test_planted_framework_file(tmp_path: Path, plant: str) -> None:
    frameworks = tmp_path / "frameworks"
    frameworks.mkdir()
    PLANTS[plant](frameworks / "fw-1.framework")
    (frameworks / "fw-2.framework").write_text("Base-Name: ubuntu-sdk\nBase-Version: 20.04\n")
    pkg = make_click(tmp_path / "pkgs", framework="fw-1")
    env = {"CLICK_FRAMEWORKS_DIR": str(frameworks), "CLICK_HOOKS_DIR": str(tmp_path)}
    root = tmp_path / "db"
    missing = 'Framework "fw-1" not present on system'
    _assert_one_error(_cli("install", "--allow-unauthenticated", f"--root={root}",
                           "--user=@all", str(pkg), env_extra=env), missing)
    assert not (root / "com.example.app").exists()
    _assert_one_error(_cli("verify", "--allow-unauthenticated", str(pkg), env_extra=env),
                      missing)
    _assert_one_error(_cli("framework", "info", "fw-1", env_extra=env),
                      "No click framework 'fw-1' installed")
    listed = _cli("framework", "list", env_extra=env)
    assert listed.returncode == 0 and listed.stdout.split() == ["fw-2"], listed


@pytest.mark.parametrize("plant", sorted(PLANTS))
def test_planted_databases_conf(tmp_path: Path, plant: str) -> None:
    conf = tmp_path / "databases"
    conf.mkdir()
    PLANTS[plant](conf / "10.conf")
    (conf / "20.conf").write_text(f"[Click Database]\nroot = {tmp_path / 'db'}\n")
    pkg = make_click(tmp_path / "pkgs")
    env = {"CLICK_DATABASES_DIR": str(conf), "CLICK_HOOKS_DIR": str(tmp_path),
           "CLICK_FRAMEWORKS_DIR": str(tmp_path)}
    installed = _cli("install", "--allow-unauthenticated", "--force-missing-framework",
                     "--all-users", str(pkg), env_extra=env)
    assert installed.returncode == 0, installed.stderr
    listed = _cli("list", "--all", env_extra=env)
    assert listed.returncode == 0, listed.stderr
    assert listed.stdout.split() == ["com.example.app", "1.0"]
