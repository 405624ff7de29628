"""click-build's own way to make a root (hosts without apt), offline: a small archive in
a folder (a ``file://`` mirror) with real ``.deb`` files, a ``Packages`` index and an
``InRelease`` clear-signed by a throwaway key, which the test pins in place of
Debian's.  The real archive is used by test_sysroot_build.py."""

from __future__ import annotations

import hashlib
import importlib.util
import lzma
import os
import stat
import subprocess
from pathlib import Path

import pytest
from conftest import CLICK_BUILD, assert_clean_error, need, run
from deadlines import seconds
from signing import Key, Keys, gpg

from click_build.errors import SysrootError
from click_build.sysroot import create
from click_build.sysroot import keys as sysroot_keys
from click_build.sysroot.extract import extract_deb
from click_build.sysroot.keys import ArchiveKey
from click_build.sysroot.profiles import Family, Profile, Source

SUITE = "bookworm"


def deb(base: Path, name: str, version: str = "1.0", depends: str = "", provides: str = "",
        files: dict[str, str | bytes] | None = None, links: dict[str, str] | None = None,
        compression: str = "gzip", arch: str = "arm64") -> Path:
    tree = base / "trees" / name
    (tree / "DEBIAN").mkdir(parents=True)
    control = [f"Package: {name}", f"Version: {version}", f"Architecture: {arch}",
               "Maintainer: Test <t@example.com>", f"Description: {name}"]
    if depends:
        control.append(f"Depends: {depends}")
    if provides:
        control.append(f"Provides: {provides}")
    (tree / "DEBIAN" / "control").write_text("\n".join(control) + "\n")
    for path, content in (files or {}).items():
        target = tree / path
        target.parent.mkdir(parents=True, exist_ok=True)
        if isinstance(content, bytes):
            target.write_bytes(content)
        else:
            target.write_text(content)
    for path, target_name in (links or {}).items():
        link = tree / path
        link.parent.mkdir(parents=True, exist_ok=True)
        os.symlink(target_name, link)
    out = base / "pool" / f"{name}_{version}_{arch}.deb"
    out.parent.mkdir(parents=True, exist_ok=True)
    run([need("dpkg-deb"), "--root-owner-group", f"-Z{compression}", "-b", str(tree), str(out)])
    return out


def archive(base: Path, key: Key, debs: list[Path], suite: str = SUITE) -> Path:
    """``base`` as a signed archive of ``debs`` for arm64."""
    stanzas = []
    for path in debs:
        fields = run(["dpkg-deb", "-f", str(path)]).stdout.strip()
        data = path.read_bytes()
        stanzas.append(f"{fields}\nFilename: {path.relative_to(base)}\nSize: {len(data)}\n"
                       f"SHA256: {hashlib.sha256(data).hexdigest()}\n")
    plain = "\n".join(stanzas).encode()
    index = lzma.compress(plain)
    where = base / "dists" / suite / "main" / "binary-arm64"
    where.mkdir(parents=True, exist_ok=True)
    (where / "Packages.xz").write_bytes(index)
    (where / "Packages").write_bytes(plain)
    release = (f"Origin: Test\nSuite: {suite}\nCodename: {suite}\nArchitectures: arm64\n"
               "Date: Sat, 11 Jan 2025 10:00:00 UTC\nComponents: main\nSHA256:\n"
               f" {hashlib.sha256(plain).hexdigest()} {len(plain)} main/binary-arm64/Packages\n"
               f" {hashlib.sha256(index).hexdigest()} {len(index)} main/binary-arm64/Packages.xz\n")
    signed = gpg(key.home, "--clearsign", "--output", "-", stdin=release.encode()).stdout
    (base / "dists" / suite / "InRelease").write_bytes(signed)
    return base


@pytest.fixture
def pinned(monkeypatch: pytest.MonkeyPatch, keys: Keys) -> Key:
    """The throwaway 'store' key pinned for the debian archive, in place of Debian's."""
    monkeypatch.setitem(sysroot_keys.KEYS, "debian", ArchiveKey(
        "debian", (keys.store.fingerprint,), None, "CLICK_BUILD_KEYRING_DEBIAN"))
    monkeypatch.setenv("CLICK_BUILD_KEYRING_DEBIAN", str(keys.store.keyring))
    return keys.store


