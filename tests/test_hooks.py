"""Hooks: system and user level, Exec, links made and removed, sync, and the original's view."""

from __future__ import annotations

import os
import pwd
import shutil
import subprocess
from pathlib import Path

import pytest
from conftest import CLICK_BUILD, assert_clean_error, need
from deadlines import seconds
from install_support import Env, current_user, make_click, make_env, run

from click_build.install.hooks import pattern_format, pattern_possible_expansion


@pytest.fixture
def shared(public_tmp: Path) -> Path:
    """World-writable scratch space, so hooks running as other users can write."""
    public_tmp.chmod(0o1777)
    return public_tmp


@pytest.fixture
def env(shared: Path) -> Env:
    e = make_env(shared / "env")
    for d in (e.base, e.hooks, e.frameworks, e.confdir):
        os.chmod(d, 0o755)
    return e


def ours(cli, env: Env, *args: object, check: bool = True):
    return cli(*args, env=env.vars(), check=check)


def links(directory: Path) -> dict[str, str]:
    if not directory.exists():
        return {}
    return {p.name: os.readlink(p) for p in sorted(directory.iterdir()) if p.is_symlink()}


def test_pattern_expansion_as_the_original() -> None:
    args = {"id": "p_a_1", "user": "u", "home": None}
    assert pattern_format("/x/${id}.json", args) == "/x/p_a_1.json"
    assert pattern_format("$${id}-$$-${unknown}-${home}", args) == "${id}-$--"
    assert pattern_possible_expansion("/x/p_a_1.json", "/x/${id}.json", {}) == {"id": "p_a_1"}
    assert pattern_possible_expansion("/y/p.json", "/x/${id}.json", {}) is None
    assert pattern_possible_expansion("/h/u/p_a_1", "/h/${user}/${id}", {"user": "u"}) == {
        "id": "p_a_1"}


def test_system_hook_links_runs_exec_and_follows_upgrades(cli, env: Env, shared: Path) -> None:
    root, out = env.base / "db", shared / "sys"
    log = shared / "sys.log"
    env.add_hook("sysh", f"Pattern: {out}/${{id}}.json\nExec: echo ran >> {log}\n"
                         f"User: {current_user()}\n")
    ours(cli, env, "install", f"--root={root}", "--allow-unauthenticated",
         f"--user={current_user()}",
         make_click(shared, hooks={"app": {"sysh": "a.json"}, "two": {"sysh": "b/c.json"}}))
    assert links(out) == {"com.example.app_app_1.0.json": f"{root}/com.example.app/1.0/a.json",
                          "com.example.app_two_1.0.json": f"{root}/com.example.app/1.0/b/c.json"}
    assert log.read_text() == "ran\nran\n"  # once per app, after its link
    ours(cli, env, "install", f"--root={root}", "--allow-unauthenticated",
         f"--user={current_user()}",
         make_click(shared, version="2.0", hooks={"app": {"sysh": "a.json"}}))
    # 1.0 is gone (nobody uses it): its links went with it; 2.0 has its own
    assert links(out) == {"com.example.app_app_2.0.json": f"{root}/com.example.app/2.0/a.json"}
    ours(cli, env, "unregister", f"--root={root}", f"--user={current_user()}", "com.example.app")
    assert links(out) == {}


def test_single_version_hook_keeps_one_link(cli, env: Env, shared: Path) -> None:
    root, out = env.base / "db", shared / "single"
    env.add_hook("one", f"Pattern: {out}/${{short-id}}\nSingle-Version: yes\nUser: root\n"
                        "Hook-Name: onehook\n")
    for version in ("1.0", "2.0"):
        ours(cli, env, "install", f"--root={root}", "--allow-unauthenticated", "--all-users",
             make_click(shared, version=version, hooks={"app": {"onehook": "f"}}))
        assert links(out) == {"com.example.app_app": f"{root}/com.example.app/{version}/f"}
    # a version that drops the hook removes the single-version link
    ours(cli, env, "install", f"--root={root}", "--allow-unauthenticated", "--all-users",
         make_click(shared, version="3.0", hooks={"app": {"desktop": "f"}}))
    assert links(out) == {}


