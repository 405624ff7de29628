"""Which of a project's files each route reads: setuptools' own errors stop the build,
package data is packed once, tool build folders stay out, and a link the source
package cannot carry is named by click-build rather than by the frontend's traceback."""

from __future__ import annotations

import os
import re
import shutil
import tarfile
from pathlib import Path

import pytest
from backend_helpers import (
    EXAMPLES,
    assert_one_error,
    copy_project,
    data_members,
    only_click,
    pybuild,
    verify_both,
)
from conftest import run

from click_build.backend.context import build_dir_patterns
from click_build.backend.mirror import mirror_sources
from click_build.backend.settings import load_project

pytestmark = pytest.mark.slow


def _python_app(tmp_path: Path, name: str = "app") -> Path:
    """hello-python without its vendored dependency (no pip run needed)."""
    project = copy_project(EXAMPLES / "hello-python", tmp_path / name)
    text = (project / "pyproject.toml").read_text()
    (project / "pyproject.toml").write_text(
        re.sub(r"(?m)^dependencies = .*$", "dependencies = []", text))
    return project


def test_setuptools_errors_stop_the_build(tmp_path: Path) -> None:
    """A flat layout with several top-level folders: setuptools refuses to guess the
    packages; the build must say so, not pack an app without its Python code."""
    project = _python_app(tmp_path)
    shutil.move(project / "src" / "hello", project / "hello")  # the flat layout
    (project / "src").rmdir()
    for args in (["--wheel"], []):  # --wheel, and source package then .click
        result = pybuild(project, *args, "-o", str(tmp_path / "out"), check=False)
        assert "Multiple top-level packages discovered in a flat-layout" in (
            result.stdout + result.stderr)
        assert_one_error(result, "setuptools could not build the app's Python packages")
        assert not list((tmp_path / "out").glob("*.click"))


def test_package_data_is_packed_once(tmp_path: Path) -> None:
    project = _python_app(tmp_path)
    data = project / "src" / "hello" / "data"
    data.mkdir()
    (data / "words.json").write_text('["hallo"]\n')
    with open(project / "pyproject.toml", "a") as f:
        f.write('\n[tool.setuptools.package-data]\nhello = ["data/*.json"]\n')
    pybuild(project, "--wheel", "-o", str(tmp_path / "out"))
    click = only_click(tmp_path / "out")
    members = data_members(click)
    assert "./lib/python3/dist-packages/hello/data/words.json" in members
    assert not [m for m in members if m.startswith("./src")], members
    assert "./qml/Main.qml" in members  # a folder without modules stays data
    verify_both(click)


def _sdist_names(outdir: Path) -> list[str]:
    (sdist,) = outdir.glob("*.tar.gz")
    with tarfile.open(sdist) as tar:
        return tar.getnames()


def test_tool_build_folders_stay_out_of_the_source_package(tmp_path: Path) -> None:
    """setuptools' build/ (left by `setup.py bdist_click`) and CMake's `-B build`."""
    python = _python_app(tmp_path, "py")
    (python / "build" / "lib" / "hello").mkdir(parents=True)
    (python / "build" / "lib" / "hello" / "__init__.py").write_text("stale = True\n")
    cpp = copy_project(EXAMPLES / "hello-cpp", tmp_path / "cpp")
    (cpp / "build").mkdir()
    (cpp / "build" / "CMakeCache.txt").write_text("CMAKE_BUILD_TYPE:STRING=Debug\n")
    for project in (python, cpp):
        out = tmp_path / f"sdist-{project.name}"
        pybuild(project, "--sdist", "-o", str(out))
        names = _sdist_names(out)
        assert not [n for n in names if "/build/" in n or n.endswith("/build")], names
        assert any(n.endswith("/qml/Main.qml") for n in names), names
    # The cmake kind's source mirror (what CMake configures) leaves it out as well.
    mirror = tmp_path / "mirror"
    mirror.mkdir()
    mirror_sources(cpp, mirror, build_dir_patterns(load_project(cpp), "cmake"))
    assert (mirror / "CMakeLists.txt").is_file() and not (mirror / "build").exists()
    # A qml project's build/ that click-build did not make is app content: packed by
    # --wheel, so carried by the source package too (both routes give one package).
    qml = copy_project(EXAMPLES / "hello-qml", tmp_path / "qml")
    (qml / "build").mkdir()
    (qml / "build" / "notes.txt").write_text("part of the app\n")
    pybuild(qml, "--sdist", "-o", str(tmp_path / "sdist-qml"))
    assert any(n.endswith("/build/notes.txt") for n in _sdist_names(tmp_path / "sdist-qml"))


@pytest.mark.parametrize("target", ["/usr/share/javascript/jquery", "../../outside"])
def test_a_link_out_of_the_project_is_named_on_the_source_route(tmp_path: Path,
                                                                target: str) -> None:
    project = copy_project(EXAMPLES / "hello-html5", tmp_path / "web")
    text = (project / "pyproject.toml").read_text()
    (project / "pyproject.toml").write_text(text.replace(
        "[tool.click-build]", '[tool.click-build]\nreview = "report"', 1))
    os.symlink(target, project / "www" / "lib")
    wheel = pybuild(project, "--wheel", "-o", str(tmp_path / "wheel"))
    assert "lint.symlink-external" in wheel.stdout + wheel.stderr  # reported, then built
    only_click(tmp_path / "wheel")
    result = pybuild(project, "-o", str(tmp_path / "full"), check=False)
    assert_one_error(result, "www/lib: a link to", "outside the project",
                     "cannot go into a source package", "--wheel")
    assert not list((tmp_path / "full").glob("*"))


def test_a_relative_link_inside_the_project_takes_the_source_route(tmp_path: Path) -> None:
    project = copy_project(EXAMPLES / "hello-html5", tmp_path / "web")
    os.symlink("../www/index.html", project / "www" / "start.html")
    pybuild(project, "-o", str(tmp_path / "full"))
    pybuild(project, "--wheel", "-o", str(tmp_path / "wheel"))
    full, wheel = only_click(tmp_path / "full"), only_click(tmp_path / "wheel")
    assert full.read_bytes() == wheel.read_bytes()
    assert "./www/start.html -> ../www/index.html" in run(["dpkg-deb", "-c", str(full)]).stdout


def test_a_cmake_build_folder_of_any_name_stays_out(tmp_path: Path) -> None:
    """docs/cmake.md configures one folder per target in the project (`cmake -B build-2404`,
    `-B build-arm64`); `python -m build` then carried that folder into the source package
    and the mirror CMake configures, and stopped on the links ClickBuild makes there for
    msgfmt (build-2404/click/po/de.po -> po/de.po) with an error about the build folder."""
    from cmake_support import configure

    project = copy_project(EXAMPLES / "hello-cpp", tmp_path / "cpp")
    configure(project, project / "build-2404", "-DCLICK_VERSION=1.0.0")
    assert (project / "build-2404" / "click" / "po" / "de.po").is_symlink()
    pybuild(project, "-o", str(tmp_path / "out"))  # the sdist, then the package from it
    names = _sdist_names(tmp_path / "out")
    assert not [n for n in names if "/build-2404" in n], names
    assert any(n.endswith("/qml/Main.qml") for n in names), names
    verify_both(only_click(tmp_path / "out"))
    pybuild(project, "--wheel", "-o", str(tmp_path / "wheel"))
    mirrors = list((project / "build").glob("click-*/source"))
    assert mirrors and not [m for m in mirrors if (m / "build-2404").exists()]
    assert (project / "build-2404" / "CMakeCache.txt").is_file()  # left as it was
