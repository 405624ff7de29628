#!/usr/bin/env python3
"""Build time, output size and peak memory of click-build against the reference tools.

    python3 benchmarks/bench_build.py [--runs N] [--big-runs N] [--keep DIR] [--levels 1,6,9]

Cases (each timed in interleaved rounds, medians with min-max and per-round ratios):

1. a trivial app: ``click-build build`` as users run it (with the built-in review,
   the default) against the original ``click build``; ``--review off`` beside it;
2. a 27 MB text-only app tree (about 3,000 QML, JS, HTML, CSS, JSON and SVG files,
   generated deterministically by benchmarks/trees.py) against
   ``dpkg-deb -Zgzip -b`` (time and size) and the original ``click build``;
3. a 140 MB tree of 10,000 files, half text and half binary assets by bytes,
   against the same two;
4. the peak memory of every click-build run above.

``--levels`` adds, for choosing the default level, click-build at each given
``-z`` level on both trees (time and size against dpkg-deb's level 9).
``--quick`` runs tiny trees once, to check that the script works.
"""

from __future__ import annotations

import argparse
import os
import shutil
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import benchlib  # noqa: E402
import trees  # noqa: E402
from benchlib import Runner, Samples, Tool, Verdicts  # noqa: E402

FAIRNESS = """\
How the comparison is made fair:
- click-build is a wheel of this checkout installed by pip into a fresh venv of the
  system's Python, the interpreter the original click runs on (not an editable install).
- Every tool builds the same tree into an emptied output folder, started by the same
  small runner process with the same environment (SOURCE_DATE_EPOCH set for all).
- Rounds are interleaved (round r starts with tool r mod n); figures are medians,
  with min-max, and ratios also per round (both tools ran back to back).
- Level: dpkg-deb -Zgzip and click build compress at gzip level 9 (their default);
  click-build at its default, level 9, on all cores. dpkg-deb uses one core for gzip.
- Deflate: dpkg-deb and click build use the system's zlib; click-build, installed with
  its dependencies as pip installs them for a user, deflates what follows a
  package's first 256 KiB with zlib-ng where it is a dependency (x86-64 and ARM64), at the same level.
  The row "click-build, Python's zlib" (CLICK_BUILD_DEFLATE=zlib) is click-build as
  on a machine without zlib-ng (shown, not judged); the targets judge the default.
- The trees: click-build and click build leave out DEBIAN/ (-I DEBIAN), which only
  dpkg-deb needs. Neither dpkg-deb nor the builds on trees review (click-build
  --review off, click build --no-validate);
  the trivial build is shown with click-build's default review, which the original
  does not do (it has no built-in review), so that figure is tilted against click-build.
- Reference: when pigz is installed, "tar | pigz -9" compresses the same tree's tar
  on every core, as click-build does; it reads nothing else and writes no package,
  so it shows what level-9 compression alone costs on this machine.
- Sizes: the size target is judged on data.tar.gz, the same tree compressed by both.
  The whole files are shown too: a .click's control.tar.gz carries the md5sums of
  every file (the format requires them; dpkg-deb -b writes none), so it is also
  compared with the original click build's package, which carries the same.
"""


def ar_members(path: Path) -> dict[str, int]:
    """name -> size of each member of an ar archive (.click, .deb)."""
    sizes = {}
    with open(path, "rb") as f:
        f.seek(8)
        while header := f.read(60):
            name = header[:16].decode().strip().rstrip("/")
            size = int(header[48:58])
            sizes[name] = size
            f.seek(size + size % 2, os.SEEK_CUR)
    return sizes


def measure_output(out: Path) -> Callable[[int, Samples], None]:
    """The size of the one package in ``out`` and of its data.tar member (a bare
    ``.tar.gz``, the pigz reference's output, is all data)."""
    def after(_round: int, samples: Samples) -> None:
        produced = [p for p in out.iterdir()
                    if p.suffix in (".click", ".deb") or p.name.endswith(".tar.gz")]
        if len(produced) != 1:
            raise SystemExit(f"expected one package in {out}, found {produced}")
        samples.sizes.append(produced[0].stat().st_size)
        samples.extra["data"] = produced[0].stat().st_size if produced[0].suffix == ".gz" else \
            next(v for k, v in ar_members(produced[0]).items() if k.startswith("data.tar"))
    return after


def emptied(out: Path) -> Callable[[int], None]:
    def before(_round: int) -> None:
        shutil.rmtree(out, ignore_errors=True)
        out.mkdir(parents=True)
    return before


def tool(label: str, argv: list[str | Path], out: Path, cwd: Path | None = None) -> Tool:
    return Tool(label, lambda r: (argv, cwd or out), measure_output(out), emptied(out))


