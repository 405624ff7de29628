"""A ``--root`` that is wrong (a typo): commands that are refused there, or have
nothing to do there, leave no new database and no parent folders behind, and
``hook run-system`` run as root gives none of a folder's files to clickpkg unless
the installer made them.

Only a command that writes something (an install, or a registration of a version
a lower database holds) makes the database.  Each case runs the real CLI, as root
(where new folders would go to ``clickpkg``) and as a real unprivileged user.
"""

from __future__ import annotations

import os
import pwd
from pathlib import Path

import pytest
from attack_support import APP, World, assert_ok, assert_refused

REFUSED = {
    "register": (["register", "--user=USER", APP, "1.0"], "does not exist in any database"),
    "unregister": (["unregister", "--user=USER", APP], "does not exist in any database"),
    "unregister-all": (["unregister", "--all-users", APP], "does not exist in any database"),
}
NOTHING_TO_DO = {
    "gc": ["gc"],
    "run-system": ["hook", "run-system"],
}


def typo(world: World) -> Path:
    return world.base / "typo" / "db"


def args(world: World, command: list[str]) -> list[str]:
    return [command[0], f"--root={typo(world)}",
            *(a.replace("USER", world.user) for a in command[1:])]


@pytest.mark.parametrize("case", sorted(REFUSED))
def test_refused_command_creates_no_database(world: World, case: str) -> None:
    command, fragment = REFUSED[case]
    assert_refused(world.run(*args(world, command)), fragment)
    assert not (world.base / "typo").exists()


@pytest.mark.parametrize("case", sorted(NOTHING_TO_DO))
def test_command_with_nothing_to_do_creates_no_database(world: World, case: str) -> None:
    assert_ok(world.run(*args(world, NOTHING_TO_DO[case])))
    assert not (world.base / "typo").exists()


def test_hiding_a_lower_databases_app_still_makes_the_overlay(world: World) -> None:
    """The new database is made when there is something to write into it."""
    world.installed()
    (world.env.confdir / "10_lower.conf").write_text(f"[Click Database]\nroot = {world.root}\n")
    world.give_away(world.env.confdir)
    assert_ok(world.run("unregister", f"--root={typo(world)}", f"--user={world.user}", APP))
    hidden = typo(world) / ".click" / "users" / world.user / APP
    assert hidden.is_symlink() and str(hidden.readlink()) == "@hidden"


@pytest.mark.root
def test_run_system_on_a_folder_that_is_not_a_database_gives_nothing_away(world: World) -> None:
    """As root, ``hook run-system --root`` gives the database back to clickpkg (the
    account that unpacks untrusted packages); pointed at the wrong folder, it must not
    give that folder's files away, as gc there deletes nothing."""
    if world.mode != "root":
        pytest.skip("only root changes owners")
    wrong = world.base / "srv"
    for rel in ("www/index.html", "com.example.x/2.0/data", "com.example.y/1.0/.click/x"):
        (wrong / rel).parent.mkdir(parents=True, exist_ok=True)
        (wrong / rel).write_text("site\n")
    before = {p: p.lstat().st_uid for p in [wrong, *wrong.rglob("*")]}
    assert set(before.values()) == {0}
    assert_ok(world.run("hook", "run-system", f"--root={wrong}"))
    assert {p: p.lstat().st_uid for p in before} == before


@pytest.mark.root
def test_run_system_still_gives_an_installed_database_back(world: World) -> None:
    if world.mode != "root":
        pytest.skip("only root changes owners")
    world.installed()
    stray = world.root / "not-ours"
    stray.write_text("x\n")
    for path in [world.root, *world.root.rglob("*")]:
        os.chown(path, 0, 0, follow_symlinks=False)
    assert_ok(world.db("hook", "run-system"))
    clickpkg = pwd.getpwnam("clickpkg").pw_uid
    for path in (world.root, world.root / ".click" / "log", world.root / APP,
                 world.root / APP / "current", world.root / APP / "1.0" / "app.desktop",
                 world.root / APP / "1.0" / ".click" / "info" / f"{APP}.manifest"):
        assert path.lstat().st_uid == clickpkg, path
    assert stray.lstat().st_uid == 0
