"""`click-build run --arch arm64`: the phone's processor on this computer, under qemu.

The `qml` and `cpp` templates, built for arm64 (the C++ one against the Debian 12
stand-in root, through its toolchain file; and for armhf), run under qemu with the
root's Qt and Lomiri, on a private Xvfb; their windows are read back with xwininfo,
and the process that shows them is the emulator running an arm64 program.  The
roots are the suite's (tests/sysroot_support.py: made once per machine, kept); the
QML app needs one with qmlscene, which the suite makes with ``--package qmlscene``
as the error line tells a user to.  What is refused is refused in one line before
anything starts: a package of another architecture, an Exec that names an option,
a missing emulator or root.
"""

from __future__ import annotations

import json
import os
import shlex
import shutil
import signal
import subprocess
from pathlib import Path

import pytest
from conftest import CLICK_BUILD, assert_clean_error, need, write_tree
from crafting import MANIFEST, Crafted, Member
from deadlines import seconds, wait_for
from install_support import run as run_as
from run_support import LineReader, ended
from sysroot_support import made, test_cache
from templates_support import new, project_of
from xdisplay import private_display, showing, window_tree

from click_build.elf import parse_elf_header
from click_build.sysroot.store import Stored

ARM64 = 183  # EM_AARCH64
#: Per architecture: the emulator, the ELF machine and the multiarch triplet.
ARCHES = {"arm64": ("qemu-aarch64-static", ARM64, "aarch64-linux-gnu"),
          "armhf": ("qemu-arm-static", 40, "arm-linux-gnueabihf")}
TITLE = "Tea Timer"


def cache_env(**extra: str) -> dict[str, str]:
    return {"CLICK_BUILD_SYSROOT_CACHE": str(test_cache()), "CLICK_BUILD_REVIEW": "report",
            **extra}


def cb(*args: str | Path, env: dict[str, str] | None = None, within: float = 300,
       ) -> subprocess.CompletedProcess[str]:
    return subprocess.run([*CLICK_BUILD, *map(str, args)],
                          env={**os.environ, **cache_env(), **(env or {})},
                          capture_output=True, text=True, timeout=seconds(within))


def run_arm64(tmp: Path, package: Path, *options: str, cache: Path | None = None,
              ) -> subprocess.CompletedProcess[str]:
    """``run --arch arm64 PACKAGE`` with its private root in ``tmp`` (``cache``: the
    sysroots' cache instead of the suite's)."""
    env = {"CLICK_BUILD_SYSROOT_CACHE": str(cache)} if cache else None
    return cb("run", "--root", tmp / "r", "--arch", "arm64", *options, package, env=env)


@pytest.fixture(scope="module")
def plain_root() -> Stored:
    need("qemu-aarch64-static")
    return made("arm64")


@pytest.fixture(scope="module")
def qml_root() -> Stored:
    """The root with the phone's qmlscene, which a QML app's Exec starts."""
    need("qemu-aarch64-static")
    return made("arm64", packages=("qmlscene",))


def emulated(ancestor: int, qemu: str = "qemu-aarch64-static") -> list[list[str]]:
    """The command lines of the ``qemu`` processes below process ``ancestor``."""
    parents, argvs = {}, {}
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            argv = (entry / "cmdline").read_bytes().split(b"\0")[:-1]
            stat = (entry / "stat").read_text()
        except OSError:
            continue
        pid = int(entry.name)
        parents[pid] = int(stat.rsplit(")", 1)[1].split()[1])
        argvs[pid] = [a.decode(errors="replace") for a in argv]

    def below(pid: int) -> bool:
        while pid > 1:
            pid = parents.get(pid, 0)
            if pid == ancestor:
                return True
        return False

    return [argv for pid, argv in argvs.items()
            if argv and argv[0].endswith(qemu) and below(pid)]


def elf_machine(path: str) -> int:
    with open(path, "rb") as f:
        info = parse_elf_header(f.read(64))
    assert info is not None, path
    return info.machine


def shows_under_qemu(argv: list[str], root: Path, log: Path, env: dict[str, str],
                     cwd: Path | None = None, qemu: str = "qemu-aarch64-static") -> list[str]:
    """Run ``argv`` (a ``run --arch arm64``) until its window titled TITLE shows; the
    command line of the emulator that shows it."""
    with showing(argv, TITLE, env, log, cwd=cwd, within=240) as (app, _display):
        qemus = emulated(app.pid, qemu)
        assert app.poll() is None
    assert qemus, f"no {qemu} below click-build:\n{log.read_text()}"
    (qemu,) = [q for q in qemus if str(root) in q]
    return qemu


