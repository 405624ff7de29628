"""The audited reader: every malformed or hostile package gets one clear error."""

from __future__ import annotations

import gzip
import hashlib
import io
from pathlib import Path

import pytest
from conftest import assert_clean_error
from crafting import MANIFEST, Crafted, Member, tar_bytes

from click_build.errors import ClickError
from click_build.listing import contents_lines
from click_build.package import audit, open_click

NO_FW = {"CLICK_FRAMEWORKS_DIR": "/nonexistent"}


def verify(cli, path: Path, *extra: str):
    return cli("verify", "--force-missing-framework", "--allow-unauthenticated", *extra, path, check=False, env=NO_FW)


def test_crafted_baseline_verifies(cli, tmp_path: Path) -> None:
    assert verify(cli, Crafted().write(tmp_path / "ok.click")).returncode == 0


def _data(*members: Member) -> list[Member]:
    return [Member("./", kind="dir", mode=0o755), Member("./app.desktop", b"[Desktop Entry]\n"),
            *members]


DESKTOP_MD5 = hashlib.md5(b"[Desktop Entry]\n").hexdigest()  # the crafted app.desktop

BAD: dict[str, tuple[Crafted, str]] = {
    "empty-ar": (Crafted(members=[]), "member debian-binary* is missing"),
    "no-click-binary": (Crafted(members=[("debian-binary", b"2.0\n"), ("control.tar.gz", b""),
                                         ("data.tar.gz", b"")]), "no _click-binary"),
    "new-click-version": (Crafted(control_fields={
        "Package": "com.example.crafted", "Version": "1.0", "Click-Version": "0.5",
        "Installed-Size": "10"}), "Click-Version 0.5 is newer"),
    "no-click-version": (Crafted(control_fields={
        "Package": "com.example.crafted", "Version": "1.0", "Installed-Size": "10"}),
        "no Click-Version"),
    "depends": (Crafted(control_fields={
        "Package": "com.example.crafted", "Version": "1.0", "Click-Version": "0.4",
        "Installed-Size": "10", "Depends": "libc6"}), "Depends field is forbidden"),
    "postinst": (Crafted(extra_control={"postinst": b"#!/bin/sh\nrm -rf /\n"}),
                 "maintainer script 'postinst'"),
    "changed-preinst": (Crafted(preinst=b"#!/bin/sh\nexit 0\n"), "preinst differs"),
    "conffiles": (Crafted(extra_control={"conffiles": b"/etc/x\n"}), "unexpected member"),
    "name-underscore": (Crafted(manifest=dict(MANIFEST, name="a_b")), "name"),
    "version-slash": (Crafted(manifest=dict(MANIFEST, version="1/0")), "version"),
    "no-framework": (Crafted(manifest={k: v for k, v in MANIFEST.items() if k != "framework"}),
                     "framework: is required"),
    "framework-relation": (Crafted(manifest=dict(MANIFEST, framework="fw (>= 1)")),
                           "version relations"),
    "control-disagrees": (Crafted(control_fields={
        "Package": "com.example.other", "Version": "1.0", "Click-Version": "0.4",
        "Installed-Size": "10"}), "disagrees with the manifest"),
    "relative-no-dot": (Crafted(data=_data(Member("a.txt", b"x"))), "does not start with './'"),
    "absolute": (Crafted(data=_data(Member("/etc/evil", b"x"))), "does not start with './'"),
    "dotdot": (Crafted(data=_data(Member("./../../evil", b"x"))), "not clean"),
    "dot-click": (Crafted(data=_data(Member("./.click/info/x", b"x"))), "reserved top-level .click"),
    "through-symlink": (Crafted(data=_data(Member("./etc", kind="symlink", target="/etc"),
                                           Member("./etc/passwd", b"x"))),
                        "written through etc"),
    "fifo": (Crafted(data=_data(Member("./pipe", kind="fifo"))), "fifo"),
    "device": (Crafted(data=_data(Member("./dev", kind="chr"))), "character device"),
    "setuid": (Crafted(data=_data(Member("./su", b"x", mode=0o4755))), "setuid"),
    "hardlink-out": (Crafted(data=_data(Member("./l", kind="hardlink", target="/etc/shadow"))),
                     "hard link"),
    "duplicate": (Crafted(data=_data(Member("./app.desktop", b"again"))), "appears twice"),
    "md5-mismatch": (Crafted(md5sums="00000000000000000000000000000000  app.desktop\n"),
                     "does not match"),
    "md5-missing": (Crafted(md5sums=""), "not listed"),
    "md5-extra": (Crafted(md5sums=f"{DESKTOP_MD5}  app.desktop\n{DESKTOP_MD5}  ghost\n"),
                  "ghost is listed but not in the package"),
    "too-big": (Crafted(installed_size=1, data=_data(Member("./big", b"\0" * (3 << 20)))),
                "beyond the declared Installed-Size"),
    "hook-escapes": (Crafted(manifest=dict(MANIFEST, hooks={"app": {"desktop": "link/passwd"}}),
                             data=_data(Member("./link", kind="symlink", target="/etc"))),
                     "leaves the package"),
    "extra-member": (Crafted(members=[("debian-binary", b"2.0\n"), ("_click-binary", b"0.4\n"),
                                      ("control.tar.gz", b""), ("data.tar.gz", b""),
                                      ("evil", b"x")]), "unexpected member 'evil'"),
    "injected-data": (Crafted(members=[("debian-binary", b"2.0\n"), ("_click-binary", b"0.4\n"),
                                       ("control.tar.gz", b""), ("data.tar.bz2", b""),
                                       ("data.tar.gz", b"")]), "unexpected member"),
    "wrong-compression": (Crafted(members=[("debian-binary", b"2.0\n"), ("_click-binary", b"0.4\n"),
                                           ("control.tar.gz", b"BZh9"), ("data.tar.gz", b"")]),
                          "not gz data"),
}


