"""click-build as a user has it: a wheel of this checkout pip-installed into a fresh
virtual environment (byte-compiled by pip, no source tree beside it).

``user_env`` is a session fixture; a test module that needs it imports it
(``from user_env import user_env``).  ``UserEnv.sh`` runs shell text, such as a
block pasted from a README, with the environment's ``bin`` first on ``PATH``.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest
from conftest import ROOT, run
from deadlines import seconds

__all__ = ["UserEnv", "make_user_env", "shell_blocks", "user_env", "wheel_of_checkout"]


@dataclass(frozen=True)
class UserEnv:
    venv: Path
    #: The folder holding the click-build wheel: what ``PIP_FIND_LINKS`` names.
    wheels: Path

    @property
    def wheel(self) -> Path:
        (found,) = self.wheels.glob("click_build-*.whl")
        return found

    def env(self, **extra: str) -> dict[str, str]:
        env = {k: v for k, v in os.environ.items()
               if k not in ("PYTHONPATH", "PYTHONHOME", "PYTHONDONTWRITEBYTECODE")}
        env["PATH"] = f"{self.venv / 'bin'}{os.pathsep}{env.get('PATH', '')}"
        env["VIRTUAL_ENV"] = str(self.venv)
        env["COLUMNS"] = "10000"  # build wraps replayed output to the terminal
        env.update(extra)
        return env

    def sh(self, script: str, cwd: Path, check: bool = True,
           **extra: str) -> subprocess.CompletedProcess[str]:
        """Run ``script`` with bash (-e: the first failing command fails it)."""
        result = subprocess.run(["bash", "-e", "-o", "pipefail", "-c", script], cwd=cwd,
                                env=self.env(**extra), capture_output=True, text=True,
                                timeout=seconds(180))
        if check and result.returncode != 0:
            raise AssertionError(f"{script}\nfailed ({result.returncode}):\n"
                                 f"{result.stdout}\n{result.stderr}")
        return result


def wheel_of_checkout(base: Path) -> Path:
    """``pip wheel`` of the checkout and its dependencies into ``base/wheels`` (what
    ``PIP_FIND_LINKS`` names),
    from a clean copy: no build/ in the tree, and no two workers building in one folder."""
    source = base / "src"
    source.mkdir(parents=True)
    for name in ("pyproject.toml", "README.md"):
        shutil.copy2(ROOT / name, source / name)
    for name in ("click_build", "cmake", "templates"):
        shutil.copytree(ROOT / name, source / name,
                        ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
    wheels = base / "wheels"
    # With its dependencies' wheels (zlib-ng), as `pip wheel . -w DIR` writes them: a build
    # that finds click-build there needs no index.
    run([sys.executable, "-m", "pip", "wheel", "-q", str(source), "-w", str(wheels)])
    return wheels


def make_user_env(base: Path, extras: str = "templates") -> UserEnv:
    """Build a wheel of the checkout and install it with ``extras`` into a new venv under
    ``base``."""
    wheels = wheel_of_checkout(base)
    venv = base / "venv"
    run([sys.executable, "-m", "venv", str(venv)])
    user = UserEnv(venv, wheels)
    run([str(venv / "bin" / "python"), "-m", "pip", "install", "-q",
         f"{user.wheel}[{extras}]"], cwd=base)
    return user


@pytest.fixture(scope="session")
def user_env(tmp_path_factory: pytest.TempPathFactory) -> UserEnv:
    return make_user_env(tmp_path_factory.mktemp("user-env"))


def shell_blocks(markdown: str) -> list[str]:
    """The ```sh blocks of a Markdown page, in order."""
    return [m.group(1) for m in re.finditer(r"^```sh\n(.*?)^```$", markdown, re.S | re.M)]
