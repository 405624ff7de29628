"""Helpers shared by the backend tests: real frontends on copies of real projects."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

from conftest import ROOT, run

PACKAGES = Path(__file__).resolve().parent / "packages"
EXAMPLES = ROOT / "examples"


def copy_project(src: Path, dest: Path) -> Path:
    """A copy of a fixture project, so nothing is built in the source tree."""
    shutil.copytree(src, dest, ignore=shutil.ignore_patterns("build", "dist", "__pycache__"))
    return dest


def pybuild(project: Path, *args: str, check: bool = True,
            env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    """``python -m build -n -x`` (no isolation, no network for the build env) in ``project``."""
    wide = {"COLUMNS": "10000", **(env or {})}  # build wraps replayed output to the terminal
    return run([sys.executable, "-m", "build", "-n", "-x", *args], cwd=project, env=wide,
               check=check)


def only_click(outdir: Path) -> Path:
    found = sorted(outdir.glob("*.click"))
    assert len(found) == 1, found
    return found[0]


def verify_both(path: Path) -> None:
    """The original click and ours both accept the package."""
    run(["click", "verify", "--force-missing-framework", "--allow-unauthenticated", str(path)])
    run([sys.executable, "-m", "click_build", "verify", "--force-missing-framework",
         "--allow-unauthenticated", str(path)])


def data_members(path: Path) -> list[str]:
    out = run(["dpkg-deb", "-c", str(path)]).stdout
    return sorted(line.split()[-1] for line in out.splitlines() if line.strip())


def control_field(path: Path, field: str) -> str:
    return run(["dpkg-deb", "-f", str(path), field]).stdout.strip()


def member_text(path: Path, member: str) -> str:
    data = subprocess.run(["dpkg-deb", "--fsys-tarfile", str(path)], capture_output=True,
                          check=True).stdout
    import io
    import tarfile

    with tarfile.open(fileobj=io.BytesIO(data)) as tar:
        f = tar.extractfile(member)
        assert f is not None
        return f.read().decode("utf-8")


def assert_one_error(result: subprocess.CompletedProcess[str], *fragments: str) -> str:
    """The build failed with exactly one 'click-build: error:' line and no traceback."""
    assert result.returncode != 0, result.stdout + result.stderr
    output = result.stdout + result.stderr
    assert "Traceback" not in output, output
    lines = [line.removeprefix("< ") for line in output.splitlines()]  # build's replay marker
    errors = [line for line in lines if line.startswith("click-build: error: ")]
    assert len(errors) == 1, output
    for fragment in fragments:
        assert fragment in errors[0], (fragment, errors[0])
    return errors[0]


def host_arch() -> str:
    return run(["dpkg", "--print-architecture"]).stdout.strip()