def profile(*packages: str, suites: tuple[str, ...] = (SUITE,)) -> Profile:
    family = Family("test-12", "ubuntu-touch-24.04-1.x", (Source("debian", suites, ("main",)),),
                    packages)
    return Profile(family, "arm64")


def small_archive(base: Path, key: Key) -> Path:
    return archive(base, key, [
        deb(base, "libc6", files={"lib/aarch64-linux-gnu/libc.so.6": "libc",
                                  "usr/share/doc/libc6/copyright": "left out"}),
        deb(base, "libfoo1", depends="libc6 (>= 0.9), awk | mawk",
            files={"usr/lib/aarch64-linux-gnu/libfoo.so.1": "foo"}),
        deb(base, "mawk", provides="awk", files={"usr/bin/mawk": "awk"}),
        deb(base, "libfoo-dev", depends="libfoo1 (= 1.0)",
            links={"usr/lib/aarch64-linux-gnu/libfoo.so": "/usr/lib/aarch64-linux-gnu/libfoo.so.1",
                   "usr/lib/aarch64-linux-gnu/libc.so": "/lib/aarch64-linux-gnu/libc.so.6"},
            files={"usr/include/foo.h": "int foo(void);\n"}),
        deb(base, "unrelated", files={"usr/bin/unrelated": "x"}),
    ])


def test_the_builtin_way_resolves_downloads_and_unpacks(
        tmp_path: Path, pinned: Key, monkeypatch: pytest.MonkeyPatch) -> None:
    mirror = small_archive(tmp_path / "mirror", pinned)
    stored = create(profile("libfoo-dev"), {"debian": f"file://{mirror}"}, tmp_path / "cache",
                    method="builtin")
    assert stored.meta["installed"] == [["libc6", "1.0"], ["libfoo-dev", "1.0"],
                                        ["libfoo1", "1.0"], ["mawk", "1.0"]]
    root = stored.root
    assert (root / "usr/include/foo.h").read_text() == "int foo(void);\n"
    assert not (root / "usr/share/doc").exists()  # left out
    assert not (root / "usr/bin/unrelated").exists()
    # absolute links are made relative, so the linker stays in the root
    assert os.readlink(root / "usr/lib/aarch64-linux-gnu/libfoo.so") == "libfoo.so.1"
    assert os.readlink(root / "usr/lib/aarch64-linux-gnu/libc.so") == \
        "../../../lib/aarch64-linux-gnu/libc.so.6"
    assert (root / "usr/lib/aarch64-linux-gnu/libc.so").read_text() == "libc"
    assert stored.toolchain.is_file()
    # a second create reuses it; the packages stay in the shared pool
    again = create(profile("libfoo-dev"), {"debian": f"file://{mirror}"}, tmp_path / "cache",
                   method="builtin")
    assert again.folder == stored.folder and again.meta["created"] == stored.meta["created"]
    assert sorted(p.name for p in (tmp_path / "cache" / "debs").glob("*.deb")) == [
        "libc6_1.0_arm64.deb", "libfoo-dev_1.0_arm64.deb", "libfoo1_1.0_arm64.deb",
        "mawk_1.0_arm64.deb"]


def test_an_index_not_signed_by_a_pinned_key_is_refused(
        tmp_path: Path, pinned: Key, keys: Keys) -> None:
    mirror = small_archive(tmp_path / "mirror", keys.evil)
    with pytest.raises(SysrootError, match=f"InRelease: not signed by a debian archive key "
                                           f"click-build trusts \\({pinned.fingerprint}\\)"):
        create(profile("libfoo-dev"), {"debian": f"file://{mirror}"}, tmp_path / "cache",
               method="builtin")
    assert not list((tmp_path / "cache").glob("test-12-*/"))


