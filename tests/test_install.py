"""The bundled installer against the original: layout, interop both ways, upgrades, users, gc."""

from __future__ import annotations

import json
import os
import pwd
import shutil
import subprocess
from pathlib import Path

import pytest
from conftest import CLICK_BUILD, assert_clean_error, need
from deadlines import seconds, wait_for
from install_support import (
    Env,
    check_invariants,
    current_user,
    flocks,
    make_click,
    make_env,
    portable_cli,
    run,
)
from terminal import Terminal

pytestmark = pytest.mark.oracle


@pytest.fixture
def env(tmp_path: Path) -> Env:
    return make_env(tmp_path)


def ours(cli, env: Env, *args: object, check: bool = True):
    return cli(*args, env=env.vars(), check=check)


def original(*args: object, check: bool = True):
    result = run([need("click"), *map(str, args)], env={"TEST_QUIET": "1"})
    if check:
        assert result.returncode == 0, result.stderr
    return result


def original_db(path: Path) -> Path:
    """A database directory the original can write to when run as root."""
    path.mkdir(parents=True, exist_ok=True)
    if os.geteuid() == 0:
        shutil.chown(path, "clickpkg", "clickpkg")
    return path


def layout(root: Path) -> dict[str, str]:
    """What a reader sees: every path under root with its type and mode."""
    out = {}
    for dirpath, dirnames, filenames in os.walk(root):
        for name in dirnames + filenames:
            path = Path(dirpath, name)
            rel = str(path.relative_to(root))
            st = path.lstat()
            kind = "l" if path.is_symlink() else "d" if path.is_dir() else "f"
            out[rel] = f"{kind} {oct(st.st_mode & 0o7777)}" + (
                f" -> {os.readlink(path)}" if kind == "l" else "")
    return out


def test_installed_layout_matches_the_original(cli, env: Env, public_tmp: Path) -> None:
    pkg = make_click(public_tmp, files={"bin/tool": "#!/bin/sh\n", "data/x.txt": "x\n"})
    os.chmod(public_tmp, 0o755)
    theirs, mine = original_db(public_tmp / "theirs"), public_tmp / "mine"
    user = current_user()
    original("install", f"--root={theirs}", "--allow-unauthenticated",
             "--force-missing-framework", f"--user={user}", pkg)
    ours(cli, env, "install", f"--root={mine}", "--allow-unauthenticated", f"--user={user}", pkg)
    dpkg_only = {"lock", "lock-frontend", "status-old", "triggers/Lock", "triggers/Unincorp"}
    version = "com.example.app/1.0/"
    theirs_layout = {k.replace(str(theirs), "ROOT"): v.replace(str(theirs), "ROOT")
                     for k, v in layout(theirs).items()
                     if not any(k == version + ".click/" + d for d in dpkg_only)}
    mine_layout = {k: v.replace(str(mine), "ROOT") for k, v in layout(mine).items()
                   if not k.startswith(".click/lock") and not k.startswith(".click/tmp")}
    assert mine_layout == theirs_layout
    for name in ("com.example.app.manifest", "com.example.app.md5sums",
                 "com.example.app.list", "com.example.app.preinst", "format"):
        rel = f"com.example.app/1.0/.click/info/{name}"
        assert (mine / rel).read_bytes() == (theirs / rel).read_bytes(), name
    assert (mine / version / ".click/status").read_text() == \
        (theirs / version / ".click/status").read_text()
    if os.geteuid() == 0:  # unpacked as clickpkg, registration owned by the user
        clickpkg = (theirs / version).stat().st_uid
        assert (mine / version / "bin/tool").stat().st_uid == clickpkg
        assert (mine / "com.example.app").stat().st_uid == clickpkg
    assert check_invariants(mine) == []


def _same_views(cli, env: Env, root: Path, package: str) -> None:
    user = current_user()
    for args in (["list"], ["list", "--manifest"], ["list", "--all"],
                 ["list", "--all", "--manifest"], ["pkgdir", package],
                 ["info", package], ["list", f"--user={user}"]):
        mine = ours(cli, env, *args, f"--root={root}")
        theirs = original(*args, f"--root={root}")
        assert mine.stdout == theirs.stdout, args


def test_the_original_reads_our_database(cli, env: Env, tmp_path: Path) -> None:
    root = tmp_path / "db"
    for version in ("1.0", "2.0"):
        pkg = make_click(tmp_path, version=version)
        ours(cli, env, "install", f"--root={root}", "--allow-unauthenticated",
             f"--user={current_user()}", pkg)
    ours(cli, env, "install", f"--root={root}", "--allow-unauthenticated", "--all-users",
         make_click(tmp_path, name="com.example.other", version="3"))
    _same_views(cli, env, root, "com.example.app")
    installed = original("pkgdir", f"{root}/com.example.app/2.0/app.desktop").stdout
    assert installed.strip() == f"{root}/com.example.app/2.0"


