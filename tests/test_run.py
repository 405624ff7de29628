"""`click-build run`: build, install into a private database, start the app as the
Ubuntu Touch launcher does.

The template apps run for real under Xvfb (their windows are read back with
xwininfo); a small shell-script app shows exactly what the launcher hands an
app: its arguments, working folder, environment and exit status.
"""

from __future__ import annotations

import contextlib
import gzip
import io
import json
import os
import re
import signal
import subprocess
import sys
import tarfile
import time
import urllib.error
import urllib.request
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from conftest import CLICK_BUILD, assert_clean_error, need, process_ended, run, write_tree
from deadlines import seconds, wait_for
from run_support import LineReader, ended
from templates_support import new, project_of
from xdisplay import windows

from click_build.archive import write_ar_member
from click_build.arread import read_ar_members
from click_build.run.launcher import expand_exec

TRIPLET = run(["dpkg-architecture", "-qDEB_HOST_MULTIARCH"]).stdout.strip()
#: What qmlscene and a QQuickView title their window, per template (NAME = package name).
WINDOW_TITLES = {"qml": "Tea Timer", "python": "Tea Timer", "cpp": "Tea Timer"}
#: Lines that mean the app's own QML (or its Python) failed.
APP_ERRORS = re.compile(r"is not installed|ReferenceError|TypeError|SyntaxError|"
                        r"Cannot assign|failed to load|Python error|Traceback")

SHOW_SH = """#!/bin/sh
echo "cwd=$(pwd -P)"
for a in "$@"; do echo "arg=$a"; done
env | grep -E '^(APP_|XDG_|PATH=|LD_LIBRARY_PATH=|QML2_IMPORT_PATH=|QML_|LANGUAGE=|UBUNTU_|MY_)' | sort
exit "${EXIT_WITH:-7}"
"""


def manifest(name: str = "com.example.show", apps: tuple[str, ...] = ("show",)) -> str:
    return json.dumps({
        "name": name, "version": "1.0", "framework": "ubuntu-sdk-20.04",
        "maintainer": "Jane Doe <jane@example.com>", "title": "Show",
        "hooks": {app: {"desktop": f"{app}.desktop"} for app in apps},
    })


def desktop(exec_line: str, name: str = "Show") -> str:
    return (f"[Desktop Entry]\nName={name}\nExec={exec_line}\nIcon=icon.svg\n"
            "Type=Application\nX-Lomiri-Touch=true\n")


def show_app(root: Path, exec_line: str = 'show.sh %U "quoted arg" 100%%', **extra: str) -> Path:
    """A plain app folder (a manifest, no pyproject) whose app prints what it was given."""
    files = {"manifest.json": manifest(), "show.desktop": desktop(exec_line), "show.sh": SHOW_SH,
             "icon.svg": "<svg xmlns='http://www.w3.org/2000/svg'/>\n", **extra}
    write_tree(root, files)
    (root / "show.sh").chmod(0o755)
    return root


#: The shell-script apps here are about run itself (odd Exec lines, no runner, no hooks),
#: not store-ready apps: their builds report the review's findings instead of failing.
REPORT = {"CLICK_BUILD_REVIEW": "report"}


def cb(*args: str | Path, env: dict[str, str] | None = None, within: float = 120,
       ) -> subprocess.CompletedProcess[str]:
    full = {**os.environ, **REPORT, **(env or {})}
    return subprocess.run([*CLICK_BUILD, *map(str, args)], env=full, capture_output=True,
                          text=True, timeout=seconds(within))


def lines(text: str, prefix: str) -> list[str]:
    return [line[len(prefix):] for line in text.splitlines() if line.startswith(prefix)]


def variables(text: str) -> dict[str, str]:
    return dict(line.split("=", 1) for line in text.splitlines()
                if "=" in line and not line.startswith(("cwd=", "arg=")))


# --- what the launcher hands the app ----------------------------------------------------

