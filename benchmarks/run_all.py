#!/usr/bin/env python3
"""Run the benchmarks behind issue 15's targets and print one table of verdicts.

    python3 benchmarks/run_all.py [--keep DIR] [--quick] [--levels 1,6]

Runs bench_build.py, bench_install.py and bench_contents.py one after the other
(each prints its own figures and how it made the comparison fair), then the
targets they judged, each with the script that measured it.  With ``--keep``
each script works in DIR/NAME and keeps its trees, venv and packages.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
SCRIPTS = ("bench_build.py", "bench_install.py", "bench_contents.py")


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