@pytest.mark.root
def test_user_level_hook_runs_as_the_user(cli, env: Env, shared: Path) -> None:
    root, out = env.base / "db", shared / "user"
    out.mkdir(mode=0o1777)
    os.chmod(out, 0o1777)
    env.add_hook("uh", f"Pattern: {out}/${{user}}/${{id}}.desktop\nUser-Level: yes\n"
                       f"Exec: id -u >> {shared}/who-${{USER:-x}}; echo $HOME >> {shared}/home\n")
    pkg = make_click(shared, hooks={"app": {"uh": "app.desktop"}})
    ours(cli, env, "install", f"--root={root}", "--allow-unauthenticated", "--user=daemon", pkg)
    daemon = pwd.getpwnam("daemon")
    link = out / "daemon" / "com.example.app_app_1.0.desktop"
    # through the registration link, so it survives upgrades
    assert os.readlink(link) == f"{root}/.click/users/daemon/com.example.app/app.desktop"
    assert link.lstat().st_uid == daemon.pw_uid  # made with the user's privileges
    assert (shared / "who-x").read_text().split() == [str(daemon.pw_uid)]
    assert (shared / "home").read_text().split() == [daemon.pw_dir]
    ours(cli, env, "install", f"--root={root}", "--allow-unauthenticated", "--user=daemon",
         make_click(shared, version="2.0", hooks={"app": {"uh": "app.desktop"}}))
    assert sorted(os.listdir(out / "daemon")) == ["com.example.app_app_2.0.desktop"]
    ours(cli, env, "unregister", f"--root={root}", "--user=daemon", "com.example.app")
    assert os.listdir(out / "daemon") == []


def test_hook_install_remove_and_run_commands(cli, env: Env, shared: Path) -> None:
    root, out = env.base / "db", shared / "late"
    user = current_user()
    ours(cli, env, "install", f"--root={root}", "--allow-unauthenticated", f"--user={user}",
         make_click(shared, hooks={"app": {"late": "x"}}))
    ours(cli, env, "install", f"--root={root}", "--allow-unauthenticated", f"--user={user}",
         make_click(shared, name="com.example.nofw", framework="gone",
                    hooks={"app": {"late": "x"}}), "--force-missing-framework")
    env.add_hook("late", f"Pattern: {out}/${{id}}\nUser: {user}\nExec: touch {shared}/late.ran\n")
    ours(cli, env, "hook", "install", "late", f"--root={root}")
    # apps whose framework is missing are left out of whole-hook runs (as the original 0.5)
    assert links(out) == {"com.example.app_app_1.0": f"{root}/com.example.app/1.0/x"}
    assert (shared / "late.ran").exists()
    ours(cli, env, "hook", "remove", "late", f"--root={root}")
    assert links(out) == {}
    # options anywhere, as scripts pass them: between the action and HOOK, before the action
    ours(cli, env, "hook", "install", f"--root={root}", "late")
    assert links(out) == {"com.example.app_app_1.0": f"{root}/com.example.app/1.0/x"}
    ours(cli, env, "hook", f"--root={root}", "remove", "late")
    assert links(out) == {}
    # run-system catches up: makes missing links and drops stale ones
    out.mkdir(exist_ok=True)
    os.symlink("/nowhere", out / "com.example.gone_app_9")
    ours(cli, env, "hook", "run-system", f"--root={root}")
    assert links(out) == {"com.example.app_app_1.0": f"{root}/com.example.app/1.0/x"}
    user_out = shared / "user-sync"
    env.add_hook("us", f"Pattern: {user_out}/${{user}}-${{id}}\nUser-Level: yes\n"
                       "Hook-Name: late\n")
    ours(cli, env, "hook", "run-user", f"--user={user}", f"--root={root}")
    assert list(links(user_out)) == [f"{user}-com.example.app_app_1.0"]
    result = ours(cli, env, "hook", "install", "no-such-hook", f"--root={root}", check=False)
    assert_clean_error(result, "No click hook 'no-such-hook' installed")


def test_one_bad_app_does_not_keep_a_hook_from_the_others(cli, env: Env, shared: Path) -> None:
    """An installed app whose hook file no link can name (a database another tool
    wrote): hook install and run-system link every other app, then fail naming it."""
    root, out = env.base / "db", shared / "late"
    user = current_user()
    for name in ("com.example.bad", "com.example.good"):
        ours(cli, env, "install", f"--root={root}", "--allow-unauthenticated", f"--user={user}",
             make_click(shared, name=name, hooks={"app": {"late": "x"}}))
    stored = root / "com.example.bad" / "1.0" / ".click" / "info" / "com.example.bad.manifest"
    stored.write_text(stored.read_text().replace('"late": "x"', '"late": "x\\u001b"'))
    env.add_hook("late", f"Pattern: {out}/${{id}}\nUser: {user}\nExec: true\n")
    for args in (["hook", "install", "late"], ["hook", "run-system"]):
        shutil.rmtree(out, ignore_errors=True)
        result = ours(cli, env, *args, f"--root={root}", check=False)
        assert_clean_error(result, "hook late: failed for 1 app(s) (com.example.bad 1.0: ",
                           "contains a control character")
        assert links(out) == {"com.example.good_app_1.0": f"{root}/com.example.good/1.0/x"}


