"""Crash safety and concurrency: SIGKILL at every step, parallel writers.

The installer runs in a real process whose every file-system change is counted
(:data:`crash_support.DRIVER`); at step N the process sends itself SIGKILL just
before the change, so each run stops at a different point.  Afterwards every
``current`` and registration link must point at a complete version, and the
next run must clean up and finish the job.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest
from crash_support import DRIVER
from deadlines import seconds
from install_support import (
    Env,
    check_invariants,
    complete_version,
    current_user,
    make_click,
    make_env,
)

from click_build.install.lock import RETIRED


def install_args(env: Env, pkg: Path) -> list[str]:
    return ["install", f"--root={env.root}", "--allow-unauthenticated",
            f"--user={current_user()}", str(pkg)]


def run_killed_at(env: Env, step: int, args: list[str],
                  mode: str = "parent") -> subprocess.CompletedProcess[str]:
    full = dict(os.environ, **env.vars())
    return subprocess.run([sys.executable, "-c", DRIVER, str(step), mode, *args], env=full,
                          capture_output=True, text=True, timeout=seconds(120))


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


#: A file system without ``renameat2(RENAME_EXCHANGE)`` (:data:`crash_support.DRIVER`).
NO_EXCHANGE = "parent+no-exchange"


def reinstall_killed_at(env: Env, step: int) -> subprocess.CompletedProcess[str]:
    """Version 1.0 installed and registered, then installed again, killed at ``step``."""
    reset(env, "1.0")
    return run_killed_at(env, step, install_args(env, env.base / "com.example.app_1.0_all.click"),
                         NO_EXCHANGE)


def register_again(env: Env) -> subprocess.CompletedProcess[str]:
    """A writer of another kind than the one killed: the user's registration of 1.0."""
    return run_killed_at(env, 0, ["register", f"--root={env.root}", f"--user={current_user()}",
                                  "com.example.app", "1.0"], NO_EXCHANGE)


@pytest.mark.slow
def test_killed_reinstall_without_exchange_gets_its_tree_back(env: Env) -> None:
    """Where the file system cannot swap two trees in one step, a reinstall moves the
    installed tree aside, then the new one in.  Killed between the two, ``current`` and
    the registration name no tree; the next writer of any kind (here a registration)
    puts the installed tree back before it does anything else, and leaves nothing in the
    scratch area."""
    current = env.root / "com.example.app" / "current"
    link = env.root / ".click/users" / current_user() / "com.example.app"
    step, gaps = 1, []
    while True:
        result = reinstall_killed_at(env, step)
        assert "Traceback" not in result.stderr, result.stderr
        if result.returncode == 0:
            break
        problems = check_invariants(env.root)
        if problems:
            gaps.append(step)
            assert problems == [f"{current} -> 1.0 is not a complete version",
                                f"{link} -> {current.parent / '1.0'} is not a complete version"]
        recover = register_again(env)
        assert recover.returncode == 0, (step, recover.stderr)
        assert check_invariants(env.root) == [], step
        assert (current / "sub" / "b.txt").read_text() == "b\n", step
        assert registered(env) == "1.0" and os.listdir(env.root / ".click/tmp") == [], step
        step += 1
    assert len(gaps) == 1, gaps  # the kill between the two renames
    assert check_invariants(env.root) == [] and registered(env) == "1.0"


@pytest.mark.slow
def test_a_link_planted_as_the_moved_tree_is_not_followed(env: Env, tmp_path: Path) -> None:
    """Killed between the two renames, then the moved-aside tree replaced by a link to a
    folder elsewhere that looks installed: the next writer neither puts the link in
    place nor touches what it points at, and says in one line what is missing."""
    step = 1
    while reinstall_killed_at(env, step).returncode != 0 and not check_invariants(env.root):
        step += 1
    moved = env.root / ".click/tmp" / RETIRED
    assert moved.is_dir() and not moved.is_symlink(), step
    elsewhere = tmp_path / "elsewhere"
    shutil.move(moved, elsewhere)
    moved.symlink_to(elsewhere)
    before = sorted(str(p.relative_to(elsewhere)) for p in elsewhere.rglob("*"))
    result = register_again(env)
    assert result.returncode == 1 and "Traceback" not in result.stderr, result.stderr
    assert result.stderr.splitlines()[-1] == (
        "click-build: error: com.example.app 1.0 does not exist in any database")
    assert not (env.root / "com.example.app" / "1.0").exists()
    assert os.listdir(env.root / ".click/tmp") == []
    assert sorted(str(p.relative_to(elsewhere)) for p in elsewhere.rglob("*")) == before