@pytest.mark.slow
@pytest.mark.xdist_group("sysroot")
def test_the_qml_template_runs_under_qemu_with_the_roots_qmlscene(
        qml_root: Stored, public_tmp: Path) -> None:
    new(public_tmp / "src", "qml", {"title": TITLE, "namespace": "jane"})
    project = project_of(public_tmp / "src")
    qemu = shows_under_qemu([*CLICK_BUILD, "run", "--arch", "arm64", str(project)],
                            qml_root.root, public_tmp / "log", cache_env())
    assert qemu[1:3] == ["-L", str(qml_root.root)]
    assert qemu[3] == str(qml_root.root / "usr/lib/qt5/bin/qmlscene")
    assert elf_machine(qemu[3]) == ARM64
    assert qemu[4:] == ["qml/Main.qml"]


@pytest.mark.slow
@pytest.mark.xdist_group("sysroot")
@pytest.mark.parametrize("arch", ["arm64", "armhf"])
def test_the_cpp_template_is_built_for_the_arch_and_runs_under_qemu(
        arch: str, public_tmp: Path) -> None:
    """The project is cross-built against the root (the backend's sysroot toolchain),
    installed as a phone of that architecture installs it, and its own program runs
    under qemu."""
    qemu_name, machine, triplet = ARCHES[arch]
    need(qemu_name)
    root = made(arch)
    new(public_tmp / "src", "cpp", {"title": TITLE, "namespace": "jane"})
    project = project_of(public_tmp / "src")
    qemu = shows_under_qemu([*CLICK_BUILD, "run", "--arch", arch, str(project)],
                            root.root, public_tmp / "log", cache_env(), qemu=qemu_name)
    assert qemu[1:3] == ["-L", str(root.root)]
    program = qemu[3]
    assert program.endswith(f"/lib/{triplet}/bin/tea-timer")
    assert program.startswith(str(project / "build" / "click-run" / "db"))
    assert elf_machine(program) == machine
    (built,) = (project / "build" / "click-run").glob(f"*_{arch}.click")
    assert built.name == f"tea-timer.jane_1.0.0_{arch}.click"


@pytest.mark.slow
@pytest.mark.root
@pytest.mark.xdist_group("sysroot")
def test_an_unprivileged_user_runs_the_qml_template_under_qemu(
        qml_root: Stored, real_user: str, user_cli: list[str]) -> None:
    """As an ordinary account, in its own home: the machine's roots are read, shared (a
    lock held read-only), never written."""
    if os.geteuid() != 0:
        pytest.skip("needs root to become another user")
    import pwd
    import tempfile

    pw = pwd.getpwnam(real_user)
    work = Path(tempfile.mkdtemp(prefix="click-build-arch."))
    try:
        work.chmod(0o755)
        new(work / "src", "qml", {"title": TITLE, "namespace": "jane"})
        project = project_of(work / "src")
        subprocess.run(["chown", "-R", f"{real_user}:", str(work)], check=True)
        before = {p: p.stat().st_mtime_ns for p in qml_root.folder.iterdir()}
        env = {"HOME": pw.pw_dir, "PATH": "/usr/bin:/bin", **cache_env()}
        # setpriv --reset-env drops DISPLAY: the shell puts back the one showing() gives
        as_user = shlex.join(["setpriv", f"--reuid={pw.pw_uid}", f"--regid={pw.pw_gid}",
                              "--clear-groups", "--reset-env", "--", "/usr/bin/env",
                              *[f"{k}={v}" for k, v in env.items()]])
        command = shlex.join([*user_cli, "run", "--arch", "arm64", str(project)])
        qemu = shows_under_qemu(["sh", "-c", f'exec {as_user} DISPLAY="$DISPLAY" {command}'],
                                qml_root.root, work / "log", {})
        assert qemu[3] == str(qml_root.root / "usr/lib/qt5/bin/qmlscene")
        assert os.stat(project / "build" / "click-run").st_uid == pw.pw_uid
        assert {p: p.stat().st_mtime_ns for p in qml_root.folder.iterdir()} == before
    finally:
        shutil.rmtree(work, ignore_errors=True)


# --- what is refused, in one line, before anything starts --------------------------------

