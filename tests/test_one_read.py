"""Each staged file is opened and read once per build, on every route (issue 15).

The finishing stage learns the architecture from the ELF headers that the
md5/tar/gzip pass reads anyway, and the few files its checks parse (hook files,
the QML entry point) are packed from the bytes the checks read.  ``strace``
counts the opens of every file of the tree, in click-build and every process
it starts.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import BASE_MANIFEST, CLICK_BUILD, need, run, write_tree

pytestmark = pytest.mark.slow

#: ``PID openat(AT_FDCWD, "/path", O_RDONLY|O_CLOEXEC) = 3``: a successful open.
_OPEN = re.compile(r'open(?:at)?\((?:[A-Z_]+|\d+), "((?:[^"\\]|\\.)*)", ([A-Z_|]+)[^)]*\) = \d+')


def _tree(root: Path) -> Path:
    """An app with compiled code (so the ELF scan has work), a large file, hook files
    and an AppArmor file whose policy_version the finishing stage fills in."""
    write_tree(root, {
        "manifest.json": json.dumps(BASE_MANIFEST),
        "hello.desktop": "[Desktop Entry]\nName=Hello\nExec=qmlscene qml/Main.qml\n"
                         "Icon=icon.svg\nType=Application\nX-Lomiri-Touch=true\n",
        "hello.apparmor": json.dumps({"policy_groups": []}),
        "qml/Main.qml": "import QtQuick 2.7\nRectangle { width: 100; height: 100 }\n",
        "qml/Other.qml": "import QtQuick 2.7\nItem {}\n",
        "icon.svg": "<svg xmlns='http://www.w3.org/2000/svg'/>\n",
        "data/big.bin": os.urandom(3 << 20),
        "data/empty": "",
    })
    true = shutil.which("true")
    assert true
    (root / "lib").mkdir()
    shutil.copy(true, root / "lib" / "helper")
    return root


def _opens(log: Path, top: Path) -> dict[str, int]:
    """How often each file under ``top`` was opened (folders, listed by scandir, aside)."""
    counts: dict[str, int] = {}
    prefix = str(top) + os.sep
    for line in log.read_text(errors="replace").splitlines():
        m = _OPEN.search(line)
        if m is None or "O_DIRECTORY" in m.group(2):
            continue
        path = os.path.normpath(m.group(1))
        if path.startswith(prefix):
            rel = path[len(prefix):]
            counts[rel] = counts.get(rel, 0) + 1
    return counts


def _staged(top: Path) -> list[str]:
    return sorted(str(p.relative_to(top)) for p in top.rglob("*")
                  if p.is_file() and not p.is_symlink()
                  and p.name not in ("manifest.json", "pyproject.toml"))


def _traced(cmd: list[str], log: Path, cwd: Path | None = None) -> None:
    strace = need("strace")
    env = {**os.environ, "SOURCE_DATE_EPOCH": "1700000000"}
    result = subprocess.run([strace, "-f", "-qq", "-e", "trace=open,openat", "-o", str(log),
                             *cmd], cwd=cwd, env=env, capture_output=True, text=True)
    assert result.returncode == 0, result.stdout + result.stderr


@pytest.mark.parametrize("route", ["tree", "project", "pep517"])
def test_each_staged_file_is_opened_once(tmp_path: Path, route: str) -> None:
    app = _tree(tmp_path / "app")
    if route != "tree":
        (app / "pyproject.toml").write_text(
            '[build-system]\nrequires = ["click-build"]\nbuild-backend = "click_build.backend"\n'
            '\n[tool.click-build]\nkind = "qml"\n')
    out = tmp_path / "out"
    out.mkdir()
    log = tmp_path / "strace.log"
    if route == "pep517":
        _traced([sys.executable, "-m", "build", "-n", "--wheel", "-o", str(out), str(app)],
                log)
    else:
        _traced([*CLICK_BUILD, "build", str(app), "-o", str(out)], log)
    (click,) = out.glob("*.click")
    host = run(["dpkg", "--print-architecture"]).stdout.strip()
    assert click.name == f"com.example.hello_1.0_{host}.click"  # the ELF scan did decide
    listing = run(["dpkg-deb", "-c", str(click)]).stdout
    opened = _opens(log, app.resolve())
    for rel in _staged(app):
        assert f"./{rel}" in listing
        assert opened.get(rel, 0) == 1, (rel, opened)