PIGZ = "tar | pigz -9 (data only)"
ZLIB = "click-build, Python's zlib"  # CLICK_BUILD_DEFLATE=zlib, --review off


def pigz_tool(app: Path, out: Path) -> Tool | None:
    """The pigz reference: the tree's tar (as dpkg-deb makes it) through ``pigz -9`` on
    every core, the parallel compressor click-build's gzip writer works like.  It
    shows what compression alone costs on this machine: a build, which reads,
    hashes and compresses, cannot be much faster than this row."""
    pigz = shutil.which("pigz")
    if pigz is None:
        return None
    script = ('tar -C "$1" --exclude=./DEBIAN --sort=name --owner=0 --group=0 -cf - . '
              f'| "$2" -9 -p {os.cpu_count() or 1} > "$3/data.tar.gz"')
    return Tool(PIGZ, lambda r: (["sh", "-c", script, "sh", app, pigz, out], out),
                measure_output(out), emptied(out))


def tree_tools(ours: Path, app: Path, out: Path, original: bool,
               levels: list[int] | None = None) -> list[Tool]:
    tools = [
        tool("click-build build --review off",
             [ours, "build", "--review", "off", "-I", "DEBIAN", app, "-o", out / "ours"],
             out / "ours"),
        tool("dpkg-deb -Zgzip -b", ["dpkg-deb", "-Zgzip", "-b", app, out / "deb" / "x.deb"],
             out / "deb"),
    ]
    if original:
        tools.append(tool("click build --no-validate",
                          ["click", "build", "--no-validate", "-I", "DEBIAN", app],
                          out / "orig"))
    tools.append(tool(ZLIB, ["env", "CLICK_BUILD_DEFLATE=zlib", ours, "build", "--review", "off",
                             "-I", "DEBIAN", app, "-o", out / "zlib"], out / "zlib"))
    reference = pigz_tool(app, out / "pigz")
    if reference is not None:
        tools.append(reference)
    for level in levels or ():
        tools.append(tool(f"click-build build -z {level}",
                          [ours, "build", "--review", "off", "-z", str(level), "-I", "DEBIAN",
                           app, "-o", out / f"z{level}"], out / f"z{level}"))
    return tools


def size_line(results: dict[str, Samples], label: str, base: str) -> tuple[float, float]:
    a, b = results[label], results[base]
    whole = a.sizes[-1] / b.sizes[-1] - 1
    data = a.extra["data"] / b.extra["data"] - 1
    print(f"  size of {label} vs {base}: package {whole:+.2%}, data.tar.gz {data:+.2%} "
          f"({a.sizes[-1]:,} vs {b.sizes[-1]:,} bytes)")
    return whole, data


def run_tree(name: str, runner: Runner, tools: list[Tool], rounds: int, verdicts: Verdicts,
             time_target: float, quick: bool, peaks: list[float]) -> None:
    results = benchlib.interleave(runner, tools, rounds, name)
    benchlib.table(name, results, base="dpkg-deb -Zgzip -b", sizes=True)
    ours = results["click-build build --review off"]
    peaks.extend(ours.peaks_mib)
    ratio, text = benchlib.ratio_line(ours, results["dpkg-deb -Zgzip -b"])
    print(f"  time of click-build vs dpkg-deb -Zgzip -b: {text}")
    _, data = size_line(results, "click-build build --review off", "dpkg-deb -Zgzip -b")
    if "click build --no-validate" in results:
        size_line(results, "click-build build --review off", "click build --no-validate")
    deb = results["dpkg-deb -Zgzip -b"]
    if PIGZ in results:
        pigz = results[PIGZ]
        print(f"  compression alone, {PIGZ} on {os.cpu_count()} cores: time "
              f"{benchlib.ratio_line(pigz, deb)[1]} of dpkg-deb; "
              f"data.tar.gz {pigz.extra['data'] / deb.extra['data'] - 1:+.2%}")
        print(f"  click-build vs that: {benchlib.ratio_line(ours, pigz)[1]}")
    if ZLIB in results:
        on_zlib = results[ZLIB]
        print(f"  click-build on Python's zlib (CLICK_BUILD_DEFLATE=zlib): time "
              f"{benchlib.ratio_line(on_zlib, deb)[1]} of dpkg-deb; data.tar.gz "
              f"{on_zlib.extra['data'] / deb.extra['data'] - 1:+.2%}")
    for label, s in results.items():
        if label.startswith("click-build build -z"):
            print(f"  {label}: time {benchlib.ratio_line(s, deb)[1]} of dpkg-deb; size "
                  f"package {s.sizes[-1] / deb.sizes[-1] - 1:+.2%}, "
                  f"data.tar.gz {s.extra['data'] / deb.extra['data'] - 1:+.2%}")
    if not quick:
        verdicts.judge(f"{name}: time vs dpkg-deb -Zgzip -b", f"{ratio:.2f}x",
                       f"<= {time_target}x", ratio <= time_target)
        verdicts.judge(f"{name}: data.tar.gz size vs dpkg-deb -Zgzip -b", f"{data:+.2%}",
                       "within +0.5%", data <= 0.005)


