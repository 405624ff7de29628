"""Backend settings as an attacker writes them (issue 11).

CI scripts fill ``[tool.click-build]`` settings (``-C``, ``CLICK_BUILD_*``) from untrusted
text such as branch names.  A build folder so named must never be the project, a parent
of it or someone else's folder (a build deletes and rewrites inside it), and a source
folder, manifest or include so named must not carry files from outside the project into
the package.  Each case: one error line, no traceback, nothing around it changed.
"""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest
from backend_helpers import EXAMPLES, PACKAGES, assert_one_error, copy_project, only_click, pybuild

Scene = tuple[Path, Path, Path]


def _snapshot(root: Path, skip: tuple[Path, ...] = ()) -> dict[str, object]:
    """Every file's bytes, every link's target and every folder under ``root``."""
    out: dict[str, object] = {}
    for dirpath, dirnames, filenames in os.walk(root):
        here = Path(dirpath)
        dirnames[:] = [d for d in dirnames if here / d not in skip]
        for name in [*dirnames, *filenames]:
            path = here / name
            if path.is_symlink():
                out[str(path)] = "-> " + os.readlink(path)
            elif path.is_file():
                out[str(path)] = path.read_bytes()
            else:
                out[str(path)] = "folder"
    return out


@pytest.fixture
def scene(tmp_path: Path) -> Scene:
    """A project next to a victim: a folder of someone's files."""
    victim = tmp_path / "victim"
    (victim / "keys").mkdir(parents=True)
    (victim / "thesis.tex").write_text("years of work\n")
    (victim / "keys" / "id_ed25519").write_text("-----BEGIN OPENSSH PRIVATE KEY-----\n")
    project = copy_project(EXAMPLES / "hello-qml", tmp_path / "project")
    (tmp_path / "out").mkdir()
    return tmp_path, project, victim


@pytest.mark.parametrize("value", [
    ".", "..", "/", "build/../..", "build/{arch}/../../..", "../victim", "VICTIM", "qml",
    "assets/..",
])
def test_a_build_dir_that_is_not_click_builds_is_refused(scene: Scene, value: str) -> None:
    top, project, victim = scene
    value = value.replace("VICTIM", str(victim))
    before = _snapshot(top, skip=(top / "out",))
    result = pybuild(project, "--wheel", "-o", str(top / "out"),
                     "-C", f"click-build.build-dir={value}", check=False)
    assert_one_error(result, "tool.click-build.build-dir")
    assert _snapshot(top, skip=(top / "out",)) == before
    assert not list((top / "out").iterdir())


def test_a_cmake_build_cannot_be_pointed_at_a_parent(tmp_path: Path) -> None:
    """The cmake kind deletes <build-dir>/stage and prunes <build-dir>/source: with
    build-dir = "..", a folder named 'stage' or 'source' beside the project went."""
    project = copy_project(PACKAGES / "cmake-hello", tmp_path / "project")
    for name in ("stage", "source"):
        (tmp_path / name).mkdir()
        (tmp_path / name / "precious.txt").write_text("not click-build's\n")
    before = _snapshot(tmp_path)
    result = pybuild(project, "--wheel", "-o", str(tmp_path / "out"), "-C",
                     "click-build.build-dir=..", check=False)
    assert_one_error(result, "is a parent of the project folder")
    assert _snapshot(tmp_path, skip=(tmp_path / "out",)) == before


def test_the_environment_is_held_to_the_same_rules(scene: Scene) -> None:
    top, project, victim = scene
    before = _snapshot(top, skip=(top / "out",))
    result = pybuild(project, "--wheel", "-o", str(top / "out"), check=False,
                     env={"CLICK_BUILD_BUILD_DIR": "..", "CLICK_BUILD_SOURCE_DIR": "../victim"})
    assert_one_error(result, "is outside the project")
    result = pybuild(project, "--wheel", "-o", str(top / "out"), check=False,
                     env={"CLICK_BUILD_BUILD_DIR": ".."})
    assert_one_error(result, "is a parent of the project folder")
    assert _snapshot(top, skip=(top / "out",)) == before


def test_an_empty_folder_of_another_user_is_not_adopted(scene: Scene) -> None:
    top, project, _ = scene
    planted = top / "planted"
    planted.mkdir()
    os.chown(planted, 65534, 65534)  # nobody's, made before the build, e.g. in /tmp
    result = pybuild(project, "--wheel", "-o", str(top / "out"), "-C",
                     f"click-build.build-dir={planted}", check=False)
    assert_one_error(result, "belongs to another user")
    assert not list(planted.iterdir())


def test_a_new_build_dir_is_created_marked_and_reused(scene: Scene) -> None:
    top, project, _ = scene
    result = pybuild(project, "--wheel", "-o", str(top / "out"), "-C",
                     "click-build.build-dir=build/custom-{arch}")
    folder = project / "build" / "custom-all"
    assert (folder / ".click-build-folder").is_file(), result.stdout
    only_click(top / "out").unlink()
    (folder / "cache.txt").write_text("left by an earlier build\n")  # inside a marked folder
    pybuild(project, "--wheel", "-o", str(top / "out"), "-C",
            "click-build.build-dir=build/custom-{arch}")
    assert (folder / "cache.txt").read_text() == "left by an earlier build\n"  # not ours: kept
    assert "./build/custom-all/cache.txt" not in subprocess.run(
        ["dpkg-deb", "-c", str(only_click(top / "out"))], capture_output=True, text=True,
        check=True).stdout