def test_we_read_the_original_database(cli, env: Env, public_tmp: Path) -> None:
    root = original_db(public_tmp / "db")
    src = public_tmp / "src"
    src.mkdir()
    (src / "manifest.json").write_text(json.dumps({
        "name": "com.example.theirs", "version": "1.5", "framework": "",
        "maintainer": "A B <a@b.c>", "title": "T", "hooks": {"a": {"x": "README"}}}))
    (src / "README").write_text("hi\n")
    run([need("click"), "build", str(src)], cwd=str(public_tmp))
    pkg = public_tmp / "com.example.theirs_1.5_all.click"
    original("install", f"--root={root}", "--allow-unauthenticated", f"--user={current_user()}",
             pkg)
    _same_views(cli, env, root, "com.example.theirs")
    assert ours(cli, env, "info", f"{root}/com.example.theirs/1.5/README").stdout == \
        original("info", f"{root}/com.example.theirs/1.5/README").stdout
    # and the package the original built installs with ours, read back by the original
    mine = public_tmp / "mine"
    ours(cli, env, "install", f"--root={mine}", "--allow-unauthenticated",
         f"--user={current_user()}", pkg)
    _same_views(cli, env, mine, "com.example.theirs")
    assert (mine / "com.example.theirs/1.5/README").read_text() == "hi\n"
    ours(cli, env, "unregister", f"--root={root}", f"--user={current_user()}",
         "com.example.theirs")
    assert not (root / "com.example.theirs").exists()
    assert original("list", "--all", f"--root={root}").stdout == ""


def _state(root: Path, package: str) -> tuple[list[str], str | None, dict[str, str]]:
    pdir = root / package
    versions = sorted(p for p in os.listdir(pdir) if p != "current") if pdir.exists() else []
    current = os.readlink(pdir / "current") if (pdir / "current").is_symlink() else None
    users = {}
    top = root / ".click" / "users"
    for user in sorted(os.listdir(top)) if top.exists() else []:
        link = top / user / package
        if link.is_symlink():
            users[user] = os.path.basename(os.readlink(link))
    return versions, current, users


def test_upgrade_downgrade_reinstall_behave_as_the_original(cli, env: Env,
                                                             public_tmp: Path) -> None:
    theirs, mine = original_db(public_tmp / "theirs"), public_tmp / "mine"
    pkgs = {v: make_click(public_tmp, version=v) for v in ("1.0", "2.0")}
    user = current_user()
    steps = [("1.0", [f"--user={user}"]), ("2.0", [f"--user={user}"]),
             ("1.0", [f"--user={user}"]), ("1.0", [f"--user={user}"]), ("2.0", ["--all-users"]),
             ("2.0", [])]
    for version, flags in steps:
        original("install", f"--root={theirs}", "--allow-unauthenticated",
                 "--force-missing-framework", *flags, pkgs[version])
        ours(cli, env, "install", f"--root={mine}", "--allow-unauthenticated", *flags,
             pkgs[version])
        assert _state(mine, "com.example.app") == _state(theirs, "com.example.app"), (
            version, flags)
        assert check_invariants(mine) == []


