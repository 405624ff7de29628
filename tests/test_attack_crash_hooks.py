"""Crash consistency with hooks (issue 27, class 7): killed writers, then any next writer.

An upgrade killed after ``current`` moved but before the hooks ran left the hook
links in the old version, and ``gc`` then left them so: the app's launcher entry
went stale, or dangled.  Here the real installer runs as root and as a real
unprivileged user, with a system hook that makes one link per version (and runs an
``Exec``), a single-version one and a user-level one, and is killed (SIGKILL, from
inside, just before its Nth change to the file system: see
``crash_support.DRIVER``) at every step of an upgrade.  From each state a kill
leaves, every next writer a user might run (install, another app's install, gc,
hook run-system, hook run-user, register, unregister) runs, and afterwards every
hook link must match the database exactly: the system links name ``current`` and
point into it, the user's links name their registration, which is ``current``, and
no other link is left.  The same for a killed registration and unregistration, for
the next writer killed in turn while it finishes the change, and for intents an
attacker who owns the database writes into its lock file.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import stat
import subprocess
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from attack_support import APP, BAIT, World, assert_ok
from conftest import need
from crash_support import DRIVER
from deadlines import seconds
from install_support import check_invariants, make_click

pytestmark = pytest.mark.slow

OTHER = "com.example.other"
HOOKED = {"app": {"multi": "a.txt", "single": "sub/b.txt", "userh": "a.txt"}}


class Crashes:
    """A world with 1.0 installed, hooked and registered for its user, and 2.0 at hand."""

    def __init__(self, world: World) -> None:
        self.world = world
        self.out = world.base / "links"
        self.dirs = {name: self.out / name for name in ("multi", "single", "user")}
        self.exec_log = world.base / "exec.log"
        env = world.env
        env.add_hook("multi", f"Pattern: {self.dirs['multi']}/${{id}}.json\n"
                              f"Exec: echo ran >> {self.exec_log}\nUser: {world.user}\n")
        env.add_hook("single", f"Pattern: {self.dirs['single']}/${{short-id}}\n"
                               "Single-Version: yes\n")
        env.add_hook("userh", f"Pattern: {self.dirs['user']}/${{user}}-${{id}}.desktop\n"
                              "User-Level: yes\n")
        for d in self.dirs.values():
            d.mkdir(parents=True)
        self.pkgs = {v: world.package(version=v, hooks=HOOKED,
                                      files={"a.txt": f"a {v}\n", "sub/b.txt": f"b {v}\n"})
                     for v in ("1.0", "2.0")}
        self.other = world.package(name=OTHER, version="1.0", hooks={}, files={"f.txt": "f\n"})
        world.give_away(world.base)
        assert_ok(self.install("1.0"))
        self.saved = world.base.parent / f"{world.base.name}.saved"
        self.save(self.saved)

    @property
    def root(self) -> Path:
        return self.world.root

    @property
    def user(self) -> str:
        return self.world.user

    def install(self, version: str) -> subprocess.CompletedProcess[str]:
        return self.world.install(self.pkgs[version], f"--user={self.user}")

    # -- states ------------------------------------------------------------------------

    def _parts(self) -> list[tuple[Path, str]]:
        return [(self.root, "db"), (self.out, "links")]

    def save(self, where: Path) -> None:
        shutil.rmtree(where, ignore_errors=True)
        where.mkdir()
        for path, name in self._parts():
            subprocess.run(["cp", "-a", str(path), str(where / name)], check=True)

    def restore(self, where: Path | None = None) -> None:
        for path, name in self._parts():
            shutil.rmtree(path, ignore_errors=True)
            subprocess.run(["cp", "-a", str((where or self.saved) / name), str(path)],
                           check=True)

    def fingerprint(self) -> str:
        """What a writer can see of the state: the database but its scratch area (which
        every writer empties first) and its log, the lock file's intent, and the links:
        each entry's kind and link target or content (times and owners aside)."""
        seen = []
        for top, skip in ((self.root, {".click/tmp", ".click/log"}), (self.out, set())):
            for dirpath, dirnames, filenames in os.walk(top):
                rel = os.path.relpath(dirpath, top)
                dirnames[:] = [d for d in dirnames if os.path.normpath(f"{rel}/{d}") not in skip]
                for name in sorted(dirnames + filenames):
                    path = os.path.join(dirpath, name)
                    key = os.path.normpath(f"{top.name}/{rel}/{name}")
                    if os.path.normpath(f"{rel}/{name}") in skip:
                        continue
                    if os.path.islink(path):
                        seen.append((key, "link", os.readlink(path)))
                    elif os.path.isfile(path):
                        with open(path, "rb") as f:
                            seen.append((key, "file", hashlib.sha256(f.read()).hexdigest()))
                    else:
                        seen.append((key, "dir", ""))
        return hashlib.sha256(repr(sorted(seen)).encode()).hexdigest()

    # -- running -----------------------------------------------------------------------

    def killed_at(self, step: int, *args: object) -> subprocess.CompletedProcess[str]:
        """``click-build ARGS`` as the world's user, killed before its ``step``th change
        (0: never)."""
        return self.world.python(DRIVER, str(step), "parent", *map(str, args))

    def intent(self) -> bytes:
        return (self.root / ".click" / "lock").read_bytes()

    # -- what must hold ----------------------------------------------------------------

    def links(self) -> dict[str, dict[str, str]]:
        return {name: {e: os.readlink(d / e) for e in sorted(os.listdir(d))}
                for name, d in self.dirs.items()}

    def _version_of(self, link: Path) -> str | None:
        return os.path.basename(os.readlink(link)) if link.is_symlink() else None

    def current(self) -> str | None:
        return self._version_of(self.root / APP / "current")

    def registered(self) -> str | None:
        return self._version_of(self.root / ".click" / "users" / self.user / APP)

    def _hook_path(self, version: str, hook: str) -> str:
        """The file ``hook`` links to in ``version``'s manifest (as installed)."""
        info = self.root / APP / version / ".click" / "info" / f"{APP}.manifest"
        return str(json.loads(info.read_text())["hooks"]["app"][hook])

    def expected(self) -> dict[str, dict[str, str]]:
        """The links that match the database: the system hooks' for ``current``, the
        user hook's for the user's registration, nothing else."""
        root, current, registered = self.root, self.current(), self.registered()
        out: dict[str, dict[str, str]] = {"multi": {}, "single": {}, "user": {}}
        if current is not None:
            out["multi"] = {f"{APP}_app_{current}.json":
                            f"{root}/{APP}/{current}/{self._hook_path(current, 'multi')}"}
            out["single"] = {f"{APP}_app":
                             f"{root}/{APP}/{current}/{self._hook_path(current, 'single')}"}
        if registered is not None:
            out["user"] = {f"{self.user}-{APP}_app_{registered}.desktop":
                           f"{root}/.click/users/{self.user}/{APP}/"
                           f"{self._hook_path(registered, 'userh')}"}
        return out

    def placed(self, version: str) -> bool:
        """Whether ``version``'s tree is in the database (an install's first step)."""
        return (self.root / APP / version / ".click" / "info" / f"{APP}.manifest").is_file()

    def after_kill(self) -> list[str]:
        """What holds even right after a kill: every link resolves into a complete
        version, and none into 2.0 before ``current`` names it."""
        found = [f"invariant: {p}" for p in check_invariants(self.root)]
        for d in self.dirs.values():
            for entry in sorted(os.listdir(d)):
                path = d / entry
                if entry.startswith(".click-build."):
                    continue  # a recorded temporary twin (another file system only)
                real = os.path.realpath(path)
                if not os.path.isfile(real):
                    found.append(f"{path} -> {os.readlink(path)} dangles")
                elif real.startswith(os.path.realpath(self.root / APP / "2.0") + "/") \
                        and self.current() != "2.0":
                    found.append(f"{path} points into 2.0 while current is {self.current()}")
        return found

    def settled(self, strict: bool = True) -> list[str]:
        """After the next writer: links exactly as the database says, the user's
        registration (if any) is ``current``, no intent left, the scratch area empty.

        Not ``strict``: the user may still have the version before ``current`` (another
        command moved ``current`` on, not this user), whose link the hook that makes
        one link per version may keep while that version is installed."""
        found = [f"invariant: {p}" for p in check_invariants(self.root)]
        links, expected = self.links(), self.expected()
        if not strict and self.registered() not in (None, self.current()):
            kept = f"{APP}_app_{self.registered()}.json"
            if kept in links["multi"]:
                expected["multi"][kept] = f"{self.root}/{APP}/{self.registered()}/a.txt"
        elif self.registered() not in (None, self.current()):
            found.append(f"registered {self.registered()} but current is {self.current()}")
        if links != expected:
            found.append(f"links {links} != {expected}")
        for d in self.dirs.values():
            for entry in os.listdir(d):
                if not os.path.exists(d / entry):
                    found.append(f"{d / entry} dangles")
        if self.intent():
            found.append(f"an intent is left in the lock file: {self.intent()!r}")
        if os.listdir(self.root / ".click" / "tmp"):
            found.append(f"scratch left: {os.listdir(self.root / '.click' / 'tmp')}")
        return found