def test_hook_files_that_are_not_files_are_skipped_not_waited_on(cli, env: Env,
                                                                 shared: Path) -> None:
    """A FIFO and a link to /dev/zero among the *.hook files: skipped at once (an
    install never waits on one, nor reads one without end); the real hook runs."""
    root, out = env.base / "db", shared / "real"
    os.mkfifo(env.hooks / "fifo.hook")
    os.symlink("/dev/zero", env.hooks / "zero.hook")
    (env.hooks / "big.hook").write_text("Pattern: /x/${id}\n" + "X-Pad: y\n" * 20000)
    env.add_hook("real", f"Pattern: {out}/${{id}}\n")
    pkg = make_click(shared, hooks={"app": {"real": "x", "fifo": "x", "zero": "x", "big": "x"}})
    result = subprocess.run([*CLICK_BUILD, "install", f"--root={root}", "--allow-unauthenticated",
                             str(pkg)], env={**os.environ, **env.vars()}, capture_output=True,
                            text=True, timeout=seconds(60))
    assert result.returncode == 0, result.stderr
    assert links(out) == {"com.example.app_app_1.0": f"{root}/com.example.app/1.0/x"}


def test_hook_failures_are_clean_errors(cli, env: Env, shared: Path) -> None:
    root = env.base / "db"
    env.add_hook("bad", f"Pattern: {shared}/bad/${{id}}\nUser: {current_user()}\nExec: exit 3\n")
    env.add_hook("nouser", f"Pattern: {shared}/nouser/${{id}}\nExec: true\n")
    env.add_hook("trig", f"Pattern: {shared}/trig/${{id}}\nUser: {current_user()}\nTrigger: yes\n")
    for hook, message in (("bad", "Hook command 'exit 3' failed: Child process exited with code 3"),
                          ("nouser", "Hook 'nouser' has no field named 'user'"),
                          ("trig", "'Trigger: yes' not yet implemented")):
        pkg = make_click(shared, name=f"com.example.{hook}", hooks={"app": {hook: "f"}})
        result = ours(cli, env, "install", f"--root={root}", "--allow-unauthenticated", pkg,
                      check=False)
        assert_clean_error(result, message)


@pytest.mark.root
def test_a_user_level_link_that_cannot_be_made_names_hook_and_user(cli, env: Env,
                                                                    shared: Path) -> None:
    """A user whose home does not exist (nobody's /nonexistent): one line naming the
    hook, the user and the path; the app stays installed, as after a failing Exec."""
    home = pwd.getpwnam("nobody").pw_dir
    assert not os.path.exists(home)
    root = env.base / "db"
    env.add_hook("menu", "Pattern: ${home}/.local/share/menu/${id}.desktop\nUser-Level: yes\n")
    pkg = make_click(shared, hooks={"app": {"menu": "app.desktop"}})
    result = ours(cli, env, "install", f"--root={root}", "--allow-unauthenticated",
                  "--user=nobody", pkg, check=False)
    assert_clean_error(result, f"hook menu for user nobody: {home}: ")
    assert os.readlink(root / "com.example.app" / "current") == "1.0"
    assert not os.path.exists(home)


@pytest.mark.root
@pytest.mark.oracle
@pytest.mark.xdist_group("system")
def test_same_links_as_the_original(cli, env: Env, shared: Path) -> None:
    """The original's hooks directory is fixed: compare both tools on a system hook file."""
    click = need("click")
    out = shared / "links"
    hook = Path("/usr/share/click/hooks/click-build-test.hook")
    hook.parent.mkdir(parents=True, exist_ok=True)
    hook.write_text(f"Pattern: {out}/${{id}}.lnk\nUser: root\nExec: echo >> {shared}/log\n")
    try:
        pkg = make_click(shared, framework="", hooks={"a": {"click-build-test": "f1"},
                                                      "b": {"click-build-test": "f2"}})
        seen = []
        for tool, root in (([click], shared / "theirs"), (None, shared / "mine")):
            root.mkdir()
            shutil.chown(root, "clickpkg", "clickpkg")
            args = ["install", f"--root={root}", "--allow-unauthenticated", "--all-users",
                    str(pkg)]
            if tool is None:
                ours(cli, env, *args, "--hooks-dir=/usr/share/click/hooks")
            else:
                assert run(tool + args).returncode == 0
            seen.append({k: v.replace(str(root), "ROOT") for k, v in links(out).items()})
            shutil.rmtree(out)
        assert seen[0] == seen[1] and len(seen[0]) == 2
    finally:
        hook.unlink()