@pytest.mark.root
def test_users_register_unregister_and_all(cli, env: Env, tmp_path: Path) -> None:
    root = tmp_path / "db"
    base = [f"--root={root}"]
    ours(cli, env, "install", *base, "--allow-unauthenticated", "--user=daemon",
         make_click(tmp_path, version="1.0"))
    ours(cli, env, "install", *base, "--allow-unauthenticated", make_click(tmp_path, version="2.0"))
    link = root / ".click/users/daemon/com.example.app"
    assert os.readlink(link) == f"{root}/com.example.app/1.0"
    daemon = pwd.getpwnam("daemon").pw_uid
    assert link.lstat().st_uid == daemon  # daemon owns its registrations
    assert (root / ".click/users/daemon").stat().st_uid == daemon
    assert ours(cli, env, "list", *base, "--user=daemon").stdout == "com.example.app\t1.0\n"
    assert ours(cli, env, "list", *base, "--user=bin").stdout == ""
    ours(cli, env, "register", *base, "--user=bin", "com.example.app", "2.0")
    assert ours(cli, env, "list", *base, "--user=bin").stdout == "com.example.app\t2.0\n"
    # @all is seen by everyone without a registration of their own
    ours(cli, env, "register", *base, "--all-users", "com.example.app", "2.0")
    assert ours(cli, env, "list", *base, "--user=sys").stdout == "com.example.app\t2.0\n"
    assert ours(cli, env, "pkgdir", *base, "--user=sys", "com.example.app").stdout.strip() == \
        f"{root}/.click/users/@all/com.example.app"
    # a wrong expected version is refused
    result = ours(cli, env, "unregister", *base, "--user=daemon", "com.example.app", "2.0",
                  check=False)
    assert_clean_error(result, "Not removing com.example.app 1.0; expected version 2.0")
    ours(cli, env, "unregister", *base, "--user=daemon", "com.example.app", "1.0")
    assert not (root / "com.example.app/1.0").exists()  # nobody else had 1.0
    assert ours(cli, env, "list", *base, "--user=daemon").stdout == "com.example.app\t2.0\n"
    ours(cli, env, "unregister", *base, "--all-users", "com.example.app")
    ours(cli, env, "unregister", *base, "--user=bin", "com.example.app")
    assert not (root / "com.example.app").exists()
    assert original("list", "--all", f"--root={root}").stdout == ""
    bad = ours(cli, env, "register", *base, "--user=no-such-user-x", "com.example.app", "2.0",
               check=False)
    assert_clean_error(bad, "no-such-user-x")


@pytest.mark.root
def test_unregister_without_user_acts_for_sudo_user_else_you(cli, env: Env,
                                                              tmp_path: Path) -> None:
    """docs/install.md: without --user, unregister acts for $SUDO_USER, else for you
    (`sudo click-build unregister APP` removes the caller's app, not root's)."""
    root = tmp_path / "db"
    base = [f"--root={root}"]
    me = current_user()
    for user in ("daemon", me):
        ours(cli, env, "install", *base, "--allow-unauthenticated", f"--user={user}",
             make_click(tmp_path, version="1.0"))
    users = root / ".click/users"
    cli("unregister", *base, "com.example.app", env={**env.vars(), "SUDO_USER": "daemon"})
    assert not (users / "daemon/com.example.app").is_symlink()
    assert (users / me / "com.example.app").is_symlink()  # the caller's stays
    # SUDO_USER unset (empty): for the user running the command
    cli("unregister", *base, "com.example.app", env={**env.vars(), "SUDO_USER": ""})
    assert not (users / me / "com.example.app").is_symlink()
    assert not (root / "com.example.app/1.0").exists()  # nobody has it any more


def test_hiding_an_underlay_registration(cli, env: Env, tmp_path: Path) -> None:
    lower, upper = tmp_path / "core", tmp_path / "custom"
    (env.confdir / "10_core.conf").write_text(f"[Click Database]\nroot = {lower}\n")
    ours(cli, env, "install", "--allow-unauthenticated", "--all-users", make_click(tmp_path))
    assert (lower / "com.example.app/1.0").is_dir()
    assert ours(cli, env, "list", f"--root={upper}").stdout == "com.example.app\t1.0\n"
    manifest = json.loads(ours(cli, env, "list", "--manifest", f"--root={upper}").stdout)
    assert manifest[0]["_removable"] == 1
    ours(cli, env, "unregister", f"--root={upper}", "--all-users", "com.example.app")
    assert os.readlink(upper / ".click/users/@all/com.example.app") == "@hidden"
    assert ours(cli, env, "list", f"--root={upper}").stdout == ""
    assert original("list", f"--root={upper}").stdout == ""
    assert (lower / "com.example.app/1.0").is_dir()  # the lower layer is never written
    result = ours(cli, env, "pkgdir", f"--root={upper}", "com.example.app", check=False)
    assert_clean_error(result, "com.example.app is hidden for all users")
    # installing the same version into the overlay only registers it
    ours(cli, env, "install", f"--root={upper}", "--allow-unauthenticated", "--all-users",
         make_click(tmp_path))
    assert not (upper / "com.example.app").exists()
    assert os.readlink(upper / ".click/users/@all/com.example.app") == \
        f"{lower}/com.example.app/1.0"


