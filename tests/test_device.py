"""`click-build device` against a real sshd and the real adb.

The "phone" is an unprivileged account on this machine reached through an
sshd the test starts on 127.0.0.1 (its own host key, config and port), with a
key made for the test; its side has Debian's `click`, as a phone does, but no
pkcon click plugin and no launcher. adb is Debian's: with no phone attached it
shows the errors a developer meets first.
"""

from __future__ import annotations

import json
import os
import secrets
import shutil
import signal
import socket
import subprocess
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
from conftest import CLICK_BUILD, assert_clean_error, need, write_tree
from deadlines import seconds, wait_for
from run_support import LineReader, ended

CHATTER = "welcome to the test phone"
ARCH = subprocess.run(["dpkg", "--print-architecture"], capture_output=True, text=True,
                      check=True).stdout.strip()


def cb(*args: str | Path, env: dict[str, str] | None = None, input: str | None = None,
       within: float = 60) -> subprocess.CompletedProcess[str]:
    full = {**os.environ, **(env or {})}  # no CLICK_BUILD_DEVICE: conftest.STEERING
    return subprocess.run([*CLICK_BUILD, *map(str, args)], env=full, capture_output=True,
                          text=True, input=input, timeout=seconds(within))


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def app_tree(root: Path, framework: str) -> Path:
    return write_tree(root, {
        "manifest.json": json.dumps({
            "name": "com.example.phone", "version": "1.0", "framework": framework,
            "maintainer": "Jane Doe <jane@example.com>", "title": "Phone",
            "description": "A small app that the device tests install on a phone",
            "hooks": {"phone": {"desktop": "phone.desktop", "apparmor": "phone.apparmor"}}}),
        "phone.apparmor": json.dumps({"policy_groups": [], "policy_version": 20.04}),
        "phone.desktop": "[Desktop Entry]\nName=Phone\nExec=qmlscene %U main.qml\n"
                         "Icon=icon.svg\nType=Application\nX-Lomiri-Touch=true\n",
        "main.qml": "import QtQuick 2.7\nItem {}\n",
        "icon.svg": "<svg xmlns='http://www.w3.org/2000/svg'/>\n",
    })


@dataclass
class Phone:
    user: str
    home: Path
    port: int
    config: Path  # an ssh config with the test's key and known_hosts
    base: Path
    framework: str

    @property
    def target(self) -> str:
        return f"{self.user}@127.0.0.1:{self.port}"

    def args(self, config: Path | None = None) -> list[str]:
        return ["--ssh", self.target, "--ssh-config", str(config or self.config)]

    def processes(self) -> list[str]:
        return _processes_of(self.user)


def _processes_of(user: str) -> list[str]:
    out = subprocess.run(["ps", "-u", user, "-o", "pid=,args="], capture_output=True,
                         text=True, timeout=seconds(10)).stdout
    return [line for line in out.splitlines() if line.strip()]


def _ssh_config(path: Path, key: Path, known_hosts: Path) -> Path:
    path.write_text(f"Host *\n  IdentityFile {key}\n  IdentitiesOnly yes\n"
                    f"  UserKnownHostsFile {known_hosts}\n  StrictHostKeyChecking yes\n")
    return path


