#!/usr/bin/env python3
"""Sysroots: cold creation time, disk per root, and a warm cross build against the host's.

    python3 benchmarks/bench_sysroot.py [--arch arm64] [--rounds 3] [--keep DIR] [--quick]

1. Cold creation: ``click-build sysroot create --profile debian-12`` into an empty
   cache (no root, no downloaded packages), by apt and by click-build's own way
   (``--method builtin``); then again with the downloads kept (only the indexes are
   fetched), which is the part that does not depend on the network.  Target: cold
   creation <= 60 s on 2 cores.
2. Disk per root: the root's allocated blocks, and the downloads kept beside it.
3. Warm build of the ``cpp`` template (configure, compile, package in a new build
   folder, the root already made): for ARCH against the same for this machine, by
   plain CMake with the root's toolchain file, and by the build backend
   (``python -m build --wheel -C click-build.toolchains.ARCH=sysroot``: the root
   chosen, held, and its libraries reviewed as every build does).  Target: <= 1.5x.

``--quick`` (the test suite's) times one round of 3 on a root it finds in
CLICK_BUILD_SYSROOT_CACHE or makes, and makes no cold root.
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import benchlib  # noqa: E402

REPO = Path(__file__).resolve().parent.parent
CLI = [sys.executable, "-m", "click_build"]

FAIRNESS = """\
How it was made fair:
- Creation: each run starts from an empty cache folder (cold: no root, no downloads; or
  with only the downloads of a previous run kept), the same profile, mirror and packages;
  the methods alternate; the network is the same for both, and the kept-downloads runs
  show the part of the time that is this machine's own.
- Builds: the same copy of the template for both targets, the same CMake, Ninja and
  generator, a new build folder every round (configure + compile + package, the review
  included), no compiler cache; rounds alternate host and target; medians and min-max.
