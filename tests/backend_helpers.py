"""Helpers shared by the backend tests: real frontends on copies of real projects, and
the two packages of a build for two frameworks."""

from __future__ import annotations

import json
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


BOTH = "ubuntu-sdk-20.04,ubuntu-touch-24.04-1.x"
MATRIX = ("-C", f"click-build.frameworks={BOTH}")
POLICY = {"ubuntu-sdk-20.04": 20.04, "ubuntu-touch-24.04-1.x": 2404.1}
SUFFIX = {"ubuntu-sdk-20.04": "~2004", "ubuntu-touch-24.04-1.x": "~2404"}


def manifest_of(click: Path) -> dict[str, object]:
    data: dict[str, object] = json.loads(run(["dpkg-deb", "-I", str(click), "manifest"]).stdout)
    return data


def apparmor_policies(click: Path) -> set[float]:
    hooks = manifest_of(click)["hooks"]
    assert isinstance(hooks, dict)
    return {json.loads(member_text(click, f"./{h['apparmor']}"))["policy_version"]
            for h in hooks.values() if "apparmor" in h}


def dpkg_greater(a: str, b: str) -> bool:
    return subprocess.run(["dpkg", "--compare-versions", a, "gt", b]).returncode == 0


def check_pair(out: Path, base_version: str, arch: str = "all") -> dict[str, Path]:
    """Two packages, one per framework: framework, policy, version and their order."""
    clicks = sorted(out.glob("*.click"))
    assert len(clicks) == 2, clicks
    by_fw = {str(manifest_of(c)["framework"]): c for c in clicks}
    assert set(by_fw) == set(POLICY)
    for fw, click in by_fw.items():
        m = manifest_of(click)
        assert m["version"] == base_version + SUFFIX[fw]
        assert click.name.endswith(f"_{base_version.split(':')[-1]}{SUFFIX[fw]}_{arch}.click")
        assert apparmor_policies(click) == {POLICY[fw]}
        verify_both(click)
    new_v = str(manifest_of(by_fw["ubuntu-touch-24.04-1.x"])["version"])
    old_v = str(manifest_of(by_fw["ubuntu-sdk-20.04"])["version"])
    assert dpkg_greater(new_v, old_v) and not dpkg_greater(old_v, new_v)
    return by_fw
