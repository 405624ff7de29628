"""The "Next:" lines ``click-build new`` prints: they name the package file (so they still
work once dist/ holds a second version) and what each template's build needs installed."""

from __future__ import annotations

import importlib.metadata
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import Cli, need

from click_build.backend.settings import read_pyproject


def next_lines(result: subprocess.CompletedProcess[str]) -> list[str]:
    lines = result.stdout.splitlines()
    start = next(i for i, line in enumerate(lines) if line.endswith(". Next:"))
    return [line.strip() for line in lines[start + 1:] if line.startswith("  ")]


def extra_requirements(extra: str) -> list[str]:
    """What click-build[EXTRA] brings, from the installed click-build's metadata."""
    out = []
    for req in importlib.metadata.requires("click-build") or []:
        spec, _, marker = req.partition(";")
        if re.search(rf"""extra\s*==\s*["']{extra}["']""", marker):
            out.append(spec.strip())
    return out


@pytest.mark.parametrize("kind", ["qml", "html5", "python", "cpp"])
def test_pip_line_is_what_the_build_needs(cli: Cli, tmp_path: Path, kind: str) -> None:
    """`pip install build ...`: the template's build-system.requires besides click-build,
    and what the click-build extra it names brings; the package is named, ARCH included."""
    version = "2.0" if kind == "python" else "1:2.0"  # python: PEP 440 too, no epoch
    lines = next_lines(cli("new", kind, "--no-input", "--set", "app_name=tea",
                           "--set", "namespace=jane", "--set", f"version={version}",
                           "-o", tmp_path))
    system = read_pyproject(tmp_path / "tea")["build-system"]
    assert isinstance(system, dict)
    requires = system["requires"]
    wanted = ["build"]
    for req in requires:
        name = re.match(r"[A-Za-z0-9_.-]+", req).group()  # type: ignore[union-attr]
        if name == "click-build":
            for extra in re.findall(r"\w+", req[len(name):].partition("]")[0]):
                wanted += extra_requirements(extra)
        else:
            wanted.append(req)
    pip = lines[1].partition("#")[0].split()
    assert pip[:2] == ["pip", "install"]
    assert [word.strip("'") for word in pip[2:]] == wanted
    arch = "all"
    if kind == "cpp":
        arch = subprocess.run([need("dpkg"), "--print-architecture"], capture_output=True,
                              text=True, check=True).stdout.strip()
    assert lines[4].endswith(f" dist/tea.jane_2.0_{arch}.click")  # epochless, as built
    assert "*" not in lines[4]


def test_next_lines_work_after_a_version_bump(cli: Cli, tmp_path: Path,
                                              public_tmp: Path) -> None:
    """The python template's lines as printed (but the pip line, which needs a network):
    build, bump the version, build again; review and install still work."""
    result = cli("new", "python", "--no-input", "--set", "app_name=dice", cwd=tmp_path)
    lines = next_lines(result)
    assert lines[0] == "cd dice"
    project = tmp_path / "dice"
    env = dict(os.environ, HOME=str(public_tmp),
               PATH=f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}")

    def sh(line: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(["sh", "-c", line], cwd=project, env=env, capture_output=True,
                              text=True, check=False)

    (build,) = [line for line in lines if line.startswith("python -m build ")]
    assert sh(build).returncode == 0
    pyproject = project / "pyproject.toml"
    pyproject.write_text(pyproject.read_text().replace('version = "1.0.0"', 'version = "1.0.1"'))
    assert sh(build).returncode == 0
    assert len(list((project / "dist").glob("*.click"))) == 2
    for line in lines:
        if line.startswith(("click-build review ", "click-build install ")):
            done = sh(line)
            assert done.returncode == 0, (line, done.stderr)
    listed = sh("click-build list --root ~/click-test")
    assert listed.stdout == "dice.yourname\t1.0.0\n"
