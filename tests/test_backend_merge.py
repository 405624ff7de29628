"""``click-build merge``: per-architecture builds of one app -> one fat package."""

from __future__ import annotations

import json
import struct
from collections.abc import Callable
from pathlib import Path
from subprocess import CompletedProcess

import pytest
from backend_helpers import EXAMPLES, control_field, copy_project, data_members, only_click, pybuild
from conftest import assert_clean_error, run

CLI = Callable[..., CompletedProcess[str]]


def _elf(machine: int, is64: bool, flags: int = 0) -> bytes:
    header = bytearray(64)
    header[:6] = b"\x7fELF" + bytes([2 if is64 else 1, 1])
    header[16:20] = struct.pack("<HH", 3, machine)  # ET_DYN: a shared library
    header[36:40] = struct.pack("<I", flags)
    return bytes(header) + b"code"


def _build_for(tmp_path: Path, triplet: str, elf: bytes, tweak: str = "") -> Path:
    project = copy_project(EXAMPLES / "hello-qml", tmp_path / triplet)
    lib = project / "lib" / triplet
    lib.mkdir(parents=True)
    (lib / "libhello.so").write_bytes(elf)
    if tweak:
        (project / "qml" / "Main.qml").write_text(tweak)
    pybuild(project, "--wheel", "-o", str(tmp_path / f"out-{triplet}"))
    return only_click(tmp_path / f"out-{triplet}")


@pytest.fixture
def builds(tmp_path: Path) -> tuple[Path, Path]:
    arm64 = _build_for(tmp_path, "aarch64-linux-gnu", _elf(183, True))
    armhf = _build_for(tmp_path, "arm-linux-gnueabihf", _elf(40, False, 0x5000400))
    return arm64, armhf


@pytest.mark.oracle
def test_merge_two_architectures(builds: tuple[Path, Path], tmp_path: Path, cli: CLI) -> None:
    arm64, armhf = builds
    assert arm64.name.endswith("_arm64.click") and armhf.name.endswith("_armhf.click")
    out = tmp_path / "merged"
    out.mkdir()
    cli("merge", arm64, armhf, "-o", out)
    merged = only_click(out)
    assert merged.name == "hello-qml.clickbuild_1.0.0_multi.click"
    assert control_field(merged, "Architecture") == "multi"
    manifest = json.loads(run(["dpkg-deb", "-I", str(merged), "manifest"]).stdout)
    assert manifest["architecture"] == ["arm64", "armhf"]
    members = data_members(merged)
    assert "./lib/aarch64-linux-gnu/libhello.so" in members
    assert "./lib/arm-linux-gnueabihf/libhello.so" in members
    assert "./qml/Main.qml" in members
    run(["click", "verify", "--force-missing-framework", "--allow-unauthenticated", str(merged)])
    assert not [p for p in out.iterdir() if p.name.startswith(".")]  # no temp left behind
    again = tmp_path / "again"
    again.mkdir()
    cli("merge", armhf, arm64, "-o", again)  # order does not matter
    assert only_click(again).read_bytes() == merged.read_bytes()


def test_merge_refuses_conflicts(tmp_path: Path, cli: CLI) -> None:
    arm64 = _build_for(tmp_path, "aarch64-linux-gnu", _elf(183, True))
    other = _build_for(tmp_path, "arm-linux-gnueabihf", _elf(40, False, 0x5000400),
                       tweak="import QtQuick 2.7\nItem {}\n")
    assert_clean_error(cli("merge", arm64, other, "-o", tmp_path, check=False),
                       "qml/Main.qml differs between")
    assert_clean_error(cli("merge", arm64, arm64, "-o", tmp_path, check=False),
                       "arm64 is already in another input")
    assert_clean_error(cli("merge", arm64, "-o", tmp_path, check=False),
                       "merge needs at least two packages")
    assert not list(tmp_path.glob("*.click")) and not list(tmp_path.glob(".merge-*"))


def test_merge_refuses_different_apps(tmp_path: Path, cli: CLI) -> None:
    arm64 = _build_for(tmp_path, "aarch64-linux-gnu", _elf(183, True))
    project = copy_project(EXAMPLES / "hello-qml", tmp_path / "renamed")
    manifest = json.loads((project / "manifest.json").read_text())
    manifest["title"] = "Another title"
    (project / "manifest.json").write_text(json.dumps(manifest))
    pybuild(project, "--wheel", "-o", str(tmp_path / "o"), "-C", "click-build.architecture=armhf")
    result = cli("merge", arm64, only_click(tmp_path / "o"), "-o", tmp_path, check=False)
    assert_clean_error(result, "manifest title 'Another title' differs")