def test_launch_environment_arguments_folder_and_status(public_tmp: Path) -> None:
    app = show_app(public_tmp / "show", **{f"lib/{TRIPLET}/bin/tool": "#!/bin/sh\n",
                                           f"lib/{TRIPLET}/qml/.keep": ""})
    result = cb("run", app, "--env", "MY_SETTING=a b", "--", "first", "second arg",
                env={"LANGUAGE": "de", "XDG_RUNTIME_DIR": ""})
    assert result.returncode == 7, result.stderr  # the app's own status, passed on
    private = app / "build" / "click-run"
    app_dir = str(private / "db" / ".click" / "users" / _user() / "com.example.show")
    assert lines(result.stdout, "cwd=") == [str(private / "db" / "com.example.show" / "1.0")]
    # %U takes the extra arguments; quoting and %% follow the Desktop Entry rules
    assert lines(result.stdout, "arg=") == ["first", "second arg", "quoted arg", "100%"]
    env = variables(result.stdout)
    assert env["APP_ID"] == "com.example.show_show_1.0"
    assert env["APP_DIR"] == app_dir
    assert env["APP_DESKTOP_FILE_PATH"] == f"{app_dir}/show.desktop"
    arch = f"{app_dir}/lib/{TRIPLET}"
    assert env["PATH"].startswith(f"{arch}/bin:{app_dir}:")
    assert env["LD_LIBRARY_PATH"].split(":")[:2] == [arch, f"{app_dir}/lib"]
    assert env["QML2_IMPORT_PATH"].split(":")[:2] == [f"{arch}/qml", arch]
    assert env["XDG_DATA_DIRS"].split(":")[0] == app_dir
    for var, folder in (("CONFIG", "config"), ("DATA", "data"), ("CACHE", "cache"),
                        ("STATE", "state")):
        assert env[f"XDG_{var}_HOME"] == str(private / "xdg" / folder)
        assert (private / "xdg" / folder).is_dir()
    assert env["XDG_RUNTIME_DIR"] == str(private / "xdg" / "runtime")
    assert env["UBUNTU_APP_LAUNCH_ARCH"] == TRIPLET
    assert env["QML_DISABLE_DISK_CACHE"] == "1"  # QML compiled afresh: never a stale page
    assert env["LANGUAGE"] == "de" and env["MY_SETTING"] == "a b"
    # registered for the current user in the private database, which click-build reads
    listed = cb("list", "--root", private / "db")
    assert listed.stdout == "com.example.show\t1.0\n", listed.stderr


def test_lib_folders_only_where_the_package_has_them(public_tmp: Path) -> None:
    app = show_app(public_tmp / "show")
    result = cb("run", app, env={"LD_LIBRARY_PATH": "/outer", "QML2_IMPORT_PATH": ""})
    env = variables(result.stdout)
    app_dir = env["APP_DIR"]
    assert env["PATH"].split(":")[0] == app_dir
    assert env["LD_LIBRARY_PATH"] == "/outer"
    assert env.get("QML2_IMPORT_PATH", "") == ""  # the caller's (empty) value, nothing added


def test_print_env_is_a_script_that_starts_the_app_the_same_way(public_tmp: Path) -> None:
    app = show_app(public_tmp / "show")
    script = cb("run", app, "--print-env", "--env", "MY_X=1", "--", "one")
    assert script.returncode == 0, script.stderr
    assert "Building" not in script.stdout  # stdout is the script alone
    assert script.stdout.splitlines()[-1] == "exec show.sh one 'quoted arg' 100%"
    assert "export APP_ID=com.example.show_show_1.0" in script.stdout
    direct = cb("run", app, "--env", "MY_X=1", "--", "one")
    pasted = subprocess.run(["sh", "-c", script.stdout], capture_output=True, text=True)
    assert pasted.returncode == direct.returncode == 7
    assert pasted.stdout == lines_after_build(direct.stdout)


def lines_after_build(stdout: str) -> str:
    """The app's output: without the build's progress and its review's advice (info)."""
    return "".join(line + "\n" for line in stdout.splitlines()
                   if not line.startswith(("* ", "review: ")))


@pytest.mark.slow
def test_the_build_of_a_cpp_app_stays_off_stdout(public_tmp: Path) -> None:
    """docs/run.md: `click-build run --print-env > launch.sh`, for a C++ app too: CMake's,
    ninja's and the compiler's lines are not in the script; and in a plain `run` they go
    to stderr, leaving stdout to the app (and click-build's own lines)."""
    new(public_tmp / "src", "cpp", {"title": "Tea Timer", "namespace": "jane"})
    project = project_of(public_tmp / "src")
    script = cb("run", project, "--print-env", within=300)
    assert script.returncode == 0, script.stderr
    launch = public_tmp / "launch.sh"
    launch.write_text(script.stdout)
    syntax = subprocess.run(["sh", "-n", str(launch)], capture_output=True, text=True)
    assert syntax.returncode == 0, syntax.stderr + script.stdout[:3000]
    body = script.stdout.splitlines()
    assert body[0].startswith("cd ") and body[-1].startswith("exec ")
    assert all(line.startswith(("cd ", "export ", "exec ")) for line in body), body[:5]

    (project / "src" / "main.cpp").touch()  # something to compile again
    later = time.time() + 5
    os.utime(project / "src" / "main.cpp", (later, later))
    ran = cb("run", "--timeout", "5", project, within=300,
             env={"DISPLAY": "", "WAYLAND_DISPLAY": "", "QT_QPA_PLATFORM": "minimal"})
    assert "-- Install configuration" in ran.stderr and "Building CXX object" in ran.stderr
    build_lines = [line for line in ran.stdout.splitlines()
                   if line.startswith(("-- ", "[", "loading initial cache"))]
    assert not build_lines, ran.stdout[:3000]


