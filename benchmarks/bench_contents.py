#!/usr/bin/env python3
"""``contents`` of a package with 1,000,000 members: click-build against the original.

    python3 benchmarks/bench_contents.py [--runs N] [--members N] [--keep DIR]

Builds (once, untimed, with the checkout's library) a package whose data.tar.gz
holds 1,000 folders of 999 small files, then times ``click-build contents`` and
``click contents`` on it in interleaved rounds, and prints medians, peak memory
and whether the targets are met: no slower than the original, under 64 MiB.
It measures whatever reader the checkout has.
"""

from __future__ import annotations

import argparse
import hashlib
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import benchlib  # noqa: E402
from benchlib import ORIGINAL, REPO, Runner, Tool, Verdicts  # noqa: E402

FAIRNESS = """\
How the comparison is made fair:
- click-build is a wheel of this checkout installed by pip into a fresh venv of the
  system's Python, the interpreter the original click runs on; the original is Debian's.
- Both list the same package file, output to /dev/null, started by the same small
  runner process with the same environment; rounds interleaved, medians, min-max.
- Before timing, the script checks that both print the same listing.
"""


def make_package(work: Path, members: int) -> Path:
    """A package of ``members`` entries: folders of 999 files (all the same small file)."""
    out = work / f"pkg-{members}"
    found = list(out.glob("*.click")) if out.exists() else []
    if found:
        return found[0]
    from click_build.build import Entry, build_click
    from click_build.manifest import Manifest

    shutil.rmtree(out, ignore_errors=True)
    out.mkdir(parents=True)
    source = work / "one-file.qml"
    source.write_text("import QtQuick 2.7\nItem {}\n")
    size = source.stat().st_size
    entries = []
    for i in range(members):
        folder, index = divmod(i, 1000)
        if index == 0:
            entries.append(Entry(f"qml{folder:04d}", "dir", 0o755, 0, 1_700_000_000))
        else:
            entries.append(Entry(f"qml{folder:04d}/Item{index:03d}.qml", "file", 0o644, size,
                                 1_700_000_000, str(source)))
    manifest = Manifest.from_dict({
        "name": "com.example.contentsbench", "version": "1.0", "framework": "ubuntu-sdk-20.04",
        "maintainer": "Bench <bench@example.com>", "title": "Bench"})
    return Path(build_click(manifest, entries, out, mtime=1_700_000_000))


def listing(cmd: list[str]) -> tuple[int, str] | str:
    """(lines, sha256) of what ``cmd`` prints, or its error when it fails."""
    proc = subprocess.run(cmd, capture_output=True, env=benchlib.clean_env())
    if proc.returncode:
        return proc.stderr.decode(errors="replace").strip() or f"exit status {proc.returncode}"
    return proc.stdout.count(b"\n"), hashlib.sha256(proc.stdout).hexdigest()


def main() -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--members", type=int, default=1_000_000)
    parser.add_argument("--keep", type=Path, help="work in DIR and keep it (the package too)")
    parser.add_argument("--click-build", type=Path, help="measure this click-build executable "
                        "instead of a wheel of the checkout")
    parser.add_argument("--quick", action="store_true", help="2,000 members, one round")
    parser.add_argument("--json", help="write the verdicts to this file")
    args = parser.parse_args()
    if args.quick:
        args.runs, args.members = 1, 2000
    sys.path.insert(0, str(REPO))
    work = args.keep or Path(tempfile.mkdtemp(prefix="bench-contents-"))
    work.mkdir(parents=True, exist_ok=True)
    verdicts = Verdicts()
    try:
        ours = args.click_build or benchlib.install_click_build(work)
        benchlib.environment(ours)
        print(FAIRNESS)
        benchlib.progress(f"building a package of {args.members:,} members (kept with --keep)...")
        pkg = make_package(work, args.members)
        benchlib.clear_progress()
        print(f"package: {pkg.name}, {pkg.stat().st_size / 1e6:.1f} MB, "
              f"{args.members:,} members in data.tar.gz")
        tools = []
        outputs = {}
        for label, argv0 in (("click-build contents", str(ours)), ("click contents", ORIGINAL)):
            if label == "click contents" and not Path(ORIGINAL).exists():
                continue
            outputs[label] = listing([argv0, "contents", str(pkg)])
            if isinstance(outputs[label], str):
                print(f"{label} FAILS on this package: {outputs[label]}")
            else:
                tools.append(Tool(label, lambda r, a=argv0: ([a, "contents", pkg], work)))
        found = [o for o in outputs.values() if not isinstance(o, str)]
        if len(found) == 2:
            same = "the same" if found[0] == found[1] else "DIFFERENT"
            print(f"listings: {same} ({found[0][0]:,} and {found[1][0]:,} lines)")
        with Runner() as runner:
            runner.describe()
            results = benchlib.interleave(runner, tools, args.runs, "contents")
        original = "click contents" in results
        benchlib.table(f"contents of {args.members:,} members", results,
                       base="click contents" if original else None)
        s = results.get("click-build contents")
        if s and original:
            ratio, text = benchlib.ratio_line(s, results["click contents"])
            print(f"  click-build vs the original: {text}")
        if not args.quick:
            measure = f"contents of {args.members:,} members"
            if s is None:
                verdicts.judge(f"{measure} vs the original", "fails", "<= 1.0x", False)
            else:
                if original:
                    verdicts.judge(f"{measure} vs the original",
                                   f"{ratio:.2f}x ({s.median:.2f} s)", "<= 1.0x", ratio <= 1.0)
                verdicts.judge(f"{measure}: peak memory", f"{s.peak_mib:.0f} MiB", "< 64 MiB",
                               s.peak_mib < 64)
        verdicts.summary(args.json)
    finally:
        if not args.keep:
            shutil.rmtree(work, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