def main() -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=15, help="rounds for the trivial app")
    parser.add_argument("--big-runs", type=int, default=5, help="rounds for the trees")
    parser.add_argument("--keep", type=Path, help="work in DIR and keep it (trees are reused)")
    parser.add_argument("--click-build", type=Path, help="measure this click-build executable "
                        "instead of a wheel of the checkout")
    parser.add_argument("--levels", default="", help="also time click-build -z N for these "
                        "levels on the trees, e.g. 1,6,9")
    parser.add_argument("--no-original", action="store_true",
                        help="leave the original click build out of the tree cases")
    parser.add_argument("--quick", action="store_true", help="tiny trees, one round: a smoke run")
    parser.add_argument("--json", help="write the verdicts to this file")
    args = parser.parse_args()
    for needed in ("click", "dpkg-deb"):
        if not shutil.which(needed):
            raise SystemExit(f"{needed} not found: run ./scripts/setup as root first")
    if args.quick:
        args.runs = args.big_runs = 1
    levels = [int(x) for x in args.levels.split(",") if x]
    work = args.keep or Path(tempfile.mkdtemp(prefix="bench-build-"))
    work.mkdir(parents=True, exist_ok=True)
    verdicts = Verdicts()
    try:
        ours = args.click_build or benchlib.install_click_build(work)
        benchlib.environment(ours)
        print(FAIRNESS)
        if shutil.which("click-review"):
            print("note: click-review is on PATH, so the original click build also reviews\n")
        out = work / "out"
        peaks: list[float] = []
        with Runner() as runner:
            runner.describe()
            # 1. trivial app --------------------------------------------------------
            app = trees.trivial_app(work)
            results = benchlib.interleave(runner, [
                tool("click-build build (reviews)", [ours, "build", app, "-o", out / "a"],
                     out / "a"),
                tool("click-build build --review off",
                     [ours, "build", "--review", "off", app, "-o", out / "b"], out / "b"),
                tool("click build", ["click", "build", app], out / "c"),
            ], args.runs, "trivial app")
            benchlib.table("Trivial app (one process each, start-up included)", results,
                           base="click build")
            peaks.extend(results["click-build build (reviews)"].peaks_mib)
            peaks.extend(results["click-build build --review off"].peaks_mib)
            ratio, text = benchlib.ratio_line(results["click-build build (reviews)"],
                                              results["click build"])
            _, bare = benchlib.ratio_line(results["click-build build --review off"],
                                          results["click build"])
            print(f"  click-build (with its review) vs click build: {text}")
            print(f"  click-build --review off vs click build: {bare}")
            if not args.quick:
                verdicts.judge("trivial build with the review vs click build", f"{ratio:.2f}x",
                               "<= 0.3x", ratio <= 0.3)

            # 2. text tree, 3. mixed tree -------------------------------------------------
            cases = [("27 MB text-only app tree", 0.45, trees.text_app, (3000, 27_000_000)),
                     ("140 MB / 10,000-file tree", 0.4, trees.mixed_app, (10_000, 140_000_000))]
            if args.quick:
                cases = [("text tree (quick)", 0.45, trees.text_app, (40, 200_000)),
                         ("mixed tree (quick)", 0.4, trees.mixed_app, (40, 600_000))]
            for name, target, make, (files, size) in cases:
                benchlib.progress(f"generating the {name} (kept with --keep)...")
                app = make(work, files, size)
                count, total = trees.tree_stats(app)
                print(f"\n{name}: {total / 1e6:.1f} MB in {count} files "
                      f"({app.name}, seeded: the same bytes on every machine)")
                tools = tree_tools(ours, app, out, not args.no_original, levels)
                run_tree(name, runner, tools, args.big_runs, verdicts, target, args.quick, peaks)
        peak = max(peaks)
        print(f"\npeak memory of click-build builds: {peak:.1f} MiB (largest of "
              f"{len(peaks)} runs: trivial app and both trees)")
        if not args.quick:
            verdicts.judge("peak memory of any build", f"{peak:.1f} MiB", "< 64 MiB", peak < 64)
        verdicts.summary(args.json)
    finally:
        if not args.keep:
            shutil.rmtree(work, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