@pytest.mark.parametrize(("args", "files", "expected"), [
    (["%U", "x"], ["a", "b c"], ["a", "b c", "x"]),
    (["%F"], [], []),
    (["%u", "x"], ["a", "b"], ["a", "x", "b"]),  # one file for %u, the rest at the end
    (["--file=%f"], ["a"], ["--file=a"]),
    (["--file=%f"], [], ["--file="]),
    (["%f"], [], []),  # a code that expands to nothing removes its argument
    (["x"], ["a"], ["x", "a"]),  # no file code: the arguments go at the end
    (["%i", "%c", "%k", "%%", "a%%b"], [], ["--icon", "/app/icon.svg", "My App", "/app/a.desktop",
                                            "%", "a%b"]),
    (["%d%D%n%N%v%m", "keep"], [], ["keep"]),  # deprecated codes vanish
])
def test_field_codes(args: list[str], files: list[str], expected: list[str]) -> None:
    assert expand_exec(args, files, "My App", "/app/icon.svg", "/app/a.desktop") == expected


def test_field_codes_without_icon_drop_i() -> None:
    assert expand_exec(["prog", "%i"], [], "n", "", "/d") == ["prog"]


def assert_gone(pid: int) -> None:
    """The process has ended (a zombie waiting for init to reap it counts as ended)."""
    wait_for(lambda: process_ended(pid), f"process {pid} of the app to end")


def test_timeout_stops_the_whole_process_group(public_tmp: Path) -> None:
    pidfile = public_tmp / "child.pid"
    app = show_app(public_tmp / "sleepy", "sleepy.sh", **{"sleepy.sh": sleepy(pidfile)})
    (app / "sleepy.sh").chmod(0o755)
    result = cb("run", app, "--timeout", "1.5")  # the app alone would sleep for days
    assert result.returncode == 0, result.stderr
    assert "started" in result.stdout
    assert "stopped com.example.show_show_1.0 after 1.5 s (--timeout)" in result.stdout
    assert_gone(int(pidfile.read_text()))


def sleepy(pidfile: Path) -> str:
    """An app that starts a helper (its pid in ``pidfile``) and sleeps far longer than any
    test's deadline."""
    return (f"#!/bin/sh\nsleep 100000 &\necho $! > {pidfile}\necho started\n"
            "sleep 100000\n")


def test_exec_path_relative_to_the_app_folder(public_tmp: Path) -> None:
    app = show_app(public_tmp / "show", "./show.sh relative")
    result = cb("run", app)
    assert result.returncode == 7, result.stderr
    assert lines(result.stdout, "arg=") == ["relative"]
    (app / "show.desktop").write_text(desktop("./missing.sh"))
    assert_clean_error(cb("run", app), "Exec starts './missing.sh', which is neither in the "
                       "package nor on PATH")


@contextlib.contextmanager
def sleepy_app_running(public_tmp: Path, script: str) -> Iterator[subprocess.Popen[str]]:
    """`run` of an app whose ``script`` prints "started" and sleeps; yielded once it has
    started, killed if the test left it running."""
    app = show_app(public_tmp / "sleepy", "sleepy.sh", **{"sleepy.sh": script})
    (app / "sleepy.sh").chmod(0o755)
    with subprocess.Popen([*CLICK_BUILD, "run", str(app)], stdout=subprocess.PIPE,
                          stderr=subprocess.PIPE, text=True,
                          env={**os.environ, **REPORT}) as proc:
        try:
            assert proc.stdout is not None
            assert LineReader(proc.stdout).until(lambda line: line == "started\n")
            yield proc
        finally:
            if proc.poll() is None:
                proc.kill()
                proc.wait()


