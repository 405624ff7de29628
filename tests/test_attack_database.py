"""Attacks on the database tree: links planted where the installer keeps directories,
stale temporary files, links a user planted in their own registration folder, a root
that is not a database.

Each case runs the real CLI, as root and as a real unprivileged user, and checks: the
command is refused with exactly one error line naming what was planted (or succeeds
without needing it), no traceback, nothing around the database created, changed or
deleted, nothing read from the bait the planted link leads to, and the database as it
was.
"""

from __future__ import annotations

import os
import pwd
import shutil
import stat
import subprocess
from collections.abc import Callable
from pathlib import Path

import pytest
from attack_support import APP, BAIT, World, assert_ok, assert_refused, snapshot
from install_support import check_invariants

Command = Callable[[World, Path], "subprocess.CompletedProcess[str]"]

COMMANDS: dict[str, Command] = {
    "install": lambda w, pkg: w.install(pkg, f"--user={w.user}"),
    "reinstall": lambda w, pkg: w.install(w.pkgs / f"{APP}_1.0_all.click", f"--user={w.user}"),
    "register": lambda w, pkg: w.db("register", f"--user={w.user}", APP, "1.0"),
    "unregister": lambda w, pkg: w.db("unregister", f"--user={w.user}", APP),
    "gc": lambda w, pkg: w.db("gc"),
    "list": lambda w, pkg: w.db("list", f"--user={w.user}"),
    "list-all": lambda w, pkg: w.db("list", "--all", "--manifest"),
    "pkgdir": lambda w, pkg: w.db("pkgdir", f"--user={w.user}", APP),
    "info": lambda w, pkg: w.db("info", f"--user={w.user}", APP),
    "run-system": lambda w, pkg: w.db("hook", "run-system"),
    "run-user": lambda w, pkg: w.db("hook", "run-user", f"--user={w.user}"),
}

WRITERS = {"install", "reinstall", "register", "unregister", "gc", "run-system"}
USER_READERS = {"list", "pkgdir", "info"}

# what is replaced by a link -> (where the link points, in outside/; commands that must
# refuse, naming the planted link; the others may run if they do not need it)
PLANTS: dict[str, tuple[str, set[str]]] = {
    ".click": (".", WRITERS | USER_READERS | {"run-user"}),
    ".click/tmp": ("tmp", WRITERS | {"run-user"}),
    ".click/users": ("users", WRITERS | USER_READERS),
    ".click/users/USER": ("users", WRITERS | USER_READERS),
    # pkgdir prints where the registration is: it needs no version directory
    APP: (APP, WRITERS | {"list", "info", "list-all"}),
    f"{APP}/1.0": (f"{APP}/1.0", WRITERS - {"gc", "run-system"} | {"list", "info", "list-all"}),
}


def plant(w: World, where: str, target: str) -> Path:
    """Replace ``where`` in the database by a link to the bait; the real one moves aside."""
    path = w.root / where.replace("USER", w.user)
    shutil.move(str(path), str(w.root / ".moved-aside"))
    os.symlink(w.outside / target, path)
    w.give_away(w.root)
    return path


@pytest.mark.slow  # installs, removes and collects at every plant
@pytest.mark.parametrize("where", sorted(PLANTS))
def test_planted_link_is_never_followed(world: World, where: str) -> None:
    world.installed()
    upgrade = world.package(version="2.0")
    target, must_refuse = PLANTS[where]
    planted = plant(world, where, target)
    for name, command in COMMANDS.items():
        around, state = world.surroundings(), world.state()
        result = command(world, upgrade)
        assert "Traceback" not in result.stderr, (name, result.stderr)
        if name in must_refuse or result.returncode != 0:
            assert_refused(result, f"{planted} is a symbolic link")
            assert world.state() == state, name
        else:
            assert_ok(result)
        assert world.surroundings() == around, name
        assert os.readlink(planted) == str(world.outside / target)