@pytest.mark.root
@pytest.mark.oracle
def test_the_system_desktop_hook_reaches_the_users_menu_until_unregistered(
        shared: Path, real_user: str) -> None:
    """docs/install.md: with Debian's click installed, installing for a user runs its
    click-desktop.hook, which puts a launcher in the user's menu; unregister takes it
    away, and an empty --hooks-dir leaves the home alone."""
    need("click")
    assert Path("/usr/share/click/hooks/click-desktop.hook").is_file()
    desktop = "[Desktop Entry]\nName=Test\nExec=app\nIcon=app.svg\nType=Application\n"
    pkg = make_click(shared, framework="", files={"app.desktop": desktop})
    home = Path(pwd.getpwnam(real_user).pw_dir)
    link = home / ".local/share/click/hooks/desktop/com.example.app_app_1.0.desktop"
    entry = home / ".local/share/applications/com.example.app_app_1.0.desktop"
    clean = {k: v for k, v in os.environ.items() if not k.startswith("CLICK_")}  # defaults

    def cli(*args: str | Path) -> None:
        result = subprocess.run([*CLICK_BUILD, *map(str, args)], env=clean, text=True,
                                capture_output=True)
        assert result.returncode == 0, result.stderr

    empty = shared / "no-hooks"
    empty.mkdir()
    for root in (shared / "db", shared / "db2"):
        root.mkdir()
        shutil.chown(root, "clickpkg", "clickpkg")
    flags = ["--allow-unauthenticated", "--force-missing-framework", f"--user={real_user}"]
    try:
        cli("install", f"--root={shared / 'db'}", *flags, pkg)
        assert link.is_symlink() and str(shared / "db") in os.readlink(link)
        assert entry.is_file()
        assert "com.example.app" in entry.read_text()
        cli("unregister", f"--root={shared / 'db'}", f"--user={real_user}", "com.example.app")
        assert not link.is_symlink() and not entry.exists()
        cli("install", f"--root={shared / 'db2'}", f"--hooks-dir={empty}", *flags, pkg)
        assert not link.is_symlink() and not entry.exists()
    finally:
        link.unlink(missing_ok=True)
        entry.unlink(missing_ok=True)


def test_a_failing_hook_does_not_stop_the_upgrade_half_way(cli, env: Env, shared: Path) -> None:
    """A system hook whose Exec fails during an upgrade: the error is reported (one line,
    non-zero exit), yet every other step is made: the other hooks' links, the user's
    registration and links follow 2.0, 1.0 (used by nobody now) goes, and no intent is
    left for the next command to finish."""
    root, out = env.base / "db", shared / "links"
    flag = shared / "fail"
    user = current_user()
    env.add_hook("aa", f"Pattern: {out}/aa/${{id}}\nUser: {user}\n"
                       f"Exec: test ! -e {flag}\n")
    env.add_hook("desk", f"Pattern: {out}/desk/${{short-id}}\nSingle-Version: yes\n")
    env.add_hook("menu", f"Pattern: {out}/menu/${{user}}-${{id}}\nUser-Level: yes\n")
    hooks = {"app": {"aa": "x", "desk": "x", "menu": "x"}}
    pkgs = {v: make_click(shared, version=v, hooks=hooks) for v in ("1.0", "2.0")}
    install = ("install", f"--root={root}", "--allow-unauthenticated", f"--user={user}")
    ours(cli, env, *install, pkgs["1.0"])
    flag.touch()
    result = ours(cli, env, *install, pkgs["2.0"], check=False)
    assert result.returncode != 0 and "Traceback" not in result.stderr
    errors = [line for line in result.stderr.splitlines() if "error:" in line]
    assert len(errors) == 1 and f"Hook command 'test ! -e {flag}' failed" in errors[0], errors
    app = root / "com.example.app"
    assert sorted(os.listdir(app)) == ["2.0", "current"] and os.readlink(app / "current") == "2.0"
    assert os.readlink(root / ".click" / "users" / user / "com.example.app") == str(app / "2.0")
    assert links(out / "aa") == {"com.example.app_app_2.0": f"{app}/2.0/x"}
    assert links(out / "desk") == {"com.example.app_app": f"{app}/2.0/x"}
    assert links(out / "menu") == {
        f"{user}-com.example.app_app_2.0": f"{root}/.click/users/{user}/com.example.app/x"}
    assert (root / ".click" / "lock").read_bytes() == b""
