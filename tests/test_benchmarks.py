"""The benchmark scripts still run: each in its tiny ``--quick`` mode (figures not judged).

Benchmarks are scripts, not tests (machines differ); this only keeps them from
rotting as the code they drive changes.  One wheel install of the checkout is
shared by all of them, made by the scripts' own installer.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from conftest import ROOT, ZLIB_NG_EXPECTED, need
from deadlines import seconds

BENCH = ROOT / "benchmarks"
sys.path.insert(0, str(BENCH))

import benchlib  # noqa: E402
import trees  # noqa: E402

pytestmark = [pytest.mark.slow, pytest.mark.oracle]


@pytest.fixture(scope="module")
def installed(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """click-build as the benchmarks measure it: a wheel of the checkout in a fresh venv."""
    work = tmp_path_factory.mktemp("bench-venv")
    script = benchlib.install_click_build(work)
    site = next((script.parent.parent / "lib").glob("python3*/site-packages"))
    assert (site / "click_build" / "build.py").is_file()  # a real copy, not an editable link
    assert not list(site.glob("__editable__*"))
    # compiled as pip compiles for a user: timestamp-checked, not hash-checked .pyc files
    compiled = list((site / "click_build" / "__pycache__").glob("*.pyc"))
    assert compiled and {benchlib.pyc_flags(p) for p in compiled} == {0}
    yield script


@pytest.mark.xdist_group("system")  # bench_install's desktop hook writes into root's home
def test_run_all_quick(installed: Path, public_tmp: Path) -> None:
    """README's command in its quick form: bench_install, bench_build and bench_contents,
    then one table of targets (none judged in quick mode).  public_tmp: clickpkg, which
    the original installs as, must be able to enter the work folder."""
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    proc = subprocess.run(
        [sys.executable, str(BENCH / "run_all.py"), "--quick", "--click-build", str(installed),
         "--keep", str(public_tmp)], capture_output=True, text=True, env=env, timeout=seconds(600))
    out = proc.stdout
    assert proc.returncode == 0, out + proc.stderr
    assert out.count("How the comparison is made fair") == 3
    assert "Issue 15 targets" in out and "FAILED" not in out
    # bench_build
    for line in ("Trivial app", "click build", "dpkg-deb -Zgzip -b", "text tree (quick)",
                 "mixed tree (quick)", "data.tar.gz", "peak memory of click-build"):
        assert line in out, line
    if shutil.which("pigz"):  # the reference row: compression alone, on every core
        assert out.count("compression alone, tar | pigz -9 (data only) on") == 2
    # Installed with its dependencies, as a user gets it; the other engine shown beside it.
    engine = "zlib-ng" if ZLIB_NG_EXPECTED else "zlib"
    assert f"click-build deflates data past 256 KiB with: {engine} " in out
    assert out.count("click-build on Python's zlib (CLICK_BUILD_DEFLATE=zlib): time") == 2
    # bench_install
    if os.geteuid() == 0 and shutil.which("unshare"):
        assert "installer overhead: no hooks for either tool" in out
        assert "of which interpreter start-up alone" in out
        assert re.search(r"file system: a file made and removed in .* took \d+ us before these "
                         r"runs, \d+ us after", out)
        assert "with system hooks for both tools" in out
    assert "with 5 apps present vs empty" in out and "list of 6 apps" in out
    # bench_contents
    assert "contents of 2,000 members" in out
    if shutil.which("click"):
        assert "listings: the same" in out


def test_bench_build_levels(installed: Path, tmp_path: Path) -> None:
    proc = subprocess.run(
        [sys.executable, str(BENCH / "bench_build.py"), "--quick", "--no-original",
         "--click-build", str(installed), "--keep", str(tmp_path), "--levels", "1"],
        capture_output=True, text=True, timeout=seconds(300))
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "click-build build -z 1: time" in proc.stdout


def test_bench_python_deps(tmp_path: Path) -> None:
    """A rebuild with a cached dependency against none; the script checks each package."""
    proc = subprocess.run([sys.executable, str(BENCH / "bench_python_deps.py"), "--quick",
                           "--keep", str(tmp_path)], capture_output=True, text=True,
                          timeout=seconds(600))
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "How the comparison is made fair" in proc.stdout
    assert re.search(r"cached dependency vs none: \d+\.\d\dx", proc.stdout)
    assert "cache: " in proc.stdout and "(1 entry, filled by the untimed build)" in proc.stdout


def test_bench_review(tmp_path: Path) -> None:
    proc = subprocess.run([sys.executable, str(BENCH / "bench_review.py"), "--quick",
                           "--keep", str(tmp_path)], capture_output=True, text=True, timeout=seconds(300))
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "review / read" in proc.stdout


@pytest.mark.slow  # cross and native CMake builds
@pytest.mark.xdist_group("sysroot")
def test_bench_sysroot(tmp_path: Path) -> None:
    """On the suite's Debian root (made once per machine): disk and one warm build each."""
    from sysroot_support import test_cache, unreachable_without_roots

    reason = unreachable_without_roots()
    if reason:
        pytest.skip(reason)
    env = {**os.environ, "CLICK_BUILD_SYSROOT_CACHE": str(test_cache())}
    proc = subprocess.run([sys.executable, str(BENCH / "bench_sysroot.py"), "--quick",
                           "--keep", str(tmp_path)], capture_output=True, text=True, env=env,
                          timeout=seconds(900))
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert re.search(r"Disk: the root \d+ MB", proc.stdout)
    assert re.search(r"warm build, arm64 / host +\d+\.\d\dx", proc.stdout)
    assert re.search(r"python -m build, arm64 / host +\d+\.\d\dx", proc.stdout)


