"""Every example and every template builds into a package the review passes."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from conftest import CLICK_BUILD, ROOT, run

from click_build.framework_table import QT_MIN_FRAMEWORK
from click_build.new import list_templates
from click_build.review import review_package

EXAMPLES = sorted(p.name for p in (ROOT / "examples").iterdir() if (p / "pyproject.toml").exists())
KINDS = [t.kind for t in list_templates()]


def host_qt_framework() -> str:
    """The framework whose Qt this machine compiles against (CMake projects link to it)."""
    version = run(["pkg-config", "--modversion", "Qt5Core"]).stdout.strip()
    return QT_MIN_FRAMEWORK[".".join(version.split(".")[:2])]


def build_wheel(project: Path, out: Path) -> Path:
    env = {"CLICK_FRAMEWORK": host_qt_framework()} if (project / "CMakeLists.txt").exists() else {}
    run([str(Path(CLICK_BUILD[0])), "-m", "build", "--wheel", "-n", "-x", "--outdir", str(out),
         str(project)], env=env)
    (package,) = out.glob("*.click")
    return package


def assert_clean(package: Path) -> None:
    findings = [f for f in review_package(package) if f.severity != "info"]
    assert findings == [], [f.line() for f in findings]


def test_there_are_examples_and_templates() -> None:
    assert {"hello-qml", "hello-html5", "hello-python", "hello-cpp"} <= set(EXAMPLES)
    assert {"qml", "html5"} <= set(KINDS)


@pytest.mark.slow
@pytest.mark.parametrize("example", EXAMPLES)
def test_example_passes_review(example: str, tmp_path: Path) -> None:
    project = tmp_path / example
    shutil.copytree(ROOT / "examples" / example, project)
    assert_clean(build_wheel(project, tmp_path / "dist"))


@pytest.mark.slow
@pytest.mark.parametrize("kind", KINDS)
def test_template_passes_review(kind: str, tmp_path: Path) -> None:
    out = tmp_path / "new"
    run([*CLICK_BUILD, "new", kind, "--no-input", "-o", str(out)])
    (project,) = [p for p in out.iterdir() if p.is_dir()]
    assert_clean(build_wheel(project, tmp_path / "dist"))
