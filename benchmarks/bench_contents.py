#!/usr/bin/env python3
"""``contents`` of a package of a million members: click-build against the original.

    python3 benchmarks/bench_contents.py [--runs N] [--keep DIR] [--ours CMD]

Writes (or reuses, with --keep) a valid package of 1,000 folders of 1,000 tiny
files (1,001,001 members, laid out as the builders lay them out), then runs
``click contents`` (the original, which is ``dpkg-deb -c``: gzip and tar) and
``click-build contents`` on it, interleaved, and prints for each the median
wall time, CPU time (user + system, the whole process tree) and peak memory
(the largest process of the tree), with the spread, and the ratios.  Targets
(issue 15): time no more than the original's, peak memory under 64 MiB.

Fair by construction: the same file, already in the page cache (one untimed
run of each first), output to /dev/null for both, the same machine and the
same moments (runs alternate).  ``--ours`` names the click-build command to
time (default: the ``click-build`` script beside this Python, else
``python -m click_build``); give an installed one to measure as users run it.
Not a timed test: machines differ, so it prints figures and ratios only.
"""

from __future__ import annotations

import argparse
import hashlib
import os
import shlex
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(REPO / "tests"))

ORIGINAL = ["/usr/bin/click", "contents"]


def our_command() -> list[str]:
    script = Path(sys.executable).with_name("click-build")
    return [str(script)] if script.exists() else [sys.executable, "-m", "click_build"]


#: Started from a small interpreter: a child forked from this (larger) process would
#: count this process's pages in its peak before it execs.
_PROBE = ("import os, subprocess, sys, time\n"
          "t = time.perf_counter()\n"
          "p = subprocess.Popen(sys.argv[1:], stdout=subprocess.DEVNULL)\n"
          "_, status, usage = os.wait4(p.pid, 0)\n"
          "print(time.perf_counter() - t, usage.ru_utime + usage.ru_stime, usage.ru_maxrss,\n"
          "      os.waitstatus_to_exitcode(status))\n")


def run(cmd: list[str]) -> tuple[float, float, int]:
    """(wall seconds, CPU seconds, peak RSS in KiB) of ``cmd`` and what it waits for."""
    out = subprocess.run([sys.executable, "-c", _PROBE, *cmd], capture_output=True, text=True,
                         check=True).stdout.split()
    if out[3] != "0":
        raise SystemExit(f"{shlex.join(cmd)} failed")
    return float(out[0]), float(out[1]), int(out[2])


def spread(values: list[float]) -> str:
    return f"median {statistics.median(values):.2f} (min {min(values):.2f}, max {max(values):.2f})"


def main() -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--keep", metavar="DIR", help="write the package in DIR and keep it")
    parser.add_argument("--ours", metavar="CMD", help="the click-build command to time")
    args = parser.parse_args()
    from crafting import MANIFEST, write_many_members

    work = Path(args.keep or tempfile.mkdtemp(prefix="bench-contents-"))
    work.mkdir(parents=True, exist_ok=True)
    package = work / "million.click"
    if not package.exists():
        print("writing a package of 1,001,001 members ...", flush=True)
        write_many_members(package, 1000, 1000, dict(MANIFEST, hooks={}))
    ours = [*(shlex.split(args.ours) if args.ours else our_command()), "contents"]
    commands = {"original": [*ORIGINAL, str(package)], "click-build": [*ours, str(package)]}
    digests = {}
    for name, cmd in commands.items():  # warms the cache; the outputs must agree
        with tempfile.TemporaryFile() as out:
            subprocess.run(cmd, stdout=out, check=True)
            out.seek(0)
            digest = hashlib.sha256()
            while chunk := out.read(1 << 20):
                digest.update(chunk)
            digests[name] = digest.hexdigest()
    if digests["original"] != digests["click-build"]:
        raise SystemExit("the listings differ")
    print(f"package: {package.stat().st_size / 1e6:.1f} MB, 1,001,001 members; listings identical")
    results: dict[str, list[tuple[float, float, int]]] = {name: [] for name in commands}
    for _ in range(args.runs):
        for name, cmd in commands.items():
            results[name].append(run(cmd))
    print(f"{args.runs} interleaved runs each, output to /dev/null, file in the page cache:")
    medians = {}
    for name, rows in results.items():
        wall, cpu, rss = ([row[i] for row in rows] for i in range(3))
        medians[name] = (statistics.median(wall), statistics.median(cpu), statistics.median(rss))
        print(f"  {name:>12}: wall {spread(wall)} s; cpu {spread(cpu)} s; "
              f"peak {statistics.median(rss) / 1024:.0f} MiB")
    ours_m, orig_m = medians["click-build"], medians["original"]
    print(f"ratios (click-build / original): wall {ours_m[0] / orig_m[0]:.2f}x, "
          f"cpu {ours_m[1] / orig_m[1]:.2f}x, peak memory {ours_m[2] / orig_m[2]:.2f}x")
    print(f"targets: wall <= 1.0x: {'met' if ours_m[0] <= orig_m[0] else 'NOT met'}; "
          f"peak < 64 MiB: {'met' if ours_m[2] < 64 << 10 else 'NOT met'}")
    print(f"load average during the runs: {os.getloadavg()[0]:.1f} "
          f"({os.cpu_count()} cores); a loaded machine favours the original's several "
          "processes")
    return 0


if __name__ == "__main__":
    sys.exit(main())
