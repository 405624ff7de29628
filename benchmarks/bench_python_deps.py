#!/usr/bin/env python3
"""A python app's rebuild with a cached dependency, against the same app without any.

    python3 benchmarks/bench_python_deps.py [--runs N] [--keep DIR] [--quick] [--json FILE]

Makes two projects with ``click-build new python`` and the same answers; one of them
declares a dependency (``six``, one pure-Python wheel) in ``[project].dependencies``.
An untimed build of each fills the cache of vendored dependencies (pip reads the wheel
from a local folder fetched once from the package index), then ``click-build build``
of each is timed in interleaved rounds, with no package index or wheel folder reachable:
the dependency can only come from the cache. For scale, a third row times the first
build with the dependency (the cache emptied before each round, pip installing from the
local wheel folder). Target: the cached rebuild at most 1.5x the build without
dependencies.
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import benchlib  # noqa: E402
from benchlib import SYSTEM_PYTHON, Runner, Tool, Verdicts  # noqa: E402

DEPENDENCY = "six==1.17.0"
TARGET = 1.5

FAIRNESS = f"""\
How the comparison is made fair:
- click-build is a wheel of this checkout installed by pip into a fresh venv of the
  system's Python, with its [templates] extra, setuptools (the python template's build
  needs it) and pip.
- The two apps are the python template made with the same answers; they differ only in
  [project].dependencies: none, or ["{DEPENDENCY}"]. Both are built by the same command,
  `click-build build PROJECT -o OUT`, each in its own folder.
- An untimed build of each comes first: it fills the cache of the one with the dependency
  and warms both alike (byte-compiled click-build, the file system's caches).
- Every timed run of the two has PIP_NO_INDEX=1, an empty PIP_FIND_LINKS and no pip
  configuration: pip could fetch nothing, so the dependency came from the cache (each
  package is checked to hold it). Same runner process, same environment, rounds
  interleaved; medians with min-max and per-round ratios.
"""


def python_venv(work: Path) -> Path:
    """click-build from a wheel of the checkout, in a venv with pip and setuptools."""
    benchlib.install_click_build(work)  # the wheel, as the other scripts make it
    (wheel,) = (work / "wheel").glob("click_build-*.whl")
    venv = work / "venv-python-apps"
    if not (venv / "bin" / "click-build").exists():
        python = SYSTEM_PYTHON if os.path.exists(SYSTEM_PYTHON) else sys.executable
        subprocess.run([python, "-m", "venv", str(venv)], check=True)
        subprocess.run([venv / "bin" / "python", "-m", "pip", "install", "-q",
                        "--disable-pip-version-check", f"{wheel}[templates]", "setuptools>=68"],
                       check=True, env=benchlib.clean_env(), stdout=subprocess.DEVNULL)
    return venv / "bin" / "click-build"


def make_project(ours: Path, folder: Path, dependencies: list[str]) -> Path:
    shutil.rmtree(folder, ignore_errors=True)
    subprocess.run([ours, "new", "python", "--no-input", "--set", "app_name=dice",
                    "-o", str(folder)], check=True, stdout=subprocess.DEVNULL)
    project = folder / "dice"
    pyproject = project / "pyproject.toml"
    text = pyproject.read_text()
    pyproject.write_text(text.replace("dependencies = []",
                                      f"dependencies = {dependencies!r}".replace("'", '"')))
    return project


def holds_dependency(click: Path) -> bool:
    listing = subprocess.run(["dpkg-deb", "-c", str(click)], capture_output=True, text=True,
                             check=True).stdout
    return "./lib/python3/dist-packages/six.py" in listing


def main() -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=9)
    parser.add_argument("--keep", type=Path, help="work in DIR and keep it (the venv too)")
    parser.add_argument("--quick", action="store_true", help="one round, no verdict")
    parser.add_argument("--json", help="write the verdicts to this file")
    args = parser.parse_args()
    if args.quick:
        args.runs = 1
    verdicts = Verdicts(issue=32)
    with benchlib.work_folder(args.keep, "bench-python-deps-") as work:
        ours = python_venv(work)
        benchlib.environment(ours)
        print(FAIRNESS)
        wheels, empty, cache = work / "wheelhouse", work / "empty", work / "cache"
        for folder in (wheels, empty):
            folder.mkdir(exist_ok=True)
        shutil.rmtree(cache, ignore_errors=True)
        fetched = subprocess.run([sys.executable, "-m", "pip", "download", "-q", "--no-deps",
                                  "--only-binary=:all:", DEPENDENCY, "-d", str(wheels)],
                                 capture_output=True, text=True)
        if fetched.returncode:
            raise SystemExit(f"cannot download {DEPENDENCY}:\n{fetched.stderr}")
        plain = make_project(ours, work / "no-deps", [])
        withdep = make_project(ours, work / "with-dep", [DEPENDENCY])
        cold = make_project(ours, work / "cold", [DEPENDENCY])
        env = benchlib.clean_env(CLICK_BUILD_PYTHON_CACHE=str(cache), PIP_NO_INDEX="1",
                                 PIP_FIND_LINKS=str(empty), PIP_CONFIG_FILE=os.devnull)
        online = {**env, "PIP_FIND_LINKS": str(wheels)}
        for project in (plain, withdep):  # untimed: fills the cache, warms both
            subprocess.run([ours, "build", str(project), "-o", str(project.parent / "out")],
                           check=True, env=online, stdout=subprocess.DEVNULL)
        print(f"cache: {cache} ({len([p for p in cache.iterdir() if p.is_dir()])} entry, "
              "filled by the untimed build)")

        def check(r: int, s: benchlib.Samples, project: Path = withdep) -> None:
            (click,) = (project.parent / "out").glob("*.click")
            if not holds_dependency(click):
                raise SystemExit(f"{click} lacks the dependency")

        def empty_cache(r: int) -> None:
            shutil.rmtree(work / "cold-cache", ignore_errors=True)

        cold_env = ["env", f"PIP_FIND_LINKS={wheels}",
                    f"CLICK_BUILD_PYTHON_CACHE={work / 'cold-cache'}"]
        tools = [
            Tool("no dependencies", lambda r: ([ours, "build", plain, "-o", plain.parent / "out"],
                                               work)),
            Tool("one dependency, cached", lambda r: (
                [ours, "build", withdep, "-o", withdep.parent / "out"], work), after=check),
            Tool("one dependency, first build (pip)", lambda r: (
                [*cold_env, ours, "build", cold, "-o", cold.parent / "out"], work),
                before=empty_cache, after=lambda r, s: check(r, s, cold)),
        ]
        with Runner() as runner:
            runner.describe()
            results = benchlib.interleave(runner, tools, args.runs, "python app builds", env)
        benchlib.table("click-build build of the python template", results,
                       base="no dependencies")
        ratio, text = benchlib.ratio_line(results["one dependency, cached"],
                                          results["no dependencies"])
        print(f"  cached dependency vs none: {text}")
        saved, _ = benchlib.ratio_line(results["one dependency, first build (pip)"],
                                       results["one dependency, cached"])
        print(f"  the first build (pip, from a local wheel folder) took {saved:.2f}x the "
              "cached rebuild; from the package index it also waits for the network")
        if not args.quick:
            verdicts.judge("python app rebuild with a cached dependency vs none",
                           f"{ratio:.2f}x", f"<= {TARGET}x", ratio <= TARGET)
        verdicts.summary(args.json)
    return 0


if __name__ == "__main__":
    sys.exit(main())