@pytest.mark.parametrize("case", sorted(BAD))
def test_bad_package(cli, tmp_path: Path, case: str) -> None:
    crafted, fragment = BAD[case]
    result = verify(cli, crafted.write(tmp_path / f"{case}.click"))
    assert_clean_error(result, fragment)
    assert len([l for l in result.stderr.splitlines() if "error:" in l]) == 1


def test_truncated_and_trailing_junk(cli, tmp_path: Path) -> None:
    raw = Crafted().bytes()
    (tmp_path / "t.click").write_bytes(raw[:-40])
    assert_clean_error(verify(cli, tmp_path / "t.click"), "truncated")
    (tmp_path / "j.click").write_bytes(raw + b"junk that is not a header at all" * 3)
    assert_clean_error(verify(cli, tmp_path / "j.click"), "corrupt ar member header")


def test_missing_framework(cli, tmp_path: Path) -> None:
    path = Crafted(manifest=dict(MANIFEST, framework="missing")).write(tmp_path / "m.click")
    result = cli("verify", "--allow-unauthenticated", path, check=False, env=NO_FW)
    assert_clean_error(result, 'Framework "missing" not present on system '
                               "(use --force-missing-framework option to override)")
    fw = tmp_path / "fw"
    fw.mkdir()
    (fw / "missing.framework").write_text("Base-Name: ubuntu-sdk\nBase-Version: 20.04\n")
    assert cli("verify", "--allow-unauthenticated", "--frameworks-dir", fw, path).returncode == 0


def test_not_a_file(cli, tmp_path: Path) -> None:
    assert_clean_error(cli("verify", tmp_path / "none.click", check=False), "cannot open")
    assert_clean_error(cli("info", tmp_path, check=False), "")
    (tmp_path / "text.click").write_text("something-that-is-not-a-click")
    assert_clean_error(cli("info", tmp_path / "text.click", check=False), "ar archive")


def test_contents_lists_hostile_names_without_trusting_them(tmp_path: Path) -> None:
    path = Crafted(data=_data(Member("./../evil\nname", b"x"))).write(tmp_path / "h.click")
    with open_click(path) as pkg:
        lines = list(contents_lines(pkg))
    assert lines[-1].endswith("./../evil\\nname")


def test_info_from_file_object(tmp_path: Path) -> None:
    raw = Crafted().bytes()
    with open_click(io.BytesIO(raw)) as pkg:
        assert '"name": "com.example.crafted"' in pkg.info_json()


def test_xz_and_plain_data_accepted(tmp_path: Path) -> None:
    import lzma

    crafted = Crafted()
    parts = crafted.parts()
    raw_tar = gzip.decompress(parts[3][1])
    for name, data in (("data.tar.xz", lzma.compress(raw_tar)), ("data.tar", raw_tar)):
        crafted.members = [*parts[:3], (name, data)]
        with open_click(io.BytesIO(crafted.bytes())) as pkg:
            audit(pkg, Path("/nonexistent"), force_missing_framework=True)


def test_reader_errors_are_click_errors_only() -> None:
    """Every bad byte sequence ends in a ClickError (the fuzz test does this at scale)."""
    for raw in (b"", b"!<arch>\n", b"!<arch>\n" + b"x" * 60, tar_bytes([], compress=False)):
        with pytest.raises(ClickError):
            open_click(io.BytesIO(raw))


def test_corrupt_xz_and_bz2_data_are_package_errors() -> None:
    crafted = Crafted()
    parts = crafted.parts()
    for name, data in (("data.tar.xz", b"\xfd7zXZ\x00" + b"\x01" * 200),
                       ("data.tar.bz2", b"BZh9" + b"\x02" * 200)):
        crafted.members = [*parts[:3], (name, data)]
        with open_click(io.BytesIO(crafted.bytes())) as pkg:
            with pytest.raises(ClickError, match="(?i)corrupt|not a valid tar archive"):
                audit(pkg, Path("/nonexistent"), force_missing_framework=True)
