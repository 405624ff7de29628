"""`click-build run` and `device run` as the attacker sees them.

Class 1: a cloned project folder is the attacker's, ``build/`` included (``build/`` is
what a review of the tracked files never shows).  Nothing shipped there may be executed
(a hook's ``Exec``, a compiled QML page) or followed (a link for a folder run writes to,
or chmods).
Class 4: the fields of a package's desktop file hold control characters (a NUL, an
escape sequence, a bidi override): each is one error line, nothing runs, and the
``--print-env`` script, which a shell runs, runs exactly what was planned.

Each test runs the real CLI as root and as a real unprivileged user in their own home
(attack_support's accounts and portable CLI) and compares everything around the
project, and the home, before and after.
"""

from __future__ import annotations

import json
import os
import pwd
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
from attack_support import MODES, assert_refused, snapshot
from conftest import write_tree
from crafting import MANIFEST, Crafted, Member
from deadlines import seconds
from install_support import run as run_as

APP = "com.example.show"
SHOW_SH = """#!/bin/sh
printf 'cwd=%s\\n' "$(pwd -P)"
for a in "$@"; do printf 'arg=%s\\n' "$a"; done
"""


@dataclass
class Bench:
    """``base`` holds the projects, ``outside/`` (what a planted link points at) and, as
    root, the home; the CLI runs as ``user``."""

    base: Path
    mode: str
    user: str
    cli: list[str]

    @property
    def switch(self) -> bool:
        return self.mode == "user" and os.geteuid() == 0

    @property
    def home(self) -> Path:
        if self.mode == "root":
            return self.base / "home"
        return Path(pwd.getpwnam(self.user).pw_dir)

    @property
    def outside(self) -> Path:
        return self.base / "outside"

    def give_away(self, path: Path) -> None:
        """``path`` and all in it to the bench's user (links themselves, not their targets)."""
        if self.switch:
            subprocess.run(["chown", "-R", "-h", "-P", f"{self.user}:", str(path)], check=True,
                           timeout=seconds(30))

    def run(self, *args: object) -> subprocess.CompletedProcess[str]:
        """The CLI as the bench's user, in a plain environment: no XDG_* variables (so no
        XDG_RUNTIME_DIR: run makes a private one), the home above."""
        extra = {"CLICK_BUILD_REVIEW": "report"}
        cmd = [*self.cli, *map(str, args)]
        if self.switch:  # setpriv --reset-env: the account's own HOME, no XDG_*
            return run_as(cmd, env=extra, user=self.user, within=120)
        env = {k: v for k, v in os.environ.items()
               if not k.startswith("XDG_")}
        env.update(extra, HOME=str(self.home))
        return subprocess.run(cmd, env=env, capture_output=True, text=True,
                              timeout=seconds(120))

    def world(self, *skip: Path) -> dict[str, tuple[object, ...]]:
        """Everything the bench's user has (the home; as root, the bench), but ``skip``."""
        return snapshot(self.home if self.mode == "user" else self.base, skip=skip)

    def project(self, name: str, exec_line: str = "show.sh %U") -> Path:
        """A plain app folder (a manifest, no pyproject) whose app prints what it got."""
        root = self.base / name
        write_tree(root, {
            "manifest.json": json.dumps({
                "name": APP, "version": "1.0", "framework": "ubuntu-sdk-20.04",
                "maintainer": "Jane Doe <jane@example.com>", "title": "Show",
                "hooks": {"show": {"desktop": "show.desktop"}}}),
            "show.desktop": desktop(exec_line), "show.sh": SHOW_SH,
            "icon.svg": "<svg xmlns='http://www.w3.org/2000/svg'/>\n"})
        (root / "show.sh").chmod(0o755)
        self.give_away(root)
        return root


def desktop(exec_line: str, name: str = "Show", icon: str = "icon.svg") -> str:
    return (f"[Desktop Entry]\nName={name}\nExec={exec_line}\nIcon={icon}\n"
            "Type=Application\nX-Lomiri-Touch=true\n")


def assert_ok(result: subprocess.CompletedProcess[str]) -> None:
    assert result.returncode == 0, result.stderr
    assert "Traceback" not in result.stderr