def test_links_planted_in_the_build_folder_are_not_followed(scene: Scene) -> None:
    """A cmake build deletes its stage and prunes its source mirror: through a link
    planted there, that would delete the victim's files."""
    top, _, victim = scene
    project = copy_project(PACKAGES / "cmake-hello", top / "cmake-project")
    pybuild(project, "--wheel", "-o", str(top / "first"))
    build = next((project / "build").glob("click-*"))
    for name in ("stage", "source", "cmake"):
        target = build / name
        subprocess.run(["rm", "-rf", str(target)], check=True)
        target.symlink_to(victim, target_is_directory=True)
    before = _snapshot(victim)
    pybuild(project, "--wheel", "-o", str(top / "second"))
    assert _snapshot(victim) == before
    assert not (build / "stage").is_symlink() and (build / "stage").is_dir()
    only_click(top / "second")


def test_links_planted_in_the_source_mirror_are_not_written_through(scene: Scene) -> None:
    """Inside the copy of the sources CMake runs on: a file or a folder of it replaced by
    a link to the victim's, and a leftover link to a folder of theirs to prune; the next
    build replaces them and writes and deletes nothing of the victim's."""
    top, _, victim = scene
    project = copy_project(PACKAGES / "cmake-hello", top / "cmake-project")
    pybuild(project, "--wheel", "-o", str(top / "first"))
    mirror = next((project / "build").glob("click-*")) / "source"
    (project / "assets").mkdir()
    (project / "assets" / "logo.svg").write_text("<svg/>\n")
    (mirror / "main.cpp").unlink()
    (mirror / "main.cpp").symlink_to(victim / "thesis.tex")  # copied over: through the link?
    (mirror / "assets").symlink_to(victim / "keys", target_is_directory=True)  # a new folder
    (mirror / "left-over").symlink_to(victim, target_is_directory=True)  # pruned
    before = _snapshot(victim)
    pybuild(project, "--wheel", "-o", str(top / "second"))
    assert _snapshot(victim) == before
    assert not (mirror / "main.cpp").is_symlink()
    assert (mirror / "main.cpp").read_bytes() == (project / "main.cpp").read_bytes()
    assert not (mirror / "assets").is_symlink()
    assert (mirror / "assets" / "logo.svg").read_text() == "<svg/>\n"
    assert not os.path.lexists(mirror / "left-over")
    only_click(top / "second")


@pytest.mark.parametrize(("key", "value", "fragment"), [
    ("source-dir", "..", "is outside the project"),
    ("source-dir", "/etc", "is outside the project"),
    ("source-dir", "../victim", "is outside the project"),
    ("source-dir", "into-victim", "is outside the project"),  # a link in the project
    ("manifest", "../victim/manifest.json", "is outside the project"),
    ("include", "/../victim", "leaves the source folder"),
    ("include", "/into-victim", "leaves the source folder"),
])
def test_sources_outside_the_project_are_refused(scene: Scene, key: str, value: str,
                                                 fragment: str) -> None:
    top, project, victim = scene
    (project / "into-victim").symlink_to(victim, target_is_directory=True)
    (victim / "manifest.json").write_text((project / "manifest.json").read_text())
    result = pybuild(project, "--wheel", "-o", str(top / "out"),
                     "-C", f"click-build.{key}={value}", check=False)
    assert_one_error(result, f"tool.click-build.{key}", fragment)
    assert not list((top / "out").iterdir())


def test_sources_outside_the_project_when_the_user_says_so(scene: Scene) -> None:
    top, project, _ = scene
    app = top / "shared-app"  # the app's files kept beside the project, on purpose
    app.mkdir()
    for name in ("qml", "assets", "hello-qml.desktop", "hello-qml.apparmor"):
        (project / name).rename(app / name)
    result = pybuild(project, "--wheel", "-o", str(top / "out"), "-C",
                     "click-build.source-dir=../shared-app", check=False)
    assert_one_error(result, "allow-external-sources = true")
    pybuild(project, "--wheel", "-o", str(top / "out"), "-C",
            "click-build.source-dir=../shared-app", "-C",
            "click-build.allow-external-sources=true")
    only_click(top / "out")


# ------------------------------------------------------------ as a plain user

@pytest.mark.root
@pytest.mark.parametrize(("key", "value"), [
    ("build-dir", ".."), ("build-dir", "../victim"), ("build-dir", "HOME"),
    ("source-dir", "HOME"), ("manifest", "../victim/manifest.json"),
])
def test_as_a_plain_user_with_a_real_home(public_tmp: Path, portable: Path, key: str,
                                          value: str) -> None:
    from install_support import run as run_as

    home, victim = public_tmp / "home", public_tmp / "victim"
    (home / ".ssh").mkdir(parents=True)
    (home / ".ssh" / "id_ed25519").write_text("secret\n")
    victim.mkdir()
    (victim / "notes").write_text("mine\n")
    project = copy_project(EXAMPLES / "hello-qml", public_tmp / "project")
    (victim / "manifest.json").write_text((project / "manifest.json").read_text())
    subprocess.run(["chown", "-R", "nobody:nogroup", str(public_tmp)], check=True)
    value = value.replace("HOME", str(home))
    before = _snapshot(public_tmp)
    hook = (f"import click_build.backend as b; b.build_wheel('dist', {{'click-build.{key}': "
            f"{value!r}}})")
    result = run_as(["/usr/bin/python3", "-c", hook], user="nobody", cwd=str(project),
                    env={"HOME": str(home), "PYTHONPATH": str(portable), "PATH": "/usr/bin:/bin"})
    assert result.returncode == 1, result.stdout + result.stderr
    lines = [line for line in result.stderr.splitlines() if line.strip()]
    assert len(lines) == 1 and lines[0].startswith("click-build: error: "), result.stderr
    assert f"tool.click-build.{key}" in lines[0]
    assert _snapshot(public_tmp) == before