def test_concurrent_writers_serialise(env: Env, tmp_path: Path) -> None:
    names = [f"com.example.p{i}" for i in range(6)]
    pkgs = [make_click(tmp_path, name=n, version=v) for n in names for v in ("1.0", "2.0")]
    full = dict(os.environ, **env.vars())
    user = current_user()

    def call(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run([sys.executable, "-m", "click_build", *args], env=full,
                              capture_output=True, text=True, timeout=seconds(300))

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


# -- hooks -------------------------------------------------------------------------------

APP = "com.example.app"
HOOKED = {"app": {"multi": "a.txt", "single": "sub/b.txt", "userh": "a.txt"}}


class HookWorld:
    """An app with a multi-version and a single-version system hook and a user hook."""

    def __init__(self, base: Path, single_dir: Path) -> None:
        self.env = make_env(base)
        self.out = base / "links"
        self.dirs = {"multi": self.out / "multi", "single": single_dir,
                     "user": self.out / "user"}
        self.env.add_hook("multi", f"Pattern: {self.dirs['multi']}/${{id}}.json\n")
        self.env.add_hook("single", f"Pattern: {single_dir}/${{short-id}}\nSingle-Version: yes\n")
        self.env.add_hook("userh", f"Pattern: {self.dirs['user']}/${{user}}-${{id}}.desktop\n"
                                   "User-Level: yes\n")
        self.user = current_user()
        self.pkgs = {v: make_click(base, version=v, hooks=HOOKED,
                                   files={"a.txt": f"a {v}\n", "sub/b.txt": f"b {v}\n"})
                     for v in ("1.0", "2.0")}
        self.saved = base / "saved"
        root = self.env.root
        assert run_killed_at(self.env, 0, install_args(self.env, self.pkgs["1.0"])).returncode == 0
        self.saved.mkdir()
        for name, path in [("db", root)] + list(self.dirs.items()):
            subprocess.run(["cp", "-a", str(path), str(self.saved / name)], check=True)

    def restore(self) -> None:
        """Back to 1.0 installed, hooked and registered (a copy: faster than installing)."""
        for name, path in [("db", self.env.root)] + list(self.dirs.items()):
            subprocess.run(["rm", "-rf", str(path)], check=True)
            subprocess.run(["cp", "-a", str(self.saved / name), str(path)], check=True)

    def links(self) -> dict[str, dict[str, str]]:
        return {name: {e: os.readlink(d / e) for e in sorted(os.listdir(d))}
                for name, d in self.dirs.items()}

    def problems(self, journaled: bool = False) -> list[str]:
        """Every hook link resolves into a complete version; into 2.0 only once ``current``
        names it; no temporary link outside the database (unless recorded for the next
        writer to remove, when it had to be made beside a link on another file system)."""
        root = self.env.root
        current_link = root / APP / "current"
        current = os.readlink(current_link) if current_link.is_symlink() else None
        journal = root / ".click" / "tmp" / "outside-links"
        recorded = journal.read_bytes().split(b"\0") if journal.exists() else []
        found = []
        for d in self.dirs.values():
            for entry in sorted(os.listdir(d)) if d.exists() else []:
                path = d / entry
                if entry.startswith(".click-build."):
                    if not (journaled and os.fsencode(path) in recorded):
                        found.append(f"temporary link {path} left outside the database")
                    continue
                real = os.path.realpath(path)
                if not os.path.isfile(real):
                    found.append(f"{path} -> {os.readlink(path)} dangles")
                    continue
                version = os.path.relpath(real, os.path.realpath(root / APP)).split("/")[0]
                if not complete_version(str(root / APP / version)):
                    found.append(f"{path} points into {version}, not a complete version")
                if version == "2.0" and current != "2.0":
                    found.append(f"{path} points into 2.0 while current names {current}")
        return found

    def expected(self) -> dict[str, dict[str, str]]:
        root = self.env.root
        return {"multi": {f"{APP}_app_2.0.json": f"{root}/{APP}/2.0/a.txt"},
                "single": {f"{APP}_app": f"{root}/{APP}/2.0/sub/b.txt"},
                "user": {f"{self.user}-{APP}_app_2.0.desktop":
                         f"{root}/.click/users/{self.user}/{APP}/a.txt"}}


def crash_hooked_upgrade(world: HookWorld, journaled: bool = False) -> tuple[int, int]:
    """(kills, kills that left a recorded temporary link beside a hook link)."""
    env, args = world.env, install_args(world.env, world.pkgs["2.0"])
    step, killed, left = 1, 0, 0
    while True:
        world.restore()
        result = run_killed_at(env, step, args)
        assert "Traceback" not in result.stderr, result.stderr
        assert check_invariants(env.root) == [], step
        assert world.problems(journaled) == [], step
        left += any(e.startswith(".click-build.") for d in world.dirs.values()
                    for e in os.listdir(d))
        if result.returncode == 0:
            assert world.links() == world.expected()
            return killed, left
        killed += 1
        recover = run_killed_at(env, 0, args)  # the next command cleans up and finishes
        assert recover.returncode == 0, (step, recover.stderr)
        assert world.links() == world.expected(), step
        assert world.problems() == [] and os.listdir(env.root / ".click/tmp") == [], step
        step += 1


@pytest.mark.slow
def test_killed_unregister_leaves_no_link_into_a_gone_registration(tmp_path: Path) -> None:
    """unregister killed at every step: the user-level hook link (which points through
    the registration) never dangles, and while the user is still registered the next
    unregister finishes the job."""
    world = HookWorld(tmp_path, tmp_path / "links" / "single")
    env = world.env
    args = ["unregister", f"--root={env.root}", f"--user={world.user}", APP]
    user_links = world.dirs["user"]
    step, killed = 1, 0
    while True:
        world.restore()
        result = run_killed_at(env, step, args)
        assert "Traceback" not in result.stderr, result.stderr
        assert check_invariants(env.root) == [], step
        assert world.problems() == [], step
        if result.returncode == 0:
            break
        killed += 1
        if registered(env):
            recover = run_killed_at(env, 0, args)
            assert recover.returncode == 0, (step, recover.stderr)
        assert not registered(env) and os.listdir(user_links) == [], step
        assert world.problems() == [], step
        step += 1
    assert killed >= 5 and os.listdir(user_links) == []


@pytest.mark.slow
def test_killed_upgrade_keeps_every_hook_link_consistent(tmp_path: Path) -> None:
    """System hooks (one link per version, one per app) and a user hook, killed at every
    step of an upgrade: no link dangles or points into 2.0 before ``current`` does, no
    temporary link is left outside the database, and the next install finishes the job."""
    world = HookWorld(tmp_path, tmp_path / "links" / "single")
    killed, left = crash_hooked_upgrade(world)
    assert killed >= 30 and left == 0


@pytest.mark.slow
def test_killed_hook_link_replacement_on_another_file_system(tmp_path: Path) -> None:
    """A single-version link on another file system (/dev/shm) cannot be renamed from the
    database's scratch area: its temporary twin is made beside it, recorded first, and
    removed by the next writer if a kill leaves it."""
    shm = Path("/dev/shm")
    if not shm.is_dir() or os.stat(shm).st_dev == os.stat(tmp_path).st_dev:
        pytest.skip("needs /dev/shm on another file system")
    single = Path(tempfile.mkdtemp(prefix="click-build-hooks.", dir=shm))
    try:
        world = HookWorld(tmp_path, single)
        killed, left = crash_hooked_upgrade(world, journaled=True)
        assert killed >= 30 and left >= 1  # the case this test is about did happen
    finally:
        shutil.rmtree(single, ignore_errors=True)
