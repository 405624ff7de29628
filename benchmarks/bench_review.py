#!/usr/bin/env python3
"""Review speed and memory on big packages, against just reading them.

Two packages of about 140 MB, built with the core builder:

- ``app``: about 10,000 source-like text files, random binaries and some ELF-like
  files, as a real app with assets has;
- ``elf``: this machine's own shared libraries (``/usr/lib/<triplet>/*.so*`` of under
  32 MiB each, in name order, up to 390 MB: on the project's machine all 538 of them,
  359 MB, a 134 MB package; hundreds of real libraries' dynamic tables, symbol versions
  and undefined symbols), packaged for
  ``ubuntu-sdk-20.04`` on this machine's architecture, so the ABI checks
  (``lint.abi-*``, ``lint.qt-version``) read every one of them.

For each, in interleaved runs:

- ``inflate``: inflating the package's data.tar.gz with zlib and nothing else,
  the floor for anything that looks inside;
- ``read``: reading the package: its data archive walked with tarfile and
  every file's bytes read (what extracting it costs, minus the disk);
- ``verify``: the core audit alone (``scan_data``: paths, types, md5 sums);
- ``review``: ``click_build.review.review_package`` (that audit, the review's
  sink on every entry, and every check).

The machine is shared, so CPU time of the process is the main measure (wall
time is printed too).  It prints medians, the ratios and the review's peak
memory, and whether the targets are met: review at most 2x ``read``, and peak
memory under 64 MiB above an interpreter that has imported click_build.

Usage: python3 benchmarks/bench_review.py [--runs N] [--keep DIR] [--quick] [--tree app|elf]
"""

from __future__ import annotations

import argparse
import gzip
import io
import json
import random
import shutil
import statistics
import subprocess
import sys
import tarfile
import tempfile
import time
import zlib
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

MANIFEST = {
    "name": "com.example.reviewbench",
    "version": "1.0",
    "framework": "ubuntu-sdk-20.04",
    "maintainer": "Bench <bench@example.com>",
    "title": "Review bench",
    "architecture": "amd64",
    "hooks": {"bench": {"desktop": "bench.desktop", "apparmor": "bench.apparmor"}},
}
WORDS = ("import property string width height anchors fill parent color text font "
         "function return var let const if else for while Item Rectangle Column Row "
         "Label Button onClicked console log model delegate ListView id visible").split()


def make_tree(root: Path, files: int = 10_000) -> Path:
    """~140 MB: text files of ~8 KB, random 40-100 KB binaries, and ELF programs."""
    rng = random.Random(20261203)
    app = root / "app"
    (app / "qml").mkdir(parents=True)
    (app / "manifest.json").write_text(json.dumps(MANIFEST))
    (app / "bench.desktop").write_text(
        "[Desktop Entry]\nName=Bench\nExec=bench\nIcon=qml/icon.svg\nType=Application\n"
        "X-Lomiri-Touch=true\n")
    (app / "bench.apparmor").write_text('{"policy_groups": ["networking"], '
                                        '"policy_version": 20.04}\n')
    (app / "qml" / "icon.svg").write_text("<svg/>\n")
    elf = Path(sys.executable).resolve().read_bytes()[:200_000]
    (app / "bench").write_bytes(elf)
    (app / "bench").chmod(0o755)
    for i in range(files):
        d = app / f"dir{i % 50:02d}" / f"sub{i % 7}"
        d.mkdir(parents=True, exist_ok=True)
        if i % 6 == 0:
            (d / f"blob{i}.bin").write_bytes(rng.randbytes(rng.randint(40_000, 100_000)))
        elif i % 97 == 0:
            (d / f"lib{i}.so").write_bytes(elf)
        else:
            text = "\n".join(" ".join(rng.choices(WORDS, k=12)) for _ in range(rng.randint(80, 320)))
            (d / f"file{i}.qml").write_text(text)
    return app


def make_elf_tree(root: Path, size: int = 390_000_000) -> Path:
    """This machine's shared libraries, up to ``size`` bytes, in lib/<triplet>/."""
    from click_build.elf import ARCH_TRIPLETS, parse_elf_header
    from click_build.hostarch import host_architecture

    arch = host_architecture()
    triplet = ARCH_TRIPLETS[arch]
    app = root / "elf-app"
    lib = app / "lib" / triplet
    lib.mkdir(parents=True)
    manifest = dict(MANIFEST, name="com.example.reviewelf", architecture=arch,
                    framework="ubuntu-sdk-20.04")
    manifest["hooks"] = {"bench": {"apparmor": "bench.apparmor", "bin-path": "lib"}}
    (app / "manifest.json").write_text(json.dumps(manifest))
    (app / "bench.apparmor").write_text('{"policy_groups": ["networking"], '
                                        '"policy_version": 20.04}\n')
    total = 0
    for path in sorted(Path("/usr/lib", triplet).glob("*.so*")):
        if path.is_symlink() or not path.is_file() or path.stat().st_size > 32 << 20:
            continue
        with path.open("rb") as f:
            info = parse_elf_header(f.read(64))
        if info is None or not info.is_code:
            continue
        shutil.copyfile(path, lib / path.name)
        total += path.stat().st_size
        if total >= size:
            break
    return app


def build(app: Path, out: Path) -> Path:
    from click_build.build import build_click, stage_tree
    from click_build.manifest import load_manifest

    manifest = load_manifest(app / "manifest.json")
    entries = stage_tree(app, exclude=[app / "manifest.json"])
    return Path(build_click(manifest, entries, out))