@pytest.fixture
def crashes(world: World) -> Iterator[Crashes]:
    c = Crashes(world)
    try:
        yield c
    finally:
        shutil.rmtree(c.saved, ignore_errors=True)


#: The next writer: (its arguments, whether it may fail, and then with which error)
NEXT: dict[str, Callable[[Crashes], tuple[object, ...]]] = {
    "install again": lambda c: ("install", f"--root={c.root}", "--allow-unauthenticated",
                                f"--user={c.user}", c.pkgs["2.0"]),
    "install another app": lambda c: ("install", f"--root={c.root}", "--allow-unauthenticated",
                                      f"--user={c.user}", c.other),
    "gc": lambda c: ("gc", f"--root={c.root}"),
    "hook run-system": lambda c: ("hook", f"--root={c.root}", "run-system"),
    "hook run-user": lambda c: ("hook", f"--root={c.root}", "run-user", f"--user={c.user}"),
    "register 1.0": lambda c: ("register", f"--root={c.root}", f"--user={c.user}", APP, "1.0"),
    "unregister": lambda c: ("unregister", f"--root={c.root}", f"--user={c.user}", APP),
}
#: What a next writer may say when the change it finished left nothing for it to do.
ALLOWED_ERRORS = {"register 1.0": f"{APP} 1.0 does not exist in any database"}


