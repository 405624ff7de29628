#!/usr/bin/env python3
"""Run the benchmarks behind issue 15's targets and print one table of verdicts.

    python3 benchmarks/run_all.py [--keep DIR] [--quick] [--levels 1,6]

Runs bench_install.py, bench_build.py and bench_contents.py one after the other
(each prints its own figures and how it made the comparison fair), then the
targets they judged, each with the script that measured it.  With ``--keep``
each script works in DIR/NAME and keeps its trees, venv and packages.

Between scripts it lets the machine settle (writes flushed, the load average
down): measured straight after the tree builds, click-build's trivial install
took 85 ms against 38 ms on a quiet machine a few minutes later, the original's
310 ms against 173 ms, so even the ratio moved (0.27x against 0.22x).  So the
install benchmark, whose tools mostly make folders, files and links, runs first,
on the machine as the run found it, before the build benchmark writes its trees
(bench_install.py prints how long making a file takes beside its ratios).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
SCRIPTS = ("bench_install.py", "bench_build.py", "bench_contents.py")
QUIET_LOAD = 0.5  # the 1-minute load average a script may start at
SETTLE_MAX = 150.0  # seconds: from a load of 2, the average takes about 85 s to fall to 0.5


def settle() -> None:
    """Wait until the previous script's work has died down, and say how long it took."""
    start = time.monotonic()
    os.sync()  # the trees and packages written so far: no writeback during the next timings
    while (load := os.getloadavg()[0]) > QUIET_LOAD and time.monotonic() - start < SETTLE_MAX:
        time.sleep(2)
    print(f"settled for {time.monotonic() - start:.0f} s: load average {load:.2f} "
          f"(waits for <= {QUIET_LOAD} or {SETTLE_MAX:.0f} s)", flush=True)


def main() -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    parser.add_argument("--keep", type=Path, help="work in DIR/<script> and keep it")
    parser.add_argument("--quick", action="store_true", help="every script in its quick mode")
    parser.add_argument("--click-build", type=Path, help="passed on to every script")
    parser.add_argument("--levels", help="passed on to bench_build.py (-z levels to time too)")
    args = parser.parse_args()
    rows = []
    failed = []
    with tempfile.TemporaryDirectory(prefix="bench-verdicts-") as tmp:
        for script in SCRIPTS:
            verdicts = Path(tmp) / f"{script}.json"
            cmd = [sys.executable, str(HERE / script), "--json", str(verdicts)]
            if args.keep:
                cmd += ["--keep", str(args.keep / Path(script).stem)]
            if args.quick:
                cmd.append("--quick")
            if args.click_build:
                cmd += ["--click-build", str(args.click_build)]
            if args.levels and script == "bench_build.py":
                cmd += ["--levels", args.levels]
            if script != SCRIPTS[0] and not args.quick:
                settle()
            print(f"\n===== {' '.join(cmd[1:])}", flush=True)
            if subprocess.run(cmd).returncode != 0:
                failed.append(script)
                continue
            rows += [(script, row) for row in json.loads(verdicts.read_text())]
    print("\n===== Issue 15 targets, each measured in one interleaved run of its script")
    for script, row in rows:
        print(f"  {'met   ' if row['met'] else 'MISSED'}  {row['measure']}: {row['value']} "
              f"(target {row['target']}; benchmarks/{script})")
    for script in failed:
        print(f"  FAILED  benchmarks/{script} did not finish")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
