"""Every template, rendered with default and with unusual answers, builds with
`python -m build` through our backend, passes the original `click verify`, our
`verify` and `review`, and installs into a database that both click-build and
the original click read."""

from __future__ import annotations

import json
import shutil
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest
from conftest import CLICK_BUILD, run
from test_templates import ANSWER_SETS, KINDS, answers_for, new, project_of, run_qml_tests

#: Python and CMake builds compile or install real things: mark them slow.
SLOW_KINDS = {"python", "cpp"}

CASES = [
    pytest.param((kind, label), marks=[pytest.mark.slow] if kind in SLOW_KINDS else [],
                 id=f"{kind}-{label}")
    for kind in KINDS for label in ANSWER_SETS
]


@pytest.fixture
def built(request: pytest.FixtureRequest, tmp_path: Path) -> tuple[Path, Path, dict[str, object]]:
    """Render a template and build it with `python -m build -n -x` (sdist, then the
    .click from the sdist); return the project, the .click and the source manifest."""
    kind, label = request.param
    new(tmp_path / "src", kind, answers_for(kind, label))
    project = project_of(tmp_path / "src")
    result = run([sys.executable, "-m", "build", "-n", "-x", "-o", str(tmp_path / "dist")],
                 cwd=project)
    (click,) = (tmp_path / "dist").glob("*.click")
    (sdist,) = (tmp_path / "dist").glob("*.tar.gz")
    assert f"Successfully built {sdist.name} and {click.name}" in result.stdout
    manifest = json.loads((project / "manifest.json").read_text(encoding="utf-8"))
    return project, click, manifest


@pytest.fixture
def db_root() -> Iterator[Path]:
    """A database root that the ``clickpkg`` user can reach: as root the installer
    unpacks as clickpkg (as the original does), and pytest's tmp_path is private."""
    parent = Path(tempfile.mkdtemp(prefix="click-build-db-"))
    parent.chmod(0o755)
    try:
        yield parent / "db"
    finally:
        shutil.rmtree(parent)


@pytest.mark.oracle
@pytest.mark.parametrize("built", CASES, indirect=True)
def test_built_package_verifies_reviews_and_installs(
    built: tuple[Path, Path, dict[str, object]], original_click: str, db_root: Path
) -> None:
    project, click, manifest = built
    name = manifest["name"]
    app = project.name
    assert click.name.startswith(f"{name}_")

    run([original_click, "verify", "--force-missing-framework", "--allow-unauthenticated",
         str(click)])
    run([*CLICK_BUILD, "verify", "--force-missing-framework", "--allow-unauthenticated",
         str(click)])

    review = json.loads(run([*CLICK_BUILD, "review", "--strict", "--json", str(click)]).stdout)
    assert review["passed"] and review["findings"] == [], review

    info = json.loads(run([*CLICK_BUILD, "info", str(click)]).stdout)
    for key in ("name", "title", "framework", "maintainer", "hooks"):
        assert info[key] == manifest[key], key
    contents = run([*CLICK_BUILD, "contents", str(click)]).stdout
    for left_out in ("README.md", "pyproject.toml", "./po/", "./tests/"):
        assert left_out not in contents

    root = db_root
    run([*CLICK_BUILD, "install", "--root", str(root), "--all-users", "--allow-unauthenticated",
         "--force-missing-framework", str(click)])
    version = info["version"]
    assert run([*CLICK_BUILD, "list", "--root", str(root)]).stdout == f"{name}\t{version}\n"
    assert f"{name}\t{version}\n" in run([original_click, "list", "--root", str(root)]).stdout
    installed = root / str(name) / str(version)
    assert (root / str(name) / "current").resolve() == installed.resolve()
    for target in manifest["hooks"][app].values():  # type: ignore[index]
        assert (installed / target).is_file()
    assert json.loads((installed / f".click/info/{name}.manifest").read_text())["name"] == name


@pytest.mark.slow
@pytest.mark.parametrize("built", [pytest.param(("python", "unusual"), id="python-unusual")],
                         indirect=True)
def test_installed_python_app_finds_its_code(
    built: tuple[Path, Path, dict[str, object]], db_root: Path, tmp_path: Path
) -> None:
    """The QML test, run against the *installed* tree (no src/ there), reaches the
    Python module through lib/python3/dist-packages, as on a device."""
    project, click, manifest = built
    run([*CLICK_BUILD, "install", "--root", str(db_root), "--allow-unauthenticated",
         "--force-missing-framework", str(click)])
    (installed,) = (db_root / str(manifest["name"])).glob("[0-9]*")
    assert not (installed / "src").exists()
    tree = tmp_path / "installed"
    shutil.copytree(installed, tree, symlinks=True, ignore=shutil.ignore_patterns(".click"))
    shutil.copytree(project / "tests", tree / "tests")
    (tree / "tests/test_app.py").unlink()
    result = run_qml_tests(tree)
    assert "PASS   : qmltestrunner::Main::test_python_answers()" in result.stdout