def test_a_changed_index_or_package_is_refused(tmp_path: Path, pinned: Key) -> None:
    mirror = small_archive(tmp_path / "mirror", pinned)
    signed = mirror / "dists" / SUITE / "InRelease"
    text = signed.read_bytes()
    signed.write_bytes(text.replace(b"Origin: Test", b"Origin: Evil"))
    with pytest.raises(SysrootError, match="BAD"):
        create(profile("libfoo-dev"), {"debian": f"file://{mirror}"}, tmp_path / "c1",
               method="builtin")
    signed.write_bytes(text)
    libc = next((mirror / "pool").glob("libc6_*.deb"))
    libc.write_bytes(libc.read_bytes()[:-1] + b"!")
    with pytest.raises(SysrootError, match="not the .* bytes the signed index names"):
        create(profile("libfoo-dev"), {"debian": f"file://{mirror}"}, tmp_path / "c2",
               method="builtin")


def test_text_outside_the_signed_part_is_never_read(tmp_path: Path, pinned: Key) -> None:
    """A clear-signed file can carry text before its signed part; only what gpgv says
    was signed is read (its --output)."""
    mirror = small_archive(tmp_path / "mirror", pinned)
    signed = mirror / "dists" / SUITE / "InRelease"
    signed.write_bytes(b"SHA256:\n 00 1 main/binary-arm64/Packages\n\n" + signed.read_bytes())
    stored = create(profile("libfoo-dev"), {"debian": f"file://{mirror}"}, tmp_path / "cache",
                    method="builtin")
    assert len(stored.meta["installed"]) == 4  # type: ignore[arg-type]


def test_one_missing_index_is_a_warning(tmp_path: Path, pinned: Key,
                                        capsys: pytest.CaptureFixture[str]) -> None:
    mirror = small_archive(tmp_path / "mirror", pinned)
    stored = create(profile("libfoo-dev", suites=(SUITE, f"{SUITE}-updates")),
                    {"debian": f"file://{mirror}"}, tmp_path / "cache", method="builtin")
    assert len(stored.meta["installed"]) == 4  # type: ignore[arg-type]
    assert f"warning: going on without {SUITE}-updates" in capsys.readouterr().err


def test_a_missing_dependency_names_who_needs_it(tmp_path: Path, pinned: Key) -> None:
    base = tmp_path / "mirror"
    mirror = archive(base, pinned, [deb(base, "app", depends="libnothere (>= 2) | libother")])
    with pytest.raises(SysrootError, match=r"app 1.0 needs libnothere \(>= 2\) \| libother, "
                                           "which the root's archives do not have"):
        create(profile("app"), {"debian": f"file://{mirror}"}, tmp_path / "cache",
               method="builtin")
    with pytest.raises(SysrootError, match="package typo is not in the root's archives"):
        create(profile("typo"), {"debian": f"file://{mirror}"}, tmp_path / "cache",
               method="builtin")


@pytest.mark.parametrize("method", ["builtin", "apt"])
def test_an_unreachable_archive_is_one_line_naming_its_host_and_setting(
        tmp_path: Path, method: str) -> None:
    env = {**os.environ, "CLICK_BUILD_SYSROOT_CACHE": str(tmp_path / "cache"),
           "CLICK_BUILD_MIRROR_DEBIAN": "http://127.0.0.1:9/debian"}
    result = subprocess.run([*CLICK_BUILD, "-q", "sysroot", "create", "--profile", "debian-12",
                             "--method", method], capture_output=True, text=True, env=env,
                            timeout=seconds(300))
    assert_clean_error(result, "cannot reach 127.0.0.1 (", "for the debian archive; point "
                       "click-build at a mirror you can reach: CLICK_BUILD_MIRROR_DEBIAN=URL "
                       "(or --mirror debian=URL)")
    assert len([l for l in result.stderr.splitlines() if "error:" in l]) == 1
    assert not list((tmp_path / "cache").glob("debian-12-*/"))


def _tar_deb(tmp_path: Path, members: list[tuple[str, bytes | None, str | None]],
             mode: int = 0o644) -> Path:
    """A .deb whose data.tar holds exactly ``members`` (name, data or None, link target)."""
    import io
    import tarfile

    data = io.BytesIO()
    with tarfile.open(fileobj=data, mode="w:gz") as tar:
        for name, content, link in members:
            info = tarfile.TarInfo(name)
            if link is not None:
                info.type, info.linkname = tarfile.SYMTYPE, link
                tar.addfile(info)
            else:
                info.size, info.mode = len(content or b""), mode
                tar.addfile(info, io.BytesIO(content or b""))
    control = io.BytesIO()
    with tarfile.open(fileobj=control, mode="w:gz") as tar:
        body = b"Package: x\nVersion: 1\nArchitecture: arm64\n"
        info = tarfile.TarInfo("./control")
        info.size = len(body)
        tar.addfile(info, io.BytesIO(body))
    out = tmp_path / "crafted.deb"
    members_ar = [("debian-binary", b"2.0\n"), ("control.tar.gz", control.getvalue()),
                  ("data.tar.gz", data.getvalue())]
    with open(out, "wb") as f:
        f.write(b"!<arch>\n")
        for name, blob in members_ar:
            f.write(f"{name:<16}{0:<12}{0:<6}{0:<6}{100644:<8}{len(blob):<10}`\n".encode())
            f.write(blob + (b"\n" if len(blob) % 2 else b""))
    return out


