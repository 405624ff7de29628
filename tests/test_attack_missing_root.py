"""A ``--root`` that does not exist (a typo): commands that are refused there, or
have nothing to do there, leave no new database and no parent folders behind.

Only a command that writes something (an install, or a registration of a version
a lower database holds) makes the database.  Each case runs the real CLI, as root
(where new folders would go to ``clickpkg``) and as a real unprivileged user.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from attack_support import (  # noqa: F401  (fixtures)
    APP,
    World,
    assert_ok,
    assert_refused,
    real_user,
    user_cli,
    world,
)

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
