#!/usr/bin/env python3
"""Where a build's time goes: deflate in the worker threads vs the main thread's own work.

    python3 benchmarks/profile_build.py [--tree text|mixed|PATH] [-z N] [--keep DIR]

Builds the tree with the checkout's library in this process (a diagnostic, not
a comparison: no other tool runs) and prints its CPU time split into the
deflate calls of the gzip workers and the main thread (reading, md5, crc32,
tar headers, the store probe, Python), how many bytes were deflated and how
many stored, and the main thread's main parts measured alone.
"""

from __future__ import annotations

import argparse
import hashlib
import os
import shutil
import sys
import tempfile
import threading
import time
import zlib
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import trees  # noqa: E402
from click_build import archive, deflate  # noqa: E402
from click_build.build import build_click, stage_tree  # noqa: E402
from click_build.manifest import load_manifest  # noqa: E402

_lock = threading.Lock()
_spent = {"deflated": 0.0, "stored": 0.0}
_bytes = {"deflated": 0, "stored": 0}
_deflate = archive._deflate


def _counted(block: bytes, history: bytes, level: int, last: bool, z: object = zlib) -> bytes:
    start = time.thread_time()
    out = _deflate(block, history, level, last, z)  # type: ignore[arg-type]
    kind = "deflated" if level else "stored"
    with _lock:
        _spent[kind] += time.thread_time() - start
        _bytes[kind] += len(block)
    return out


def best_cpu(fn: object, rounds: int = 3) -> float:
    best = float("inf")
    for _ in range(rounds):
        start = time.process_time()
        fn()  # type: ignore[operator]
        best = min(best, time.process_time() - start)
    return best


def main() -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    parser.add_argument("--tree", default="text", help="text, mixed, quick or a directory "
                        "with a manifest.json")
    parser.add_argument("-z", "--level", type=int, default=9)
    parser.add_argument("--keep", type=Path, help="generate trees in DIR and keep them")
    args = parser.parse_args()
    work = args.keep or Path(tempfile.mkdtemp(prefix="profile-build-"))
    work.mkdir(parents=True, exist_ok=True)
    try:
        makers = {"text": lambda: trees.text_app(work),
                  "mixed": lambda: trees.mixed_app(work),
                  "quick": lambda: trees.mixed_app(work, 40, 600_000)}
        app = makers[args.tree]() if args.tree in makers else Path(args.tree)
        manifest = load_manifest(app / "manifest.json")
        entries = stage_tree(app, ["DEBIAN"], exclude=[app / "manifest.json"])
        files = [e for e in entries if e.kind == "file"]
        out = work / "out"
        out.mkdir(exist_ok=True)
        archive._deflate = _counted  # type: ignore[assignment]
        wall, main_cpu, process_cpu = time.perf_counter(), time.thread_time(), time.process_time()
        built = build_click(manifest, entries, out, level=args.level)
        wall = time.perf_counter() - wall
        main_cpu = time.thread_time() - main_cpu
        process_cpu = time.process_time() - process_cpu
        archive._deflate = _deflate
        os.unlink(built)
        total = sum(e.size for e in files)
        print(f"{app}: {len(files)} files, {total / 1e6:.1f} MB, level {args.level}, "
              f"{os.cpu_count()} cores, deflated by {deflate.describe()}")
        print(f"wall {wall:.2f} s; process cpu {process_cpu:.2f} s = main thread "
              f"{main_cpu:.2f} s + workers' deflate {_spent['deflated']:.2f} s (of "
              f"{_bytes['deflated'] / 1e6:.1f} MB) + stored blocks {_spent['stored']:.2f} s "
              f"(of {_bytes['stored'] / 1e6:.1f} MB) + other {process_cpu - main_cpu - sum(_spent.values()):.2f} s")
        print("main thread's parts, each measured alone (best of 3):")
        data = [Path(e.source).read_bytes() for e in files if e.source]

        def read_all() -> None:
            for e in files:
                with open(e.source, "rb") as f:  # type: ignore[arg-type]
                    f.read(e.size)
                    f.read(1)

        parts = {
            "open, read, close": read_all,
            "md5": lambda: [hashlib.md5(d).digest() for d in data],
            "crc32": lambda: [zlib.crc32(d) for d in data],
            "tar headers": lambda: [archive.tar_header("./" + e.arcname, b"0", e.mode, e.size,
                                                       e.mtime) for e in entries],
            "store probe": lambda: [archive.looks_incompressible(d[:1 << 20]) for d in data
                                    if len(d) >= archive.STORE_PROBE_MIN],
        }
        for name, fn in parts.items():
            print(f"  {name:<18} {best_cpu(fn):.3f} s")
    finally:
        if not args.keep:
            shutil.rmtree(work, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