def test_stale_scratch_is_removed_without_following_links(world: World) -> None:
    """What a killed writer (or someone else) left in .click/tmp: the links go, never
    their targets; a journal entry naming something not ours removes nothing."""
    world.installed()
    tmp = world.root / ".click" / "tmp"
    os.symlink(world.outside, tmp / ".click-build.unpack.1.2.new")
    stale = tmp / ".click-build.unpack.3.4.new"
    (stale / "sub").mkdir(parents=True)
    os.symlink(world.outside / "secret", stale / "sub" / "passwd")
    os.symlink(world.outside, stale / "sub" / "up")
    hooked = world.base / "links"
    hooked.mkdir()
    os.symlink("/nowhere", hooked / ".click-build.link.5.6.new")  # ours, left by a kill
    (tmp / "outside-links").write_bytes(
        b"\0" + os.fsencode(hooked / ".click-build.link.5.6.new") + b"\0"
        + b"\0" + os.fsencode(world.outside / "secret") + b"\0")
    upgrade = world.package(version="2.0")
    world.give_away(world.base)
    around = world.surroundings()
    assert_ok(world.install(upgrade, f"--user={world.user}"))
    assert os.listdir(tmp) == []
    del around["links/.click-build.link.5.6.new"]
    assert world.surroundings() == around  # the bait, secret included, untouched
    assert check_invariants(world.root) == []


def test_links_a_user_planted_in_their_registrations(world: World) -> None:
    """A user owns their registration folder (as root installs it): links there that
    name '..', '/', another root or nothing at all never become paths."""
    world.installed()
    users = world.root / ".click" / "users" / world.user
    for name, target in (("com.example.up", f"{world.root}/.."), ("com.example.slash", "/"),
                         ("com.example.out", f"{world.outside}/{APP}/1.0"),
                         ("com.example.dot", "."), ("com.example.empty", "x/")):
        os.symlink(target, users / name)
    os.symlink(f"{world.root}/{APP}/..", users / "Com.Example")  # not even a package name
    upgrade = world.package(version="2.0")
    world.give_away(world.root)
    around = world.surroundings()
    for args in (["gc"], ["list", f"--user={world.user}"], ["hook", "run-system"],
                 ["unregister", f"--user={world.user}", "com.example.up"],
                 ["register", f"--user={world.user}", "com.example.out", "1.0"],
                 ["pkgdir", f"--user={world.user}", "com.example.up"]):
        result = world.db(*args)
        assert "Traceback" not in result.stderr, result.stderr
        assert BAIT not in result.stdout + result.stderr
        assert world.surroundings() == around, args
        assert (world.root / APP / "1.0" / "app.desktop").is_file(), args
    assert_refused(world.db("unregister", f"--user={world.user}", "com.example.up"),
                   "does not name a version")
    assert_ok(world.install(upgrade, f"--user={world.user}"))
    assert world.surroundings() == around
    assert os.readlink(users / APP) == str(world.root / APP / "2.0")
    assert os.readlink(users / "com.example.up") == f"{world.root}/.."  # theirs: left alone


def test_gc_on_a_folder_that_is_not_a_database(world: World) -> None:
    """``gc --root`` pointed at the wrong folder: only complete Click versions could go,
    and this folder has none."""
    fake = world.base / "not-a-db"
    for rel in ("usr/lib/x.so", "com.example.x/2.0/data", "com.example.y/1.0/.click/x",
                "etc/1.0/passwd", "com.example.z/1.0/.click/info/other.manifest"):
        (fake / rel).parent.mkdir(parents=True, exist_ok=True)
        (fake / rel).write_text(BAIT)
    world.give_away(fake)
    before = snapshot(fake, skip=(fake / ".click",))
    result = world.run("gc", f"--root={fake}")
    assert_ok(result)
    assert snapshot(fake, skip=(fake / ".click",)) == before


