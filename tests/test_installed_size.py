"""Installed-Size as the original computes it: ``du --apparent-size`` of its build folder.

The original copies the tree (with the manifest.json it read) into ``data/`` beside an
empty ``DEBIAN/`` and runs ``du -k -s --apparent-size`` there.  On ext4, where folders
of up to a few hundred entries take one 4 KiB block, the same tree must give the same
number; docs/building.md says where the two can still differ.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest
from conftest import BASE_MANIFEST, ORIGINAL_CLICK, run, write_tree

pytestmark = pytest.mark.oracle

DESKTOP = ("[Desktop Entry]\nName=Hello\nExec=qmlscene main.qml\nIcon=icon.svg\n"
           "Type=Application\nX-Lomiri-Touch=true\n")
TREES: dict[str, dict[str, str | bytes]] = {
    "small": {},
    "nested": {
        "qml/components/Button.qml": "Item {}\n" * 40,
        "qml/pages/Page.qml": "Item {}\n",
        "assets/big.bin": os.urandom(70_000),
        "assets/sounds/click.ogg": b"OggS" + bytes(3000),
        "lib/link-to-big": "-> ../assets/big.bin",
        "dangling": "-> nowhere/at/all",
        "empty/.keep": "",
        "ünïcödé name.txt": "x\n",
    },
    "ignored-files": {".git/HEAD": "ref: x\n", "notes.txt~": "draft\n", "qml/x.qml": "Item {}\n"},
}


def _field(path: Path, name: str) -> str:
    return run(["dpkg-deb", "-f", str(path), name]).stdout.strip()


def _ext4_tmp() -> str:
    """A temporary folder on ext4, where the original's du counts 4 KiB per folder."""
    fs = subprocess.run(["stat", "-f", "-c", "%T", tempfile.gettempdir()],
                        capture_output=True, text=True).stdout.strip()
    if fs != "ext2/ext3":  # GNU stat's name for ext4 too
        pytest.skip(f"{tempfile.gettempdir()} is {fs}, not ext4: the original counts differently")
    return tempfile.gettempdir()


@pytest.mark.parametrize("tree", sorted(TREES))
@pytest.mark.parametrize("line_end", ["\n", "\r\n"])
def test_the_same_number_as_the_original(tmp_path: Path, tree: str, line_end: str) -> None:
    files: dict[str, str | bytes] = {
        "hello.desktop": DESKTOP, "main.qml": "Item {}\n", "icon.svg": "<svg/>\n",
        "hello.apparmor": json.dumps({"policy_groups": [], "policy_version": 20.04}),
        **TREES[tree]}
    app = write_tree(tmp_path / "app", files)
    text = json.dumps(BASE_MANIFEST, indent=4).replace("\n", line_end)
    (app / "manifest.json").write_bytes(text.encode())
    (app / "empty" / ".keep").unlink(missing_ok=True)
    ours, theirs = tmp_path / "ours", tmp_path / "theirs"
    ours.mkdir()
    theirs.mkdir()
    run([ORIGINAL_CLICK, "build", "--no-validate", str(app)], cwd=theirs,
        env={"TMPDIR": _ext4_tmp()})
    run([sys.executable, "-m", "click_build", "build", "--no-validate", str(app), "-o",
         str(ours)])
    (original,) = theirs.glob("*.click")
    (built,) = ours.glob("*.click")
    assert _field(built, "Installed-Size") == _field(original, "Installed-Size")
    manifest = json.loads(run(["dpkg-deb", "-I", str(built), "manifest"]).stdout)
    assert manifest["installed-size"] == _field(original, "Installed-Size")
