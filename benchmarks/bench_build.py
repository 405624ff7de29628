#!/usr/bin/env python3
"""Build speed, size and memory of click-build against the reference tools.

Builds (a) a trivial one-file app and (b) a generated tree of ~140 MB in
~10,000 files (text and incompressible binaries) with click-build, with the
original ``click build`` and (for the tree) with ``dpkg-deb -Zgzip -b``.
Runs are interleaved so machine noise hits every tool alike; the script
prints medians, ratios and peak memory, and whether each target is met:

- trivial app: click-build at most 0.35x the time of ``click build``;
- big tree: at most 0.5x ``dpkg-deb -Zgzip -b``, output within 1% of its
  size, peak memory under 64 MiB.

click-build is installed from this checkout into a throwaway virtual
environment (a regular, non-editable install, as users get it), unless
``--click-build PATH`` names an executable to measure instead.

Usage: python3 benchmarks/bench_build.py [--runs N] [--big-runs N] [--keep DIR]
"""

from __future__ import annotations

import argparse
import json
import os
import random
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
MANIFEST = {
    "name": "com.example.bench",
    "version": "1.0",
    "framework": "ubuntu-sdk-20.04",
    "maintainer": "Bench <bench@example.com>",
    "title": "Bench",
    "hooks": {"bench": {"desktop": "bench.desktop", "apparmor": "bench.apparmor"}},
}
WORDS = (
    "import property string width height anchors fill parent color text font pixelSize "
    "function return var let const if else for while Item Rectangle Column Row Label "
    "Button onClicked console log model delegate ListView id objectName visible opacity"
).split()


def make_trivial(root: Path) -> Path:
    app = root / "trivial"
    if app.exists():
        return app  # --keep DIR: reuse what an earlier run generated
    app.mkdir()
    (app / "manifest.json").write_text(json.dumps(MANIFEST))
    (app / "bench.desktop").write_text("[Desktop Entry]\nName=Bench\nExec=qmlscene main.qml\n"
                                       "Icon=icon.svg\nType=Application\nX-Lomiri-Touch=true\n")
    (app / "main.qml").write_text("import QtQuick 2.7\nItem {}\n")
    (app / "icon.svg").write_text("<svg xmlns='http://www.w3.org/2000/svg'/>\n")
    (app / "bench.apparmor").write_text('{"policy_groups": [], "policy_version": 20.04}\n')
    return app


def make_big(root: Path, files: int = 10_000, binary_share: float = 0.1) -> Path:
    """~140 MB: 9,000 text files (~7.8 KB, source-like) and 1,000 random binaries (~70 KB)."""
    rng = random.Random(20261203)
    app = root / "big"
    if app.exists():
        return app  # --keep DIR: reuse what an earlier run generated
    app.mkdir()
    (app / "manifest.json").write_text(json.dumps(MANIFEST))
    (app / "bench.desktop").write_text("[Desktop Entry]\nName=Bench\n")
    (app / "bench.apparmor").write_text("{}\n")
    (app / "DEBIAN").mkdir()
    (app / "DEBIAN" / "control").write_text(
        "Package: bench\nVersion: 1.0\nArchitecture: all\nMaintainer: Bench <b@e.com>\n"
        "Description: bench\n")
    n_binary = int(files * binary_share)
    for i in range(files):
        d = app / f"dir{i % 50:02d}" / f"sub{i % 7}"
        d.mkdir(parents=True, exist_ok=True)
        if i < n_binary:
            (d / f"blob{i}.bin").write_bytes(rng.randbytes(rng.randint(40_000, 100_000)))
        else:
            lines = []
            for _ in range(rng.randint(80, 320)):
                lines.append(" ".join(rng.choice(WORDS) for _ in range(rng.randint(3, 9))))
                lines[-1] += f" {rng.randint(0, 99999)};"
            (d / f"file{i}.qml").write_text("\n".join(lines) + "\n")
    return app


def install_click_build(root: Path) -> str:
    venv = root / "venv"
    if not venv.exists():
        subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
    subprocess.run([str(venv / "bin" / "pip"), "install", "-q", "--no-deps", "--force-reinstall",
                    str(ROOT)], check=True)
    return str(venv / "bin" / "click-build")