@pytest.mark.parametrize(("members", "message"), [
    ([("../escape", b"x", None)], "climbs out of the root"),
    ([("./usr/../../escape", b"x", None)], "climbs out of the root"),
    ([("./lib", None, "/../../.."), ("./lib/escape", b"x", None)], "leads out of it"),
    ([("./lib", None, "../.."), ("./lib/escape", b"x", None)], "leads out of it"),
])
def test_a_package_cannot_write_outside_the_root(
        tmp_path: Path, members: list[tuple[str, bytes | None, str | None]], message: str) -> None:
    root = tmp_path / "sub" / "root"
    root.mkdir(parents=True)
    with pytest.raises(SysrootError, match=message):
        list(extract_deb(_tar_deb(tmp_path, members), root))
    assert not (tmp_path / "escape").exists() and not (tmp_path / "sub" / "escape").exists()


def test_merged_usr_links_are_followed_inside_the_root_and_setuid_is_dropped(
        tmp_path: Path) -> None:
    root = tmp_path / "root"
    root.mkdir()
    crafted = _tar_deb(tmp_path, [("./usr/lib/", None, None)][:0] + [
        ("./lib", None, "usr/lib"), ("./lib/aarch64-linux-gnu/libc.so.6", b"libc", None)],
        mode=0o4755)
    assert list(extract_deb(crafted, root)) == ["lib", "lib/aarch64-linux-gnu/libc.so.6"]
    assert (root / "usr/lib/aarch64-linux-gnu/libc.so.6").read_bytes() == b"libc"
    assert not stat.S_IMODE((root / "usr/lib/aarch64-linux-gnu/libc.so.6").stat().st_mode) & 0o6000


def test_zstd_packages_need_zstandard_and_say_so(tmp_path: Path) -> None:
    """Ubuntu's packages are zstd-compressed (Debian's are xz)."""
    zstd = deb(tmp_path, "zpkg", files={"usr/share/z/file": "zstd inside"}, compression="zstd")
    root = tmp_path / "root"
    root.mkdir()
    if importlib.util.find_spec("zstandard") is None:
        with pytest.raises(SysrootError, match=r"zpkg_1.0_arm64.deb is compressed with zstd "
                                               r"\(as Ubuntu's packages are\): install the "
                                               r"zstandard module beside click-build "
                                               r"\(pip install zstandard\)"):
            list(extract_deb(zstd, root))
    else:
        list(extract_deb(zstd, root))
        assert (root / "usr/share/z/file").read_text() == "zstd inside"


_PATCHED_CLI = """
import sys
from click_build.sysroot import keys, profiles
from click_build.sysroot.profiles import Family, Source
keys.KEYS["debian"] = keys.ArchiveKey("debian", (sys.argv[1],), None,
                                      "CLICK_BUILD_KEYRING_DEBIAN")
profiles.FAMILIES["debian-12"] = Family("debian-12", "ubuntu-touch-24.04-1.x",
    (Source("debian", ("bookworm",), ("main",)),), ("libfoo-dev",))
from click_build.cli import run
sys.argv[1:2] = []
run()
"""


