"""Root unpacks as ``clickpkg``, which may not be able to read this Python's library (a
Python under /root, as pyenv installs it): the unpacking child must find every module it
needs loaded before the privilege drop, whatever the package's compression."""

from __future__ import annotations

import bz2
import lzma
import os
import pwd
import select
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import process_ended
from crafting import MANIFEST, Crafted, Member, tar_bytes
from deadlines import seconds, wait_for
from install_support import check_invariants, flocks, make_env

#: ``python -m click_build``, in an interpreter whose library nobody but root can read:
#: once the process is no longer root, every import of a module not yet loaded fails.
UNREADABLE_LIBRARY = """
import os, runpy, sys

class Unreadable:
    def find_spec(self, name, path=None, target=None):
        if os.geteuid() != 0:
            raise ImportError(f"cannot import {name}: permission denied as uid {os.geteuid()}")
        return None

sys.meta_path.insert(0, Unreadable())
runpy.run_module("click_build", run_name="__main__", alter_sys=True)
"""

COMPRESS = {"gz": None, "xz": lzma.compress, "bz2": bz2.compress}


def _package(path: Path, compression: str) -> Path:
    data = [Member("./", kind="dir", mode=0o755), Member("./app.desktop", b"[Desktop Entry]\n"),
            Member("./qml/", kind="dir", mode=0o755), Member("./qml/Main.qml", b"Item {}\n")]
    crafted = Crafted(manifest=dict(MANIFEST, framework="fw-1"), data=data)
    parts = crafted.parts()
    compress = COMPRESS[compression]
    if compress is not None:
        parts[3] = (f"data.tar.{compression}", compress(tar_bytes(data, compress=False)))
    return Crafted(members=parts).write(path)


@pytest.mark.root
@pytest.mark.parametrize("compression", sorted(COMPRESS))
def test_root_installs_as_clickpkg_what_every_compression_needs_loaded(
        tmp_path: Path, compression: str) -> None:
    if os.geteuid() != 0:
        pytest.skip("only root drops to clickpkg")
    try:
        clickpkg = pwd.getpwnam("clickpkg").pw_uid
    except KeyError:
        pytest.skip("no clickpkg user")
    env = make_env(tmp_path)
    pkg = _package(tmp_path / f"app.{compression}.click", compression)
    root = tmp_path / "root"
    result = subprocess.run(
        [sys.executable, "-c", UNREADABLE_LIBRARY, "install", f"--root={root}",
         "--allow-unauthenticated", str(pkg)],
        capture_output=True, text=True, timeout=seconds(120), env={**os.environ, **env.vars()})
    assert result.returncode == 0, result.stderr
    assert "Traceback" not in result.stderr
    version = root / "com.example.crafted" / "1.0"
    assert (version / "qml" / "Main.qml").read_bytes() == b"Item {}\n"
    assert (version / "qml" / "Main.qml").stat().st_uid == clickpkg  # unpacked after the drop
    assert (version / ".click/info/com.example.crafted.list").read_text() == \
        "/.\n/app.desktop\n/qml\n/qml/Main.qml\n"


#: ``click-build ARGS`` in this interpreter with the unpacking child made to misbehave
#: (argv[1]: how); prints how many child processes, zombies included, are left.
MISBEHAVING_CHILD = """
import os, signal, sys
import click_build.install.unpack_child as unpack_child
from click_build.errors import InstallError

how, real = sys.argv[1], unpack_child.unpack_into
def unpack(*args, **kwargs):  # runs in the child, after the drop
    if how == "killed":
        os.kill(os.getpid(), signal.SIGKILL)
    if how == "ends-early":
        os._exit(0)  # status 0, but it never said the tree was complete
    if how == "refuses":
        raise InstallError("qml/Main.qml: refused by the unpacker")
    real(*args, **kwargs)
unpack_child.unpack_into = unpack
real_waitpid = os.waitpid
def waitpid(pid, options):  # in the parent: was the tree in place before the child was reaped?
    current = os.path.join(sys.argv[3].removeprefix("--root="), "com.example.crafted", "current")
    print("in place when reaped:", os.path.lexists(current))
    return real_waitpid(pid, options)
os.waitpid = waitpid
from click_build.cli import main
code = main(sys.argv[2:])
left = 0
for pid in filter(str.isdigit, os.listdir("/proc")):
    try:
        with open(f"/proc/{pid}/stat") as f:
            left += f.read().rsplit(")", 1)[1].split()[1] == str(os.getpid())
    except OSError:
        pass
print("children left:", left)
sys.exit(code)
"""


@pytest.mark.root
@pytest.mark.parametrize(("how", "error"), [
    ("works", None),
    ("killed", "click-build: error: the unpacking process was killed by signal 9"),
    ("ends-early", "click-build: error: unpacking failed"),
    ("refuses", "click-build: error: qml/Main.qml: refused by the unpacker"),
])
def test_the_parent_trusts_only_the_childs_word_and_reaps_it(
        tmp_path: Path, how: str, error: str | None) -> None:
    """The parent goes on when the child says the tree is complete, without waiting for
    its teardown (it reaps the child once the tree is in place); anything else (a signal, an exit without that word, an error) fails
    the install with one line, leaves nothing installed and no zombie behind."""
    if os.geteuid() != 0:
        pytest.skip("only root drops to clickpkg")
    env = make_env(tmp_path)
    pkg = _package(tmp_path / "app.click", "gz")
    root = tmp_path / "root"
    result = subprocess.run(
        [sys.executable, "-c", MISBEHAVING_CHILD, how, "install", f"--root={root}",
         "--allow-unauthenticated", str(pkg)],
        capture_output=True, text=True, timeout=seconds(120), env={**os.environ, **env.vars()})
    assert "children left: 0" in result.stdout
    assert "Traceback" not in result.stderr
    installed = root / "com.example.crafted" / "current"
    if error is None:
        assert result.returncode == 0, result.stderr
        assert (installed / "qml" / "Main.qml").read_bytes() == b"Item {}\n"
        # its teardown overlapped the parent's work: it was reaped once the tree was in place
        assert "in place when reaped: True" in result.stdout
    else:
        assert result.returncode == 1
        assert result.stderr.splitlines()[-1] == error
        assert not installed.exists()
        assert os.listdir(root / ".click" / "tmp") == []


