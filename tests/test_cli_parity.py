"""What a script written for the original ``click`` sees: exit status and stdout of the
same command on the same database, and package sizes against the original's builds."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest
from conftest import CLICK_BUILD, assert_clean_error, need, run
from install_support import current_user

pytestmark = pytest.mark.oracle

OK = ("--allow-unauthenticated", "--force-missing-framework")


def original(*args: str | Path, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    return run([need("click"), *map(str, args)], cwd=cwd, check=False)


def ours(*args: str | Path, cwd: Path | None = None,
         env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return run([*CLICK_BUILD, *map(str, args)], cwd=cwd, env=env, check=False)


def writable_db(path: Path) -> Path:
    """A database directory both tools can write, as root too (the original unpacks
    as clickpkg and needs the folder to be clickpkg's)."""
    path.mkdir(parents=True)
    if os.geteuid() == 0:
        shutil.chown(path, "clickpkg", "clickpkg")
    return path


def test_list_for_a_user_who_does_not_exist_fails(public_tmp: Path) -> None:
    """`click list --user TYPO` exits non-zero (no such account); an empty list with
    exit 0 would tell a script "nothing installed"."""
    root = writable_db(public_tmp / "db")
    for extra in ([], ["--manifest"]):
        args = ["list", f"--root={root}", "--user=no-such-user-x", *extra]
        assert original(*args).returncode != 0
        result = ours(*args)
        assert result.stdout == ""
        assert_clean_error(result, "no-such-user-x")
    # real users and pseudo-users still list, as with the original
    for user in (current_user(), "@all"):
        args = ["list", f"--root={root}", f"--user={user}"]
        assert ours(*args).returncode == 0 == original(*args).returncode