def test_gc_removes_unused_versions_only(cli, env: Env, tmp_path: Path) -> None:
    root = tmp_path / "db"
    base = [f"--root={root}"]
    user = current_user()
    for version, flags in (("1.0", [f"--user={user}"]), ("2.0", ["--user=daemon"]),
                           ("3.0", [])):
        ours(cli, env, "install", *base, "--allow-unauthenticated", *flags,
             make_click(tmp_path, version=version))
    assert sorted(os.listdir(root / "com.example.app")) == ["1.0", "2.0", "3.0", "current"]
    # a database from an older tool: 2.0 pinned only by the legacy @gcinuse pseudo-user
    os.unlink(root / ".click/users/daemon/com.example.app")
    gc_user = root / ".click/users/@gcinuse"
    gc_user.mkdir()
    os.symlink(f"{root}/com.example.app/2.0", gc_user / "com.example.app")
    ours(cli, env, "gc", *base)
    # 1.0 registered, 3.0 current, 2.0 only pinned by the legacy @gcinuse: removed
    assert sorted(os.listdir(root / "com.example.app")) == ["1.0", "3.0", "current"]
    assert not (gc_user / "com.example.app").is_symlink()
    assert check_invariants(root) == []


def test_missing_framework_needs_the_force_flag(cli, env: Env, tmp_path: Path) -> None:
    pkg = make_click(tmp_path, framework="missing")
    root = tmp_path / "db"
    result = ours(cli, env, "install", f"--root={root}", "--allow-unauthenticated", pkg,
                  check=False)
    assert_clean_error(result, 'Framework "missing" not present on system '
                               "(use --force-missing-framework option to override)")
    assert not (root / "com.example.app").exists()
    ours(cli, env, "install", f"--root={root}", "--allow-unauthenticated",
         "--force-missing-framework", pkg)
    assert (root / "com.example.app/1.0/app.desktop").is_file()


def test_unregistered_install_says_so_and_unsigned_needs_the_flag(cli, env: Env,
                                                                  tmp_path: Path) -> None:
    root = tmp_path / "db"
    pkg = make_click(tmp_path)
    refused = ours(cli, env, "install", f"--root={root}", pkg, check=False)
    assert_clean_error(refused, "debsig: Origin Signature check failed")
    assert not (root / "com.example.app").exists()
    result = ours(cli, env, "install", f"--root={root}", "--allow-unauthenticated", pkg)
    assert "com.example.app 1.0 has not been registered for any users." in result.stdout
    assert ours(cli, env, "list", "--all", f"--root={root}").stdout == "com.example.app\t1.0\n"
    missing = ours(cli, env, "pkgdir", f"--root={root}", "com.example.none", check=False)
    assert_clean_error(missing, "com.example.none does not exist in any database for user")
    assert_clean_error(ours(cli, env, "pkgdir", str(tmp_path), check=False),
                       "No package directory found")


@pytest.mark.root
def test_ordinary_user_installs_into_a_root_they_own(public_tmp: Path) -> None:
    env = make_env(public_tmp / "env")
    for cli_script in portable_cli():
        home = public_tmp / "home"
        home.mkdir()
        shutil.chown(home, "nobody", "nogroup")
        pkg = make_click(public_tmp)
        os.chmod(pkg, 0o644)
        user_env = {"XDG_DATA_HOME": str(home / "data"), "HOME": str(home),
                    "CLICK_DATABASES_DIR": str(public_tmp / "no-config"),
                    "CLICK_HOOKS_DIR": str(public_tmp / "no-hooks"),
                    "CLICK_FRAMEWORKS_DIR": str(env.frameworks)}
        result = run([str(cli_script), "install", "--allow-unauthenticated", "--user=nobody",
                      str(pkg)], env=user_env, user="nobody")
        assert result.returncode == 0, result.stderr
        root = home / "data/click-build/database"  # no config: the user's own database
        assert (root / "com.example.app/1.0/app.desktop").stat().st_uid == \
            (home).stat().st_uid
        listed = run([str(cli_script), "list"], env=user_env, user="nobody")
        assert listed.stdout == "com.example.app\t1.0\n"
        mine = home / "explicit"
        result = run([str(cli_script), "install", f"--root={mine}", "--allow-unauthenticated",
                      str(pkg)], env=user_env, user="nobody")
        assert result.returncode == 0, result.stderr
        assert check_invariants(mine) == []
        # not root and not the owner: a clear refusal, nothing written
        denied = run([str(cli_script), "install", "--root=/var/lib/clickpkg",
                      "--allow-unauthenticated", str(pkg)], env=user_env, user="nobody")
        assert_clean_error(denied, "cannot write to the database /var/lib/clickpkg")


