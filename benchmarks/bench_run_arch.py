#!/usr/bin/env python3
"""Command to window under qemu: ``click-build run --arch arm64`` of a built package.

    python3 benchmarks/bench_run_arch.py [--rounds 5] [--keep DIR] [--quick]

The ``cpp`` template is built twice, for this computer and for arm64 (against the
Debian 12 stand-in root: ``click-build sysroot create --arch arm64 --profile
debian-12`` first; ``CLICK_BUILD_SYSROOT_CACHE`` names the cache); each round times
from the start of ``click-build run PACKAGE`` to its window, the arm64 package under
qemu-aarch64-static and, as the reference measured in the same run, this computer's
own package natively.  With a root that has qmlscene (``--package qmlscene``) the
``qml`` template is timed too, against this computer's qmlscene.  No target: issue 30
asks for it to work; the figure says what a developer waits.

``--quick`` (the test suite's) times 1 round of each and judges nothing.
"""

from __future__ import annotations

import argparse
import os
import shutil
import signal
import statistics
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import benchlib  # noqa: E402
from bench_run_watch import private_display, shows, until  # noqa: E402

REPO = benchlib.REPO
CLI = [sys.executable, "-m", "click_build"]
TITLE = "Tea Timer"

FAIRNESS = """\
How it was measured:
- The clock starts just before `click-build run PACKAGE` is started and stops at the
  first look at the X server's window tree (xwininfo, asked again as soon as it
  answers) that shows the app's window: install into run's private database, the
  launcher's environment, the program's start and Qt's first frame, all of it.
- Both packages come from the same template project, built before the clock runs; both
  run on the same private Xvfb with Mesa's software OpenGL (LIBGL_ALWAYS_SOFTWARE=1,
  as --arch sets it), one at a time, rounds alternating.
- The arm64 package runs with the root's Qt, Lomiri and Mesa under qemu; the native one
  with this computer's (Debian 12: the same Qt 5.15 and Lomiri releases).
- The machine's load average is printed at the start and the end (other work on a
  shared machine slows both)."""


def to_window(package: Path, arch: list[str], display: str, env: dict[str, str],
              root: Path) -> float:
    """Seconds from ``click-build run [--arch ...] PACKAGE`` to its window."""
    log = root.with_suffix(".stderr")
    start = time.monotonic()
    with log.open("wb") as err:
        proc = subprocess.Popen([*CLI, "run", "--root", str(root), *arch, str(package)],
                                env={**env, "DISPLAY": display}, stdout=subprocess.DEVNULL,
                                stderr=err)

    def shown() -> bool:
        if proc.poll() is not None:
            raise SystemExit(f"click-build run ended ({proc.returncode}):\n"
                             f"{log.read_text(errors='replace')[-2000:]}")
        return shows(display, TITLE)

    try:
        until(shown, f"the window of {package.name}", limit=300)
        return time.monotonic() - start
    finally:
        proc.send_signal(signal.SIGINT)
        proc.wait()
        until(lambda: not shows(display, TITLE), "the window to close")


def built(project: Path, env: dict[str, str], arch: list[str]) -> Path:
    """The template built as ``run`` builds it (``--print-env``: nothing started)."""
    done = subprocess.run([*CLI, "run", *arch, "--print-env", str(project)], env=env,
                          stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    if done.returncode != 0:
        raise SystemExit(f"the build of {project} failed:\n{done.stderr[-3000:]}")
    # the newest: a QML app's is the same "all" package both times
    package = max((project / "build" / "click-run").glob("*.click"),
                  key=lambda p: p.stat().st_mtime_ns)
    kept = project.parent / f"{'-'.join(arch[1:]) or 'native'}-{package.name}"
    shutil.copy(package, kept)
    return kept


def main() -> int:
    from click_build.run.emulate import find_root

    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--keep", type=Path, help="work in DIR and keep it")
    parser.add_argument("--quick", action="store_true", help="1 round, no verdicts")
    args = parser.parse_args()
    rounds = 1 if args.quick else args.rounds
    for tool in ("Xvfb", "xwininfo", "qmlscene", "qemu-aarch64-static", "cmake"):
        if not shutil.which(tool):
            raise SystemExit(f"{tool} is needed")
    try:
        find_root("ubuntu-touch-24.04-1.x", "arm64", None, "the benchmark")
    except Exception as e:  # noqa: BLE001  (the message says what to make)
        raise SystemExit(f"{e}\n(click-build sysroot create --arch arm64 --profile "
                         "debian-12)") from None
    kinds = ["cpp"]
    try:
        find_root("ubuntu-touch-24.04-1.x", "arm64", "qmlscene", "the benchmark")
        kinds.append("qml")
    except Exception:  # noqa: BLE001
        print("no arm64 root with qmlscene: the qml template is not timed")
    benchlib.environment(None)
    print(FAIRNESS)
    env = {**benchlib.clean_env(LIBGL_ALWAYS_SOFTWARE="1", QT_QPA_PLATFORM="xcb"),
           "PYTHONPATH": str(REPO)}
    if os.environ.get("CLICK_BUILD_SYSROOT_CACHE"):
        env["CLICK_BUILD_SYSROOT_CACHE"] = os.environ["CLICK_BUILD_SYSROOT_CACHE"]
    results: dict[str, tuple[list[float], list[float]]] = {}
    with benchlib.work_folder(args.keep, "bench-run-arch.") as work, \
            private_display() as display:
        work.chmod(0o755)  # as root the installer unpacks as clickpkg, who must get in
        for kind in kinds:
            where = work / kind
            where.mkdir()
            benchlib.progress(f"{kind}: building for this computer and for arm64")
            subprocess.run([*CLI, "new", kind, "--no-input", "--set", f"title={TITLE}"],
                           cwd=where, env=env, check=True, stdout=subprocess.DEVNULL,
                           stderr=subprocess.DEVNULL)
            project = where / "tea-timer"
            native = built(project, env, [])
            arm64 = built(project, env, ["--arch", "arm64"])
            emulated: list[float] = []
            own: list[float] = []
            for number in range(rounds):
                benchlib.progress(f"{kind}: round {number + 1}/{rounds}")
                emulated.append(to_window(arm64, ["--arch", "arm64"], display, env,
                                          where / "arm64-root"))
                own.append(to_window(native, [], display, env, where / "native-root"))
            results[kind] = (emulated, own)
        benchlib.clear_progress()

    def row(label: str, samples: list[float]) -> str:
        return (f"{label:<44} median {statistics.median(samples):6.2f} s  "
                f"(min {min(samples):.2f}, max {max(samples):.2f}, {len(samples)} rounds)")

    for kind, (emulated, own) in results.items():
        print(f"\n{kind} template, command to window:")
        print(row("run --arch arm64 (qemu-aarch64-static)", emulated))
        print(row("run of this computer's build (native)", own))
        ratio = statistics.median(emulated) / statistics.median(own)
        print(f"{kind}: arm64 under qemu / native {ratio:.2f}x")
    print(f"\nload average at the end: {benchlib.load_now()}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
