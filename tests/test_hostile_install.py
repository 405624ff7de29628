"""Hostile packages against the installer: one clear error, nothing written outside the
database, no partial version, and the installed version with its links untouched."""

from __future__ import annotations

import hashlib
import os
from pathlib import Path

import pytest
from conftest import assert_clean_error
from crafting import MANIFEST, Crafted, Member
from install_support import Env, check_invariants, current_user, make_env, tree_snapshot

V2 = dict(MANIFEST, version="2.0")


def _data(*members: Member) -> list[Member]:
    return [Member("./", kind="dir", mode=0o755), Member("./app.desktop", b"[Desktop Entry]\n"),
            *members]


def _fields(**changes: str) -> dict[str, str]:
    fields = {"Package": "com.example.crafted", "Version": "2.0", "Click-Version": "0.4",
              "Architecture": "all", "Maintainer": "Jane Doe <jane@example.com>",
              "Installed-Size": "10", "Description": "Crafted"}
    fields.update(changes)
    return {k: v for k, v in fields.items() if v}


def _members(*names_data: tuple[str, bytes]) -> list[tuple[str, bytes]]:
    good = dict(Crafted(manifest=V2).parts())
    return [(n, good.get(n, d) if d == b"=" else d) for n, d in names_data]


BIG = b"x" * (3 << 20)
DESKTOP_MD5 = hashlib.md5(b"[Desktop Entry]\n").hexdigest()

# case -> (package, a fragment of the one error line)
HOSTILE: dict[str, tuple[Crafted, str]] = {
    "not-an-ar": (Crafted(members=None), ""),  # replaced by raw bytes below
    "truncated": (Crafted(manifest=V2), "truncated"),
    "unknown-member": (Crafted(members=_members(("debian-binary", b"="), ("_click-binary", b"="),
                                                ("control.tar.gz", b"="), ("data.tar.gz", b"="),
                                                ("evil", b"x"))), "unexpected member 'evil'"),
    "out-of-order": (Crafted(members=_members(("debian-binary", b"="), ("_click-binary", b"="),
                                              ("data.tar.gz", b"="), ("control.tar.gz", b"="))),
                     "where control.tar.gz was expected"),
    "no-click-binary": (Crafted(members=_members(("debian-binary", b"="), ("control.tar.gz", b"="),
                                                 ("data.tar.gz", b"="))), "no _click-binary"),
    "click-version-0.5": (Crafted(manifest=V2, control_fields=_fields(**{"Click-Version": "0.5"})),
                          "Click-Version 0.5 is newer"),
    "depends": (Crafted(manifest=V2, control_fields=_fields(Depends="libc6")),
                "Depends field is forbidden"),
    "postinst": (Crafted(manifest=V2, extra_control={"postinst": b"#!/bin/sh\nrm -rf /\n"}),
                 "maintainer script 'postinst'"),
    "changed-preinst": (Crafted(manifest=V2, preinst=b"#!/bin/sh\ntouch /tmp/pwned\nexit 0\n"),
                        "preinst differs"),
    "control-disagrees": (Crafted(manifest=V2, control_fields=_fields(Package="com.example.x")),
                          "disagrees with the manifest"),
    "bad-name": (Crafted(manifest=dict(V2, name="../../evil")), "name"),
    "bad-version": (Crafted(manifest=dict(V2, version="2/../../x")), "version"),
    "bad-framework": (Crafted(manifest=dict(V2, framework="fw (>= 1)")), "version relations"),
    "absolute": (Crafted(manifest=V2, data=_data(Member("/tmp/click-evil-abs", b"x"))),
                 "does not start with './'"),
    "no-dot-slash": (Crafted(manifest=V2, data=_data(Member("evil.txt", b"x"))),
                     "does not start with './'"),
    "dotdot": (Crafted(manifest=V2, data=_data(Member("./../../click-evil-up", b"x"))),
               "not clean"),
    "through-symlink": (Crafted(manifest=V2, data=_data(
        Member("./out", kind="symlink", target="/tmp"), Member("./out/click-evil-link", b"x"))),
        "would be written through out"),
    "hardlink-outside": (Crafted(manifest=V2, data=_data(
        Member("./passwd", kind="hardlink", target="/etc/passwd"))),
        "does not point to an earlier file"),
    "hardlink-via-symlink": (Crafted(manifest=V2, data=_data(
        Member("./l", kind="symlink", target="/etc/shadow"),
        Member("./h", kind="hardlink", target="./l"))), "does not point to an earlier file"),
    "device": (Crafted(manifest=V2, data=_data(Member("./null", kind="chr"))),
               "character device"),
    "fifo": (Crafted(manifest=V2, data=_data(Member("./pipe", kind="fifo"))), "fifo"),
    "setuid": (Crafted(manifest=V2, data=_data(Member("./suid", b"#!/bin/sh\n", mode=0o4755))),
               "setuid"),
    "setgid": (Crafted(manifest=V2, data=_data(Member("./sgid", b"#!/bin/sh\n", mode=0o2755))),
               "setgid"),
    "dot-click": (Crafted(manifest=V2, data=_data(Member("./.click/info/x.manifest", b"{}"))),
                  "reserved top-level .click"),
    "hook-escapes": (Crafted(manifest=dict(V2, hooks={"app": {"desktop": "../../etc/passwd"}})),
                     "must not contain '..'"),
    "hook-via-symlink": (Crafted(manifest=dict(V2, hooks={"app": {"desktop": "l/passwd"}}),
                                 data=_data(Member("./l", kind="symlink", target="/etc"))),
                         "leaves the package"),
    "app-name-slash": (Crafted(manifest=dict(V2, hooks={"a/../b": {"desktop": "app.desktop"}})),
                       "app name"),
    "md5-mismatch": (Crafted(manifest=V2, md5sums=f"{'0' * 32}  app.desktop\n"),
                     "does not match its checksum"),
    "md5-missing-file": (Crafted(manifest=V2, data=_data(Member("./extra", b"unlisted")),
                                 md5sums=f"{DESKTOP_MD5}  app.desktop\n"), "extra is not listed"),
    "beyond-installed-size": (Crafted(manifest=V2, installed_size=1,
                                      data=_data(Member("./big", BIG))),
                              "beyond the declared Installed-Size"),
    "no-room": (Crafted(manifest=V2, installed_size=1 << 40), "not enough free space"),
    "wrong-arch": (Crafted(manifest=dict(V2, architecture="s390x")),
                   "does not match system architecture"),
}