@pytest.mark.slow
@pytest.mark.xdist_group("sysroot")
def test_bench_run_arch(public_tmp: Path) -> None:
    """On the suite's arm64 roots (the plain one and the one with qmlscene): one round
    (in a folder clickpkg may enter: as root the installer unpacks as clickpkg)."""
    from sysroot_support import made, test_cache

    need("qemu-aarch64-static")
    made("arm64")
    made("arm64", packages=("qmlscene",))
    env = {**os.environ, "CLICK_BUILD_SYSROOT_CACHE": str(test_cache())}
    proc = subprocess.run([sys.executable, str(BENCH / "bench_run_arch.py"), "--quick",
                           "--keep", str(public_tmp)], capture_output=True, text=True, env=env,
                          timeout=seconds(900))
    assert proc.returncode == 0, proc.stdout + proc.stderr
    for kind in ("cpp", "qml"):
        assert re.search(rf"{kind}: arm64 under qemu / native +\d+\.\d\dx", proc.stdout)


def test_profile_build(tmp_path: Path) -> None:
    proc = subprocess.run([sys.executable, str(BENCH / "profile_build.py"), "--tree", "quick",
                           "--keep", str(tmp_path)], capture_output=True, text=True, timeout=seconds(300))
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "workers' deflate" in proc.stdout and "store probe" in proc.stdout
    assert "deflated by zlib" in proc.stdout  # zlib-ng or Python's zlib, with its version


def test_trees_are_deterministic_and_text_compresses_like_source(tmp_path: Path) -> None:
    """The same seed gives the same bytes; the text tree compresses like app source
    (gzip -9 ratio about 4-5, as Qt's own QML and JS), not like random or repeated words."""
    one = trees.text_app(tmp_path / "one", 60, 400_000)
    two = trees.text_app(tmp_path / "two", 60, 400_000)
    tar = [subprocess.run(["tar", "-C", str(app), "--sort=name", "--mtime=@0", "-cf", "-", "."],
                          capture_output=True, check=True).stdout for app in (one, two)]
    assert tar[0] == tar[1]
    count, size = trees.tree_stats(one)
    assert count == 63 and 380_000 < size < 420_000
    packed = subprocess.run(["gzip", "-9"], input=tar[0], capture_output=True, check=True).stdout
    assert 3.0 < len(tar[0]) / len(packed) < 6.0
