"""The cache of vendored Python dependencies (backend/vendor_cache.py): pip downloads once,
a rebuild works with no package index reachable and gives the same package, and the cache
is checked as an attacker's folder: a changed file, a planted link, a forged list, a cache
folder that is a link or writable by others are never used."""

from __future__ import annotations

import concurrent.futures
import hashlib
import io
import json
import os
import stat
import subprocess
import sys
import tarfile
from pathlib import Path

import pytest
from backend_helpers import only_click, pybuild
from conftest import CLICK_BUILD, run

SIX = "six==1.17.0"


@pytest.fixture(scope="module")
def wheelhouse(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A folder holding the dependency's wheel, downloaded once from the package index:
    the index the first build reaches (tests reach no other)."""
    folder = tmp_path_factory.mktemp("wheelhouse")
    run([sys.executable, "-m", "pip", "download", "-q", "--no-deps", "--only-binary=:all:",
         SIX, "-d", str(folder)])
    assert [p.name for p in folder.iterdir()] == ["six-1.17.0-py2.py3-none-any.whl"]
    return folder


@pytest.fixture
def project(tmp_path: Path) -> Path:
    """A fresh python template with one dependency."""
    run([*CLICK_BUILD, "new", "python", "--no-input", "--set", "app_name=dice",
         "-o", str(tmp_path / "src")])
    path = tmp_path / "src" / "dice"
    pyproject = path / "pyproject.toml"
    text = pyproject.read_text()
    assert "dependencies = []" in text
    pyproject.write_text(text.replace("dependencies = []", f'dependencies = ["{SIX}"]'))
    return path


@pytest.fixture
def cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    folder = tmp_path / "cache"
    monkeypatch.setenv("CLICK_BUILD_PYTHON_CACHE", str(folder))
    return folder


def online(wheelhouse: Path) -> dict[str, str]:
    """pip reaches the wheelhouse, as it would the package index."""
    return {"PIP_CONFIG_FILE": os.devnull, "PIP_NO_INDEX": "1",
            "PIP_FIND_LINKS": str(wheelhouse)}


def offline(tmp_path: Path) -> dict[str, str]:
    """No index, no find-links, no configuration: pip can find nothing anywhere."""
    empty = tmp_path / "nothing-here"
    empty.mkdir(exist_ok=True)
    return {"PIP_CONFIG_FILE": os.devnull, "PIP_NO_INDEX": "1", "PIP_FIND_LINKS": str(empty)}


def build(project: Path, out: Path, env: dict[str, str],
          check: bool = True) -> subprocess.CompletedProcess[str]:
    return pybuild(project, "--wheel", "-o", str(out), env=env, check=check)


def packaged_six(click: Path) -> bytes:
    data = subprocess.run(["dpkg-deb", "--fsys-tarfile", str(click)], capture_output=True,
                          check=True).stdout
    with tarfile.open(fileobj=io.BytesIO(data)) as tar:
        member = tar.extractfile("./lib/python3/dist-packages/six.py")
        assert member is not None
        return member.read()


def entry(cache: Path) -> Path:
    (found,) = [p for p in cache.iterdir() if not p.name.startswith(".")]
    return found


@pytest.mark.slow
def test_a_rebuild_needs_no_package_index(project: Path, cache: Path, wheelhouse: Path,
                                          tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    first = build(project, tmp_path / "a", online(wheelhouse))
    assert "+ pip install --target " in first.stdout
    stored = entry(cache)
    assert stat.S_IMODE(cache.stat().st_mode) == 0o700  # made private
    listing = json.loads((stored / "files.json").read_text())
    six = packaged_six(only_click(tmp_path / "a"))
    assert {"path": "six.py", "size": len(six), "exec": False,
            "sha256": hashlib.sha256(six).hexdigest()} in listing["files"]
    assert SIX in listing["pip"] and "3.12" in listing["pip"]

    again = build(project, tmp_path / "b", offline(tmp_path))
    assert "pip install" not in again.stdout
    assert f"+ {SIX} for Python 3.12 (all): from the cache, {stored}\n" in again.stdout
    assert "warning" not in again.stdout + again.stderr
    # the same package, byte for byte
    assert only_click(tmp_path / "a").read_bytes() == only_click(tmp_path / "b").read_bytes()

    # the control: with nothing cached the same offline build fails, in pip
    monkeypatch.setenv("CLICK_BUILD_PYTHON_CACHE", str(tmp_path / "empty-cache"))
    failed = build(project, tmp_path / "c", offline(tmp_path), check=False)
    assert failed.returncode != 0 and "No matching distribution found for six" in failed.stderr


@pytest.mark.slow
def test_the_key_is_the_requirement_the_python_and_the_architecture(
        project: Path, cache: Path, wheelhouse: Path, tmp_path: Path) -> None:
    """Another architecture, another framework's Python, another requirement: pip again,
    each kept beside the others; the first one is still there for its own builds."""
    build(project, tmp_path / "a", online(wheelhouse))
    arm = pybuild(project, "--wheel", "-o", str(tmp_path / "b"), "-C",
                  "click-build.architecture=arm64", env=online(wheelhouse))
    assert "+ pip install " in arm.stdout and "manylinux2014_aarch64" in arm.stdout
    manifest = project / "manifest.json"
    manifest.write_text(manifest.read_text().replace("ubuntu-touch-24.04-1.x", "ubuntu-sdk-20.04"))
    apparmor = project / "dice.apparmor"
    apparmor.write_text(apparmor.read_text().replace("2404.1", "20.04"))
    focal = build(project, tmp_path / "c", online(wheelhouse))
    assert "+ pip install " in focal.stdout and "--python-version 3.8" in focal.stdout
    pyproject = project / "pyproject.toml"
    pyproject.write_text(pyproject.read_text().replace(SIX, "six>=1.16"))
    other = build(project, tmp_path / "d", online(wheelhouse))
    assert "+ pip install " in other.stdout
    assert len([p for p in cache.iterdir() if not p.name.startswith(".")]) == 4
    offline_again = build(project, tmp_path / "e", offline(tmp_path))
    assert "from the cache" in offline_again.stdout


def _tamper_file(stored: Path, secret: Path) -> None:
    with open(stored / "tree" / "six.py", "a") as f:
        f.write("\nimport os; os.system('echo owned')\n")


def _plant_file_link(stored: Path, secret: Path) -> None:
    (stored / "tree" / "six.py").unlink()
    (stored / "tree" / "six.py").symlink_to(secret)


def _plant_folder_link(stored: Path, secret: Path) -> None:
    dist_info = next((stored / "tree").glob("six-*.dist-info"))
    outside = secret.parent / "outside"
    dist_info.rename(outside)
    dist_info.symlink_to(outside)


def _forge_list(stored: Path, secret: Path) -> None:
    listing = json.loads((stored / "files.json").read_text())
    listing["files"].append({"path": "../../../" + secret.name, "size": 0, "sha256": "",
                             "exec": False})
    (stored / "files.json").write_text(json.dumps(listing))


def _plant_entry_link(stored: Path, secret: Path) -> None:
    forged = secret.parent / "forged-entry"
    stored.rename(forged)
    stored.symlink_to(forged)


def _truncate_list(stored: Path, secret: Path) -> None:
    (stored / "files.json").write_text('{"format": 1, "files": [')


@pytest.mark.slow
@pytest.mark.parametrize("attack", [_tamper_file, _plant_file_link, _plant_folder_link,
                                    _forge_list, _plant_entry_link, _truncate_list])
def test_a_changed_or_planted_entry_is_never_used(project: Path, cache: Path, wheelhouse: Path,
                                                  tmp_path: Path, attack: object) -> None:
    first = build(project, tmp_path / "a", online(wheelhouse))
    genuine = packaged_six(only_click(tmp_path / "a"))
    secret = tmp_path / "secret.txt"
    secret.write_text("SECRET: not for any package\n")
    stored = entry(cache)
    attack(stored, secret)  # type: ignore[operator]

    again = build(project, tmp_path / "b", online(wheelhouse))
    warnings = [line for line in again.stderr.splitlines() if "warning" in line]
    assert len(warnings) == 1 and warnings[0].startswith(
        f"click-build: warning: {stored}: the cached dependencies are void ("), again.stderr
    assert warnings[0].endswith("); removed, pip installs them again")
    assert "+ pip install " in again.stdout
    click = only_click(tmp_path / "b")
    assert packaged_six(click) == genuine
    assert b"SECRET" not in subprocess.run(["dpkg-deb", "--fsys-tarfile", str(click)],
                                           capture_output=True, check=True).stdout
    assert click.read_bytes() == only_click(tmp_path / "a").read_bytes()
    assert secret.read_text() == "SECRET: not for any package\n"  # nothing written through
    # the void entry is gone, a good one took its place: offline works again
    assert not entry(cache).is_symlink()
    assert "from the cache" in build(project, tmp_path / "c", offline(tmp_path)).stdout
    assert "SECRET" not in first.stdout


@pytest.mark.slow
@pytest.mark.parametrize("unsafe", ["link", "writable by others"])
def test_a_cache_folder_that_is_not_safely_ours_is_not_used(
        project: Path, cache: Path, wheelhouse: Path, tmp_path: Path, unsafe: str) -> None:
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    if unsafe == "link":
        cache.symlink_to(elsewhere)
        why = "it is a link"
    else:
        cache.mkdir()
        cache.chmod(0o777)
        why = "others may write to it"
    result = build(project, tmp_path / "a", online(wheelhouse))
    assert result.stderr.count(
        f"click-build: warning: {cache}: not used as the cache of Python dependencies "
        f"({why})\n") == 1
    assert "+ pip install " in result.stdout
    assert list(elsewhere.iterdir()) == [] and (unsafe == "link" or list(cache.iterdir()) == [])


@pytest.mark.slow
@pytest.mark.skipif(os.geteuid() != 0, reason="needs root to give the folder to another user")
def test_another_users_cache_folder_is_not_used(project: Path, cache: Path, wheelhouse: Path,
                                                tmp_path: Path) -> None:
    cache.mkdir(mode=0o755)
    os.chown(cache, 65534, 65534)  # nobody
    result = build(project, tmp_path / "a", online(wheelhouse))
    assert (f"{cache}: not used as the cache of Python dependencies (it belongs to user id "
            "65534)") in result.stderr
    assert list(cache.iterdir()) == []


@pytest.mark.slow
def test_entries_appear_whole(project: Path, cache: Path, wheelhouse: Path,
                              tmp_path: Path) -> None:
    """Two builds at once both fill the cache: one entry, whole, no temporary folder left;
    a half-written folder a killed build left (.new-*) is never read."""
    (cache / ".new-killed" / "tree").mkdir(parents=True)
    (cache / ".new-killed" / "files.json").write_text('{"format": 1, "files": [')
    twin = tmp_path / "twin"
    subprocess.run(["cp", "-a", str(project), str(twin)], check=True)
    with concurrent.futures.ThreadPoolExecutor(2) as pool:
        results = list(pool.map(lambda p: build(p[0], p[1], online(wheelhouse)),
                                [(project, tmp_path / "a"), (twin, tmp_path / "b")]))
    assert all("warning" not in r.stderr for r in results)
    assert sorted(p.name for p in cache.iterdir() if p.name != ".new-killed") \
        == [entry(cache).name]
    assert "from the cache" in build(project, tmp_path / "c", offline(tmp_path)).stdout