@pytest.fixture
def phone() -> Iterator[Phone]:
    if os.geteuid() != 0:
        pytest.skip("the test phone is an account of its own and an sshd: needs root")
    sshd, keygen = need("sshd"), need("ssh-keygen")
    need("click")
    base = Path(tempfile.mkdtemp(prefix="click-build-phone."))
    base.chmod(0o755)
    user = "cbphone" + secrets.token_hex(3)
    home = base / "home"
    subprocess.run(["useradd", "--home-dir", str(home), "--create-home", "--shell", "/bin/bash",
                    "--user-group", user], check=True, capture_output=True, timeout=seconds(30))
    # no password, not locked
    subprocess.run(["usermod", "-p", "*", user], check=True, timeout=seconds(30))
    framework = f"{user}-framework-1.0"  # what this phone provides, as a phone does
    framework_file = Path("/usr/share/click/frameworks") / f"{framework}.framework"
    try:
        with (base / "sshd.log").open("w") as log:
            for key in ("host", "user", "wrong"):
                subprocess.run([keygen, "-q", "-t", "ed25519", "-N", "", "-f", str(base / key)],
                               check=True, timeout=seconds(30))
            (base / "authorized_keys").write_text((base / "user.pub").read_text())
            port = free_port()
            (base / "sshd_config").write_text(
                f"Port {port}\nListenAddress 127.0.0.1\nHostKey {base / 'host'}\nPidFile none\n"
                f"UsePAM no\nStrictModes no\nAuthorizedKeysFile {base / 'authorized_keys'}\n"
                "PasswordAuthentication no\nKbdInteractiveAuthentication no\n"
                f"AllowUsers {user}\n")
            Path("/run/sshd").mkdir(mode=0o755, exist_ok=True)  # sshd's privilege separation
            with subprocess.Popen([sshd, "-D", "-e", "-f", str(base / "sshd_config")],
                                  stdout=subprocess.DEVNULL, stderr=log) as proc:
                try:
                    wait_for(lambda: _listening(port) or proc.poll() is not None,
                             f"sshd on port {port}")
                    assert proc.poll() is None, (base / "sshd.log").read_text()
                    # a chatty login script, as phones have: bash reads it for every command
                    (home / ".bashrc").write_text(f"echo '{CHATTER}'\n")
                    known = base / "known_hosts"
                    known.write_text(f"[127.0.0.1]:{port} {(base / 'host.pub').read_text()}")
                    framework_file.parent.mkdir(parents=True, exist_ok=True)
                    framework_file.write_text(f"Base-Name: {user}-framework\nBase-Version: 1.0\n")
                    yield Phone(user, home, port,
                                _ssh_config(base / "ssh_config", base / "user", known),
                                base, framework)
                finally:
                    proc.terminate()
                    ended(proc)
    finally:
        framework_file.unlink(missing_ok=True)
        # nothing we started may outlive the test: the account's last processes (the session
        # half of sshd) end once their connection has, which a busy machine takes a while to
        # get to; wait for that fact, and fail if it never comes (userdel would fail too)
        try:
            wait_for(lambda: not _processes_of(user), f"the processes of {user} to end",
                     within=30)
        finally:
            gone = subprocess.run(["userdel", "--remove", user], capture_output=True,
                                  text=True, timeout=seconds(30))
            shutil.rmtree(base, ignore_errors=True)
        assert gone.returncode in (0, 12), gone.stderr  # 12: no mail spool to remove


def _listening(port: int) -> bool:
    try:
        socket.create_connection(("127.0.0.1", port), timeout=seconds(5)).close()
    except OSError:
        return False
    return True


def _built(phone: Phone, tmp_path: Path) -> Path:
    app = app_tree(tmp_path / "app", phone.framework)
    done = cb("build", app, "-o", tmp_path, "--no-validate")
    assert done.returncode == 0, done.stderr
    return tmp_path / "com.example.phone_1.0_all.click"