def test_list_reads_each_registration_folder_once(tmp_path: Path) -> None:
    """`list` of N apps opens the user's registration folder a fixed number of times,
    not once per app and lookup (it was four times per app)."""
    from click_build.frameworks import frameworks_dir
    from click_build.install.database import Database
    from click_build.install.installer import Installer

    strace = need("strace")
    env = make_env(tmp_path / "env")
    user = current_user()
    installer = Installer(Database([str(env.root)]), frameworks_dir(env.frameworks),
                          hooks_dir=str(env.hooks), allow_unauthenticated=True)
    counts = {}
    for apps in (2, 8):
        while len(list(env.root.glob("com.example.n*"))) < apps:
            n = len(list(env.root.glob("com.example.n*")))
            installer.install(str(make_click(tmp_path / "pkgs", f"com.example.n{n}")), user=user)
        log = tmp_path / f"strace-{apps}.log"
        listed = subprocess.run(
            [strace, "-f", "-qq", "-e", "trace=openat", "-o", str(log), *CLICK_BUILD, "list",
             f"--root={env.root}", f"--user={user}"],
            capture_output=True, text=True, env={**os.environ, **env.vars()}, check=True)
        assert listed.stdout.count("\n") == apps
        counts[apps] = sum(f'"{user}", O_RDONLY' in line and "ENOENT" not in line
                           for line in log.read_text().splitlines())
    assert counts[2] == counts[8] > 0, counts


def test_install_shows_progress_on_a_terminal_only(tmp_path: Path) -> None:
    """The unpacking shows "[i/N] unpacking NAME" on a terminal (N: the package's files,
    counted only then); through a pipe it prints no progress at all."""
    env = make_env(tmp_path / "env")
    files = {f"f{i}.txt": "x\n" for i in range(3)}
    package = make_click(tmp_path / "pkgs", "com.example.shown", files=files)
    args = [*CLICK_BUILD, "install", f"--root={env.root}", "--allow-unauthenticated",
            f"--user={current_user()}", str(package)]
    piped = subprocess.run(args, capture_output=True, text=True,
                           env={**os.environ, **env.vars()}, check=True)
    assert "unpacking" not in piped.stdout + piped.stderr
    shutil.rmtree(env.root)
    env = make_env(tmp_path / "env")
    with Terminal(args, env={**os.environ, **env.vars()}) as terminal:
        shown = terminal.read_to_end()
        assert terminal.wait() == 0, shown
    assert b"[4/4] unpacking com.example.shown" in shown  # 3 files and app.desktop


def test_writers_wait_for_the_lock_and_readers_never_do(cli, env: Env, tmp_path: Path) -> None:
    """docs/install.md: writers take ROOT/.click/lock, so installs run one after the
    other; list and pkgdir never wait."""
    import fcntl

    root = tmp_path / "db"
    base = [f"--root={root}"]
    ours(cli, env, "install", *base, "--allow-unauthenticated", "--all-users",
         make_click(tmp_path, version="1.0"))
    upgrade = make_click(tmp_path, version="2.0")
    full = {**os.environ, **env.vars()}
    fd = os.open(root / ".click" / "lock", os.O_RDWR)
    fcntl.flock(fd, fcntl.LOCK_EX)  # another writer is at work
    with subprocess.Popen([*CLICK_BUILD, "install", *base, "--allow-unauthenticated",
                           "--all-users", str(upgrade)], env=full,
                          stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True) as writer:
        try:
            for reader in (["list", *base, "--all"], ["pkgdir", *base, "com.example.app"],
                           ["info", *base, "com.example.app"]):
                done = subprocess.run([*CLICK_BUILD, *reader], env=full, capture_output=True,
                                      text=True, timeout=seconds(60))
                assert done.returncode == 0, (reader, done.stderr)
            lock = ("waits", os.fstat(fd).st_ino)
            wait_for(lambda: lock in flocks(writer.pid) or writer.poll() is not None,
                     "the writer to wait for the lock")
            assert writer.poll() is None  # waits for the lock
            assert os.readlink(root / "com.example.app" / "current") == "1.0"
        finally:
            os.close(fd)  # releases the lock
        _, err = writer.communicate(timeout=seconds(60))
    assert writer.returncode == 0, err
    assert os.readlink(root / "com.example.app" / "current") == "2.0"


def test_info_of_a_path_with_a_fifo_for_its_manifest_does_not_hang(cli, tmp_path: Path) -> None:
    """``info PATH`` reads the manifest of the tree holding PATH: a FIFO there (a tree
    anyone may have made) is refused at once, never waited on."""
    tree = tmp_path / "com.example.app" / "1.0"
    (tree / ".click" / "info").mkdir(parents=True)
    (tree / "app.desktop").write_text("x")
    os.mkfifo(tree / ".click" / "info" / "com.example.app.manifest")
    result = subprocess.run([*CLICK_BUILD, "info", str(tree / "app.desktop")],
                            capture_output=True, text=True, timeout=seconds(60))
    assert_clean_error(result, "com.example.app.manifest: not a regular file")