def _next_writer(c: Crashes, name: str, where: str, strict: bool = True) -> None:
    result = c.killed_at(0, *NEXT[name](c))
    assert "Traceback" not in result.stderr, (where, name, result.stderr)
    if result.returncode != 0:
        assert name in ALLOWED_ERRORS and ALLOWED_ERRORS[name] in result.stderr, \
            (where, name, result.stderr)
    assert c.settled(strict) == [], (where, name, result.stderr)


def _every_kill(c: Crashes, args: tuple[object, ...], minimum: int,
                then: Callable[[str], None], may_dangle: bool = False) -> int:
    """Kill ``args`` at step 1, 2, ... until it completes; on each distinct state a
    kill leaves, ``then(where)`` (the state restored before each call).

    ``may_dangle``: right after a kill a hook link may name a file that is not there
    (only a reinstall, which swaps the tree ``current`` names, leaves that)."""
    step, seen = 1, set()
    killed_state = c.world.base.parent / f"{c.world.base.name}.killed"
    try:
        while True:
            c.restore()
            result = c.killed_at(step, *args)
            assert "Traceback" not in result.stderr, (step, result.stderr)
            problems = c.after_kill()
            if may_dangle:
                problems = [p for p in problems if not p.endswith(" dangles")]
            assert problems == [], (step, result.stderr)
            if result.returncode == 0:
                assert c.settled() == [], (step, c.links())
                break
            mark = c.fingerprint()
            if mark not in seen:  # a state already seen gives every writer the same start
                seen.add(mark)
                c.save(killed_state)
                then(f"killed at step {step}")
            step += 1
    finally:
        shutil.rmtree(killed_state, ignore_errors=True)
    assert step > minimum, f"only {step} steps: the kills did not reach the hooks"
    print(f"{step} steps, {len(seen)} distinct states")
    return len(seen)


def test_killed_upgrade_then_any_writer_leaves_links_matching_current(
        crashes: Crashes) -> None:
    """From every state a kill of the upgrade leaves, each next writer in turn."""
    c = crashes
    killed_state = c.world.base.parent / f"{c.world.base.name}.killed"

    def then(where: str) -> None:
        for next_writer in sorted(NEXT):
            c.restore(killed_state)
            # begun (its intent recorded and 2.0 in place) or done: it is finished, never
            # undone; recorded but killed before 2.0 was placed, nothing had changed
            begun = (bool(c.intent()) and c.placed("2.0")) or c.registered() == "2.0"
            _next_writer(c, next_writer, where)
            if next_writer == "unregister":
                assert c.registered() is None, (where, next_writer)
            else:
                version = "2.0" if begun or next_writer == "install again" else "1.0"
                assert (c.current(), c.registered()) == (version, version), (where, next_writer)

    states = _every_kill(c, install_args(c, "2.0"), 25, then)
    assert states >= 8  # before the unpack, in it, the flip, each hook, the registration...