def _data_reader(pkg: object) -> object:
    from click_build.archive import MemberReader

    return MemberReader(pkg.file, pkg.data_member.offset, pkg.data_member.size)  # type: ignore[attr-defined]


def inflate(path: Path) -> int:
    """Inflate data.tar.gz of the package; return the number of bytes."""
    from click_build.package import open_click

    total = 0
    with open_click(path) as pkg:
        reader = _data_reader(pkg)
        inflater = zlib.decompressobj(16 + zlib.MAX_WBITS)
        while chunk := reader.read(1 << 20):  # type: ignore[attr-defined]
            total += len(inflater.decompress(chunk))
    return total


def read(path: Path) -> int:
    """Walk the data archive and read every file; return the number of files."""
    from click_build.package import open_click

    count = 0
    with open_click(path) as pkg:
        stream = gzip.GzipFile(fileobj=io.BufferedReader(_data_reader(pkg), 1 << 20))
        with tarfile.open(fileobj=stream, mode="r|", bufsize=1 << 16) as tar:
            for info in tar:
                if info.isreg():
                    member = tar.extractfile(info)
                    assert member is not None
                    while member.read(1 << 20):
                        pass
                    count += 1
    return count


def verify(path: Path) -> int:
    from click_build.package import open_click, scan_data

    with open_click(path) as pkg:
        return scan_data(pkg).files


def review(path: Path) -> int:
    from click_build.review import review_package

    return len(review_package(path, frameworks_dir="/nonexistent"))


_PEAK = """
import sys
sys.path.insert(0, {root!r})
from click_build.review import review_package, desktop, hooks, lint, security
import click_build.review._collect
{run}
# VmHWM: this process's own peak (ru_maxrss would include the forking parent's)
print([l.split()[1] for l in open("/proc/self/status") if l.startswith("VmHWM:")][0])
"""


def peak_memory_mib(path: Path) -> tuple[float, float]:
    """Peak RSS of the review in a fresh interpreter, and of that interpreter idle."""
    run = f"review_package({str(path)!r}, frameworks_dir='/nonexistent')"
    out = []
    for body in (run, ""):
        done = subprocess.run([sys.executable, "-c", _PEAK.format(root=str(ROOT), run=body)],
                              capture_output=True, text=True, check=True)
        out.append(int(done.stdout) / 1024)
    return out[0], out[1]


def measure(name: str, package: Path, runs: int) -> tuple[float, float]:
    """Time the steps on ``package``; print them; (review / read, peak MiB above idle)."""
    raw = inflate(package)
    print(f"[{name}] package {package.stat().st_size / 1e6:.1f} MB, "
          f"data {raw / 1e6:.1f} MB uncompressed, {verify(package)} files")
    steps = {"inflate": inflate, "read": read, "verify": verify, "review": review}
    cpu: dict[str, list[float]] = {step: [] for step in steps}
    wall: dict[str, list[float]] = {step: [] for step in steps}
    findings = 0
    for _ in range(runs):
        for step, fn in steps.items():
            c0, w0 = time.process_time(), time.perf_counter()
            result = fn(package)
            cpu[step].append(time.process_time() - c0)
            wall[step].append(time.perf_counter() - w0)
            if step == "review":
                findings = result
    med_cpu = {n: statistics.median(v) for n, v in cpu.items()}
    med_wall = {n: statistics.median(v) for n, v in wall.items()}
    for step in steps:
        print(f"[{name}] {step:>8}: cpu {med_cpu[step]:.3f} s  wall {med_wall[step]:.3f} s  "
              f"({raw / med_cpu[step] / 1e6:.0f} MB/s of data)")
    print(f"[{name}] review findings: {findings}")
    for base in ("inflate", "read", "verify"):
        print(f"[{name}] review / {base}: {med_cpu['review'] / med_cpu[base]:.2f}x cpu, "
              f"{med_wall['review'] / med_wall[base]:.2f}x wall")
    ratio = med_cpu["review"] / med_cpu["read"]
    busy, idle = peak_memory_mib(package)
    extra = busy - idle
    print(f"[{name}] target review <= 2x read: {ratio:.2f}x: "
          f"{'met' if ratio <= 2.0 else 'NOT met'}")
    print(f"[{name}] peak memory {busy:.1f} MiB, {extra:.1f} MiB above an idle interpreter "
          f"(target < 64): {'met' if extra < 64 else 'NOT met'}")
    return ratio, extra


def main() -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--keep", metavar="DIR", help="build in DIR and keep it")
    parser.add_argument("--quick", action="store_true", help="small trees, one run: a smoke run")
    parser.add_argument("--tree", choices=("app", "elf"), action="append",
                        help="the package(s) to measure (default: both)")
    args = parser.parse_args()
    if args.quick:
        args.runs = 1
    work = Path(args.keep or tempfile.mkdtemp(prefix="bench-review-"))
    work.mkdir(parents=True, exist_ok=True)
    ok = True
    try:
        for name in args.tree or ("app", "elf"):
            out = work / name
            out.mkdir(exist_ok=True)
            package = next(out.glob("*.click"), None)
            if package is None:
                print(f"[{name}] generating the tree and building the package ...", flush=True)
                if name == "app":
                    tree = make_tree(out, 200 if args.quick else 10_000)
                else:
                    tree = make_elf_tree(out, 5_000_000 if args.quick else 390_000_000)
                package = build(tree, out)
            ratio, extra = measure(name, package, args.runs)
            ok = ok and ratio <= 2.0 and extra < 64
        return 0 if args.quick or ok else 1
    finally:
        if not args.keep:
            shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