@pytest.fixture(params=MODES)
def bench(request: pytest.FixtureRequest, real_user: str,
          user_cli: list[str]) -> Iterator[Bench]:
    """A bench used by root, or by a real unprivileged user in their own home; the user
    has run an app with click-build before (so run's key exists, see run/state.py)."""
    if request.param == "root":
        if os.geteuid() != 0:
            pytest.skip("root mode needs root")
        base = Path(tempfile.mkdtemp(prefix="cb-attack-run."))
        base.chmod(0o755)  # the unpacking child runs as clickpkg
        bench = Bench(base, "root", "root", [sys.executable, "-m", "click_build"])
        bench.home.mkdir()
    else:
        home = Path(pwd.getpwnam(real_user).pw_dir)
        base = Path(tempfile.mkdtemp(prefix="r.", dir=home if os.geteuid() == 0 else None))
        bench = Bench(base, "user", real_user, user_cli)
    try:
        bench.outside.mkdir()
        (bench.outside / "keep.txt").write_text("the user's own file\n")
        bench.give_away(base)
        first = bench.project("first-app")
        done = bench.run("run", first)
        assert_ok(done)
        assert f"cwd={first}/build/click-run/db/{APP}/1.0" in done.stdout
        yield bench
    finally:
        shutil.rmtree(base, ignore_errors=True)


# --- class 1: the project's build/ ----------------------------------------------------

def test_a_cloned_build_folder_is_never_executed_or_followed(bench: Bench) -> None:
    outside = bench.outside
    executed = outside / "EXECUTED"
    state = Path("build") / "click-run"

    # A state folder shipped with the project, with everything run would once have used:
    # a hook (its Exec, its Pattern into a folder of the user's), another database, a
    # database with a registration pointing outside, a compiled QML page, a forged mark.
    project = bench.project("clone")
    shipped = project / state
    write_tree(shipped, {
        "hooks/autostart.hook": f"Pattern: {outside}/links/${{id}}.desktop\n"
                                f"Exec: touch {executed}\nUser-Level: yes\n",
        "databases.d/extra.conf": f"[Click Database]\nroot = {outside}/db\n",
        f"db/.click/users/{bench.user}/.keep": "",
        f"xdg/cache/{APP}/qmlcache/0123456789abcdef.qmlc": "a compiled page\n",
        ".click-run-mark": "click-build run made this folder\n" + "0" * 64 + "\n",
    })
    (shipped / "db" / ".click" / "users" / bench.user / APP).symlink_to(outside)
    bench.give_away(project)
    before = bench.world()
    for args in (["run", project], ["run", "--print-env", project]):
        assert_refused(bench.run(*args), f"{shipped} holds files click-build run did not "
                       "make for you", "delete it to start afresh")
    assert bench.world() == before
    shutil.rmtree(shipped)
    assert_ok(bench.run("run", project))  # deleted, as the error says: run makes its own

    # Links where run (or device run) makes its folders, to a folder of the user's, to
    # nothing (run would make it), or to the project itself.
    (outside / "state").mkdir()
    bench.give_away(outside)
    plants = [
        ("build/click-run", outside / "state", ["run"]),
        ("build/click-run", outside / "made-by-run", ["run", "--print-env"]),
        ("build", outside, ["run"]),
        ("build/click-device", outside / "state",
         ["device", "run", "--ssh", "nobody@127.0.0.1:1"]),
        ("build", outside, ["device", "run", "--ssh", "nobody@127.0.0.1:1"]),
    ]
    for number, (where, target, command) in enumerate(plants):
        project = bench.project(f"linked-{number}")
        (project / where).parent.mkdir(parents=True, exist_ok=True)
        (project / where).symlink_to(target)
        bench.give_away(project)
        before = bench.world()
        assert_refused(bench.run(*command, project),
                       f"{project / where} is a symbolic link or not a folder")
        assert bench.world() == before, (where, command)

    # run's own folder, changed after run made it (by the app, or a tool): a link there is
    # not followed either, and a hook put there is not run: no hook ever runs.
    project = bench.project("own")
    assert_ok(bench.run("run", project))
    own = project / state
    (outside / "runtime").mkdir(mode=0o755)
    bench.give_away(outside)
    for where, target in (("xdg/runtime", outside / "runtime"), ("db", outside)):
        moved = own / f"{where}.moved"
        (own / where).rename(moved)
        (own / where).symlink_to(target)
        before = bench.world()
        assert_refused(bench.run("run", project), f"{own / where} is a symbolic link")
        assert bench.world() == before
        (own / where).unlink()
        moved.rename(own / where)
    assert (outside / "runtime").stat().st_mode & 0o777 == 0o755  # never chmodded
    write_tree(own, {"hooks/autostart.hook": f"Pattern: {outside}/links/${{id}}.desktop\n"
                                             f"Exec: touch {executed}\nUser-Level: yes\n"})
    bench.give_away(own)
    before = bench.world(own)
    for args in (["run", "--print-env", project], ["run", project]):
        assert_ok(bench.run(*args))
    assert bench.world(own) == before
    assert not executed.exists() and not (outside / "links").exists()


