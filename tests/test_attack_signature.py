"""Attacks on the package file while click-build reads it: the bytes whose signature is
checked must be the bytes audited and unpacked.

The package sits in a folder the attacker can write.  A driver runs the real CLI in a
process whose file-system changes are counted (as in test_install_crash.py); at step N,
instead of dying, it lets the attacker rewrite the package in place, truncate it, or
rename another file over it -- in the installer, or in the child that unpacks as
clickpkg.  Every step is tried, so the race is deterministic.  Whatever the step, the
install either puts exactly the signed content in place or is refused as unsigned with
one error line and nothing written; never the attacker's content.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest
from attack_support import World, assert_ok, assert_refused
from install_support import check_invariants, make_click
from signing import Keys, sign

NAME = "com.example.app"
GOOD = "the signed content\n"
EVIL = "the attacker's content, never signed\n"

DRIVER = r"""
import os, sys
limit, mode, how, victim, evil = int(sys.argv[1]), sys.argv[2], sys.argv[3], sys.argv[4], sys.argv[5]
real = {n: getattr(os, n) for n in ("open", "write", "rename", "ftruncate", "close")}
main_pid = os.getpid()
count = [0]

def attack():
    with open(evil, "rb") as f:
        data = f.read()
    if how == "replace":  # another file renamed over it
        tmp = victim + ".swap"
        fd = real["open"](tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o666)
        real["write"](fd, data)
        real["close"](fd)
        real["rename"](tmp, victim)
    else:  # rewritten in place, or cut short
        fd = real["open"](victim, os.O_WRONLY)
        if how == "rewrite":
            real["write"](fd, data)
            real["ftruncate"](fd, len(data))
        else:
            real["ftruncate"](fd, 100)
        real["close"](fd)
    real["close"](real["open"](victim + ".attacked", os.O_WRONLY | os.O_CREAT, 0o666))

def record():  # what this process has open: where the snapshot lives, what a child keeps
    lines = []
    for fd in sorted(os.listdir("/proc/self/fd"), key=int):
        try:
            lines.append(os.readlink(f"/proc/self/fd/{fd}"))
        except OSError:
            pass
    fd = real["open"](victim + ".fds." + mode, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o666)
    real["write"](fd, "\n".join(lines).encode())
    real["close"](fd)

def step():
    if (os.getpid() == main_pid) != (mode in ("parent", "parent-fds")):
        return
    count[0] += 1
    if count[0] == limit:
        if mode.endswith("-fds"):
            record()
        else:
            attack()

def wrap(module, name, creates=None):
    inner = getattr(module, name)
    def wrapper(*args, **kwargs):
        if creates is None or creates(*args, **kwargs):
            step()
        return inner(*args, **kwargs)
    setattr(module, name, wrapper)

writes = os.O_WRONLY | os.O_RDWR | os.O_CREAT
for name in ("write", "mkdir", "symlink", "link", "rename", "replace", "unlink", "rmdir",
             "chown", "fchown", "utime", "copy_file_range", "fork"):
    wrap(os, name)
wrap(os, "open", lambda path, flags, *a, **k: bool(flags & writes))
import click_build.sign as sign
if mode == "after-signature":  # the pause point: between the check and the unpack
    inner = sign.check_file_signature
    def checked(*args, **kwargs):
        verdict = inner(*args, **kwargs)
        record()
        attack()
        return verdict
    sign.check_file_signature = checked
    count[0] = -10**9