def app_package(tmp: Path, arch: str = "all", exec_line: str = "qmlscene %U main.qml",
                files: dict[str, str] | None = None, copies: dict[str, str] | None = None,
                ) -> Path:
    """A package built from a plain app folder (its manifest's architecture: ``arch``;
    ``files`` executable text files, ``copies`` executables copied from this computer)."""
    folder = write_tree(tmp / "app", {
        "manifest.json": json.dumps({
            "name": "com.example.arch", "version": "1.0", "framework": "ubuntu-touch-24.04-1.x",
            "architecture": arch, "maintainer": "Jane Doe <jane@example.com>",
            "title": "Arch", "hooks": {"arch": {"desktop": "arch.desktop"}}}),
        "arch.desktop": f"[Desktop Entry]\nName=Arch\nExec={exec_line}\nIcon=icon.svg\n"
                        "Type=Application\nX-Lomiri-Touch=true\n",
        "main.qml": "import QtQuick 2.7\nItem {}\n",
        "icon.svg": "<svg xmlns='http://www.w3.org/2000/svg'/>\n", **(files or {})})
    for name, source in (copies or {}).items():
        shutil.copy(source, folder / name)
    for name in [*(files or {}), *(copies or {})]:
        (folder / name).chmod(0o755)
    done = cb("build", folder, "-o", tmp, "--no-validate")
    assert done.returncode == 0, done.stderr
    (package,) = tmp.glob("com.example.arch_1.0_*.click")
    return package


@pytest.mark.parametrize("value", ["amd64", "x86_64", "../arm64", "-L", ""])
def test_an_architecture_the_phone_has_not_is_one_line(public_tmp: Path, value: str) -> None:
    package = app_package(public_tmp)
    assert_clean_error(cb("run", "--root", public_tmp / "r", f"--arch={value}", package),
                       f"--arch {value!r}: give the phone's architecture, arm64 or armhf")
    assert not (public_tmp / "r").exists()  # refused before anything was made


def test_no_emulator_says_which_package(public_tmp: Path) -> None:
    package = app_package(public_tmp)
    bare = public_tmp / "bin"
    bare.mkdir()
    assert_clean_error(cb("run", "--root", public_tmp / "r", "--arch", "armhf", package,
                          env={"PATH": str(bare)}),
                       "qemu-arm-static is not installed, and running armhf apps on this "
                       "computer needs it: install the Debian package 'qemu-user-static'")


def test_no_root_for_the_framework_says_how_to_make_one(public_tmp: Path) -> None:
    need("qemu-aarch64-static")
    package = app_package(public_tmp)
    empty = public_tmp / "no-roots"
    result = run_arm64(public_tmp, package, cache=empty)
    assert_clean_error(result, "no sysroot of ubuntu-touch-24.04-1.x for arm64, which "
                       "com.example.arch_arch_1.0 needs to run under qemu: make one with: "
                       "click-build sysroot create --framework ubuntu-touch-24.04-1.x "
                       "--arch arm64 --package qmlscene")
    assert not empty.exists()  # nothing was made in the way of a root


@pytest.mark.slow
@pytest.mark.xdist_group("sysroot")
def test_a_root_without_the_runner_says_which_package_adds_it(
        plain_root: Stored, public_tmp: Path) -> None:
    """Roots are looked up, not made: in a cache with only the plain root, a QML app is
    told to make one with qmlscene."""
    cache = public_tmp / "cache"
    cache.mkdir()
    os.symlink(plain_root.folder, cache / plain_root.ident)
    (cache / f"{plain_root.ident}.lock").touch()
    package = app_package(public_tmp)
    result = run_arm64(public_tmp, package, cache=cache)
    # a root behind a link is not taken either (stored_roots): the same line as none
    assert "click-build sysroot create --framework ubuntu-touch-24.04-1.x --arch arm64" \
        in result.stderr
    os.unlink(cache / plain_root.ident)
    shutil.copytree(plain_root.folder, cache / plain_root.ident, symlinks=True,
                    ignore=lambda d, names: ["root"] if d == str(plain_root.folder) else [])
    (cache / plain_root.ident / "root").symlink_to(plain_root.root)
    result = run_arm64(public_tmp, package, cache=cache)
    assert_clean_error(result, "the debian-12 arm64 (approximate) sysroot has no qmlscene, "
                       "which com.example.arch_arch_1.0 starts: make one that has it: "
                       "click-build sysroot create --framework ubuntu-touch-24.04-1.x "
                       "--arch arm64 --profile debian-12 --package qmlscene")