# --- class 4: control characters in a package's fields -------------------------------

def crafted(bench: Bench, name: str, desktop_file: str) -> Path:
    """A package whose desktop file is ``desktop_file`` exactly (bytes the builder would
    refuse to pack included)."""
    manifest = dict(MANIFEST, hooks={"app": {"desktop": "app.desktop"}})
    package = Crafted(manifest=manifest, data=[
        Member("./", kind="dir", mode=0o755),
        Member("./app.desktop", desktop_file.encode()),
        Member("./app.sh", SHOW_SH.encode(), mode=0o755)])
    pkgs = bench.base / "pkgs"
    pkgs.mkdir(exist_ok=True)
    path = package.write(pkgs / f"{name}.click")
    bench.give_away(pkgs)
    return path


def test_control_characters_in_desktop_fields_are_one_error_line(bench: Bench) -> None:
    executed = bench.outside / "EXECUTED"
    would_run = f'sh -c "touch {executed}"'
    cases = [
        ("exec-nul", desktop(f"{would_run} \0x"), "Exec holds U+0000, a control character"),
        ("exec-newline", desktop(f"{would_run} a\\nb"),
         "Exec holds U+000A, a control character"),
        ("exec-escape", desktop(f"{would_run} \x1b[2K"),
         "Exec holds U+001B, a control character"),
        ("exec-c1", desktop(f"{would_run} \x9b2K"), "Exec holds U+009B, a control character"),
        ("exec-bidi", desktop(f"{would_run} \u202ex"), "Exec holds U+202E, a bidi override"),
        ("name-nul", desktop(f"{would_run} %c", name="A\0B"),
         "Name holds U+0000, a control character"),
        ("icon-newline", desktop(f"{would_run} %i", icon="x\\ny"),
         "Icon holds U+000A, a control character"),
    ]
    state = bench.base / "state"
    for name, text, message in cases:
        package = crafted(bench, name, text)
        before = bench.world(state)
        for args in (["run"], ["run", "--print-env"]):
            result = bench.run(*args, "--root", state, package)
            assert_refused(result, f"com.example.crafted: app.desktop: {message}: a desktop "
                           "file's values are one line of printable text")
            assert result.stdout == ""
        assert bench.world(state) == before, name
    assert not executed.exists()

    # The same Exec without the character runs: the cases above would have.
    script = bench.run("run", "--print-env", "--root", state,
                       crafted(bench, "clean", desktop(f"{would_run} x")))
    assert_ok(script)
    assert script.stdout.splitlines()[-1] == f"exec sh -c 'touch {executed}' x"


def test_print_env_quotes_everything_for_the_shell(bench: Bench) -> None:
    """A project folder and Exec arguments full of what a shell reads specially: the
    script, run by sh, starts the app in the same folder with the same arguments as run
    does, and runs nothing else."""
    odd = "it's \"$(touch EXECUTED)\" `touch EXECUTED` ; & | * ~ $HOME \\"
    project = bench.project(f"p {odd}",
                            'show.sh "$(touch EXECUTED)" "\\$HOME" \'x y\' "a\\\\b" %U')
    direct = bench.run("run", project, "--", odd, "")
    assert_ok(direct)
    script = bench.run("run", "--print-env", project, "--", odd, "")
    assert_ok(script)
    assert all(line.isprintable() for line in script.stdout.splitlines())
    if bench.switch:
        pasted = run_as(["sh", "-c", script.stdout], user=bench.user, cwd=str(bench.base),
                        within=30)
    else:
        pasted = subprocess.run(["sh", "-c", script.stdout], cwd=bench.base,
                                capture_output=True, text=True, timeout=seconds(30))
    assert pasted.returncode == 0, pasted.stderr
    app_lines = [line for line in direct.stdout.splitlines()
                 if line.startswith(("cwd=", "arg="))]
    assert pasted.stdout.splitlines() == app_lines
    assert app_lines[1:] == ["arg=$(touch EXECUTED)", "arg=$HOME", "arg='x", "arg=y'",
                             "arg=a\\b", f"arg={odd}", "arg="]
    assert not [p for p in (bench.base, bench.home, Path.cwd()) if (p / "EXECUTED").exists()]
    assert not list(bench.base.rglob("EXECUTED"))