@pytest.mark.parametrize("quiet", [False, True])
def test_progress_shows_on_a_terminal_unless_quiet(tmp_path: Path, pinned: Key,
                                                   quiet: bool) -> None:
    from terminal import Terminal

    mirror = small_archive(tmp_path / "mirror", pinned)
    env = {**os.environ, "CLICK_BUILD_SYSROOT_CACHE": str(tmp_path / "cache"),
           "CLICK_BUILD_KEYRING_DEBIAN": str(pinned.keyring),
           "CLICK_BUILD_MIRROR_DEBIAN": f"file://{mirror}"}
    argv = [CLICK_BUILD[0], "-c", _PATCHED_CLI, pinned.fingerprint, *(["-q"] if quiet else []),
            "sysroot", "create", "--profile", "debian-12", "--method", "builtin"]
    with Terminal(argv, env) as terminal:
        shown = terminal.read_to_end().decode()
        assert terminal.wait() == 0, shown
    root = next((tmp_path / "cache").glob("debian-12-arm64-*/root"))
    if quiet:
        assert shown.strip() == str(root)
    else:
        assert "[4/4] downloading 4 packages for debian-12 arm64" in shown
        assert "[4/4] unpacking into" in shown
        assert "Made debian-12 arm64: 4 packages, " in shown
    # not a terminal: no progress, only the note on stderr
    again = subprocess.run([*argv[:4], "sysroot", "update", "--profile", "debian-12",
                            "--method", "builtin"], env=env, capture_output=True, text=True)
    assert again.returncode == 0, again.stderr
    assert "downloading" not in again.stderr and again.stdout.strip() == str(root)


def test_bundle_names_the_shared_libraries_of_a_projects_packages(
        tmp_path: Path, pinned: Key, capsys: pytest.CaptureFixture[str]) -> None:
    """[tool.click-build.sysroot] bundle: the libraries a project's own packages ship, not
    what the framework (the profile's packages) provides."""
    from click_build.sysroot.bundle import bundled_libraries

    base = tmp_path / "mirror"
    mirror = archive(base, pinned, [
        deb(base, "libc6", files={"lib/aarch64-linux-gnu/libc.so.6": "libc"}),
        deb(base, "libfoo1", depends="libc6",
            files={"usr/lib/aarch64-linux-gnu/libfoo.so.1": "foo"}),
        deb(base, "libbar1", depends="libc6",
            files={"usr/lib/aarch64-linux-gnu/libbar.so.1.2": "bar",
                   "usr/lib/aarch64-linux-gnu/bar/plugin.so": "a plugin, not a library",
                   "usr/share/bar/data.txt": "data"},
            links={"usr/lib/aarch64-linux-gnu/libbar.so.1": "libbar.so.1.2"}),
    ])
    wanted = Profile(profile("libfoo1").family, "arm64", ("libbar1",))
    stored = create(wanted, {"debian": f"file://{mirror}"}, tmp_path / "cache", method="builtin")
    lib = stored.root / "usr/lib/aarch64-linux-gnu"
    assert bundled_libraries(stored, ["libbar1"]) == [lib / "libbar.so.1", lib / "libbar.so.1.2"]
    assert bundled_libraries(stored, ["libfoo1"]) == []
    assert "bundle: libfoo1 is part of the framework's root" in capsys.readouterr().err
    with pytest.raises(SysrootError, match="bundle: libnone is not in the test-12 arm64 root"):
        bundled_libraries(stored, ["libnone"])


@pytest.mark.parametrize("method", ["apt", "builtin"])
def test_one_index_that_fails_is_a_warning_by_both_ways(
        tmp_path: Path, pinned: Key, method: str, capsys: pytest.CaptureFixture[str]) -> None:
    """A mirror in the middle of a sync serves an index that is not the one its signed
    release names: that index is left out with a warning; a second one would stop it."""
    mirror = small_archive(tmp_path / "mirror", pinned)
    updates = archive(mirror, pinned, list((mirror / "pool").glob("unrelated_*.deb")),
                      suite=f"{SUITE}-updates")
    for index in (updates / "dists" / f"{SUITE}-updates" / "main" / "binary-arm64").iterdir():
        index.write_bytes(index.read_bytes() + b"\0")  # not the size nor hash it is signed with
    stored = create(profile("libfoo-dev", suites=(SUITE, f"{SUITE}-updates")),
                    {"debian": f"file://{mirror}"}, tmp_path / "cache", method=method)
    assert len(stored.meta["installed"]) == 4  # type: ignore[arg-type]
    err = capsys.readouterr().err
    assert "warning:" in err and f"{SUITE}-updates" in err
