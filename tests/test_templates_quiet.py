"""A fresh project is quiet: every template builds, by every route, with no warning and no
advice, because each starts on what the review recommends; `new` takes every framework
the table marks available, and warns only where the app cannot be what the framework is."""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path

import pytest
from conftest import CLICK_BUILD, assert_clean_error, run
from templates_support import KINDS, project_of

from click_build.framework_table import FRAMEWORKS as TABLE
from click_build.framework_table import policy_version_for
from click_build.new import FRAMEWORKS

#: What a warning or a piece of advice looks like in any tool's output: ours
#: ("click-build: warning:", "review: ... [check.id]" and its "fix:"), CMake's, the
#: compilers', pip's and setuptools' (Python warnings, deprecations).
NOISE = re.compile(r"warn|review:|fix:|advi[cs]e|deprecat|\[(lint|security|desktop|qml|hooks)\.",
                   re.IGNORECASE)
SLOW_KINDS = {"python", "cpp"}


def noise(result: object) -> list[str]:
    text = getattr(result, "stdout", "") + getattr(result, "stderr", "")
    return [line for line in text.splitlines() if NOISE.search(line)]


@pytest.mark.parametrize("kind", [pytest.param(k, marks=[pytest.mark.slow] if k in SLOW_KINDS
                                               else []) for k in KINDS])
def test_a_fresh_project_builds_with_no_warning_and_no_advice(tmp_path: Path, kind: str) -> None:
    made = run([*CLICK_BUILD, "new", kind, "--no-input", "--set", "title=Tea Timer",
                "-o", str(tmp_path)])
    assert noise(made) == [], made.stdout + made.stderr
    project = project_of(tmp_path)
    routes = {
        "python -m build -n": [sys.executable, "-m", "build", "-n", "-o", str(tmp_path / "a")],
        "click-build build": [*CLICK_BUILD, "build", ".", "-o", str(tmp_path / "b")],
    }
    for route, cmd in routes.items():
        result = run(cmd, cwd=project)
        assert noise(result) == [], f"{route}:\n{result.stdout}{result.stderr}"
    built = [*(tmp_path / "a").glob("*.click"), *(tmp_path / "b").glob("*.click")]
    assert len(built) == 2
    for click in built:  # and the review, asked on its own, has nothing to say either
        report = json.loads(run([*CLICK_BUILD, "review", "--json", str(click)]).stdout)
        assert report["findings"] == [], report


def test_the_qml_template_starts_on_the_qml_variant() -> None:
    """The qml template offers the -qml variants, the others the full frameworks; each
    offers only available ones, the current release first."""
    root = Path(run([*CLICK_BUILD, "--templates-dir"]).stdout.strip())
    for kind in KINDS:
        offered = json.loads((root / kind / "cookiecutter.json").read_text())["framework"]
        assert all(TABLE[name] == "available" for name in offered)
        assert offered[0].startswith("ubuntu-touch-24.04-1.x")
        assert all(name.endswith("-qml") == (kind == "qml") for name in offered), offered


@pytest.mark.slow  # renders a project for every framework
def test_new_takes_every_available_framework(tmp_path: Path) -> None:
    """The -qml variants included, with the AppArmor policy version that goes with each;
    a framework the table does not mark available is refused, and names the choices."""
    assert set(FRAMEWORKS) == {name for name, state in TABLE.items() if state == "available"}
    assert {"ubuntu-touch-24.04-2.x-qml", "ubuntu-sdk-20.04.1-qml"} <= set(FRAMEWORKS)
    for framework in FRAMEWORKS:
        out = tmp_path / framework
        result = run([*CLICK_BUILD, "new", "qml", "--no-input", "--set", "app_name=app",
                      "--set", f"framework={framework}", "-o", str(out)])
        assert result.stderr == ""
        manifest = json.loads((out / "app/manifest.json").read_text())
        assert manifest["framework"] == framework
        apparmor = json.loads((out / "app/app.apparmor").read_text())
        assert (framework, apparmor["policy_version"]) == policy_version_for([framework])
    refused = run([*CLICK_BUILD, "new", "qml", "--no-input", "--set",
                   "framework=ubuntu-sdk-16.04", "-o", str(tmp_path / "old")], check=False)
    assert_clean_error(refused)
    assert refused.stderr.startswith("click-build: error: --set framework=ubuntu-sdk-16.04: "
                                     "choose one of: ubuntu-touch-24.04-1.x-qml, ")
    assert not (tmp_path / "old").exists()


@pytest.mark.parametrize("kind", ["html5", "python", "cpp"])
def test_a_qml_variant_for_an_app_that_is_not_pure_qml_is_warned_about(tmp_path: Path,
                                                                        kind: str) -> None:
    result = run([*CLICK_BUILD, "new", kind, "--no-input", "--set", "app_name=app",
                  "--set", "framework=ubuntu-touch-24.04-1.x-qml", "-o", str(tmp_path)])
    assert result.stderr == (
        "click-build: warning: framework 'ubuntu-touch-24.04-1.x-qml' is for pure QML apps, "
        f"and the {kind} template's is not: choose 'ubuntu-touch-24.04-1.x'\n")
    manifest = next((tmp_path / "app").glob("manifest.json*")).read_text()
    assert '"framework": "ubuntu-touch-24.04-1.x-qml"' in manifest  # taken as asked