- The machine's load average is printed before each part (other work on a shared machine
  slows both sides)."""


def env_with(cache: Path) -> dict[str, str]:
    return {**os.environ, "CLICK_BUILD_SYSROOT_CACHE": str(cache), "PYTHONPATH": str(REPO),
            "PATH": f"{Path(sys.executable).parent}:{os.environ['PATH']}"}


def create(cache: Path, arch: str, method: str) -> float:
    start = time.monotonic()
    subprocess.run([*CLI, "-q", "sysroot", "create", "--arch", arch, "--profile", "debian-12",
                    "--method", method], env=env_with(cache), check=True,
                   stdout=subprocess.DEVNULL)
    return time.monotonic() - start


def size_of(path: Path) -> int:
    sys.path.insert(0, str(REPO))
    from click_build.sysroot.tree import tree_size

    return tree_size(path)


def build(project: Path, folder: Path, cache: Path, toolchain: Path | None) -> float:
    shutil.rmtree(folder, ignore_errors=True)
    cmake_dir = subprocess.run([*CLI, "--cmake-dir"], capture_output=True, text=True,
                               env=env_with(cache), check=True).stdout.strip()
    extra = [f"-DCMAKE_TOOLCHAIN_FILE={toolchain}"] if toolchain else [
        f"-DClickBuild_DIR={cmake_dir}"]  # the toolchain file names it for the target
    env = {**env_with(cache), "CCACHE_DISABLE": "1"}
    start = time.monotonic()
    for cmd in (["cmake", "-S", str(project), "-B", str(folder), "-G", "Ninja", *extra],
                ["cmake", "--build", str(folder)],
                ["cmake", "--build", str(folder), "--target", "click"]):
        subprocess.run(cmd, env=env, check=True, stdout=subprocess.DEVNULL,
                       stderr=subprocess.DEVNULL)
    return time.monotonic() - start


def backend_build(project: Path, cache: Path, arch: str | None) -> float:
    """``python -m build --wheel`` of the project, for ARCH against its root (None: for
    this machine), in a new build folder."""
    folder = project / "build"
    shutil.rmtree(folder, ignore_errors=True)
    settings = ["-C", f"click-build.architecture={arch}", "-C",
                f"click-build.toolchains.{arch}=sysroot"] if arch else []
    env = {**env_with(cache), "CCACHE_DISABLE": "1"}
    start = time.monotonic()
    subprocess.run([sys.executable, "-m", "build", "-n", "-x", "--wheel", *settings],
                   cwd=project, env=env, check=True, stdout=subprocess.DEVNULL,
                   stderr=subprocess.DEVNULL)
    return time.monotonic() - start


def spread(samples: list[float]) -> str:
    return (f"{statistics.median(samples):6.1f} s (min {min(samples):.1f}, "
            f"max {max(samples):.1f}, n={len(samples)})")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--arch", default="arm64", choices=("arm64", "armhf"))
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--keep", type=Path, help="work in DIR and keep it")
    parser.add_argument("--quick", action="store_true")
    args = parser.parse_args()
    work = args.keep or Path(tempfile.mkdtemp(prefix="bench-sysroot."))
    work.mkdir(parents=True, exist_ok=True)
    print(FAIRNESS)
    benchlib.environment(None)
    try:
        verdicts = []
        if args.quick:
            cache = Path(os.environ.get("CLICK_BUILD_SYSROOT_CACHE", work / "cache"))
            create(cache, args.arch, "auto")
        else:
            print(f"\nCold creation of the debian-12 {args.arch} root "
                  f"(load {benchlib.load_now()}):")
            times: dict[str, list[float]] = {"apt": [], "builtin": []}
            kept: dict[str, list[float]] = {"apt": [], "builtin": []}
            for method in ("apt", "builtin"):
                cache = work / f"cold-{method}"
                shutil.rmtree(cache, ignore_errors=True)
                times[method].append(create(cache, args.arch, method))
                for stored in cache.iterdir():
                    if stored.name != "debs" and stored.is_dir():
                        shutil.rmtree(stored)  # the root goes, the downloads stay
                kept[method].append(create(cache, args.arch, method))
            for method in times:
                print(f"  {method:8} cold {spread(times[method])}; downloads kept "
                      f"{spread(kept[method])}")
            best = min(min(t) for t in times.values())
            verdicts.append(("cold root creation", f"{best:.1f} s", "<= 60 s", best <= 60))
            cache = work / "cold-apt"
        roots = [p for p in cache.iterdir() if p.is_dir() and (p / "sysroot.json").exists()]
        root = next(p for p in roots if f"-{args.arch}-" in p.name)
        disk = size_of(root / "root")
        debs = sum(p.stat().st_blocks * 512 for p in (cache / "debs").glob("*.deb"))
        print(f"\nDisk: the root {disk / 1e6:.0f} MB; its downloads kept beside it "
              f"{debs / 1e6:.0f} MB (shared by every root of the cache)")
        toolchain = Path(subprocess.run(
            [*CLI, "sysroot", "toolchain", "--arch", args.arch, "--profile", "debian-12"],
            env=env_with(cache), check=True, capture_output=True, text=True).stdout.strip())
        project_parent = work / "project"
        shutil.rmtree(project_parent, ignore_errors=True)
        project_parent.mkdir()
        subprocess.run([*CLI, "new", "cpp", "--no-input", "--set", "title=Tea Timer"],
                       cwd=project_parent, env=env_with(cache), check=True,
                       stdout=subprocess.DEVNULL)
        project = project_parent / "tea-timer"
        rounds = 1 if args.quick else args.rounds
        routes: list[tuple[str, str, Callable[[str | None], float]]] = [
            ("warm build", f"Warm build of the cpp template by plain CMake, {rounds} round(s) each",
             lambda arch: build(project, work / f"build-{arch or 'host'}", cache,
                                toolchain if arch else None)),
            ("python -m build", f"The same by python -m build (toolchains.{args.arch} = "
             f'"sysroot"), {rounds} round(s) each', lambda arch: backend_build(project, cache, arch)),
        ]
        for name, heading, timed in routes:
            print(f"\n{heading} (load {benchlib.load_now()}):")
            host: list[float] = []
            target: list[float] = []
            for _ in range(rounds):  # alternating
                host.append(timed(None))
                target.append(timed(args.arch))
            ratio = statistics.median(target) / statistics.median(host)
            print(f"  for this machine {spread(host)}")
            print(f"  for {args.arch:15} {spread(target)}")
            print(f"  ratio {ratio:.2f}x (per round: "
                  f"{', '.join(f'{t / h:.2f}' for t, h in zip(target, host))})")
            verdicts.append((f"{name}, {args.arch} / host", f"{ratio:.2f}x", "<= 1.5x",
                             ratio <= 1.5))
        print("\nTargets" + (" (quick: not judged)" if args.quick else "") + ":")
        for what, value, target_text, met in verdicts:
            mark = "" if args.quick else ("  met" if met else "  MISSED")
            print(f"  {what:34} {value:>10}  {target_text}{mark}")
    finally:
        if not args.keep:
            shutil.rmtree(work, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