@pytest.fixture
def installed(tmp_path: Path, cli) -> tuple[Env, Path]:
    """A database with version 1.0 installed for the current user."""
    env = make_env(tmp_path)
    (env.frameworks / "ubuntu-sdk-20.04.framework").write_text("Base-Name: ubuntu-sdk\n")
    root = env.base / "sandbox" / "db"
    good = Crafted().write(tmp_path / "good.click")
    cli("install", f"--root={root}", "--allow-unauthenticated", f"--user={current_user()}", good,
        env=env.vars())
    return env, root


@pytest.mark.parametrize("case", sorted(HOSTILE))
def test_hostile_package_is_refused_cleanly(cli, installed: tuple[Env, Path], tmp_path: Path,
                                           case: str) -> None:
    env, root = installed
    crafted, fragment = HOSTILE[case]
    path = tmp_path / f"{case}.click"
    if case == "not-an-ar":
        path.write_bytes(b"#!/bin/sh\necho not a package\n")
        fragment = "ar archive"
    elif case == "truncated":
        path.write_bytes(crafted.bytes()[:-100])
    else:
        crafted.write(path)
    sandbox = root.parent
    before = tree_snapshot(sandbox)
    user = current_user()
    link = root / ".click/users" / user / "com.example.crafted"
    result = cli("install", f"--root={root}", "--allow-unauthenticated", f"--user={user}", path,
                 check=False, env=env.vars())
    assert_clean_error(result, fragment)
    assert len([l for l in result.stderr.splitlines() if "error:" in l]) == 1
    # nothing changed: not outside the root, not the old version, not its links
    after = tree_snapshot(sandbox)
    assert after == before, set(after.items()) ^ set(before.items())
    assert os.listdir(root / ".click/tmp") == []
    assert os.readlink(link) == f"{root}/com.example.crafted/1.0"
    assert os.readlink(root / "com.example.crafted/current") == "1.0"
    assert (root / "com.example.crafted/1.0/app.desktop").read_bytes() == b"[Desktop Entry]\n"
    assert check_invariants(root) == []
    assert not Path("/tmp/click-evil-abs").exists() and not Path("/tmp/click-evil-link").exists()


def test_hostile_database_state_is_not_written_through(cli, installed: tuple[Env, Path],
                                                       tmp_path: Path) -> None:
    env, root = installed
    outside = tmp_path / "outside"
    outside.mkdir()
    os.symlink(outside, root / "com.example.evil")
    pkg = Crafted(manifest=dict(MANIFEST, name="com.example.evil")).write(tmp_path / "e.click")
    result = cli("install", f"--root={root}", "--allow-unauthenticated", pkg, check=False,
                 env=env.vars())
    assert_clean_error(result, f"{root}/com.example.evil is a symbolic link where a "
                               "directory belongs")
    assert os.listdir(outside) == []
    # a version path that is a symlink is never followed: refused, naming it
    os.unlink(root / "com.example.evil")
    (root / "com.example.evil").mkdir()
    os.symlink(outside, root / "com.example.evil/1.0")
    result = cli("install", f"--root={root}", "--allow-unauthenticated", pkg, check=False,
                 env=env.vars())
    assert_clean_error(result, f"{root}/com.example.evil/1.0 is a symbolic link")
    assert os.listdir(outside) == []
    assert os.readlink(root / "com.example.evil/1.0") == str(outside)
    # once the planted link is gone, the install goes through
    os.unlink(root / "com.example.evil/1.0")
    cli("install", f"--root={root}", "--allow-unauthenticated", pkg, env=env.vars())
    assert (root / "com.example.evil/1.0").is_dir() and not (root / "com.example.evil/1.0").is_symlink()