def test_stopping_click_build_stops_the_app(public_tmp: Path) -> None:
    """SIGTERM (or Ctrl-C) to click-build reaches the app's whole process group."""
    pidfile = public_tmp / "child.pid"
    with sleepy_app_running(public_tmp, sleepy(pidfile)) as proc:
        proc.terminate()
        _, err = proc.communicate(timeout=seconds(60))
    assert proc.returncode == 130 and "click-build: interrupted" in err
    assert_gone(int(pidfile.read_text()))


def test_the_app_never_outlives_a_killed_click_build(public_tmp: Path) -> None:
    """SIGKILL to click-build (no chance to stop anything: an IDE's stop button, a test
    harness) takes the app with it, and the helper it started; both were left running
    with nobody to stop them (the helper after the app's own process was tied)."""
    app_pid, helper_pid = public_tmp / "app.pid", public_tmp / "helper.pid"
    script = (f"#!/bin/sh\necho $$ > {app_pid}\nsleep 100000 &\necho $! > {helper_pid}\n"
              "echo started\nexec sleep 100000\n")
    with sleepy_app_running(public_tmp, script) as proc:
        pid, helper = int(app_pid.read_text()), int(helper_pid.read_text())
        assert Path(f"/proc/{pid}").exists()  # running, in a session of its own
        assert os.getsid(pid) == pid != os.getsid(proc.pid) and os.getpgid(helper) == pid
        proc.kill()
        proc.wait()
    assert_gone(pid)
    assert_gone(helper)


def test_a_process_that_leaves_the_group_is_its_own(public_tmp: Path) -> None:
    """What docs/run.md says stopping takes: the app's process group.  A process the app
    started in a session of its own (``setsid``, as a daemon) is not in it."""
    daemon_pid = public_tmp / "daemon.pid"
    # its output away from click-build's pipe, which it would hold open after the run
    script = (f"#!/bin/sh\nsetsid sh -c 'echo $$ > {daemon_pid}; exec sleep 100000' "
              ">/dev/null 2>&1 &\n"
              f"while [ ! -s {daemon_pid} ]; do sleep 0.05; done\necho started\n"
              "exec sleep 100000\n")
    daemon = 0
    try:
        with sleepy_app_running(public_tmp, script) as proc:
            daemon = int(daemon_pid.read_text())
            proc.terminate()
            proc.communicate(timeout=seconds(60))
        assert proc.returncode == 130
        assert not process_ended(daemon)
    finally:
        if daemon:
            os.kill(daemon, signal.SIGKILL)


def test_a_normal_end_leaves_no_keeper(public_tmp: Path) -> None:
    """The keeper, which would end the app's group had click-build died, ends with the run
    (stopped as Ctrl-C or SIGTERM stops it): none of this click-build's is left once it has
    ended; one was there while it ran."""

    from click_build.run.process import _KEEPER

    def keepers(owner: int) -> list[int]:
        """The keepers of click-build ``owner``: ``python -I -S -c _KEEPER OWNER``."""
        found = []
        for process in Path("/proc").iterdir():
            try:
                argv = (process / "cmdline").read_bytes().split(b"\0")
            except OSError:
                continue
            if argv[-4:] == [b"-c", _KEEPER.encode(), b"%d" % owner, b""]:
                found.append(int(process.name))
        return found

    with sleepy_app_running(public_tmp, "#!/bin/sh\necho started\nexec sleep 100000\n") as proc:
        assert len(keepers(proc.pid)) == 1
        proc.terminate()
        _, err = proc.communicate(timeout=seconds(60))
    assert proc.returncode == 130, err
    assert keepers(proc.pid) == []


def test_several_apps_need_app(public_tmp: Path) -> None:
    root = show_app(public_tmp / "two")
    (root / "manifest.json").write_text(manifest(apps=("show", "other")))
    (root / "other.desktop").write_text(desktop("show.sh other-app"))
    assert_clean_error(cb("run", root), "com.example.show has 2 apps (other, show): choose "
                       "one with --app")
    chosen = cb("run", root, "--app", "other")
    assert chosen.returncode == 7 and lines(chosen.stdout, "arg=") == ["other-app"]
    assert_clean_error(cb("run", root, "--app", "nope"),
                       "com.example.show has no app 'nope' with a desktop file; its apps: "
                       "other, show")