from click_build.cli import main
sys.exit(main(sys.argv[6:]))
"""


class Bench:
    """A signed package in an attacker-writable folder, and what the attacker has."""

    def __init__(self, world: World, keys: Keys, cli: object) -> None:
        self.world = world
        shared = world.base / "downloads"
        shared.mkdir()
        shared.chmod(0o777)  # "a shared or world-writable download folder"
        src = world.base / "build"
        good = make_click(src, files={"a.txt": GOOD, "sub/b.txt": GOOD})
        evil = make_click(src / "evil", files={"a.txt": EVIL, "sub/b.txt": EVIL})
        sign(cli, good, keys.store)  # type: ignore[arg-type]
        self.signed = good.read_bytes()
        self.victim = shared / good.name
        self.evil = world.base / "evil.click"
        shutil.copy(evil, self.evil)
        self.keyring = world.base / "store.gpg"
        shutil.copy(keys.store.keyring, self.keyring)
        world.give_away(world.base)
        for path in (self.evil, self.keyring):
            path.chmod(0o644)
        self.reset()

    def reset(self) -> None:
        if self.world.root.exists():
            shutil.rmtree(self.world.root)
        for stale in self.victim.parent.glob("*.fds.*"):
            stale.unlink()
        self.victim.write_bytes(self.signed)
        self.victim.chmod(0o666)
        self.world.give_away(self.victim)
        Path(f"{self.victim}.attacked").unlink(missing_ok=True)

    @property
    def attacked(self) -> bool:
        return Path(f"{self.victim}.attacked").exists()

    def args(self) -> list[str]:
        return ["install", f"--root={self.world.root}", f"--keyring={self.keyring}",
                f"--user={self.world.user}", str(self.victim)]

    def run(self, limit: int, mode: str, how: str,
            args: list[str] | None = None) -> subprocess.CompletedProcess[str]:
        return self.world.python(DRIVER, str(limit), mode, how, str(self.victim),
                                 str(self.evil), *(args or self.args()),
                                 env={"CLICK_KEYRINGS": ""})

    def check(self, result: subprocess.CompletedProcess[str]) -> None:
        """The signed content, or a clean refusal with nothing written; never EVIL."""
        root = self.world.root
        assert "Traceback" not in result.stderr, result.stderr
        if result.returncode == 0:
            assert_ok(result)
            version = root / NAME / "1.0"
            assert (version / "a.txt").read_text() == GOOD
            assert (version / "sub/b.txt").read_text() == GOOD
            assert check_invariants(root) == []
        else:
            assert_refused(result)
            assert "Signature verification error" in result.stderr or \
                "Origin Signature check failed" in result.stderr or \
                "truncated" in result.stderr or "ar archive" in result.stderr, result.stderr
            assert not (root / NAME).exists()
        for dirpath, _, filenames in os.walk(root):
            for name in filenames:
                path = os.path.join(dirpath, name)
                if not os.path.islink(path):
                    with open(path, "rb") as f:
                        assert EVIL.encode() not in f.read(), path


@pytest.fixture
def bench(world: World, keys: Keys, cli: object) -> Bench:
    return Bench(world, keys, cli)


def test_rewritten_between_signature_check_and_unpack(bench: Bench) -> None:
    """The pause point: right after the signature check passes, the file becomes another
    package. The install goes on with the bytes that were checked."""
    for how in ("rewrite", "replace", "truncate"):
        bench.reset()
        result = bench.run(0, "after-signature", how)
        assert bench.attacked
        assert result.returncode == 0, result.stderr
        bench.check(result)
        # the snapshot: a file without a name in the database's scratch area
        held = Path(f"{bench.victim}.fds.after-signature").read_text().splitlines()
        tmp = bench.world.root / ".click" / "tmp"
        assert [h for h in held if h.startswith(f"{tmp}/#") and h.endswith(" (deleted)")], held
    # and the attacker's package on its own is refused: the test above could tell
    bench.reset()
    shutil.copy(bench.evil, bench.victim)
    result = bench.world.run(*bench.args(), env={"CLICK_KEYRINGS": ""})
    assert_refused(result, "Origin Signature check failed")


@pytest.mark.slow
@pytest.mark.parametrize("how", ["rewrite", "replace"])
def test_rewritten_at_every_step_of_the_install(bench: Bench, how: str) -> None:
    """Every counted step of the installer, then of the unpacking child (root only)."""
    modes = ["parent", "child"] if os.geteuid() == 0 and bench.world.mode == "root" else [
        "parent"]
    for mode in modes:
        step, outcomes = 1, set()
        while True:
            bench.reset()
            result = bench.run(step, mode, how)
            bench.check(result)
            if not bench.attacked:
                break
            outcomes.add(result.returncode == 0)
            step += 1 if how == "rewrite" else 3
        assert step > 10, (mode, step)
        # early steps (before the snapshot) are refused, later ones install the signed bytes
        assert True in outcomes, mode
        if mode == "parent":
            assert False in outcomes


def test_verify_judges_the_bytes_it_checked(bench: Bench, tmp_path: Path) -> None:
    """verify: rewritten after the signature check with a corrupt copy of itself, the
    verdict is still the one on the signed bytes (before, the audit read the new ones)."""
    corrupt = bytearray(bench.signed)
    data_at = corrupt.find(b"data.tar.gz")
    corrupt[data_at + 200] ^= 0xFF  # inside the data member: fails md5 / gzip / signature
    bench.evil.write_bytes(bytes(corrupt))
    verify = ["verify", "--force-missing-framework", f"--keyring={bench.keyring}",
              str(bench.victim)]
    bench.reset()
    scratch = bench.world.base / "scratch"
    scratch.mkdir()
    bench.world.give_away(scratch)
    result = bench.world.python(DRIVER, "0", "after-signature", "rewrite", str(bench.victim),
                                str(bench.evil), *verify,
                                env={"CLICK_KEYRINGS": "", "TMPDIR": str(scratch)})
    assert bench.attacked
    assert_ok(result)
    held = Path(f"{bench.victim}.fds.after-signature").read_text().splitlines()
    assert [h for h in held if h.startswith(f"{scratch}/#") and h.endswith(" (deleted)")], held
    assert bench.victim.read_bytes() == bytes(corrupt)
    result = bench.world.run(*verify, env={"CLICK_KEYRINGS": ""})  # the corrupt file itself
    assert_refused(result, "Signature verification error")


def test_unpacking_child_keeps_no_other_file_of_the_installer(bench: Bench) -> None:
    """Root unpacks as clickpkg in a child that holds only what it needs: not the lock
    (it could release it), not the database's directories."""
    if bench.world.mode != "root" or os.geteuid() != 0:
        pytest.skip("only root forks an unpacking child")
    bench.reset()
    result = bench.run(2, "child-fds", "rewrite")  # step 1 opens /dev/null, then it closes
    assert_ok(result)
    held = Path(f"{bench.victim}.fds.child-fds").read_text().splitlines()
    root = str(bench.world.root)
    inside = [h for h in held if h.startswith(root)]
    assert all(h.startswith(f"{root}/.click/tmp/") for h in inside), held  # scratch, snapshot
    assert not any(h.endswith("/.click/lock") or h in (root, f"{root}/.click") for h in held)
    assert len(held) <= 8, held  # stdio, snapshot, scratch, pipe, terminal, /proc listing


@pytest.mark.parametrize("command", ["install", "verify"])
def test_a_path_that_is_not_a_file_is_refused_at_once(world: World, command: str) -> None:
    fifo = world.base / "pkg.click"
    os.mkfifo(fifo)
    world.give_away(fifo)
    args = ["--allow-unauthenticated", fifo]
    result = (world.install(fifo) if command == "install" else world.run("verify", *args))
    assert_refused(result, f"{fifo}: is a FIFO; a package must be a regular file")
    assert not (world.root / NAME).exists()