#: ``click-build ARGS`` whose unpacking child waits for the file argv[1] before it unpacks.
HELD_CHILD = """
import os, sys, time
import click_build.install.unpack_child as unpack_child

gate, real = sys.argv[1], unpack_child.unpack_into
def unpack(*args, **kwargs):  # runs in the child, after the drop
    while not os.path.exists(gate):
        time.sleep(0.02)
    real(*args, **kwargs)
unpack_child.unpack_into = unpack
from click_build.cli import main
sys.exit(main(sys.argv[2:]))
"""


def _children(pid: int) -> list[int]:
    found = []
    for entry in filter(str.isdigit, os.listdir("/proc")):
        try:
            with open(f"/proc/{entry}/stat") as f:
                fields = f.read().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if fields[1] == str(pid) and fields[0] != "Z":
            found.append(int(entry))
    return found


@pytest.mark.root
def test_a_killed_install_keeps_the_database_locked_until_its_unpacker_ends(
        tmp_path: Path, public_tmp: Path) -> None:
    """kill -9 of a root install leaves its clickpkg child unpacking into the scratch
    area; the next writer must wait for it, not clear the scratch area under it."""
    if os.geteuid() != 0:
        pytest.skip("only root drops to clickpkg")
    env = {**os.environ, **make_env(tmp_path).vars()}
    first, second = _package(tmp_path / "a.click", "gz"), tmp_path / "b.click"
    Crafted(manifest=dict(MANIFEST, framework="fw-1", version="2.0"),
            data=[Member("./", kind="dir", mode=0o755), Member("./app.desktop", b"[D]\n")]
            ).write(second)
    gate = public_tmp / "open"  # where clickpkg can look for it
    root = tmp_path / "root"
    args = [f"--root={root}", "--allow-unauthenticated"]
    try:
        with subprocess.Popen([sys.executable, "-c", HELD_CHILD, str(gate), "install", *args,
                               str(first)], env=env, stderr=subprocess.DEVNULL) as killed:
            try:
                (orphan,) = wait_for(lambda: _children(killed.pid), "the unpacking child")
                # it locks the scratch folder it unpacks into, then waits at the gate
                wait_for(lambda: any(state == "holds" for state, _ in flocks(orphan)),
                         "the unpacking child to lock its scratch folder")
            finally:
                killed.kill()
        assert not process_ended(orphan)  # not killed with its parent: it holds the lock now
        with subprocess.Popen([sys.executable, "-m", "click_build", "install", *args,
                               str(second)], env=env, stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE, text=True) as nxt:
            try:
                wait_for(lambda: any(state == "waits" for state, _ in flocks(nxt.pid))
                         or nxt.poll() is not None, "the next writer to wait for the orphan")
                assert nxt.poll() is None  # waits for the lock, which the orphan still holds
                gate.touch()
                _out, err = nxt.communicate(timeout=seconds(60))
            finally:
                nxt.kill()
    finally:
        gate.touch()  # the orphan goes on (and ends) whatever happened
    assert nxt.returncode == 0, err
    assert process_ended(orphan)  # it ended before the next writer went on
    assert "Traceback" not in err
    assert os.readlink(root / "com.example.crafted" / "current") == "2.0"
    assert os.listdir(root / ".click" / "tmp") == []  # the orphan's work cleared after it ended
    assert check_invariants(root) == []


def test_a_held_scratch_folder_is_waited_for_out_loud(tmp_path: Path) -> None:
    """Whoever owns the database can hold a flock on a folder of its scratch area: the
    next writer waits for it (it may be a killed install's unpacker), and says so."""
    import fcntl

    env = {**os.environ, **make_env(tmp_path).vars()}
    pkg = _package(tmp_path / "a.click", "gz")
    root = tmp_path / "root"
    args = [f"--root={root}", "--allow-unauthenticated"]
    subprocess.run([sys.executable, "-m", "click_build", "install", *args, str(pkg)],
                   env=env, check=True, capture_output=True)
    held = root / ".click" / "tmp" / "held"
    held.mkdir()
    fd = os.open(held, os.O_RDONLY | os.O_DIRECTORY)
    fcntl.flock(fd, fcntl.LOCK_EX)
    with subprocess.Popen([sys.executable, "-m", "click_build", "install", *args, str(pkg)],
                          env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                          text=True) as nxt:
        try:
            assert nxt.stderr is not None
            ready, _, _ = select.select([nxt.stderr], [], [], seconds(30))
            line = nxt.stderr.readline() if ready else "(nothing said)"
            assert line.startswith("click-build: warning: waiting for the process that "
                                   "holds "), line
            assert str(held) in line
            waits = ("waits", os.fstat(fd).st_ino)
            wait_for(lambda: waits in flocks(nxt.pid) or nxt.poll() is not None,
                     f"the writer to wait for {held}")
            assert nxt.poll() is None
        finally:
            os.close(fd)  # releases the flock (and lets a silent writer finish)
        _out, err = nxt.communicate(timeout=seconds(60))
    assert nxt.returncode == 0, err
    assert not held.exists()