@pytest.mark.slow  # stands up an ssh server and an account for the phone
@pytest.mark.root
@pytest.mark.oracle
@pytest.mark.xdist_group("system")
def test_install_list_launch_and_logs_over_ssh(phone: Phone, tmp_path: Path) -> None:
    package = _built(phone, tmp_path)
    route = f"click install --user={phone.user}"
    # the configured database (/var/lib/clickpkg) is not the account's to write
    refused = cb("device", "install", *phone.args(), package)
    assert_clean_error(refused, f"{phone.target} could not install {package.name} ({route}): ")
    # ... a database of its own is (click install --root)
    db = phone.home / "clicks"
    done = cb("device", "install", *phone.args(), "--root", db, package)
    assert done.returncode == 0, done.stderr
    assert done.stdout == f"Installed com.example.phone 1.0 on {phone.target} ({route})\n"
    installed = db / "com.example.phone" / "1.0"
    assert (installed / "phone.desktop").is_file()
    assert installed.stat().st_uid == pwd_uid(phone.user)
    assert (db / ".click" / "users" / phone.user / "com.example.phone").is_symlink()
    leftovers = [p for p in Path(tempfile.gettempdir()).glob("click-build.*")
                 if p.stat().st_uid == pwd_uid(phone.user)]
    assert leftovers == []  # the copied package is removed from the phone again

    listed = cb("device", "list", *phone.args(), "--root", db)
    assert listed.returncode == 0, listed.stderr
    assert listed.stdout.endswith("com.example.phone\t1.0\n")

    if not any(shutil.which(t) for t in ("lomiri-app-launch", "ubuntu-app-launch")):
        assert_clean_error(cb("device", "launch", *phone.args(), "--root", db,
                              "com.example.phone"),
                           f"no launcher on {phone.target}: neither lomiri-app-launch nor "
                           "ubuntu-app-launch is installed, so com.example.phone_phone_1.0 "
                           "cannot be started there")
    assert_clean_error(cb("device", "launch", *phone.args(), "com.example.nothere"),
                       f"com.example.nothere is not installed on {phone.target}")

    app_id = "com.example.phone_phone_1.0"
    journal = cb("device", "logs", *phone.args(), "--no-follow", app_id)
    if shutil.which("journalctl"):  # no launcher log file: the user journal is asked
        assert journal.returncode == 0, journal.stderr
        assert "No journal files were found" in journal.stderr or "No entries" in journal.stdout
    else:
        assert_clean_error(journal, f"no log of {app_id} on {phone.target}: no "
                           f"~/.cache/upstart/application-click-{app_id}.log and no journalctl")
    log = phone.home / ".cache" / "upstart" / f"application-click-{app_id}.log"
    log.parent.mkdir(parents=True)
    log.write_text("first line\nsecond line\n")
    shutil.chown(log.parent.parent, phone.user)
    shutil.chown(log.parent, phone.user)
    shutil.chown(log, phone.user)
    printed = cb("device", "logs", *phone.args(), "--root", db, "--no-follow",
                 "com.example.phone_phone")
    assert printed.returncode == 0, printed.stderr
    assert printed.stdout in ("first line\nsecond line\n",
                              f"{CHATTER}\nfirst line\nsecond line\n")
    _follow_then_stop(phone, app_id, log)


def pwd_uid(user: str) -> int:
    import pwd

    return pwd.getpwnam(user).pw_uid


def _follow_then_stop(phone: Phone, app_id: str, log: Path) -> None:
    """`device logs` follows until Ctrl-C; nothing keeps running on the phone after."""
    with subprocess.Popen([*CLICK_BUILD, "device", "logs", *phone.args(), app_id],
                          stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True) as proc:
        try:
            assert proc.stdout is not None
            lines = LineReader(proc.stdout)
            first = lines.line()
            if first == f"{CHATTER}\n":
                first = lines.line()
            assert first == "first line\n"
            assert lines.line() == "second line\n"
            with log.open("a") as f:
                f.write("written while following\n")
            assert lines.line() == "written while following\n"
            assert any("tail" in p for p in phone.processes())
            proc.send_signal(signal.SIGINT)
            _, err = proc.communicate(timeout=seconds(30))
        finally:
            if proc.poll() is None:
                proc.kill()
                proc.wait()
    assert proc.returncode == 130 and err.endswith("click-build: interrupted\n"), err
    wait_for(lambda: not [p for p in phone.processes() if "sshd" not in p],
             f"the processes of {phone.user} to end")