def test_the_package_leaves_the_build_folders_out(public_tmp: Path) -> None:
    """run writes into PROJECT/build/click-run: neither that folder nor the build/ around it
    reaches the package, for a bare app folder or a project, whatever build-dir says."""
    app = show_app(public_tmp / "show")
    package = app / "build" / "click-run" / "com.example.show_1.0_all.click"

    def listing() -> str:
        result = cb("run", app, "--print-env")
        assert result.returncode == 0, result.stderr
        return cb("contents", package).stdout

    for _ in range(2):  # the second build finds the first one's package and database
        packed = listing()
        assert "./show.sh" in packed and "./build" not in packed, packed
    (app / "pyproject.toml").write_text('[tool.click-build]\nkind = "qml"\n'
                                        'build-dir = "out/{arch}"\n')
    packed = listing()
    assert "./show.sh" in packed and "./build" not in packed and "./out" not in packed, packed
    (app / "build" / "notes.txt").write_text("mine\n")  # the user's own file stays in
    packed = listing()
    assert "./build/notes.txt" in packed and "./build/click-run" not in packed, packed


def test_a_package_file_runs_from_the_cache_root(public_tmp: Path) -> None:
    app = show_app(public_tmp / "show")
    built = cb("build", app, "-o", public_tmp, "--no-validate")
    assert built.returncode == 0, built.stderr
    cache = public_tmp / "cache"
    result = cb("run", public_tmp / "com.example.show_1.0_all.click", env={"XDG_CACHE_HOME":
                                                                           str(cache)})
    assert result.returncode == 7, result.stderr
    assert lines(result.stdout, "cwd=") == [
        str(cache / "click-build" / "run" / "db" / "com.example.show" / "1.0")]
    other = public_tmp / "elsewhere"
    again = cb("run", public_tmp / "com.example.show_1.0_all.click", "--root", other)
    assert lines(again.stdout, "cwd=") == [str(other / "db" / "com.example.show" / "1.0")]


def test_missing_runner_names_the_debian_package(public_tmp: Path) -> None:
    app = show_app(public_tmp / "qml", "qmlscene %U main.qml", **{"main.qml": "Item {}\n"})
    empty = public_tmp / "bin"
    empty.mkdir()
    result = cb("run", app, env={"PATH": str(empty)})
    assert_clean_error(result, "qmlscene is not installed, and com.example.show_show_1.0 needs "
                       "it: install the Debian package 'qmlscene' (sudo apt install qmlscene)")
    # Debian's /usr/bin links to qtchooser exist without the tool they start
    (empty / "no-such-qt-tool").symlink_to(need("qtchooser"))
    app2 = show_app(public_tmp / "qt", "no-such-qt-tool")
    assert_clean_error(cb("run", app2, env={"PATH": str(empty)}),
                       "Exec starts 'no-such-qt-tool', which is neither in the package nor on "
                       "PATH")


def test_qml_errors_and_status_pass_through(public_tmp: Path) -> None:
    need("qmlscene")
    broken = "import QtQuick 2.12\nimport No.Such.Module 1.0\nItem {}\n"
    app = show_app(public_tmp / "broken", "qmlscene %U main.qml", **{"main.qml": broken})
    result = cb("run", app, "--timeout", f"{seconds(60):g}",  # ends by itself long before
                env={"QT_QPA_PLATFORM": "offscreen"})
    assert result.returncode != 0
    assert 'module "No.Such.Module" is not installed' in result.stderr
    assert "stopped" not in result.stdout  # it ended on its own, before the timeout


def test_an_app_without_a_display_is_told_where_to_run(public_tmp: Path) -> None:
    """docs/run.md: qmlscene with no display aborts (Qt says so among its own lines);
    run passes its status on and says how to give it one. A failing app that had a
    display gets no such line."""
    need("qmlscene")
    qml = "import QtQuick 2.12\nRectangle { width: 10; height: 10 }\n"
    app = show_app(public_tmp / "headless", "qmlscene %U main.qml", **{"main.qml": qml})
    bare = {k: v for k, v in {**os.environ, **REPORT}.items()
            if k not in ("DISPLAY", "WAYLAND_DISPLAY", "QT_QPA_PLATFORM")}
    result = subprocess.run([*CLICK_BUILD, "run", str(app), "--timeout", f"{seconds(60):g}"],
                            env=bare, capture_output=True, text=True, timeout=seconds(120))
    assert result.returncode == 134  # SIGABRT, passed on as a shell shows it
    hint = ("click-build: warning: com.example.show_show_1.0 ended with status 134, and no "
            "display was set (DISPLAY, WAYLAND_DISPLAY): run it in a desktop session, or "
            "under a virtual X server: xvfb-run -a click-build run ...")
    assert result.stderr.splitlines()[-1] == hint
    assert "could not connect to display" in result.stderr
    virtual = subprocess.run([need("xvfb-run"), "-a", *CLICK_BUILD, "run", str(app), "--timeout",
                              "3"], env={**bare, "LIBGL_ALWAYS_SOFTWARE": "1"},
                             capture_output=True, text=True, timeout=seconds(120))
    assert virtual.returncode == 0, virtual.stderr
    assert "stopped com.example.show_show_1.0 after 3 s (--timeout)" in virtual.stdout
    shown = cb("run", show_app(public_tmp / "shown"), env={"DISPLAY": ":99"})
    assert shown.returncode == 7 and "no display was set" not in shown.stderr


