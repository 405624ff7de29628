"""The attacker's bench for the installer's adversarial tests.

A :class:`World` is one isolated Click world (database, hooks, frameworks,
packages) inside a folder that also holds bait: ``outside/``, which a planted
link points at and which an installer that followed it would read, write,
chown or delete.  Each test runs the real CLI as a process, either as root
or as a real unprivileged user with a home directory of its own (created for
the session), and compares snapshots of everything around the database
before and after.
"""

from __future__ import annotations

import hashlib
import os
import pwd
import shutil
import stat
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest
from conftest import assert_clean_error
from deadlines import wait_for
from install_support import Env, make_click, portable_cli, run

MODES = ["root", "user"]
BAIT = "BAIT-outside-the-database"
APP = "com.example.app"


def snapshot(top: Path, skip: tuple[Path, ...] = ()) -> dict[str, tuple[object, ...]]:
    """Kind, mode, owner and content (or link target) of everything under ``top``."""
    out: dict[str, tuple[object, ...]] = {}
    skipped = {str(p) for p in skip}
    for dirpath, dirnames, filenames in os.walk(top):
        dirnames[:] = [d for d in dirnames if os.path.join(dirpath, d) not in skipped]
        for name in sorted(dirnames + filenames):
            path = os.path.join(dirpath, name)
            if path in skipped:
                continue
            st = os.lstat(path)
            if stat.S_ISLNK(st.st_mode):
                detail: object = os.readlink(path)
            elif stat.S_ISREG(st.st_mode):
                with open(path, "rb") as f:
                    detail = (hashlib.sha256(f.read()).hexdigest(), st.st_mtime_ns)
            else:
                detail = None
            out[os.path.relpath(path, top)] = (stat.S_IFMT(st.st_mode), stat.S_IMODE(st.st_mode),
                                               st.st_uid, st.st_gid, detail)
    return out


def assert_refused(result: subprocess.CompletedProcess[str], *fragments: str) -> None:
    """Non-zero exit, exactly one ``click-build: error:`` line, no traceback."""
    assert_clean_error(result, *fragments)
    errors = [line for line in result.stderr.splitlines()
              if line.startswith("click-build: error: ")]
    assert len(errors) == 1, result.stderr
    assert BAIT not in result.stdout + result.stderr  # nothing was read from outside


def assert_ok(result: subprocess.CompletedProcess[str]) -> None:
    assert result.returncode == 0, result.stderr
    assert "Traceback" not in result.stderr
    assert BAIT not in result.stdout + result.stderr