def timed(cmd: list[str], cwd: Path) -> tuple[float, int]:
    """Wall seconds and peak RSS (KiB) of one run of cmd."""
    start = time.perf_counter()
    proc = subprocess.Popen(cmd, cwd=cwd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    _, status, usage = os.wait4(proc.pid, 0)
    elapsed = time.perf_counter() - start
    proc.returncode = os.waitstatus_to_exitcode(status)
    err = proc.stderr.read() if proc.stderr else b""
    if proc.returncode != 0:
        raise SystemExit(f"{cmd} failed: {err.decode(errors='replace')}")
    return elapsed, usage.ru_maxrss


def run_case(name: str, tools: dict[str, tuple[list[str], Path, Path]], runs: int) -> dict[str, dict[str, float]]:
    """tools: label -> (command, cwd, output dir cleaned before each run)."""
    samples: dict[str, list[tuple[float, int]]] = {label: [] for label in tools}
    sizes: dict[str, int] = {}
    for i in range(runs):
        order = list(tools) if i % 2 == 0 else list(reversed(tools))
        for label in order:
            cmd, cwd, out = tools[label]
            shutil.rmtree(out, ignore_errors=True)
            out.mkdir(parents=True)
            samples[label].append(timed(cmd, cwd))
            produced = [p for p in out.iterdir() if p.suffix in (".click", ".deb")]
            sizes[label] = produced[0].stat().st_size if produced else 0
        print(f"  {name}: run {i + 1}/{runs} done", file=sys.stderr)
    return {label: {"median_s": statistics.median(t for t, _ in s),
                    "peak_mib": max(m for _, m in s) / 1024, "size": sizes[label]}
            for label, s in samples.items()}


def report(title: str, results: dict[str, dict[str, float]], base: str) -> None:
    print(f"\n{title}")
    print(f"  {'tool':<22}{'median s':>10}{'ratio':>8}{'peak MiB':>10}{'bytes':>14}")
    for label, r in results.items():
        ratio = r["median_s"] / results[base]["median_s"]
        print(f"  {label:<22}{r['median_s']:>10.3f}{ratio:>8.2f}{r['peak_mib']:>10.1f}{int(r['size']):>14,}")


def verdict(ok: bool, text: str) -> None:
    print(f"  [{'MET' if ok else 'MISSED'}] {text}")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--runs", type=int, default=15, help="runs per tool, trivial app")
    parser.add_argument("--big-runs", type=int, default=3, help="runs per tool, big tree")
    parser.add_argument("--click-build", help="click-build executable to measure")
    parser.add_argument("--keep", type=Path, help="work in DIR and keep it")
    args = parser.parse_args()
    for tool in ("click", "dpkg-deb"):
        if not shutil.which(tool):
            raise SystemExit(f"{tool} not found: run ./scripts/setup as root first")
    work = args.keep or Path(tempfile.mkdtemp(prefix="bench-build-"))
    work.mkdir(parents=True, exist_ok=True)
    try:
        ours = args.click_build or install_click_build(work)
        env_note = f"click-build: {ours}; {os.cpu_count()} cores; Python {sys.version.split()[0]}"
        print(env_note)
        os.environ["SOURCE_DATE_EPOCH"] = "1700000000"
        trivial = make_trivial(work)
        out = work / "out"
        results = run_case("trivial", {
            "click-build build": ([ours, "build", str(trivial), "-o", str(out / "a")], work, out / "a"),
            "click-build --review off": ([ours, "build", "--review", "off", str(trivial), "-o",
                                          str(out / "b")], work, out / "b"),
            "click build": (["click", "build", str(trivial)], out / "c", out / "c"),
        }, args.runs)
        report("Trivial app (whole process)", results, "click build")
        # Like for like: `click build` reviews only when click-reviewers-tools is
        # installed (it is not here); ours reviews by default, so compare --review off
        # and show the default's cost beside it.
        base = results["click build"]["median_s"]
        same = results["click-build --review off"]["median_s"] / base
        default = results["click-build build"]["median_s"] / base
        verdict(same <= 0.35, f"trivial build {same:.2f}x click build, both without review "
                              f"(target <= 0.35x); with the built-in review {default:.2f}x")

        print("\ngenerating the big tree...", file=sys.stderr)
        big = make_big(work)
        total = sum(p.stat().st_size for p in big.rglob("*") if p.is_file())
        count = sum(1 for p in big.rglob("*") if p.is_file())
        print(f"\nBig tree: {total / 1e6:.0f} MB in {count} files")
        results = run_case("big", {
            "click-build build": ([ours, "build", "--review", "off", "-I", "DEBIAN", str(big),
                                   "-o", str(out / "a")], work, out / "a"),
            "dpkg-deb -Zgzip -b": (["dpkg-deb", "-Zgzip", "-b", str(big), str(out / "d" / "x.deb")],
                                   work, out / "d"),
            "click build": (["click", "build", "--no-validate", "-I", "DEBIAN", str(big)],
                            out / "c", out / "c"),
        }, args.big_runs)
        report("Big tree (~140 MB, ~10,000 files)", results, "dpkg-deb -Zgzip -b")
        ours_r, dpkg_r = results["click-build build"], results["dpkg-deb -Zgzip -b"]
        ratio = ours_r["median_s"] / dpkg_r["median_s"]
        size_diff = ours_r["size"] / dpkg_r["size"] - 1
        verdict(ratio <= 0.5, f"big tree {ratio:.2f}x dpkg-deb (target <= 0.5x)")
        verdict(abs(size_diff) <= 0.01, f"size {size_diff:+.2%} vs dpkg-deb (target within 1%)")
        verdict(ours_r["peak_mib"] < 64, f"peak memory {ours_r['peak_mib']:.1f} MiB (target < 64)")
    finally:
        if not args.keep:
            shutil.rmtree(work, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
