"""The attacker's bench for hostile project folders (issue 27): a cloned project, planted
with links and odd names, inside the home of the user who runs click-build on it.

A :class:`Scene` is that user's home (bait included: a shell start-up file, an autostart
folder, files of their own outside the project) and a project in it.  Commands run as
root (``HOME`` a folder of the test's) or as a real unprivileged user in their real home,
with click-build and the real ``python -m build`` from a world-readable copy (the
checkout's venv may be private); the test compares everything in the home but the
project before and after.
"""

from __future__ import annotations

import os
import pwd
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
from attack_support import snapshot
from install_support import portable_cli, run, share_with_every_user

MODES = ["root", "user"]
BAIT = "BAIT-of-the-home"
#: The frontend and what it imports, and the cmake kind's scikit-build-core with what it
#: imports, copied beside click_build for the unprivileged user.
_BUILD_PACKAGES = ("build", "packaging", "pyproject_hooks", "scikit_build_core", "pathspec")


@dataclass
class Scene:
    mode: str
    user: str
    home: Path
    base: Path  # the test's own folder in the home: the project and the bait
    lib: Path | None  # a world-readable copy of click_build and build, or None (this venv)

    @property
    def project(self) -> Path:
        return self.base / "app"

    @property
    def bait(self) -> Path:
        return self.base / "bait"

    @property
    def switch(self) -> bool:
        return self.mode == "user" and os.geteuid() == 0

    def give_away(self) -> None:
        """Everything under the test's folder to the user (in user mode)."""
        if not self.switch:
            return
        pw = pwd.getpwnam(self.user)
        for dirpath, dirnames, filenames in os.walk(self.base):
            for name in [".", *dirnames, *filenames]:
                os.chown(os.path.join(dirpath, name), pw.pw_uid, pw.pw_gid,
                         follow_symlinks=False)

    def python(self, *args: str, cwd: Path | None = None,
               env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
        """``python ARGS`` with click-build and build importable, as the scene's user."""
        self.give_away()
        full = {"HOME": str(self.home), "COLUMNS": "10000", "LC_ALL": "C.UTF-8",
                **(env or {})}
        if self.lib is None:
            return run([sys.executable, *args], env=full, cwd=str(cwd or self.project),
                       within=120)
        full["PYTHONPATH"] = str(self.lib)
        return run(["/usr/bin/python3", *args], env=full, cwd=str(cwd or self.project),
                   user=self.user if self.switch else None, within=120)

    def click_build(self, *args: object, cwd: Path | None = None
                    ) -> subprocess.CompletedProcess[str]:
        return self.python("-m", "click_build", *map(str, args), cwd=cwd)

    def around(self, *skip: Path) -> dict[str, tuple[object, ...]]:
        """Everything in the home but the project and ``skip`` (the test's files given to
        the user first, as a run does)."""
        self.give_away()
        return snapshot(self.home, skip=(self.project, *skip))


def _portable_lib() -> Iterator[Path]:
    """click_build (portable_cli's copy) with the build frontend and scikit-build-core."""
    for script in portable_cli():
        lib = script.parent / "lib"
        for name in _BUILD_PACKAGES:
            module = __import__(name)
            shutil.copytree(Path(module.__file__).parent, lib / name,
                            ignore=shutil.ignore_patterns("__pycache__"))
        share_with_every_user(lib)
        yield lib


@pytest.fixture(scope="session")
def portable_lib() -> Iterator[Path | None]:
    if os.geteuid() != 0:
        yield None  # already unprivileged: this venv is the user's own
        return
    yield from _portable_lib()


@pytest.fixture(params=MODES)
def scene(request: pytest.FixtureRequest, real_user: str,
          portable_lib: Path | None) -> Iterator[Scene]:
    """A home with bait and an empty project folder, as root or as a real user."""
    if request.param == "root":
        if os.geteuid() != 0:
            pytest.skip("root mode needs root")
        top = Path(tempfile.mkdtemp(prefix="cb-project-attack."))
        home = top / "home"
        home.mkdir()
        user, lib = "root", None
    else:
        top = None
        home = Path(pwd.getpwnam(real_user).pw_dir)
        user, lib = real_user, portable_lib
    base = Path(tempfile.mkdtemp(prefix="attack.", dir=home))
    s = Scene(request.param, user, home, base, lib)
    for path, text in ((home / ".bashrc", "# the user's shell start-up file\n"),
                       (home / ".profile", "# the user's login start-up file\n")):
        if not path.exists():
            path.write_text(text)
            if s.switch:
                pw = pwd.getpwnam(user)
                os.chown(path, pw.pw_uid, pw.pw_gid)
    s.project.mkdir()
    s.bait.mkdir()
    (s.bait / "autostart").mkdir()
    try:
        yield s
    finally:
        shutil.rmtree(top or base, ignore_errors=True)
