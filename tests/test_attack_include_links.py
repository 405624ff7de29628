"""``tool.click-build.include`` naming a link, on a cloned project (issue 27, class 5), built
with the real ``python -m build`` as root and as a real unprivileged user, comparing the home
before and after.

An include adds what an ignore rule left out (``/vendor/libfoo.so`` of an excluded
``/vendor``).  Libraries come as links (``libfoo.so -> libfoo.so.1``): an include naming one
stopped with "Too many levels of symbolic links".  A link, or a folder link on the way,
that leads to a place inside the project is followed and what it leads to is packed under
the include's name, as a file or folder, on both routes (the ``.click`` from the source
package is the one ``--wheel`` builds); a link leading out of the project, a dangling link
and a loop are one error line, with nothing written and nothing read from the home.  A
swap after the include is found is test_attack_tree_swap's.
"""

from __future__ import annotations

import io
import os
import shutil
import subprocess
import tarfile
from pathlib import Path

import pytest
from backend_helpers import EXAMPLES, assert_one_error
from conftest import write_tree
from project_attack import BAIT, Scene

LIBRARY = b"\x7fELF not really, the library of the app\n"


def _project(s: Scene, links: dict[str, str], includes: list[str]) -> Path:
    """hello-qml with ``/vendor`` excluded, ``links`` planted and ``includes`` set."""
    shutil.copytree(EXAMPLES / "hello-qml", s.project, dirs_exist_ok=True,
                    ignore=shutil.ignore_patterns("build", "dist", "__pycache__"))
    write_tree(s.project, {"third/libfoo.so.1": LIBRARY, "third/plugins/qmldir": "module Foo\n",
                           "vendor/README": "what the app vendors\n"})
    write_tree(s.bait, {"secret.txt": f"{BAIT}\n"})
    for name, target in links.items():
        (s.project / name).parent.mkdir(parents=True, exist_ok=True)
        os.symlink(target.replace("BAIT_DIR", str(s.bait)), s.project / name)
    text = (s.project / "pyproject.toml").read_text()
    listed = ", ".join(f'"{i}"' for i in includes)
    (s.project / "pyproject.toml").write_text(text.replace(
        'exclude = ["/README.md"]', f'exclude = ["/README.md", "/vendor"]\ninclude = [{listed}]'))
    return s.project


def _build(s: Scene, out: str, *args: str) -> subprocess.CompletedProcess[str]:
    (s.base / out).mkdir()
    return s.python("-m", "build", "-n", "-x", "-o", str(s.base / out), *args)


def _data(click: Path) -> dict[str, tarfile.TarInfo | bytes]:
    tar_bytes = subprocess.run(["dpkg-deb", "--fsys-tarfile", str(click)], check=True,
                               capture_output=True).stdout
    out: dict[str, tarfile.TarInfo | bytes] = {}
    with tarfile.open(fileobj=io.BytesIO(tar_bytes)) as tar:
        for member in tar.getmembers():
            f = tar.extractfile(member) if member.isfile() else None
            out[member.name] = f.read() if f is not None else member
    return out


def test_an_include_naming_a_link_inside_packs_what_it_leads_to(scene: Scene) -> None:
    _project(scene, {"vendor/libfoo.so": "../third/libfoo.so.1",
                     "vendor/plugins": "../third/plugins"},
             ["/vendor/libfoo.so", "/vendor/plugins"])
    before = scene.around(scene.base / "wheel", scene.base / "full")
    wheel = _build(scene, "wheel", "--wheel")
    assert wheel.returncode == 0, wheel.stdout + wheel.stderr
    full = _build(scene, "full")  # the source package carries the links as links
    assert full.returncode == 0, full.stdout + full.stderr
    (from_tree,) = (scene.base / "wheel").glob("*.click")
    (from_sdist,) = (scene.base / "full").glob("*.click")
    assert from_tree.read_bytes() == from_sdist.read_bytes()
    data = _data(from_tree)
    assert data["./vendor/libfoo.so"] == LIBRARY
    assert data["./vendor/plugins/qmldir"] == b"module Foo\n"
    assert "./vendor/README" not in data  # only what is included
    assert scene.around(scene.base / "wheel", scene.base / "full") == before


def test_an_include_through_links_inside_packs_what_they_lead_to(scene: Scene) -> None:
    """A link to a link to a folder on the way; the source package refuses an include
    below a link it carries (test_attack_sdist), so --wheel only."""
    _project(scene, {"vendor/plugins": "../third/plugins", "vendor/via": "plugins"},
             ["/vendor/via/qmldir"])
    before = scene.around(scene.base / "wheel")
    wheel = _build(scene, "wheel", "--wheel")
    assert wheel.returncode == 0, wheel.stdout + wheel.stderr
    (click,) = (scene.base / "wheel").glob("*.click")
    data = _data(click)
    assert data["./vendor/via/qmldir"] == b"module Foo\n"
    assert "./vendor/plugins/qmldir" not in data
    assert scene.around(scene.base / "wheel") == before


@pytest.mark.parametrize(("links", "include", "fragment"), [
    ({"vendor/libfoo.so": "BAIT_DIR/secret.txt"}, "/vendor/libfoo.so",
     "'/vendor/libfoo.so' leaves the source folder"),
    ({"vendor/libfoo.so": "../../bait/secret.txt"}, "/vendor/libfoo.so",
     "'/vendor/libfoo.so' leaves the source folder"),
    ({"vendor/up": "../..", "vendor/libfoo.so": "up/bait/secret.txt"}, "/vendor/libfoo.so",
     "'/vendor/libfoo.so' leaves the source folder"),
    ({"vendor/home": "BAIT_DIR"}, "/vendor/home/secret.txt",
     "'/vendor/home/secret.txt' leaves the source folder"),
    ({"vendor/libfoo.so": "libfoo.so.1"}, "/vendor/libfoo.so",
     "'/vendor/libfoo.so' does not exist (the link vendor/libfoo.so leads to 'libfoo.so.1')"),
    ({"vendor/a": "b", "vendor/b": "a"}, "/vendor/a", "too many levels of symbolic links"),
])
def test_an_include_that_cannot_be_packed_is_one_error(
        scene: Scene, links: dict[str, str], include: str, fragment: str) -> None:
    _project(scene, links, [include])
    before = scene.around(scene.base / "wheel")
    result = _build(scene, "wheel", "--wheel")
    assert_one_error(result, "pyproject.toml: tool.click-build.include: ", fragment)
    assert BAIT not in result.stdout + result.stderr
    assert not list((scene.base / "wheel").iterdir())
    assert scene.around(scene.base / "wheel") == before