class World:
    """One Click world under ``base``; the CLI runs as ``user`` (root in root mode)."""

    def __init__(self, base: Path, mode: str, user: str, cli: list[str]) -> None:
        self.base, self.mode, self.user, self.cli = base, mode, user, cli
        self.switch = mode == "user" and os.geteuid() == 0  # run as another account
        self.env = Env(base).setup()
        self.pkgs = base / "pkgs"
        self.outside = base / "outside"
        self._plant_bait()
        self.give_away(base)

    @property
    def root(self) -> Path:
        return self.base / "db"

    @property
    def home(self) -> Path:
        return Path(pwd.getpwnam(self.user).pw_dir)

    def _plant_bait(self) -> None:
        """What a planted link leads to: a look-alike database full of bait."""
        o = self.outside
        version = o / APP / "1.0"
        (version / ".click" / "info").mkdir(parents=True)
        (version / ".click" / "info" / f"{APP}.manifest").write_text(
            f'{{"name": "{APP}", "version": "1.0", "title": "{BAIT}"}}')
        (version / "keep.txt").write_text(BAIT)
        (o / "users" / APP).parent.mkdir(parents=True)
        os.symlink(str(version), o / "users" / APP)
        (o / "secret").write_text(BAIT)
        (o / "tmp").mkdir()
        (o / "tmp" / "keep").write_text(BAIT)

    def give_away(self, path: Path) -> None:
        """Everything under ``path`` to the world's user (in user mode)."""
        if not self.switch:
            return
        pw = pwd.getpwnam(self.user)
        os.chown(path, pw.pw_uid, pw.pw_gid, follow_symlinks=False)
        for dirpath, dirnames, filenames in os.walk(path):
            for name in dirnames + filenames:
                os.chown(os.path.join(dirpath, name), pw.pw_uid, pw.pw_gid,
                         follow_symlinks=False)

    # -- running -----------------------------------------------------------------------

    def run(self, *args: object,
            env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
        full = dict(self.env.vars(), **(env or {}))
        if self.switch:
            return run([*self.cli, *map(str, args)], env=full, user=self.user)
        return run([*self.cli, *map(str, args)], env=full)

    def python(self, code: str, *args: str,
               env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
        """``python -c CODE ARGS`` with click-build importable, as the world's user."""
        full = dict(self.env.vars(), **(env or {}))
        if self.switch:
            full["PYTHONPATH"] = str(Path(self.cli[0]).parent / "lib")
            return run(["/usr/bin/python3", "-P", "-c", code, *args], env=full,
                       user=self.user)
        return run([sys.executable, "-c", code, *args], env=full)

    def db(self, command: str, *args: object) -> subprocess.CompletedProcess[str]:
        """A database command on this world's root."""
        return self.run(command, f"--root={self.root}", *args)

    def install(self, pkg: Path, *args: object) -> subprocess.CompletedProcess[str]:
        return self.db("install", "--allow-unauthenticated", *args, pkg)

    def package(self, **kwargs: object) -> Path:
        """A real package built by click-build, readable by the world's user."""
        self.pkgs.mkdir(exist_ok=True)
        pkg = make_click(self.pkgs, **kwargs)  # type: ignore[arg-type]
        self.give_away(self.pkgs)
        return pkg

    def installed(self) -> Path:
        """1.0 of the app, installed and registered for the world's user."""
        pkg = self.package(version="1.0")
        assert_ok(self.install(pkg, f"--user={self.user}"))
        return pkg

    # -- looking -----------------------------------------------------------------------

    def surroundings(self) -> dict[str, tuple[object, ...]]:
        """Everything in the world but the database itself."""
        return snapshot(self.base, skip=(self.root,))

    def state(self) -> dict[str, tuple[object, ...]]:
        """Everything in the database but its scratch area (empty between commands)."""
        return snapshot(self.root, skip=(self.root / ".click" / "tmp",))

    def app_intact(self) -> None:
        """The installed 1.0 is complete, current and registered."""
        version = self.root / APP / "1.0"
        assert (version / "app.desktop").is_file() and not version.is_symlink()
        assert os.readlink(self.root / APP / "current") == "1.0"
        assert os.readlink(self.root / ".click/users" / self.user / APP) == str(version)
        assert os.listdir(self.root / ".click" / "tmp") == []


def _add_user(name: str) -> None:
    errors = []

    def made() -> bool:  # another checkout's useradd may hold the passwd lock: try again
        result = subprocess.run(["useradd", "--create-home", "--home-dir", f"/home/{name}",
                                 "--shell", "/bin/sh", "--user-group", name],
                                capture_output=True, text=True)
        errors.append(result.stderr.strip())
        try:
            ok = pwd.getpwnam(name).pw_dir == f"/home/{name}"
        except KeyError:
            ok = False
        return ok and os.path.isdir(f"/home/{name}")  # an earlier attempt may have made it

    try:
        wait_for(made, f"useradd {name}", within=30)
    except AssertionError as e:
        raise AssertionError(f"{e}: {errors}") from None


@pytest.fixture(scope="session")
def real_user() -> Iterator[str]:
    """An unprivileged account with a real home directory, for this test session only."""
    if os.geteuid() != 0:
        yield pwd.getpwuid(os.getuid()).pw_name  # already unprivileged: that is the user
        return
    name = f"cbat{os.getpid() % 1000000}x{os.urandom(2).hex()}"
    _add_user(name)
    home = Path(pwd.getpwnam(name).pw_dir)
    try:
        yield name
        # One account for the whole session: a folder a test made in its home as root
        # (~/.local, say) would refuse the next test that runs as the user.
        rooted = sorted(str(p) for p in home.rglob("*") if p.lstat().st_uid == 0)
        assert not rooted, f"tests left root's files in {name}'s home: {rooted[:10]}"
    finally:
        subprocess.run(["userdel", "--remove", name], capture_output=True)


@pytest.fixture(scope="session")
def user_cli() -> Iterator[list[str]]:
    """A click-build any user can run (a world-readable copy, the system Python)."""
    if os.geteuid() != 0:
        yield [sys.executable, "-m", "click_build"]
        return
    for script in portable_cli():
        yield [str(script)]


@pytest.fixture(params=MODES)
def world(request: pytest.FixtureRequest, real_user: str, user_cli: list[str]) -> Iterator[World]:
    """A world driven as root, or as a real unprivileged user in their own home."""
    mode = request.param
    if mode == "root":
        if os.geteuid() != 0:
            pytest.skip("root mode needs root")
        base = Path(tempfile.mkdtemp(prefix="cb-attack."))
        base.chmod(0o755)  # the unpacking child runs as clickpkg
        try:
            yield World(base, mode, "root", [sys.executable, "-m", "click_build"])
        finally:
            shutil.rmtree(base, ignore_errors=True)
        return
    home = Path(pwd.getpwnam(real_user).pw_dir)
    base = Path(tempfile.mkdtemp(prefix="w.", dir=home if os.geteuid() == 0 else None))
    try:
        yield World(base, mode, real_user, user_cli)
    finally:
        shutil.rmtree(base, ignore_errors=True)
