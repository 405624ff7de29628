"""Crash safety and concurrency: SIGKILL at every step, parallel writers.

The installer runs in a real process whose every file-system change
(open for writing, write, mkdir, symlink, link, rename, exchange, unlink,
rmdir, chown) is counted; at step N the process sends itself SIGKILL just
before the change, so each run stops at a different point.  Afterwards every
``current`` and registration link must point at a complete version, and the
next run must clean up and finish the job.
"""

from __future__ import annotations

import os
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest
from install_support import Env, check_invariants, current_user, make_click, make_env

DRIVER = r"""
import os, signal, sys
limit, mode = int(sys.argv[1]), sys.argv[2]
main_pid = os.getpid()
count = [0]
def step():
    # "parent": only the installer process counts and dies; "child": only the
    # process it forks to unpack as clickpkg (so each gets every step).
    if (os.getpid() == main_pid) != (mode == "parent"):
        return
    count[0] += 1
    if count[0] == limit:
        os.kill(os.getpid(), signal.SIGKILL)
def wrap(module, name, creates=None):
    real = getattr(module, name)
    def wrapper(*args, **kwargs):
        if creates is None or creates(*args, **kwargs):
            step()
        return real(*args, **kwargs)
    setattr(module, name, wrapper)
writes = os.O_WRONLY | os.O_RDWR | os.O_CREAT
for name in ("write", "mkdir", "symlink", "link", "rename", "replace", "unlink", "rmdir",
             "chown", "utime"):
    wrap(os, name)
wrap(os, "open", lambda path, flags, *a, **k: bool(flags & writes))
import click_build.install.fs as fs
wrap(fs, "exchange")
import click_build.install.installer as installer
installer.exchange = fs.exchange
from click_build.cli import main
sys.exit(main(sys.argv[3:]))
"""


def install_args(env: Env, pkg: Path) -> list[str]:
    return ["install", f"--root={env.root}", "--allow-unauthenticated",
            f"--user={current_user()}", str(pkg)]


def run_killed_at(env: Env, step: int, args: list[str],
                  mode: str = "parent") -> subprocess.CompletedProcess[str]:
    full = dict(os.environ, **env.vars())
    return subprocess.run([sys.executable, "-c", DRIVER, str(step), mode, *args], env=full,
                          capture_output=True, text=True, timeout=120)


def registered(env: Env) -> str:
    link = env.root / ".click/users" / current_user() / "com.example.app"
    return os.path.basename(os.readlink(link)) if link.is_symlink() else ""


def crash_everywhere(env: Env, args: list[str], before: str, after: str,
                     stride: int = 1, mode: str = "parent") -> int:
    """Kill at step 1, 1+stride, ... until a run finishes; check each aftermath."""
    step, killed = 1, 0
    while True:
        result = run_killed_at(env, step, args, mode)
        assert "Traceback" not in result.stderr, result.stderr
        problems = check_invariants(env.root)
        assert problems == [], (step, problems)
        assert registered(env) in (before, after), step
        if result.returncode == 0:
            assert registered(env) == after
            return killed
        killed += 1
        # the next run cleans up after the killed one and completes the job
        recover = run_killed_at(env, 0, args)
        assert recover.returncode == 0, (step, recover.stderr)
        assert registered(env) == after
        assert os.listdir(env.root / ".click/tmp") == []
        assert check_invariants(env.root) == []
        reset(env, before)
        step += stride


def reset(env: Env, version: str) -> None:
    """Back to the starting state: ``version`` registered (or nothing)."""
    import shutil

    shutil.rmtree(env.root, ignore_errors=True)
    if version:
        pkg = env.base / f"com.example.app_{version}_all.click"
        assert run_killed_at(env, 0, install_args(env, pkg)).returncode == 0


@pytest.fixture
def env(tmp_path: Path) -> Env:
    e = make_env(tmp_path)
    for version in ("1.0", "2.0"):
        make_click(tmp_path, version=version,
                   files={"a.txt": "a\n", "sub/b.txt": "b\n", "sub/c.sh": "#!/bin/sh\n"})
    return e


@pytest.mark.slow
def test_killed_fresh_install_leaves_a_consistent_database(env: Env) -> None:
    killed = crash_everywhere(env, install_args(env, env.base / "com.example.app_1.0_all.click"),
                              "", "1.0")
    assert killed >= 20


@pytest.mark.slow
def test_killed_upgrade_keeps_the_old_version_usable(env: Env) -> None:
    reset(env, "1.0")
    killed = crash_everywhere(env, install_args(env, env.base / "com.example.app_2.0_all.click"),
                              "1.0", "2.0")
    assert killed >= 30


@pytest.mark.slow
@pytest.mark.root
def test_killed_unpacking_child_leaves_nothing(env: Env) -> None:
    """Root unpacks in a child running as clickpkg: kill that one at every step."""
    if os.geteuid() != 0:
        pytest.skip("only root forks an unpacking child")
    reset(env, "1.0")
    killed = crash_everywhere(env, install_args(env, env.base / "com.example.app_2.0_all.click"),
                              "1.0", "2.0", mode="child")
    assert killed >= 15


@pytest.mark.slow
def test_killed_reinstall_of_the_same_version(env: Env) -> None:
    reset(env, "1.0")
    killed = crash_everywhere(env, install_args(env, env.base / "com.example.app_1.0_all.click"),
                              "1.0", "1.0", stride=2)
    assert killed >= 10


def test_concurrent_writers_serialise(env: Env, tmp_path: Path) -> None:
    names = [f"com.example.p{i}" for i in range(6)]
    pkgs = [make_click(tmp_path, name=n, version=v) for n in names for v in ("1.0", "2.0")]
    full = dict(os.environ, **env.vars())
    user = current_user()

    def call(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run([sys.executable, "-m", "click_build", *args], env=full,
                              capture_output=True, text=True, timeout=300)

    jobs = [("install", f"--root={env.root}", "--allow-unauthenticated", f"--user={user}",
             str(p)) for p in pkgs]
    jobs += [("gc", f"--root={env.root}")] * 3 + [("list", f"--root={env.root}", "--all")] * 3
    with ThreadPoolExecutor(max_workers=8) as pool:
        results = list(pool.map(lambda a: call(*a), jobs))
    for args, result in zip(jobs, results):
        assert result.returncode == 0, (args, result.stderr)
    assert check_invariants(env.root) == []
    assert os.listdir(env.root / ".click/tmp") == []
    listed = call("list", f"--root={env.root}", f"--user={user}").stdout.splitlines()
    # whichever of each pair ran last is registered, and only that version is kept
    assert sorted(line.split("\t")[0] for line in listed) == names
    for line in listed:
        name, version = line.split("\t")
        assert sorted(os.listdir(env.root / name)) == [version, "current"]