@pytest.mark.slow
@pytest.mark.xdist_group("sysroot")
@pytest.mark.parametrize(("exec_line", "files", "fragment"), [
    # qemu reads words before the program as its own options: Exec's program is a path
    ("-L /etc main.qml", {}, "Exec starts '-L', which is neither in the package nor the "
                             "sysroot"),
    ("-strace qmlscene", {}, "Exec starts '-strace'"),
    ("tool", {"tool": "#!/nonexistent/interp -x\n"}, "is a script for '/nonexistent/interp "
                                                     "-x', which the sysroot"),
    ("tool", {"tool": "plain text\n"}, "is neither a program nor a script (#!)"),
    ("./missing", {}, "Exec starts './missing', which is neither in the package:"),
])
def test_hostile_exec_lines_are_refused_before_anything_runs(
        qml_root: Stored, public_tmp: Path, exec_line: str, files: dict[str, str],
        fragment: str, real_user: str, user_cli: list[str]) -> None:
    """As root and as an unprivileged user (its own private root, the machine's roots
    read only): one error line, no script printed, nothing started."""
    package = app_package(public_tmp, exec_line=exec_line, files=files)
    result = run_arm64(public_tmp, package, "--print-env")
    assert_clean_error(result, fragment)
    assert result.stdout == ""
    if os.geteuid() == 0:
        mine = public_tmp / "user-root"
        mine.mkdir()
        shutil.chown(mine, real_user)
        as_user = run_as([*user_cli, "run", "--root", str(mine / "r"), "--arch", "arm64",
                          "--print-env", str(package)],
                         env=cache_env(HOME=str(mine)), user=real_user)
        assert_clean_error(as_user, fragment)
        assert as_user.stdout == ""


@pytest.mark.slow
@pytest.mark.xdist_group("sysroot")
def test_this_computers_program_in_an_all_package_is_refused(
        qml_root: Stored, public_tmp: Path) -> None:
    """The builder refuses to pack it; a package made by hand carries it (an ``all``
    package holding an x86 program)."""
    host = subprocess.run(["dpkg", "--print-architecture"], capture_output=True, text=True,
                          check=True).stdout.strip()
    manifest = dict(MANIFEST, framework="ubuntu-touch-24.04-1.x")
    package = Crafted(manifest=manifest, data=[
        Member("./", kind="dir", mode=0o755),
        Member("./app.desktop", b"[Desktop Entry]\nName=X\nExec=tool\nType=Application\n"),
        Member("./tool", Path("/bin/true").read_bytes(), mode=0o755)]).write(
            public_tmp / "crafted.click")
    result = run_arm64(public_tmp, package)
    assert_clean_error(result, f"com.example.crafted_app_1.0: tool is a program for {host}, "
                       "not arm64: build the app for arm64")


def test_a_package_for_this_computer_is_refused_under_arm64(public_tmp: Path) -> None:
    need("qemu-aarch64-static")
    package = app_package(public_tmp, arch="amd64")
    assert_clean_error(run_arm64(public_tmp, package),
                       "com.example.arch 1.0 is built for amd64, not arm64: build it "
                       "for arm64 (click-build run --arch arm64 PROJECT does)")


@pytest.mark.slow
@pytest.mark.xdist_group("sysroot")
def test_watch_under_qemu_restarts_the_emulated_app_with_the_edit(
        qml_root: Stored, public_tmp: Path) -> None:
    """--watch keeps --arch: a saved QML edit is built, installed and shown by the
    app restarted under qemu."""
    new(public_tmp / "src", "qml", {"title": TITLE, "namespace": "jane"})
    project = project_of(public_tmp / "src")
    main = project / "qml" / "Main.qml"
    err = public_tmp / "watch.stderr"
    with private_display() as display, err.open("wb") as e, subprocess.Popen(
            [*CLICK_BUILD, "run", "--watch", "--arch", "arm64", str(project)],
            env={**os.environ, **cache_env(), "DISPLAY": display}, stdout=subprocess.PIPE,
            stderr=e) as proc:
        try:
            assert proc.stdout is not None
            out = LineReader(proc.stdout)

            def window(title: str) -> None:
                wait_for(lambda: proc.poll() is None and f'"{title}": (' in window_tree(display)
                         or proc.poll() is not None, f"a window titled {title!r}", 240)
                assert proc.poll() is None, err.read_text(errors="replace")

            assert out.until(lambda t: t.startswith("click-build: watching "), 300)
            window(TITLE)
            scratch = main.with_name(".Main.qml.swp")  # saved as an editor saves
            scratch.write_text(main.read_text().replace(f'i18n.tr("{TITLE}")',
                                                        'i18n.tr("Coffee Timer")'))
            scratch.rename(main)
            said = out.until(lambda t: "changed" in t, 300)
            assert said.startswith("click-build: qml/Main.qml changed: restarted "
                                   "tea-timer.jane_tea-timer_1.0.0"), said
            window("Coffee Timer")
            assert emulated(proc.pid), "the restarted app is not under qemu"
        finally:
            proc.send_signal(signal.SIGINT)
            ended(proc, 120)