@pytest.mark.parametrize("how", ["symlink", "hard link"])
@pytest.mark.parametrize("what", ["lock", "log"])
def test_planted_lock_or_log_is_not_written_through(world: World, what: str, how: str) -> None:
    """A link to a file outside in place of the lock or the log: a hard link is no
    symlink, so O_NOFOLLOW alone would let root write to it and give it to clickpkg."""
    world.installed()
    path = world.root / ".click" / what
    if path.exists():
        path.unlink()
    secret = world.outside / "secret"
    owner = os.stat(secret).st_uid
    (os.symlink if how == "symlink" else os.link)(secret, path)
    upgrade = world.package(version="2.0")
    world.give_away(world.root)
    os.chown(secret, owner, -1)  # give_away followed the hard link: the bait's owner back
    around = world.surroundings()
    result = world.install(upgrade, f"--user={world.user}")
    if what == "lock" and how == "symlink":
        assert_refused(result, f"{path} is a symbolic link where a file belongs")
    elif what == "lock":
        assert_refused(result, f"{path} has 2 hard links; the installer made it with one")
    else:
        assert_ok(result)  # the log is best effort: skipped, never written through
    assert world.surroundings() == around
    assert secret.read_text() == BAIT and os.stat(secret).st_uid == owner


def test_fifo_as_lock_does_not_hang(world: World) -> None:
    world.installed()
    lock = world.root / ".click" / "lock"
    lock.unlink()
    os.mkfifo(lock)
    world.give_away(world.root)
    result = world.install(world.package(version="2.0"), f"--user={world.user}")
    assert_refused(result, f"{lock} is a FIFO where a file belongs")
    world.app_intact()


def test_current_that_is_not_a_link(world: World) -> None:
    world.installed()
    current = world.root / APP / "current"
    current.unlink()
    current.mkdir()
    upgrade = world.package(version="2.0")
    world.give_away(world.root)
    around, state = world.surroundings(), world.state()
    result = world.install(upgrade, f"--user={world.user}")
    assert_refused(result, f"{current} is a directory where a symbolic link belongs")
    assert world.surroundings() == around and world.state() == state


def test_current_naming_something_else_is_replaced(world: World) -> None:
    """``current`` is ours: whatever it says, it never becomes a path; it is replaced."""
    world.installed()
    current = world.root / APP / "current"
    current.unlink()
    os.symlink(f"../../outside/{APP}/1.0", current)
    upgrade = world.package(version="2.0")
    world.give_away(world.root)
    around = world.surroundings()
    assert_ok(world.install(upgrade, f"--user={world.user}"))
    assert os.readlink(current) == "2.0"
    assert world.surroundings() == around
    assert sorted(os.listdir(world.root / APP)) == ["2.0", "current"]


@pytest.mark.root
def test_ensure_ownership_never_chowns_outside(world: World) -> None:
    """``hook run-system`` gives the database back to clickpkg: by descriptor, never
    through a link inside an app's tree or in place of a package."""
    if world.mode != "root":
        pytest.skip("only root changes owners")
    world.installed()
    version = world.root / APP / "1.0"
    os.symlink(world.outside / "secret", version / "passwd")  # as an app may ship
    os.chown(world.root, 0, 0)  # the uid changed (a system-image update, say)
    around = world.surroundings()
    assert_ok(world.db("hook", "run-system"))
    assert world.surroundings() == around
    clickpkg = os.stat(world.root).st_uid
    assert clickpkg != 0 and os.lstat(version / "passwd").st_uid == clickpkg
    assert os.stat(world.outside / "secret").st_uid == 0
    os.chown(world.root, 0, 0)
    aside = world.root / "com.example.planted"
    os.symlink(world.outside, aside)
    result = world.db("hook", "run-system")
    assert_refused(result, f"{aside} is a symbolic link")
    assert world.surroundings() == around
    assert stat.S_ISDIR(os.lstat(world.outside).st_mode)