@pytest.mark.parametrize(("args", "fragment"), [
    (["run", "{tmp}/nowhere"], "{tmp}/nowhere: no such project folder or package file"),
    (["run", "{tmp}"], "not an app project (no pyproject.toml or manifest.json)"),
    (["run", "{app}", "--env", "1X=2"], "--env '1X=2': expected NAME=VALUE"),
    (["run", "{app}", "--env", "NOVALUE"], "--env 'NOVALUE': expected NAME=VALUE"),
    (["run", "{app}", "--timeout", "0"], "'0': give a positive number of seconds"),
    (["run", "{app}", "--timeout", "soon"], "'soon' is not a number of seconds"),
])
def test_bad_arguments_are_one_line(public_tmp: Path, args: list[str], fragment: str) -> None:
    app = show_app(public_tmp / "show")
    fill = {"tmp": str(public_tmp), "app": str(app)}
    result = cb(*[a.format(**fill) for a in args])
    assert_clean_error(result, fragment.format(**fill))


def test_bad_desktop_files_are_one_line(public_tmp: Path) -> None:
    app = show_app(public_tmp / "show", 'show.sh "unterminated')
    assert_clean_error(cb("run", app), "com.example.show: show.desktop: has an unterminated "
                       "double quote")
    (app / "show.desktop").write_text("[Desktop Entry]\nName=Show\nType=Application\n")
    assert_clean_error(cb("run", app), "show.desktop: has no Exec line: nothing to start")
    (app / "manifest.json").write_text(json.dumps({**json.loads(manifest()), "hooks": {}}))
    assert_clean_error(cb("run", app), "com.example.show has no app with a desktop hook")


@pytest.mark.root
def test_as_root_the_private_root_must_let_clickpkg_in(tmp_path: Path) -> None:
    if os.geteuid() != 0:
        pytest.skip("only root unpacks as clickpkg")
    tmp_path.chmod(0o700)
    app = show_app(tmp_path / "show")
    assert_clean_error(cb("run", app), "the installer unpacks as the 'clickpkg' user, who "
                       f"cannot enter {tmp_path}")


# --- the template apps, on a real X server --------------------------------------------

#: What a Qt app needs to open a window on the private X server (software GL).
X_ENV = {"LIBGL_ALWAYS_SOFTWARE": "1", "QT_QPA_PLATFORM": "xcb"}
Windows = set[tuple[str, str]]


def run_until_shown(args: list[str], env: dict[str, str], display: str, tmp: Path,
                    shown: Callable[[Windows], bool]) -> tuple[int, str, str, Windows]:
    """``click-build run ARGS`` on ``display`` until the windows seen so far are ``shown``
    (or it ends by itself), then Ctrl-C: (exit status, stdout, stderr, windows seen)."""
    out, err = tmp / "stdout", tmp / "stderr"
    seen: Windows = set()

    def done() -> bool:
        seen.update(windows(display))
        return shown(seen) or proc.poll() is not None

    with out.open("w") as o, err.open("w") as e, subprocess.Popen(
            [*CLICK_BUILD, *args], env={**os.environ, **X_ENV, "DISPLAY": display, **env},
            stdout=o, stderr=e) as proc:
        try:
            wait_for(done, f"the window of {args}", within=120)
        finally:
            if proc.poll() is None:
                proc.send_signal(signal.SIGINT)
            ended(proc)
    # The X server drops the windows of a client that is gone a moment later: the next
    # run on this display must not see them.
    wait_for(lambda: not shown(windows(display)), f"the windows of {args} to close")
    return proc.returncode, out.read_text(), err.read_text(), seen


def app_problems(err: str, project: Path) -> list[str]:
    """Lines of stderr that say the app's QML (or Python) failed (``project``: its folder,
    or the private database it was installed into)."""
    installed = str(project if project.name == "db" else project / "build" / "click-run" / "db")
    return [line for line in err.splitlines()
            if APP_ERRORS.search(line) or (installed in line and ".qml:" in line)]


