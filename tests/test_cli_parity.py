"""What a script written for the original ``click`` sees: exit status and stdout of the
same command on the same database, and package sizes against the original's builds."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path

import pytest
from conftest import BASE_MANIFEST, CLICK_BUILD, assert_clean_error, need, run, write_tree
from install_support import current_user, make_click, make_env

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


def test_upgrade_and_unregister_print_nothing_on_stdout(public_tmp: Path) -> None:
    """The original reports removing an old version on stderr (a GLib message) and
    prints nothing on stdout: `out=$(click install ...)` must stay empty."""
    env = make_env(public_tmp / "env")
    user = current_user()
    pkgs = [make_click(public_tmp, version=v) for v in ("1.0", "2.0")]
    steps = [["install", *OK, f"--user={user}", pkgs[0]],
             ["install", *OK, f"--user={user}", pkgs[1]],  # removes 1.0
             ["unregister", f"--user={user}", "com.example.app"]]  # removes 2.0
    roots = {"ours": writable_db(public_tmp / "ours"), "original": writable_db(public_tmp / "orig")}
    for step in steps:
        theirs = original(step[0], f"--root={roots['original']}", *step[1:])
        assert theirs.returncode == 0, theirs.stderr
        mine = ours(step[0], f"--root={roots['ours']}", *step[1:], env=env.vars())
        assert mine.returncode == 0, mine.stderr
        assert mine.stdout == theirs.stdout == "", step
    for name, root in roots.items():
        assert not (root / "com.example.app").exists(), name
    mine = ours("install", f"--root={roots['ours']}", *OK, f"--user={user}", pkgs[0],
                env=env.vars())
    again = ours("install", f"--root={roots['ours']}", *OK, f"--user={user}", pkgs[1],
                 env=env.vars())
    assert again.stdout == "" and f"Removing {roots['ours']}/com.example.app/1.0" in again.stderr
    quiet = ours("-q", "unregister", f"--root={roots['ours']}", f"--user={user}",
                 "com.example.app", env=env.vars())
    assert quiet.returncode == 0 and quiet.stdout == "" and "Removing" not in quiet.stderr


@pytest.mark.slow
def test_a_file_compressed_only_at_its_start_is_deflated_after_it(tmp_path: Path) -> None:
    """A large file whose first MiB is compressed data and the rest is not (an asset
    bundle, a disk image) is packed about as small as the original packs it, not stored
    whole: the store probe judges every MiB, not the file's first."""
    noise = os.urandom(1 << 20)
    text = b"".join(b"line %d of a log the app ships\n" % i for i in range(150_000))
    tree = write_tree(tmp_path / "app", {"bundle.bin": noise + text + bytes(2 << 20)})
    manifest = {k: v for k, v in BASE_MANIFEST.items() if k != "hooks"}
    (tree / "manifest.json").write_text(json.dumps(manifest))
    sizes = {}
    for name, tool in (("ours", ours), ("original", original)):
        out = tmp_path / name
        out.mkdir()
        result = tool("build", "--no-validate", tree, cwd=out)
        assert result.returncode == 0, result.stderr
        (click,) = out.glob("*.click")
        sizes[name] = click.stat().st_size
    assert sizes["ours"] < sizes["original"] * 1.01, sizes
    click = next((tmp_path / "ours").glob("*.click"))
    assert original("verify", *OK, click).returncode == 0
    unpacked = tmp_path / "x"
    run(["dpkg-deb", "-x", str(click), str(unpacked)])
    assert (unpacked / "bundle.bin").read_bytes() == (tree / "bundle.bin").read_bytes()


@pytest.mark.parametrize("extra", [{}, {"empty/sub/": ""}, {"link": "-> /etc/hostname"}],
                         ids=["manifest-only", "folders", "links"])
def test_a_package_without_files_is_refused(tmp_path: Path, extra: dict[str, str]) -> None:
    """The original's verify runs `md5sum -c` on md5sums, which fails when it lists
    nothing: a package of folders and links alone would not pass it, so none is built."""
    files = {k: v for k, v in extra.items() if not k.endswith("/")}
    tree = write_tree(tmp_path / "app", files)
    for folder in (k for k in extra if k.endswith("/")):
        (tree / folder).mkdir(parents=True)
    manifest = {k: v for k, v in BASE_MANIFEST.items() if k != "hooks"}
    (tree / "manifest.json").write_text(json.dumps(manifest))
    out = tmp_path / "out"
    out.mkdir()
    assert_clean_error(ours("build", "--no-validate", tree, cwd=out), "no files")
    assert list(out.iterdir()) == []
    # why: what the original builds from such a tree (manifest alone) fails its own verify
    if not extra:
        assert original("build", "--no-validate", tree, cwd=out).returncode == 0
        (click,) = out.glob("*.click")
        assert original("verify", *OK, click).returncode != 0
