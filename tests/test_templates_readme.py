"""Each template's README, followed as a new user would: click-build installed from its
wheel in a fresh virtual environment, the README's commands pasted in order (issue 13:
isolated builds, installs that `list` shows, pytest, two versions in dist/)."""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import pytest
from templates_support import KINDS, section
from user_env import UserEnv, shell_blocks, user_env  # noqa: F401  (the fixture)


@pytest.fixture
def home(user_env: UserEnv, tmp_path: Path) -> Path:  # noqa: F811
    """A user's home: ~/wheels holds the click-build wheel, as the README says."""
    home = tmp_path / "home"
    (home / "wheels").mkdir(parents=True)
    shutil.copy(user_env.wheel, home / "wheels")
    return home


def paste(user_env: UserEnv, block: str, cwd: Path, home: Path) -> str:  # noqa: F811
    cache = os.path.expanduser("~/.cache/pip")  # the real one: no need to download twice
    return user_env.sh(block, cwd, HOME=str(home), PIP_CACHE_DIR=cache).stdout


@pytest.mark.slow
@pytest.mark.parametrize("kind", KINDS)
def test_readme_commands_work_as_pasted(user_env: UserEnv, home: Path, tmp_path: Path,  # noqa: F811
                                        kind: str) -> None:
    work = tmp_path / "work"
    work.mkdir()
    paste(user_env, f"click-build new {kind} --no-input --set title='Tea Timer'", work, home)
    project = work / "tea-timer"
    readme = (project / "README.md").read_text()

    build = section(readme, "Build the package")
    blocks = shell_blocks(build)
    pip, local = blocks[0].splitlines()[:2]
    assert pip.startswith("pip install build"), "the README installs what it needs"
    assert local.startswith("python -m build --wheel --no-isolation")
    if kind != "cpp":  # cpp's isolated build would download CMake; the same route otherwise
        assert "PIP_FIND_LINKS=~/wheels python -m build --wheel" in blocks[-1]
    for block in blocks if kind != "cpp" else blocks[:1]:
        paste(user_env, block, project, home)

    # A second version beside the first: review takes both, install names one.
    manifest = project / ("manifest.json.in" if kind == "cpp" else "manifest.json")
    if kind == "python":
        pyproject = project / "pyproject.toml"
        pyproject.write_text(pyproject.read_text().replace('version = "1.0.0"',
                                                           'version = "1.0.1"'))
    else:
        manifest.write_text(manifest.read_text().replace('"1.0.0"', '"1.0.1"'))
    paste(user_env, local, project, home)
    assert len(list((project / "dist").glob("*.click"))) == 2

    check = shell_blocks(section(readme, "Check and install it"))[0]
    out = paste(user_env, check, project, home)
    # no findings, not even advice: the qml kind starts on the -qml framework variant
    assert out.count(": no problems found") == 2 and "error:" not in out, out
    assert "tea-timer.yourname\t1.0.0" in out, out  # the version the README names

    if kind == "python":
        run_and_test = section(readme, "Run and test it on your computer")
        (tests,) = [b for b in shell_blocks(run_and_test) if "pytest" in b]
        assert "pip install pytest" in tests
        assert "passed" in paste(user_env, tests, project, home)


@pytest.mark.slow
def test_new_help_stands_on_its_own(user_env: UserEnv, tmp_path: Path) -> None:  # noqa: F811
    """The wheel has no docs/: `new --help` itself says what a first app needs."""
    text = user_env.sh("click-build new --help", tmp_path).stdout
    assert "docs/" not in text
    for needed in ("title", "app_name", "namespace", "maintainer_email", "framework",
                   "--no-input", "--set", "python -m build --wheel", "click-build install",
                   "never evaluated"):
        assert needed in text, needed
    listing = json.dumps(text)
    assert "qml" in listing and "cpp" in listing