@pytest.mark.slow  # stands up an ssh server and an account for the phone
@pytest.mark.root
@pytest.mark.oracle
@pytest.mark.xdist_group("system")
def test_device_run_asks_the_architecture_builds_and_installs(phone: Phone,
                                                              tmp_path: Path) -> None:
    project = app_tree(tmp_path / "project", phone.framework)
    db = phone.home / "clicks"
    result = cb("device", "run", *phone.args(), "--root", db, project)
    assert f"* {phone.target} is {ARCH} with " in result.stdout
    asked = next(line for line in result.stdout.splitlines() if line.startswith("* "))
    assert phone.framework in asked.split(" with ", 1)[1].split(", ")
    assert "* Built com.example.phone_1.0_all.click" in result.stdout
    assert f"* Installed com.example.phone 1.0 on {phone.target}" in result.stdout
    assert (db / "com.example.phone" / "1.0" / "main.qml").is_file()
    if not any(shutil.which(t) for t in ("lomiri-app-launch", "ubuntu-app-launch")):
        assert_clean_error(result, f"no launcher on {phone.target}")


@pytest.mark.slow  # stands up an ssh server and an account for the phone
@pytest.mark.root
@pytest.mark.xdist_group("system")
def test_device_run_refuses_a_framework_the_phone_lacks_before_building(
        phone: Phone, tmp_path: Path) -> None:
    """The phone lists its frameworks (click framework list): a project for another is
    refused with the setting that fixes it, before a build folder exists."""
    project = app_tree(tmp_path / "project", "ubuntu-touch-24.04-1.x")
    result = cb("device", "run", *phone.args(), "--root", phone.home / "clicks", project)
    assert_clean_error(result, "not ubuntu-touch-24.04-1.x, which the project is built for: "
                       f'set framework = "{phone.framework}" under [tool.click-build] in '
                       "pyproject.toml (or in manifest.json)")
    assert os.listdir(project / "build" / "click-device") == []  # nothing was built
    assert not (phone.home / "clicks").exists()  # nor installed


@pytest.mark.slow  # stands up an ssh server and an account for the phone
@pytest.mark.root
@pytest.mark.xdist_group("system")
def test_device_run_builds_for_the_phones_framework_when_the_project_leaves_it_open(
        phone: Phone, tmp_path: Path) -> None:
    """A manifest that leaves the framework to the build (@CLICK_FRAMEWORK@) gets the
    phone's, not click-build's default, and installs there."""
    project = app_tree(tmp_path / "project", "@CLICK_FRAMEWORK@")
    db = phone.home / "clicks"
    result = cb("device", "run", *phone.args(), "--root", db, project, "--no-follow")
    assert f"* Installed com.example.phone 1.0 on {phone.target}" in result.stdout, \
        result.stderr
    installed = json.loads((db / "com.example.phone" / "1.0" / ".click" / "info" /
                            "com.example.phone.manifest").read_text())
    assert installed["framework"] == phone.framework


@pytest.mark.slow  # stands up an ssh server and an account for the phone
@pytest.mark.root
@pytest.mark.xdist_group("system")
def test_device_run_stops_before_compiling_without_a_root_for_the_phone(
        phone: Phone, tmp_path: Path) -> None:
    """An arm64 phone (its dpkg's answer: this machine is not one) with a framework no
    sysroot profile makes: a C++ app is refused before CMake runs."""
    if ARCH == "arm64":
        pytest.skip("this machine is arm64: the phone's architecture would be its own")
    bin_dir = phone.home / "bin"
    bin_dir.mkdir()
    (bin_dir / "dpkg").write_text('#!/bin/sh\n[ "$1" = --print-architecture ] && '
                                  '{ echo arm64; exit 0; }\nexec /usr/bin/dpkg "$@"\n')
    (bin_dir / "dpkg").chmod(0o755)
    with (phone.home / ".bashrc").open("a") as rc:
        rc.write('PATH="$HOME/bin:$PATH"\n')
    project = write_tree(tmp_path / "cpp", {
        "pyproject.toml": '[tool.click-build]\nkind = "cmake"\n',
        "CMakeLists.txt": "cmake_minimum_required(VERSION 3.16)\nproject(x CXX)\n"
                          'message(FATAL_ERROR "CMake ran")\n',
        "manifest.json": json.dumps({"name": "com.example.cpp", "version": "1.0",
                                     "framework": phone.framework})})
    result = cb("device", "run", *phone.args(), project)
    assert_clean_error(result, f"cannot build for {phone.target}: no sysroot profile for "
                       f"framework {phone.framework!r}")
    assert "CMake ran" not in result.stderr + result.stdout
    assert os.listdir(project / "build" / "click-device") == []
    assert f"* {phone.target} is arm64 with " in result.stdout


