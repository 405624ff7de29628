"""The source package of a project that holds secrets, or links that lead out once
unpacked (issue 27, class 9), built with the real ``python -m build`` as root and as a real
unprivileged user, unpacked with the real ``tar -x``, comparing the home before and after.

``python -m build --sdist`` packed ``.env``, ``.netrc``, ``.ssh/`` and private keys without
a word; they are left out, and one warning says which and how to ship one on purpose.
A link that is inside the tree by its own text but leaves it through another link
(``esc -> p/q/..`` with ``p/q -> ..``) pointed outside the unpacked folder; it is refused.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import tarfile
from pathlib import Path

import pytest
from backend_helpers import EXAMPLES, assert_one_error, data_members
from conftest import write_tree
from project_attack import Scene

PEM_KEY = "-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAAA\n" \
          "-----END OPENSSH PRIVATE KEY-----\n"
SECRETS: dict[str, str | bytes] = {
    ".env": "API_TOKEN=s3cr3t\n",
    ".env.production": "API_TOKEN=s3cr3t\n",
    ".netrc": "machine example.com login jane password s3cr3t\n",
    ".ssh/id_ed25519": PEM_KEY,
    ".ssh/config": "Host phone\n",
    "deploy/signing.pem": "Bag Attributes\n    localKeyID: 01\n" + PEM_KEY.replace(
        "OPENSSH ", ""),
    "assets/id_rsa": PEM_KEY,
    "keys/store.p12": b"0\x82\x01\x00 not really pkcs12",
    "keys/gpg-secret": "-----BEGIN PGP PRIVATE KEY BLOCK-----\n\nlQOYBF\n",
    "tools/putty.ppk": "PuTTY-User-Key-File-3: ssh-ed25519\nEncryption: none\n",
}
KEPT: dict[str, str | bytes] = {
    ".env.example": "API_TOKEN=\n",
    "assets/id_rsa.pub": "ssh-rsa AAAA jane@laptop\n",
    "deploy/server.pem": "-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n",
    "qml/Keys.qml": 'import QtQuick 2.12\nItem { property string k: "-----BEGIN RSA '
                    'PRIVATE KEY-----" }\n',  # mentions one, is not one
}
WARNING = ("click-build: warning: the source package leaves out what may hold secrets: "
           ".env, .env.production, .netrc, .ssh/, assets/id_rsa, deploy/signing.pem, "
           "keys/gpg-secret, keys/store.p12 and 1 more; to ship one on purpose, name it in "
           "tool.click-build.include (such as -C click-build.include=.env)")
TOP = "hello_qml-1.0.0"


def _project(s: Scene, files: dict[str, str | bytes]) -> Path:
    shutil.copytree(EXAMPLES / "hello-qml", s.project, dirs_exist_ok=True,
                    ignore=shutil.ignore_patterns("build", "dist", "__pycache__"))
    return write_tree(s.project, files)


def _build(s: Scene, *args: str) -> subprocess.CompletedProcess[str]:
    out = s.base / "out"
    out.mkdir(exist_ok=True)
    return s.python("-m", "build", "-n", "-x", "-o", str(out), *args)


def _names(s: Scene) -> set[str]:
    (sdist,) = (s.base / "out").glob("*.tar.gz")
    with tarfile.open(sdist) as tar:
        return {m.name.removeprefix(f"{TOP}/") for m in tar.getmembers()}


def _lines(result: subprocess.CompletedProcess[str]) -> list[str]:
    return [line.removeprefix("< ") for line in (result.stdout + result.stderr).splitlines()]


def test_secrets_stay_out_with_one_warning(scene: Scene) -> None:
    _project(scene, {**SECRETS, **KEPT})
    before = scene.around(scene.base / "out")
    result = _build(scene, "--sdist")
    assert result.returncode == 0, result.stdout + result.stderr
    assert [line for line in _lines(result) if "warning" in line] == [WARNING]
    names = _names(scene)
    assert not set(SECRETS) & names and not [n for n in names if n.startswith(".ssh")]
    assert set(KEPT) <= names and "qml/Main.qml" in names
    assert scene.around(scene.base / "out") == before


def test_one_named_in_include_is_shipped(scene: Scene) -> None:
    _project(scene, {".env": "API_TOKEN=for-the-tests\n", "deploy/test-key.pem": PEM_KEY,
                     ".netrc": "machine x\n"})
    result = _build(scene, "--sdist", "-C", "click-build.include=.env",
                    "-C", "click-build.include=/deploy/test-key.pem")
    assert result.returncode == 0, result.stdout + result.stderr
    assert {".env", "deploy/test-key.pem"} <= _names(scene)
    assert ".netrc" not in _names(scene)
    assert [line for line in _lines(result) if "warning" in line] == [
        "click-build: warning: the source package leaves out what may hold secrets: .netrc; "
        "to ship one on purpose, name it in tool.click-build.include (such as "
        "-C click-build.include=.netrc)"]


def test_the_click_from_the_source_package_lacks_them_too(scene: Scene) -> None:
    """docs/backend.md: built from the source package, the .click lacks them as well;
    --wheel reads the folder and packs what the kind packs (qml keeps dotfiles)."""
    _project(scene, {".env": "API_TOKEN=s3cr3t\n", ".ssh/id_ed25519": PEM_KEY,
                     "deploy/signing.pem": PEM_KEY})
    full = _build(scene)
    assert full.returncode == 0, full.stdout + full.stderr
    assert ("click-build: warning: the source package leaves out what may hold secrets: "
            ".env, .ssh/, deploy/signing.pem; to ship one on purpose, name it in "
            "tool.click-build.include (such as -C click-build.include=.env)") in _lines(full)
    (click,) = (scene.base / "out").glob("*.click")
    assert "./.env" not in data_members(click)
    shutil.rmtree(scene.base / "out")
    wheel = _build(scene, "--wheel")
    assert wheel.returncode == 0, wheel.stdout + wheel.stderr
    (click,) = (scene.base / "out").glob("*.click")
    assert "./.env" in data_members(click)


def _unpacked_links_outside(tree: Path, dest: Path) -> list[str]:
    """Pack ``tree`` with the real tar, unpack it with the real tar -x into ``dest``, and
    return the links whose real path is outside the unpacked folder."""
    dest.mkdir()
    archive = dest.parent / f"{dest.name}.tar"
    subprocess.run(["tar", "-cf", str(archive), "-C", str(tree), "."], check=True)
    subprocess.run(["tar", "-xf", str(archive), "-C", str(dest)], check=True)
    top = os.path.realpath(dest)
    outside = []
    for dirpath, dirnames, filenames in os.walk(dest):
        for name in dirnames + filenames:
            path = os.path.join(dirpath, name)
            real = os.path.realpath(path)
            if os.path.islink(path) and not (real == top or real.startswith(top + os.sep)):
                outside.append(os.path.relpath(path, dest))
    return sorted(outside)


@pytest.mark.parametrize(("links", "error"), [
    # inside by its own text (p/q -> .. is the top), outside through p/q
    ({"p/q": "..", "esc": "p/q/.."}, "esc: a link to 'p/q/..', which leads outside the "
                                     "project once unpacked, through the link p/q -> '..'"),
    ({"a/b/c/r": "../../..", "qml/up": "../a/b/c/r/../qml"},
     "qml/up: a link to '../a/b/c/r/../qml', which leads outside the project once unpacked, "
     "through the link a/b/c/r -> '../../..'"),
    ({"d": "a/b", "a/b/x": "../..", "up": "d/x/.."},
     "up: a link to 'd/x/..', which leads outside the project once unpacked, through the "
     "link a/b/x -> '../..'"),
])
def test_a_chain_of_links_leading_out_once_unpacked_is_refused(
        scene: Scene, links: dict[str, str], error: str) -> None:
    project = _project(scene, {"a/b/keep.txt": "x\n"})
    for name, target in links.items():
        (project / name).parent.mkdir(parents=True, exist_ok=True)
        os.symlink(target, project / name)
    # The chain is real: tar -x of the tree leaves a link pointing out of the folder.
    assert _unpacked_links_outside(project, scene.bait / "unpacked")
    shutil.rmtree(scene.bait / "unpacked")
    (scene.bait / "unpacked.tar").unlink()
    before = scene.around(scene.base / "out")
    result = _build(scene, "--sdist")
    assert_one_error(result, error, "cannot go into a source package", "--wheel")
    assert not list((scene.base / "out").iterdir())
    assert scene.around(scene.base / "out") == before


def test_a_file_below_a_link_is_refused(scene: Scene) -> None:
    """An include through a link would have the unpacking write through that link."""
    project = _project(scene, {"real/sub/data.txt": "x\n"})
    os.symlink("real", project / "alias")
    result = _build(scene, "--sdist", "-C", "click-build.include=/alias/sub")
    assert_one_error(result, "alias/sub: below the link alias")
    assert not list((scene.base / "out").iterdir())


def test_links_that_stay_inside_are_packed_and_stay_inside_after_tar_x(scene: Scene) -> None:
    project = _project(scene, {"assets/more/deep.txt": "x\n"})
    links = {"qml/shared": "../assets", "assets/logo-link": "logo.svg",
             "alias": "qml/shared/logo-link", "up/deep/top": "../..", "via": "up/deep/top/qml",
             "assets/more/back": "../../qml/shared/more/deep.txt"}
    for name, target in links.items():
        (project / name).parent.mkdir(parents=True, exist_ok=True)
        os.symlink(target, project / name)
    result = _build(scene, "--sdist")
    assert result.returncode == 0, result.stdout + result.stderr
    (sdist,) = (scene.base / "out").glob("*.tar.gz")
    dest = scene.bait / "unpacked"
    dest.mkdir()
    subprocess.run(["tar", "-xzf", str(sdist), "-C", str(dest)], check=True)
    top = dest / TOP
    for name, target in links.items():
        assert os.readlink(top / name) == target
        real, inside = os.path.realpath(top / name), os.path.realpath(top)
        assert real == inside or real.startswith(inside + os.sep), (name, real)
        assert os.path.exists(top / name), name
    assert _unpacked_links_outside(top, scene.bait / "again") == []