@pytest.mark.slow
@pytest.mark.xdist_group("sysroot")
def test_print_env_shows_the_launch_under_qemu(qml_root: Stored, public_tmp: Path,
                                               monkeypatch: pytest.MonkeyPatch) -> None:
    """The launcher's variables with the root's folders after the app's, none of this
    computer's (an x86 library or plugin is no use to the ARM program); software GL on
    X11; the caller's --env has the last word."""
    package = app_package(public_tmp)
    for name in ("LD_LIBRARY_PATH", "QML2_IMPORT_PATH", "QT_PLUGIN_PATH"):
        monkeypatch.setenv(name, "/this-computers")
    result = run_arm64(public_tmp, package, "--print-env", "--env", "QT_QPA_PLATFORM=wayland")
    assert result.returncode == 0, result.stderr
    lines = result.stdout.splitlines()
    exports = dict(line.removeprefix("export ").split("=", 1) for line in lines
                   if line.startswith("export "))
    root, lib = qml_root.root, qml_root.root / "usr/lib/aarch64-linux-gnu"
    app_dir = exports["APP_DIR"]
    assert exports["APP_ID"] == "com.example.arch_arch_1.0"
    assert exports["UBUNTU_APP_LAUNCH_ARCH"] == "aarch64-linux-gnu"
    assert exports["QT_PLUGIN_PATH"] == str(lib / "qt5/plugins")
    assert exports["QML2_IMPORT_PATH"] == str(lib / "qt5/qml")  # the package has no qml/
    assert exports["LD_LIBRARY_PATH"] == f"{root / 'lib/aarch64-linux-gnu'}:{lib}"
    assert exports["XDG_DATA_DIRS"] == \
        f"{app_dir}:{root / 'usr/local/share'}:{root / 'usr/share'}"
    assert exports["LIBGL_ALWAYS_SOFTWARE"] == "1"
    assert exports["QT_QPA_PLATFORM"] == "wayland"  # --env, over run's xcb
    assert lines[-1] == (f"exec {shutil.which('qemu-aarch64-static')} -L {root} "
                         f"{root / 'usr/lib/qt5/bin/qmlscene'} main.qml")


@pytest.mark.slow
@pytest.mark.xdist_group("sysroot")
def test_without_a_display_the_emulated_app_is_told_where_to_run(
        qml_root: Stored, public_tmp: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Qt under qemu aborts without an X display (run chose xcb for it): the status is
    passed on and run says how to give it one, as it does for a native app."""
    package = app_package(public_tmp)
    for name in ("DISPLAY", "WAYLAND_DISPLAY", "QT_QPA_PLATFORM"):
        monkeypatch.delenv(name, raising=False)
    result = run_arm64(public_tmp, package)
    assert result.returncode == 134, result.stderr
    assert result.stderr.splitlines()[-1] == (
        "click-build: warning: com.example.arch_arch_1.0 ended with status 134, and no "
        "display was set (DISPLAY, WAYLAND_DISPLAY): run it in a desktop session, or under "
        "a virtual X server: xvfb-run -a click-build run ...")


@pytest.mark.slow
@pytest.mark.xdist_group("sysroot")
def test_clickables_arch_variable_does_not_stop_the_cross_build(public_tmp: Path) -> None:
    """A Clickable user's shell has ARCH=arm64: the build it declares is planned against
    the root, as run --arch builds it, not refused for want of a toolchain."""
    need("qemu-aarch64-static")
    root = made("arm64")
    new(public_tmp / "src", "cpp", {"title": TITLE, "namespace": "jane"})
    project = project_of(public_tmp / "src")
    result = cb("run", "--arch", "arm64", "--print-env", project, env={"ARCH": "arm64"})
    assert result.returncode == 0, result.stderr
    assert result.stdout.splitlines()[-1].startswith(
        f"exec {shutil.which('qemu-aarch64-static')} -L {root.root} ")
