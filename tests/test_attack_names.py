"""Attacks through names: ``--user`` values, names and versions on the command line, and
packages whose names, versions, app names or hook links would not fit a file name.

Every case runs the real CLI, as root and as a real unprivileged user: one error line,
no traceback, nothing written inside or outside the database, the installed app intact.
A name that would be refused half-way is refused before anything is written.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from attack_support import APP, World, assert_refused
from crafting import MANIFEST, Crafted

BAD_NAMES = {
    "empty": "",
    "dot": ".",
    "dotdot": "..",
    "slash": "a/b",
    "escape": "../../x",
    "newline": "x\n",
    "tab": "\tx",
    "delete": "x\x7f",
    "c1-control": "x\x85",
    "too-long": "a" * 256,
    "pseudo-escape": "@all/../x",
    "not-utf8": os.fsdecode(b"x\xff"),
}


def unchanged(world: World, before: tuple[object, object]) -> None:
    assert (world.surroundings(), world.state()) == before
    world.app_intact()


#: every command takes these; every bad name is tried on the commands that write
SAMPLE = ("dotdot", "newline", "too-long", "not-utf8")


@pytest.mark.slow  # every command, over many names
def test_bad_user_names_on_every_command(world: World) -> None:
    world.installed()
    upgrade = world.package(version="2.0")
    before = (world.surroundings(), world.state())
    for case, value in sorted(BAD_NAMES.items()):
        user = f"--user={value}"
        commands = [["install", "--allow-unauthenticated", user, upgrade],
                    ["register", user, APP, "1.0"]]
        if case in SAMPLE:
            commands += [["unregister", user, APP], ["list", user], ["pkgdir", user, APP],
                         ["info", user, APP], ["info", user, upgrade],
                         ["hook", "run-user", user]]
        for args in commands:
            assert_refused(world.db(*args), "user name")
            unchanged(world, before)


PACKAGE_NAMES = dict(BAD_NAMES, upper="Com.Example.App", control="com.example\x01app")
VERSIONS = dict(BAD_NAMES, escape="1.0/../..", newline="1.0\n", letters="abc",
                long="1." + "0" * 300)


@pytest.mark.slow  # every command, over many names
def test_bad_package_names_on_the_command_line(world: World) -> None:
    world.installed()
    before = (world.surroundings(), world.state())
    for case, name in sorted(PACKAGE_NAMES.items()):
        user = f"--user={world.user}"
        if "/" in name:  # pkgdir and info take a path then: one that leads nowhere
            commands = [["register", user, name, "1.0"]]
            for command in ("pkgdir", "info"):
                assert_refused(world.db(command, user, name))
                unchanged(world, before)
        else:
            commands = [["register", user, name, "1.0"], ["unregister", user, name, "1.0"]]
            if case in SAMPLE + ("upper", "control"):
                commands += [["unregister", user, name], ["pkgdir", user, name]]
                # info takes a name or a file: a name that cannot be one is a missing file
                assert_refused(world.db("info", user, name))
                unchanged(world, before)
        for args in commands:
            assert_refused(world.db(*args), "package name")
            unchanged(world, before)


@pytest.mark.slow  # every command, over many names
def test_bad_versions_on_the_command_line(world: World) -> None:
    world.installed()
    before = (world.surroundings(), world.state())
    for version in VERSIONS.values():
        for args in (["register", f"--user={world.user}", APP, version],
                     ["unregister", f"--user={world.user}", APP, version]):
            assert_refused(world.db(*args), "version")
            unchanged(world, before)


def test_bad_root_path(world: World) -> None:
    world.installed()
    for command in (["install", "--allow-unauthenticated", world.package(version="2.0")],
                    ["list"], ["gc"]):
        before = (world.surroundings(), world.state())
        result = world.run(command[0], f"--root={world.root}\n", *command[1:])
        assert_refused(result, "database root")
        unchanged(world, before)
        assert not Path(f"{world.root}\n").exists()


def crafted(world: World, **manifest: object) -> Path:
    data = dict(MANIFEST, framework="fw-1", **manifest)
    path = world.pkgs / "crafted.click"
    world.pkgs.mkdir(exist_ok=True)
    Crafted(manifest=data).write(path)
    world.give_away(world.pkgs)
    return path


LONG = "a" * 120
HOSTILE_PACKAGES: dict[str, tuple[dict[str, object], str]] = {
    "name-too-long": ({"name": "com." + "a" * 252}, "is 256 bytes long"),
    "version-too-long": ({"version": "1." + "0" * 300}, "bytes long"),
    "app-id-too-long": ({"name": "com." + LONG, "version": "1." + "0" * 120,
                         "hooks": {"x" * 20: {"desktop": "app.desktop"}}}, "application id"),
    "app-name-newline": ({"hooks": {"app\n": {"desktop": "app.desktop"}}}, "app name"),
    "hook-link-too-long": ({"hooks": {"a" * 40: {"longlink": "app.desktop"}}},
                           "hook longlink: link path"),
    "user-hook-link-too-long": ({"hooks": {"a" * 40: {"userlink": "app.desktop"}}},
                                "hook userlink: link path"),
    # for a hook this machine does not have (yet): one added later would trip on them
    "hook-file-control-char": ({"hooks": {"app": {"absent": "app\x1b.desktop"}}},
                               "hook absent of app app: file '/app\\x1b.desktop': component"),
    "hook-file-dot": ({"hooks": {"app": {"absent": "."}}}, "is not a name"),
    "hook-file-dotdot": ({"hooks": {"app": {"absent": "../x"}}}, "must not contain '..'"),
}


@pytest.mark.parametrize("case", sorted(HOSTILE_PACKAGES))
def test_names_in_a_package_are_checked_before_anything_is_written(world: World,
                                                                    case: str) -> None:
    world.installed()
    links = world.base / "links"
    world.env.add_hook("longlink", f"Pattern: {links}/${{id}}.{'x' * 200}\n")
    world.env.add_hook("userlink", f"Pattern: {links}/${{user}}/{'y' * 100}${{short-id}}"
                                   f"{'z' * 120}\nUser-Level: yes\n")
    manifest, fragment = HOSTILE_PACKAGES[case]
    pkg = crafted(world, **manifest)
    before = (world.surroundings(), world.state())
    result = world.install(pkg, f"--user={world.user}")
    assert_refused(result, fragment)
    unchanged(world, before)
    assert not links.exists()


def test_the_longest_names_that_fit_install(world: World) -> None:
    """The limits are the file system's, not tighter: NAME.manifest and the app id
    NAME_APP_VERSION each take exactly 255 bytes here."""
    world.installed()
    name = "com." + "a" * (255 - len("com.") - len(".manifest"))
    pkg = crafted(world, name=name, hooks={"abcd": {"desktop": "app.desktop"}})
    result = world.install(pkg, f"--user={world.user}")
    assert result.returncode == 0, result.stderr
    assert os.readlink(world.root / name / "current") == "1.0"
    assert len(f"{name}_abcd_1.0") == 255
    assert (world.root / name / "1.0" / ".click" / "info" / f"{name}.manifest").is_file()
    longer = crafted(world, name=name + "a")
    before = (world.surroundings(), world.state())
    assert_refused(world.install(longer, f"--user={world.user}"), "with '.manifest' it must fit in a file name: 246 bytes at most")
    assert (world.surroundings(), world.state()) == before