@pytest.mark.slow  # stands up an ssh server and an account for the phone
@pytest.mark.root
@pytest.mark.xdist_group("system")
def test_shell_runs_on_the_phone(phone: Phone) -> None:
    result = cb("device", "shell", *phone.args(), input="id -un; exit 3\n")
    assert result.returncode == 3, result.stderr
    assert result.stdout.endswith(f"{phone.user}\n")


@pytest.mark.slow  # stands up an ssh server and an account for the phone
@pytest.mark.root
@pytest.mark.xdist_group("system")
def test_click_build_device_sets_the_default(phone: Phone, tmp_path: Path) -> None:
    listed = cb("device", "list", "--ssh-config", phone.config,
                env={"CLICK_BUILD_DEVICE": f"ssh:{phone.target}"})
    assert listed.returncode == 0 and listed.stdout in ("", f"{CHATTER}\n"), listed.stderr


@pytest.mark.slow  # stands up an ssh server and an account for the phone
@pytest.mark.root
@pytest.mark.xdist_group("system")
def test_ssh_failures_are_one_line_and_never_hang(phone: Phone) -> None:
    closed = free_port()
    assert_clean_error(cb("device", "list", "--ssh", f"{phone.user}@127.0.0.1:{closed}",
                          "--ssh-config", phone.config),
                       f"cannot reach 127.0.0.1 port {closed}: connection refused")
    wrong = _ssh_config(phone.base / "wrong_config", phone.base / "wrong",
                        phone.base / "known_hosts")
    assert_clean_error(cb("device", "list", *phone.args(wrong)),
                       f"{phone.user}@127.0.0.1 refused the key: add your public key to "
                       "~/.ssh/authorized_keys on the device")
    (phone.base / "no_known_hosts").write_text("")
    unknown = _ssh_config(phone.base / "unknown_config", phone.base / "user",
                          phone.base / "no_known_hosts")
    assert_clean_error(cb("device", "list", *phone.args(unknown)),
                       f"the host key of 127.0.0.1 port {phone.port} is unknown or has changed")
    # a server that accepts the connection and never speaks: the connect timeout ends it
    with socket.socket() as silent:
        silent.bind(("127.0.0.1", 0))
        silent.listen()
        port = silent.getsockname()[1]
        # (were the timeout not applied, ssh would wait until cb's deadline fails the test)
        result = cb("device", "list", "--ssh", f"{phone.user}@127.0.0.1:{port}",
                    "--ssh-config", phone.config, "--connect-timeout", "2")
    assert_clean_error(result, f"no answer from 127.0.0.1 port {port} within 2 s")


@pytest.mark.parametrize(("target", "fragment"), [
    ("-oProxyCommand=touch /tmp/pwned", "not a host name or address"),
    ("phablet@-oProxyCommand=x", "not a host name or address"),
    ("-l root@host", "not a user name"),
    ("phablet@host:99999", "'99999' is not a port number"),
    ("phablet@host:22x", "'22x' is not a port number"),
    ("phablet@[::1", "not a host"),
])
def test_hostile_ssh_targets_are_refused(target: str, fragment: str) -> None:
    assert_clean_error(cb("device", "list", f"--ssh={target}"), fragment)
    assert not Path("/tmp/pwned").exists()