def install_args(c: Crashes, version: str) -> tuple[object, ...]:
    return ("install", f"--root={c.root}", "--allow-unauthenticated", f"--user={c.user}",
            c.pkgs[version])


def test_the_reported_case_gc_after_current_moved(crashes: Crashes) -> None:
    """The issue's own sequence: the upgrade killed right after ``current`` names 2.0,
    then ``gc``: the launcher entries follow 2.0 and none is left in 1.0."""
    c = crashes
    step = 1
    while True:
        c.restore()
        assert c.killed_at(step, *install_args(c, "2.0")).returncode != 0, "never moved"
        if c.current() == "2.0":
            break
        step += 1
    assert c.links()["single"] == {f"{APP}_app": f"{c.root}/{APP}/1.0/sub/b.txt"}  # stale
    assert c.intent().startswith(b"click-build-intent 1\0install\0")
    result = c.killed_at(0, "gc", f"--root={c.root}")
    assert_ok(result)
    assert (f"click-build: warning: finishing an install of {APP} 2.0 for {c.user}, which "
            "was interrupted") in result.stderr
    assert c.settled() == []
    assert c.links()["single"] == {f"{APP}_app": f"{c.root}/{APP}/2.0/sub/b.txt"}
    assert sorted(os.listdir(c.root / APP)) == ["2.0", "current"]
    # Debian's click reads the finished database as we do: the user has 2.0
    for args in (["list", f"--user={c.user}"], ["list", "--all"],
                 ["pkgdir", f"--user={c.user}", APP]):
        theirs = subprocess.run([need("click"), *args, f"--root={c.root}"], capture_output=True,
                                text=True, timeout=seconds(60))
        assert theirs.returncode == 0, theirs.stderr
        assert c.killed_at(0, *args, f"--root={c.root}").stdout == theirs.stdout, args
    assert theirs.stdout.strip() == f"{c.root}/.click/users/{c.user}/{APP}"


def test_the_writer_that_finishes_is_killed_too(crashes: Crashes) -> None:
    """The upgrade killed as soon as its intent is recorded and 2.0 is in place (nothing
    else done yet), then gc killed at every step while it finishes that change: the
    writer after it (hook run-system) finishes it, whatever gc did."""
    c = crashes
    step = 1
    while True:
        c.restore()
        assert c.killed_at(step, *install_args(c, "2.0")).returncode != 0
        if c.intent() and c.placed("2.0"):
            break
        step += 1
    assert c.current() == "1.0"
    first = c.world.base.parent / f"{c.world.base.name}.first"
    c.save(first)
    try:
        inner, finished = 1, False
        while not finished:
            c.restore(first)
            result = c.killed_at(inner, "gc", f"--root={c.root}")
            assert "Traceback" not in result.stderr, (inner, result.stderr)
            assert c.after_kill() == [], inner
            finished = result.returncode == 0
            if not finished:
                _next_writer(c, "hook run-system", f"gc killed at step {inner}")
            else:
                assert c.settled() == []
            inner += 1
        assert inner > 10
    finally:
        shutil.rmtree(first, ignore_errors=True)


def test_killed_unregister_then_any_writer(crashes: Crashes) -> None:
    """The user's links go first, then the registration, then the version: killed
    between any two, the next writer finishes: no link and no version are left."""
    c = crashes
    killed_state = c.world.base.parent / f"{c.world.base.name}.killed"

    def then(where: str) -> None:
        for next_writer in ("gc", "hook run-system", "hook run-user", "install another app"):
            c.restore(killed_state)
            begun = bool(c.intent()) or c.registered() is None
            _next_writer(c, next_writer, where)
            if begun:
                assert c.registered() is None and not (c.root / APP).exists(), \
                    (where, next_writer)
            else:  # killed before it began: nothing to finish
                assert (c.current(), c.registered()) == ("1.0", "1.0"), (where, next_writer)

    args = ("unregister", f"--root={c.root}", f"--user={c.user}", APP)
    assert _every_kill(c, args, 5, then) >= 3


