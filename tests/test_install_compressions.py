"""Every compression dpkg-deb takes, at any size, signed and unsigned (issue 27, class 8).

A signed package whose control and data members were uncompressed (``dpkg-deb
-Znone``) stopped with ``click-build: error: Invalid argument``: run as root, the
install forks an unpacker that shares the package snapshot's file offset, and the
parent's buffered reader then rewound that offset relative to where it had left it.
Here the packages are built by the real ``dpkg-deb -b -Z...`` (gzip, xz, zstd,
none; bzip2 and lzma, which dpkg-deb reads but no longer writes, by recompressing its
data member with the real tools and checking that dpkg-deb reads the result), each
with a 64 MiB file, signed with ``click-build sign``, and installed as root (the
forked unpacker) and as an unprivileged user: every file must be in the database
with its bytes, and Debian's ``click verify`` and ``dpkg-deb -x`` are the oracles
that each package is one they take.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import subprocess
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest
from attack_support import World, assert_ok
from conftest import CLICK_BUILD, need, run
from crafting import MANIFEST, Crafted, Member, tar_bytes
from deadlines import seconds
from signing import Keys, sign

from click_build.spec import STATIC_PREINST

pytestmark = pytest.mark.xdist_group("squeezed")  # one worker builds the packages once

NAME = "com.example.squeezed"
BIG = 64 << 20
#: dpkg-deb's -Z types here, then what it reads but no longer writes, made from -Znone
BUILT = ("gzip", "xz", "zstd", "none")
RECOMPRESSED = {"bzip2": ("bz2", ["bzip2", "-9", "-c"]), "lzma": ("lzma", ["lzma", "-6", "-c"])}
COMPRESSIONS = BUILT + tuple(RECOMPRESSED)


def _big_file(path: Path) -> None:
    """64 MiB that every compressor packs quickly (mostly zeros) yet no two MiB alike."""
    with open(path, "wb") as f:
        for _ in range(BIG >> 20):
            f.write(os.urandom(4096) + bytes((1 << 20) - 4096))


def _tree(base: Path) -> Path:
    tree = base / "tree"
    (tree / "DEBIAN").mkdir(parents=True)
    (tree / "qml" / "pages").mkdir(parents=True)
    (tree / "qml" / "pages" / "Main.qml").write_text("import QtQuick 2.7\nItem {}\n")
    (tree / "app.desktop").write_text("[Desktop Entry]\nName=Squeezed\nExec=qmlscene\n")
    (tree / "bin").mkdir()
    (tree / "bin" / "run.sh").write_text("#!/bin/sh\nexit 0\n")
    (tree / "bin" / "run.sh").chmod(0o755)
    os.symlink("pages/Main.qml", tree / "qml" / "Main.qml")
    _big_file(tree / "big.bin")
    files = sorted(p for p in tree.rglob("*") if p.is_file() and not p.is_symlink()
                   and "DEBIAN" not in p.parts)
    sums = "".join(f"{hashlib.md5(p.read_bytes()).hexdigest()}  {p.relative_to(tree)}\n"
                   for p in files)
    debian = tree / "DEBIAN"
    (debian / "md5sums").write_text(sums)
    manifest = {"name": NAME, "version": "1.0", "framework": "ubuntu-sdk-20.04",
                "maintainer": "Jane Doe <jane@example.com>", "title": "Squeezed",
                "hooks": {"app": {"desktop": "app.desktop"}}}
    (debian / "manifest").write_text(json.dumps(manifest))
    (debian / "control").write_text(
        f"Package: {NAME}\nVersion: 1.0\nClick-Version: 0.4\nArchitecture: all\n"
        f"Maintainer: Jane Doe <jane@example.com>\nInstalled-Size: {BIG // 1024 + 64}\n"
        "Description: Squeezed\n")
    (debian / "preinst").write_bytes(STATIC_PREINST)
    (debian / "preinst").chmod(0o755)
    return tree


def _click_binary(deb: Path, work: Path) -> None:
    """dpkg-deb makes a .deb; a .click is that with ``_click-binary`` second."""
    (work / "_click-binary").write_text("0.4\n")
    control = next(m for m in run(["ar", "t", str(deb)]).stdout.split()
                   if m.startswith("control.tar"))
    run(["ar", "rb", control, str(deb), "_click-binary"], cwd=work)


def _build(tree: Path, out: Path, compression: str) -> Path:
    pkg = out / f"{NAME}_1.0_all.{compression}.click"
    if compression in BUILT:
        run([need("dpkg-deb"), f"-Z{compression}", "--root-owner-group", "-b", str(tree),
             str(pkg)])
    else:
        suffix, command = RECOMPRESSED[compression]
        run([need("dpkg-deb"), "-Znone", "--root-owner-group", "-b", str(tree), str(pkg)])
        work = out / f"work-{compression}"
        work.mkdir()
        run(["ar", "x", str(pkg), "data.tar"], cwd=work)
        with open(work / f"data.tar.{suffix}", "wb") as f:
            subprocess.run([need(command[0]), *command[1:], str(work / "data.tar")], stdout=f,
                           check=True, timeout=seconds(120))
        run(["ar", "d", str(pkg), "data.tar"])
        run(["ar", "q", str(pkg), f"data.tar.{suffix}"], cwd=work)
        shutil.rmtree(work)
    work = out / f"binary-{compression}"
    work.mkdir()
    _click_binary(pkg, work)
    shutil.rmtree(work)
    return pkg


def _digest(path: Path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as f:
        while chunk := f.read(1 << 20):
            h.update(chunk)
    return h.hexdigest()


def _files(top: Path) -> dict[str, object]:
    """Every entry under ``top`` but ``.click`` and ``DEBIAN``: its kind and content."""
    out: dict[str, object] = {}
    for dirpath, dirnames, filenames in os.walk(top):
        dirnames[:] = [d for d in dirnames if d not in (".click", "DEBIAN")]
        for name in dirnames + filenames:
            path = Path(dirpath, name)
            rel = str(path.relative_to(top))
            if path.is_symlink():
                out[rel] = ("link", os.readlink(path))
            elif path.is_dir():
                out[rel] = ("dir",)
            else:
                out[rel] = ("file", os.stat(path).st_mode & 0o111 != 0, _digest(path))
    return out


def _cli(*args: object, env: dict[str, str] | None = None,
         check: bool = True) -> subprocess.CompletedProcess[str]:
    return run([*CLICK_BUILD, *map(str, args)], env=env, check=check)


class Packages:
    def __init__(self, base: Path, keys: Keys) -> None:
        self.base, self.keys = base, keys
        self.tree = _tree(base)
        self.expected = _files(self.tree)
        self.unsigned = {c: _build(self.tree, base, c) for c in COMPRESSIONS}
        self.signed = {}
        for compression, pkg in self.unsigned.items():
            signed = pkg.with_name(pkg.name.replace(".click", ".signed.click"))
            shutil.copy(pkg, signed)
            sign(_cli, signed, keys.store)
            self.signed[compression] = signed
        self.keyring = base / "store.gpg"
        shutil.copy(keys.store.keyring, self.keyring)
        for path in [base, *base.rglob("*")]:  # the unprivileged user reads them in place
            path.chmod(0o755 if path.is_dir() else 0o644)


@pytest.fixture(scope="module")
def packages(keys: Keys) -> Iterator[Packages]:
    base = Path(tempfile.mkdtemp(prefix="cb-squeezed."))
    try:
        yield Packages(base, keys)
    finally:
        shutil.rmtree(base, ignore_errors=True)


@pytest.mark.slow  # large: 64 MiB packages in every compression, built once for the module
def test_every_package_is_one_dpkg_and_the_original_take(packages: Packages,
                                                         tmp_path: Path) -> None:
    """The oracles first: dpkg-deb extracts each to the tree's files, and Debian's
    ``click verify`` accepts each (so what the installer must take is real)."""
    for compression, pkg in sorted(packages.signed.items()):
        members = run(["ar", "t", str(pkg)]).stdout.split()
        assert members[:2] == ["debian-binary", "_click-binary"], members
        assert members[-1] == "_gpgorigin", members
        suffix = {"gzip": ".gz", "xz": ".xz", "zstd": ".zst", "none": "", "bzip2": ".bz2",
                  "lzma": ".lzma"}[compression]
        assert members[3] == f"data.tar{suffix}", members
        out = tmp_path / compression
        run([need("dpkg-deb"), "-x", str(pkg), str(out)])
        assert _files(out) == packages.expected, compression
        shutil.rmtree(out)
        result = run([need("click"), "verify", "--force-missing-framework",
                      "--allow-unauthenticated", str(pkg)], check=False)
        assert result.returncode == 0, (compression, result.stderr)


@pytest.mark.slow
@pytest.mark.parametrize("signed", [True, False], ids=["signed", "unsigned"])
@pytest.mark.parametrize("compression", COMPRESSIONS)
def test_install_takes_every_compression_at_64_mib(world: World,
                                                   packages: Packages, compression: str,
                                                   signed: bool) -> None:
    """Installed as root (a forked unpacker shares the snapshot) and as a plain user:
    every file there with its bytes, the signature checked when there is one."""
    if signed:
        pkg = packages.signed[compression]
        result = world.run("install", f"--root={world.root}", "--force-missing-framework",
                           "--keyring", packages.keyring, f"--user={world.user}", pkg,
                           env={"CLICK_KEYRINGS": ""})
    else:
        pkg = packages.unsigned[compression]
        result = world.db("install", "--force-missing-framework", "--allow-unauthenticated",
                          f"--user={world.user}", pkg)
    assert_ok(result)
    assert ("has no _gpgorigin signature" in result.stderr) != signed, result.stderr
    installed = world.root / NAME / "1.0"
    assert _files(installed) == packages.expected
    assert os.readlink(world.root / NAME / "current") == "1.0"
    assert os.listdir(world.root / ".click" / "tmp") == []
    listed = world.db("list", f"--user={world.user}")
    assert_ok(listed)
    assert listed.stdout == f"{NAME}\t1.0\n"


# -- the snapshot's position -------------------------------------------------------------

def test_snapshot_reads_never_depend_on_the_shared_file_offset(tmp_path: Path) -> None:
    """The root cause, directly: whoever moves the kernel's offset of the snapshot's
    open file (a forked unpacker reading its copy, a duplicated descriptor), the
    snapshot reads what its own position says, and closes without a relative seek."""
    from click_build.pkgfile import private_copy

    data = b"!<arch>\n" + os.urandom(300_000)
    path = tmp_path / "p.click"
    path.write_bytes(data)
    with private_copy(path, str(tmp_path)) as f:
        assert f.read(100) == data[:100]  # the reader has buffered well past 100
        pid = os.fork()
        if pid == 0:  # as the unpacker: reads elsewhere through the same open file
            try:
                f.seek(200_000)
                ok = f.read(5000) == data[200_000:205_000]
                os.lseek(f.fileno(), 3, os.SEEK_SET)
            finally:
                os._exit(0 if ok else 1)
        _, status = os.waitpid(pid, 0)
        assert os.waitstatus_to_exitcode(status) == 0
        os.lseek(f.fileno(), 7, os.SEEK_SET)  # and a duplicated descriptor here
        assert f.read(100) == data[100:200]
        f.seek(-50, os.SEEK_CUR)
        assert f.read(50) == data[150:200]
        assert f.seek(0, os.SEEK_END) == len(data)
        f.seek(250_000)
        assert f.read() == data[250_000:]


# -- hostile zstd --------------------------------------------------------------------------

def _zstd(raw: bytes, *options: str) -> bytes:
    return subprocess.run([need("zstd"), "-q", "-c", *options], input=raw, capture_output=True,
                          check=True, timeout=seconds(30)).stdout


def _members() -> list[Member]:
    return [Member("./", kind="dir", mode=0o755), Member("./app.desktop", b"[Desktop Entry]\n"),
            Member("./padding.bin", bytes(200_000))]


def _data_tar() -> bytes:
    return tar_bytes(_members(), compress=False)


def _crafted(tmp_path: Path, label: str, data: bytes) -> Path:
    """A package of :func:`_members` whose data member is ``data``, as data.tar.zst."""
    base = Crafted(manifest=dict(MANIFEST, name="com.example.app", version="2.0",
                                 framework="fw-1"), data=_members(), installed_size=300)
    parts = base.parts()
    parts[3] = ("data.tar.zst", data)
    return Crafted(members=parts).write(tmp_path / f"{label}.click")


def _two_frames(raw: bytes) -> bytes:
    """The folder and app.desktop in a first frame, the rest in a second: dpkg reads the
    first frame alone, so ``dpkg-deb -c`` lists two entries and never padding.bin."""
    return _zstd(raw[:1536]) + _zstd(raw[1536:])


HOSTILE_ZSTD = {
    # (how the member is made, our error, whether dpkg-deb -c refuses it too)
    "truncated": (lambda raw: _zstd(raw)[:-40], "compressed data ends early", True),
    "a 1 GiB window": (lambda raw: _zstd(raw, "--long=30"), "requires too much memory", True),
    "a second frame": (_two_frames, "unexpected data after the end of the compressed stream",
                       False),
    "not zstd": (lambda raw: b"\x28\xb5\x2f\xfd" + b"\xff" * 64, "corrupt compressed data", True),
}


@pytest.mark.parametrize("case", sorted(HOSTILE_ZSTD))
def test_hostile_zstd_is_refused_and_changes_nothing(world: World, case: str) -> None:
    """One error line, the installed 1.0 untouched, nothing left in the scratch area.
    Where dpkg-deb reads such a member it ignores what follows the first frame: files
    that ``dpkg-deb -c`` never shows must not be installed either."""
    from attack_support import assert_refused

    make, fragment, dpkg_refuses = HOSTILE_ZSTD[case]
    world.installed()
    pkg = _crafted(world.pkgs, "hostile", make(_data_tar()))
    world.give_away(world.pkgs)
    listing = subprocess.run([need("dpkg-deb"), "-c", str(pkg)], capture_output=True, text=True,
                             timeout=seconds(30))
    assert (listing.returncode != 0) == dpkg_refuses, listing
    if case == "a second frame":
        assert "./app.desktop" in listing.stdout and "padding.bin" not in listing.stdout
    before = world.state()
    assert_refused(world.install(pkg, f"--user={world.user}"), fragment)
    assert world.state() == before
    world.app_intact()


def test_a_zstd_frame_is_read_as_dpkg_reads_it(tmp_path: Path) -> None:
    """What the zstd tool writes, multi-threaded or with a long window (128 MiB, the most
    dpkg takes) alike: contents as dpkg-deb lists them, and verify accepts it."""
    raw = _data_tar()
    for options in ([], ["-T2", "-19"], ["--long=27"]):
        pkg = _crafted(tmp_path, "frame", _zstd(raw, *options))
        ours = run([*CLICK_BUILD, "contents", str(pkg)]).stdout
        theirs = run([need("dpkg-deb"), "-c", str(pkg)]).stdout
        assert ours == theirs and "./padding.bin" in ours
        result = run([*CLICK_BUILD, "verify", "--force-missing-framework",
                      "--allow-unauthenticated", str(pkg)], check=False)
        assert result.returncode == 0, result.stderr