@pytest.mark.slow
@pytest.mark.parametrize("kind", [
    "qml",
    pytest.param("python", marks=pytest.mark.slow),
    pytest.param("cpp", marks=pytest.mark.slow),
])
def test_template_app_shows_its_window(public_tmp: Path, display: str, kind: str) -> None:
    new(public_tmp / "src", kind, {"title": "Tea Timer", "namespace": "jane"})
    project = project_of(public_tmp / "src")
    name = f"{project.name}.jane"
    title = WINDOW_TITLES[kind].format(name=name)

    def app_window(seen: Windows) -> bool:
        return any(t == title and f'"{name}"' in c for t, c in seen)

    code, _, err, seen = run_until_shown(["run", str(project)], {}, display, public_tmp,
                                         app_window)
    assert app_window(seen), f"no window {title!r} of {name}; saw {sorted(seen)}\n{err}"
    assert code == 130 and err.endswith("click-build: interrupted\n"), err  # Ctrl-C ends it
    assert not app_problems(err, project), err


@pytest.mark.slow
def test_translated_app_shows_its_german_title(public_tmp: Path, display: str) -> None:
    """LANGUAGE passes through, and the launcher's APP_DIR finds share/locale."""
    from i18n_support import translate

    new(public_tmp / "src", "qml", {"title": "Tea Timer", "namespace": "jane"})
    project = project_of(public_tmp / "src")
    run([*CLICK_BUILD, "i18n", "init", "de"], cwd=project)
    translate(project / "po" / "de.po", {"Tea Timer": "Teekocher"})
    for language, title in (("de", "Teekocher"), ("", "Tea Timer")):
        code, _, err, seen = run_until_shown(
            ["run", str(project)], {"LANGUAGE": language, "LANG": "C.UTF-8"}, display,
            public_tmp, lambda seen, title=title: title in {t for t, _ in seen})
        assert code == 130, err
        titles = {t for t, _ in seen}
        assert title in titles, (language, sorted(seen))
        assert ({"Teekocher", "Tea Timer"} - {title}).isdisjoint(titles), sorted(seen)


#: 2023-11-14 22:13:20 UTC. (With a time of 0, Qt 5.15 did not take its cached page even
#: without the fix, so the test would prove nothing.)
ONE_TIME = 1700000000


def packed_at_one_time(package: Path, out: Path) -> Path:
    """``package`` rewritten to ``out`` with every file of its data at one time
    (ONE_TIME), whatever time the builder gave it: the worst case for Qt's QML cache, which
    takes a compiled page while the file's path and time match."""
    with package.open("rb") as f:
        members = []
        for member in read_ar_members(f, package.stat().st_size):
            f.seek(member.offset)
            members.append((member.name, f.read(member.size)))
    with out.open("wb") as f:
        f.write(b"!<arch>\n")
        for name, data in members:
            if name == "data.tar.gz":
                retimed = io.BytesIO()
                with tarfile.open(fileobj=io.BytesIO(gzip.decompress(data))) as source, \
                        tarfile.open(fileobj=retimed, mode="w", format=tarfile.GNU_FORMAT) as tar:
                    for info in source:
                        info.mtime = ONE_TIME
                        tar.addfile(info, source.extractfile(info) if info.isfile() else None)
                data = gzip.compress(retimed.getvalue(), mtime=0)
            write_ar_member(f, name, data, 0)
    return out


@pytest.mark.slow
def test_an_edited_page_shows_at_the_next_run(public_tmp: Path, display: str) -> None:
    """Qt's QML disk cache takes a compiled page while the file's path and time match.
    Packed at one time, the edited Main.qml is installed at the path and with the time the
    first one had (the worst case for a cache); the window of the next run shows the edit."""
    new(public_tmp / "src", "qml", {"title": "Tea Timer", "namespace": "jane"})
    project = project_of(public_tmp / "src")
    name = f"{project.name}.jane"
    built = project / "build" / "click-run" / f"{name}_1.0.0_all.click"
    state = public_tmp / "state"

    def titles(seen: Windows) -> set[str]:
        return {t for t, c in seen if f'"{name}"' in c and t.endswith(" Timer")}

    main = project / "qml" / "Main.qml"
    for number, title in enumerate(("Tea Timer", "Coffee Timer")):
        main.write_text(re.sub(r'i18n\.tr\("\w+ Timer"\)', f'i18n.tr("{title}")',
                               main.read_text()))
        assert cb("run", "--print-env", project).returncode == 0  # builds it
        package = packed_at_one_time(built, public_tmp / f"{number}.click")
        code, _, err, seen = run_until_shown(["run", "--root", str(state), str(package)], {},
                                             display, public_tmp, titles)
        assert titles(seen) == {title}, (sorted(seen), err)
        assert code == 130 and not app_problems(err, state / "db"), err
    times = {" ".join(line.split()[3:5]) for n in (0, 1)
             for line in cb("contents", public_tmp / f"{n}.click").stdout.splitlines()}
    assert len(times) == 1, times  # both packages, every file: one time