def test_killed_register_then_any_writer(crashes: Crashes) -> None:
    """2.0 installed for nobody (current), the user on 1.0; ``register 2.0`` killed at
    every step: the next writer moves the user's links to 2.0 with the registration."""
    c = crashes
    assert_ok(c.world.install(c.pkgs["2.0"]))
    assert c.current() == "2.0" and c.registered() == "1.0"
    c.save(c.saved)
    killed_state = c.world.base.parent / f"{c.world.base.name}.killed"

    def then(where: str) -> None:
        for next_writer in ("gc", "hook run-user", "unregister"):
            c.restore(killed_state)
            begun = bool(c.intent()) or c.registered() == "2.0"
            _next_writer(c, next_writer, where, strict=begun or next_writer == "unregister")
            if next_writer == "unregister":
                assert c.registered() is None, (where, next_writer)
            else:
                assert c.registered() == ("2.0" if begun else "1.0"), (where, next_writer)

    args = ("register", f"--root={c.root}", f"--user={c.user}", APP, "2.0")
    assert _every_kill(c, args, 5, then) >= 3


def test_killed_reinstall_with_other_hooks_then_any_writer(crashes: Crashes) -> None:
    """1.0 installed again from a package whose single-version hook names another file
    (sub/b.txt gone): the tree ``current`` names is swapped in one step, so a kill after
    the swap leaves links that follow the old tree.  The intent is recorded before the
    swap, and the next writer makes every link follow the tree in place, whichever."""
    c = crashes
    again = c.world.pkgs / "again"
    pkg = make_click(again, version="1.0",
                     hooks={"app": {"multi": "a.txt", "single": "c.txt", "userh": "a.txt"}},
                     files={"a.txt": "a again\n", "c.txt": "c again\n"})
    c.world.give_away(again)
    killed_state = c.world.base.parent / f"{c.world.base.name}.killed"

    def then(where: str) -> None:
        for next_writer in ("gc", "hook run-system", "hook run-user", "install another app"):
            c.restore(killed_state)
            _next_writer(c, next_writer, where)
            assert (c.current(), c.registered()) == ("1.0", "1.0"), (where, next_writer)

    args = ("install", f"--root={c.root}", "--allow-unauthenticated", f"--user={c.user}", pkg)
    assert _every_kill(c, args, 5, then, may_dangle=True) >= 3
    assert c.links()["single"] == {f"{APP}_app": f"{c.root}/{APP}/1.0/c.txt"}


# -- intents an attacker writes ----------------------------------------------------------

def _record(*fields: str) -> bytes:
    return b"\0".join([b"click-build-intent 1", *(f.encode() for f in fields), b"end\n"])


PLANTED = {
    "not a record": (b"#!/bin/sh\nrm -rf /\n", "not an intent record"),
    "unknown change": (_record("format-disk", "", "", "", "", "", ""), "unknown change"),
    "a path for a package": (_record("remove", "../../outside", "1.0", "", "", "", ""),
                             "contains '/'"),
    "a path for a version": (_record("remove", APP, "../../outside", "", "", "", ""),
                             "../../outside"),
    "a user with a slash": (_record("sync-user", "", "", "", "", "../evil", ""), "../evil"),
    "a hook path": (_record("hook-remove", "", "", "", "", "", "../../outside/x"),
                    "no hook file has"),
    "a version never unpacked": (_record("install", APP, "9.9", "1.0", "1.0", "", ""), ""),
    # gc's record: only what gc would remove goes, never a version in use
    "removing the version in use": (_record("remove", APP, "1.0", "", "", "", ""), ""),
    "a record cut short": (_record("install", APP, "2.0", "1.0", "1.0", "", "")[:-6], ""),
}


def test_an_intent_planted_in_the_lock_file_changes_nothing(crashes: Crashes) -> None:
    """Whoever owns the database may write the lock file: what it holds is refused with
    a warning (or finishes nothing, for a version that is not there) and cleared; the
    next writer does its own job; nothing around the database is touched."""
    c = crashes
    lock = c.root / ".click" / "lock"
    for case, (record, warning) in sorted(PLANTED.items()):
        c.restore()
        st = os.stat(lock)
        lock.write_bytes(record)
        os.chown(lock, st.st_uid, st.st_gid)
        before_links, before_around = c.links(), c.world.surroundings()
        result = c.killed_at(0, "gc", f"--root={c.root}")
        assert_ok(result)
        assert warning in result.stderr, (case, result.stderr)
        assert c.intent() == b"", case
        assert (c.links(), c.current(), c.registered()) == (before_links, "1.0", "1.0"), case
        assert c.world.surroundings() == before_around, case
        assert c.settled() == [], case
        assert stat.S_ISREG(os.lstat(lock).st_mode) and BAIT not in result.stderr