# --- adb ---------------------------------------------------------------------------------

@pytest.fixture
def adb_server() -> Iterator[dict[str, str]]:
    """The environment for a private adb server (its own port); stopped afterwards."""
    adb = need("adb")
    env = {"ANDROID_ADB_SERVER_PORT": str(free_port())}
    yield env
    subprocess.run([adb, "kill-server"], env={**os.environ, **env}, capture_output=True,
                   timeout=seconds(30))
    port = int(env["ANDROID_ADB_SERVER_PORT"])
    wait_for(lambda: not _listening(port), f"the adb server on port {port} to end")


def test_no_adb_says_which_package(tmp_path: Path) -> None:
    empty = tmp_path / "bin"
    empty.mkdir()
    assert_clean_error(cb("device", "list", "--adb", env={"PATH": str(empty)}),
                       "adb is not installed: install the Debian package 'adb' "
                       "(sudo apt install adb), or reach the phone with --ssh USER@HOST")
    assert_clean_error(cb("device", "install", "x.click", env={"PATH": str(empty)}),
                       "no device given: use --ssh USER@HOST, --adb or CLICK_BUILD_DEVICE="
                       "ssh:USER@HOST[:PORT] (adb, which finds a phone on USB, is not "
                       "installed: sudo apt install adb)")


def test_no_device_attached(adb_server: dict[str, str]) -> None:
    nothing = "no device attached over adb: connect the phone with USB and turn on Developer mode"
    assert_clean_error(cb("device", "list", "--adb", env=adb_server), nothing)
    assert_clean_error(cb("device", "logs", "--adb", "com.example.app", env=adb_server), nothing)
    assert_clean_error(cb("device", "list", env=adb_server), nothing, "or set CLICK_BUILD_DEVICE")
    assert_clean_error(cb("device", "list", "--adb", "R58M123", env=adb_server),
                       "no device R58M123 attached over adb")
    assert_clean_error(cb("device", "list", env={**adb_server, "CLICK_BUILD_DEVICE": "adb:R58M1"}),
                       "no device R58M1 attached over adb")


@pytest.mark.parametrize(("args", "env", "fragment"), [
    (["device"], {}, "device: need a subcommand (install, list, launch, logs, shell, run)"),
    (["device", "install", "--ssh", "a@b"], {}, "device install: need PACKAGE.click"),
    (["device", "list", "--ssh", "a@b", "--adb"], {}, "give either --ssh or --adb, not both"),
    (["device", "list"], {"CLICK_BUILD_DEVICE": "phone"},
     "CLICK_BUILD_DEVICE='phone': expected ssh:USER@HOST[:PORT], adb or adb:SERIAL"),
    (["device", "list", "--adb", "-x"], {}, "unrecognized arguments: -x"),
    (["device", "list", "--adb=bad serial"], {}, "--adb 'bad serial': not a device serial"),
    (["device", "logs", "--ssh", "a@b", "x/../y"], {}, "'x/../y' is not an app id"),
])
def test_bad_device_arguments(args: list[str], env: dict[str, str], fragment: str) -> None:
    assert_clean_error(cb(*args, env=env), fragment)


@pytest.mark.parametrize(("script", "status", "output"), [
    ("echo out; exit 3", 3, "out\n"),
    ("printf 'no newline'", 0, "no newline"),
    ("true", 0, ""),
])
def test_adb_status_line_round_trip(script: str, status: int, output: str) -> None:
    """What `adb shell` runs on the phone, run by this machine's sh: the status comes back."""
    from click_build.device import remote_command
    from click_build.device.adb import read_status, with_status

    ran = subprocess.run(["sh", "-c", with_status(remote_command(script, []))],
                         capture_output=True, text=True, check=False, timeout=seconds(10))
    assert read_status(ran.stdout) == (status, output)
    assert read_status("error: closed\n") == (None, "error: closed\n")