@pytest.mark.slow
def test_html5_template_without_a_web_runner_serves_the_package(public_tmp: Path) -> None:
    """The whole installed package is served and the page opened inside it: its
    translations (share/locale) load as on the phone; nothing outside the package does."""
    from i18n_support import translate

    new(public_tmp / "src", "html5", {"title": "Tea Timer", "namespace": "jane"})
    project = project_of(public_tmp / "src")
    run([*CLICK_BUILD, "i18n", "init", "de"], cwd=project)
    translate(project / "po" / "de.po", {"Tea Timer": "Teekocher"})
    (project / "www" / "leak").symlink_to("../" * 12 + "etc/passwd")  # out of the package
    tools = public_tmp / "bin"
    tools.mkdir()  # no webapp-container on PATH, whatever this machine has; the build's msgfmt
    (tools / "msgfmt").symlink_to(need("msgfmt"))
    with subprocess.Popen([*CLICK_BUILD, "run", str(project)],  # until Ctrl-C
                          env={**os.environ, **REPORT, "PATH": str(tools)},
                          stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True) as proc:
        try:
            assert proc.stdout is not None
            line = LineReader(proc.stdout).until(lambda text: "serving" in text)
            assert line.startswith("click-build: webapp-container is not installed: serving "
                                   "tea-timer.jane_tea-timer_1.0.0 (its package root) at "
                                   "http://127.0.0.1:"), line
            assert line.endswith("/www/index.html -- open it in a web browser (Ctrl-C "
                                 "stops)\n"), line
            url = re.search(r"http://127\.0\.0\.1:\d+/www/index\.html", line)
            assert url is not None
            with urllib.request.urlopen(url.group(0), timeout=seconds(10)) as response:
                assert "<title>Tea Timer</title>" in response.read().decode()
            base = url.group(0).removesuffix("/www/index.html")
            # what the page's i18n.load(DOMAIN, "../share/locale") asks for
            mo = f"{base}/www/../share/locale/de/LC_MESSAGES/tea-timer.jane.mo"
            with urllib.request.urlopen(mo, timeout=seconds(10)) as response:
                catalog = response.read()
            assert catalog[:4] in (b"\xde\x12\x04\x95", b"\x95\x04\x12\xde")  # a .mo file
            assert "Teekocher".encode() in catalog
            with urllib.request.urlopen(base + "/www/js/app.js", timeout=seconds(10)) as response:
                assert response.status == 200
            for outside in ("/www/leak", "/../../../../etc/passwd", "/%2e%2e/%2e%2e/manifest"):
                with pytest.raises(urllib.error.HTTPError) as denied:
                    urllib.request.urlopen(base + outside, timeout=seconds(10))
                denied.value.close()
                assert denied.value.code == 404
            proc.send_signal(signal.SIGINT)  # Ctrl-C: the server stops, click-build says so
            _, err = proc.communicate(timeout=seconds(60))
        finally:
            if proc.poll() is None:
                proc.kill()
                proc.wait()
    assert proc.returncode == 130 and "click-build: interrupted" in err
    # run warns of nothing it decided itself (the review reports the planted link)
    assert not [line for line in err.splitlines()
                if "warning" in line and "review:" not in line], err
    with pytest.raises(urllib.error.URLError):  # nobody listens there any more
        urllib.request.urlopen(url.group(0), timeout=seconds(10))


def _user() -> str:
    import pwd

    return pwd.getpwuid(os.getuid()).pw_name


def test_run_is_registered_lazily() -> None:
    """`run` and `device` load their modules only when asked for."""
    code = ("import sys; from click_build.argparsing import build_parser; build_parser(['info']); "
            "print(sorted(m for m in sys.modules if m.startswith(('click_build.run', "
            "'click_build.device', 'click_build.commands.run', 'click_build.commands.device'))))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert out.stdout.strip() == "[]", out.stderr