@pytest.mark.root
def test_ensure_ownership_leaves_a_planted_hard_link_its_owner(world: World,
                                                              real_user: str) -> None:
    """A database a user owns, run-system as root: what the old owner owned goes to
    clickpkg; a hard link the user made to a file of root's keeps root as its owner."""
    if world.mode != "root":
        pytest.skip("only root changes owners")
    world.installed()
    secret = world.outside / "secret"
    os.chown(secret, 0, 0)
    os.link(secret, world.root / APP / "1.0" / "hardlinked")
    user = pwd.getpwnam(real_user)
    for path in [world.root, *world.root.rglob("*")]:
        if path.name != "hardlinked":
            os.chown(path, user.pw_uid, user.pw_gid, follow_symlinks=False)
    assert_ok(world.db("hook", "run-system"))
    clickpkg = pwd.getpwnam("clickpkg").pw_uid
    assert os.stat(world.root).st_uid == clickpkg
    assert os.stat(world.root / APP / "1.0" / "app.desktop").st_uid == clickpkg
    assert os.stat(secret).st_uid == 0 and secret.read_text() == BAIT


@pytest.mark.root
def test_user_hook_links_are_made_with_the_users_rights(world: World, real_user: str) -> None:
    """A user-level hook writes into the user's home as that user: a link the user
    planted there (to a folder only root may write) cannot make root write through it."""
    if world.mode != "root" or os.geteuid() != 0:
        pytest.skip("root installing for another user")
    pw = pwd.getpwnam(real_user)
    share = Path(pw.pw_dir) / ".local" / "share"
    for folder in (share.parent, share):  # the user's own, as in any home (the account
        if not folder.exists():           # is the session's: other tests run as it)
            folder.mkdir()
            os.chown(folder, pw.pw_uid, pw.pw_gid)
    trap = share / f"cb-attack-{world.base.name}"
    os.symlink(world.outside, trap)
    os.lchown(trap, pw.pw_uid, -1)
    try:
        world.env.add_hook("userdesk", f"Pattern: ${{home}}/.local/share/{trap.name}/"
                                       "${id}.desktop\nUser-Level: yes\n")
        pkg = world.package(hooks={"app": {"userdesk": "app.desktop"}})
        around = world.surroundings()
        result = world.install(pkg, f"--user={real_user}")
        assert_refused(result, "Permission denied")
        assert world.surroundings() == around
        assert sorted(os.listdir(world.outside)) == [APP, "secret", "tmp", "users"]
    finally:
        trap.unlink()


def test_pseudo_users_get_no_user_hooks(world: World) -> None:
    """@all and @gcinuse are nobody: user-level hooks never run as them (as root that
    would mean running them as root)."""
    links = world.base / "links"
    world.env.add_hook("userdesk", f"Pattern: {links}/${{user}}/${{id}}.desktop\n"
                                   "User-Level: yes\n")
    pkg = world.package(hooks={"app": {"userdesk": "app.desktop"}})
    assert_ok(world.install(pkg, "--all-users"))
    assert not (links / "@all").exists()
    for user in ("@all", "@gcinuse"):
        assert_refused(world.db("hook", "run-user", f"--user={user}"), "is not a real user")
    assert not links.exists() or os.listdir(links) == []


def test_a_link_for_a_gone_user_is_refused_too(world: World) -> None:
    """The installer checks every registration folder for links without asking the user
    database who exists (a miss searches every NSS source): one for a user that is gone
    is refused like any other, naming it."""
    world.installed()
    upgrade = world.package(version="2.0")
    planted = world.root / ".click" / "users" / "no-such-user-here"
    os.symlink(world.outside / "users", planted)
    world.give_away(world.root)
    around, state = world.surroundings(), world.state()
    result = world.install(upgrade, f"--user={world.user}")
    assert_refused(result, f"{planted} is a symbolic link")
    assert world.state() == state and world.surroundings() == around
    assert os.readlink(planted) == str(world.outside / "users")
