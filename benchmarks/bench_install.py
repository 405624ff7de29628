#!/usr/bin/env python3
"""Installer benchmarks: click-build against the original ``click install``.

    python3 benchmarks/bench_install.py [--runs N] [--apps N] [--keep DIR] [--also-click-build EXE]

Prints medians of interleaved whole-process runs, with min-max and per-round ratios:

1. a trivial install (one app with a desktop hook), ours vs the original:
   a. "installer overhead": neither tool runs any hook (target: <= 0.2x);
   b. "with system hooks": both run the system's hooks (Debian's click ships
      click-desktop.hook, which starts ``click desktophook``);
2. an install into a database holding 1,000 apps vs an empty one (target <= 1.1x);
3. ``list`` of those apps (target < 300 ms), with the original's for scale.

``--also-click-build EXE`` times another click-build beside this checkout's in part 1
(one made from main before a change, say: before and after in one run, same rounds).

Needs root for the original (it unpacks as clickpkg) and for 1a (a private
mount namespace); without root only parts 2 and 3 run.
"""

from __future__ import annotations

import argparse
import contextlib
import io
import os
import pwd
import shutil
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import benchlib  # noqa: E402
from benchlib import ORIGINAL, REPO, Runner, Samples, Tool, Verdicts  # noqa: E402

NAME = "com.example.clickbench"  # hook links and desktop files with this prefix are ours
FAIRNESS = """\
How the comparison is made fair:
- click-build is a wheel of this checkout installed by pip into a fresh venv of the
  system's Python, the interpreter the original click runs on; the original is Debian's.
  Both run timestamp-checked .pyc files (pip compiles ours as for a user, without
  SOURCE_DATE_EPOCH, which would make them re-hash their sources on every import).
- Both install the same .click file (built once) with the same options, each run into a
  fresh database folder made the same way, started by the same small runner process
  with the same environment; both drop to clickpkg to unpack when root.
- Hooks, like for like: "installer overhead" runs both in a private mount namespace
  where an empty folder is mounted over /usr/share/click/hooks, so neither runs a hook
  (the original's hooks folder is fixed; this is the one way to switch its hooks off);
  "with system hooks" runs both with the system's hooks folder. After every run the
  script checks that the desktop hook's link was made (or not) for that very run.
- Rounds are interleaved (round r starts with tool r mod n); medians, min-max, and
  ratios per round (both tools ran back to back, under the same load).
"""


def user() -> str:
    return pwd.getpwuid(os.getuid()).pw_name


def home_link() -> Path:
    """Where click-desktop.hook links this app's launcher for the user."""
    home = Path(pwd.getpwuid(os.getuid()).pw_dir)
    return home / ".local/share/click/hooks/desktop" / f"{NAME}_bench_1.0.desktop"


def fresh_root(base: Path, label: str) -> Path:
    root = Path(tempfile.mkdtemp(prefix=f"{label}.", dir=base))
    os.chmod(root, 0o755)
    if os.geteuid() == 0:
        shutil.chown(root, "clickpkg", "clickpkg")  # as the original wants its database
    return root


def make_package(outdir: Path, name: str) -> Path:
    """A trivial app with a desktop hook, built by the checkout's library (untimed)."""
    from click_build.build import build_click, stage_tree
    from click_build.manifest import Manifest

    tree = outdir / f"src-{name}"
    tree.mkdir(parents=True)
    (tree / "bench.desktop").write_text("[Desktop Entry]\nName=Bench\nExec=bench\n")
    (tree / "main.qml").write_text("import QtQuick 2.7\nRectangle {}\n")
    manifest = Manifest.from_dict({
        "name": name, "version": "1.0", "framework": "ubuntu-sdk-20.04",
        "maintainer": "Bench <bench@example.com>", "title": "Bench",
        "hooks": {"bench": {"desktop": "bench.desktop"}}})
    path = Path(build_click(manifest, stage_tree(tree), outdir, mtime=1_700_000_000))
    shutil.rmtree(tree)
    return path


def install_tools(ours: Path, pkg: Path, base: Path, hooks_expected: bool,
                  rounds: int, also: Path | None = None) -> list[Tool]:
    flags = ["--allow-unauthenticated", "--force-missing-framework", f"--user={user()}"]
    roots: dict[tuple[str, int], Path] = {}

    def tool(label: str, argv0: list[str | Path]) -> Tool:
        def before(r: int) -> None:
            roots[label, r] = fresh_root(base, label.split()[0])
            home_link().unlink(missing_ok=True)

        def command(r: int) -> tuple[list[str | Path], Path]:
            return [*argv0, "install", f"--root={roots[label, r]}", *flags, pkg], base

        def after(r: int, _s: Samples) -> None:
            root = roots.pop((label, r))
            if not (root / NAME / "current").is_symlink():
                raise SystemExit(f"{label} did not install into {root}")
            link = home_link()
            ran = link.is_symlink() and os.readlink(link).startswith(str(root))
            if ran != hooks_expected:
                raise SystemExit(f"{label}: the desktop hook {'did not run' if hooks_expected else 'ran'}"
                                 f" ({link}): the comparison would not be like for like")
            shutil.rmtree(root)

        return Tool(label, command, after, before)

    tools = [tool("click-build install", [ours]), tool("click install", [ORIGINAL])]
    if also is not None:
        tools.append(tool(ALSO, [also]))
    return tools


ALSO = "other click-build install"


STARTUP = "interpreter start-up alone"


def startup_tool(ours: Path, base: Path) -> Tool | None:
    """What every click-build run pays before its own code: the script's interpreter
    starting and running the script's first line (``import re, sys``)."""
    with open(ours, "rb") as f:
        first = f.readline()
    if not first.startswith(b"#!"):
        return None
    interpreter = first[2:].decode().split()
    return Tool(STARTUP, lambda r: ([*interpreter, "-c", "import re, sys"], base))


def cleanup_hook_output() -> None:
    """Remove what the desktop hook made for our apps in the user's home, nothing else."""
    for folder in (home_link().parent, home_link().parent.parent.parent.parent / "applications"):
        for path in folder.glob(f"{NAME}*.desktop"):
            path.unlink()


def main() -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=15)
    parser.add_argument("--apps", type=int, default=1000)
    parser.add_argument("--keep", type=Path, help="work in DIR and keep it")
    parser.add_argument("--click-build", type=Path, help="measure this click-build executable "
                        "instead of a wheel of the checkout")
    parser.add_argument("--also-click-build", type=Path, metavar="EXE",
                        help="in part 1, time this click-build executable too (e.g. one made "
                        "from main before a change: before and after in one run)")
    parser.add_argument("--quick", action="store_true", help="one round, 5 apps: a smoke run")
    parser.add_argument("--json", help="write the verdicts to this file")
    args = parser.parse_args()
    if args.quick:
        args.runs, args.apps = 1, 5
    sys.path.insert(0, str(REPO))  # the library builds fixtures and fills the big database
    work = args.keep or Path(tempfile.mkdtemp(prefix="bench-install-"))
    work.mkdir(parents=True, exist_ok=True)
    os.chmod(work, 0o755)
    verdicts = Verdicts()
    original = os.geteuid() == 0 and Path(ORIGINAL).exists()
    try:
        ours = args.click_build or benchlib.install_click_build(work)
        benchlib.environment(ours)
        print(FAIRNESS)
        base = work / "roots"
        shutil.rmtree(base, ignore_errors=True)
        base.mkdir()
        os.chmod(base, 0o755)
        pkg = make_package(work / "pkg", NAME) if not (work / "pkg").exists() else next(
            (work / "pkg").glob(f"{NAME}_*.click"))
        empty_hooks = work / "empty-hooks"
        prefix = benchlib.no_hooks_prefix(empty_hooks)
        with Runner() as runner:
            runner.describe()

        # 1. trivial install vs the original -------------------------------------------
        if not original:
            print("1. trivial install: skipped (the original installs only as root)")
        else:
            cases = [("installer overhead: no hooks for either tool", prefix, False,
                      "trivial install, no hooks, vs original", 0.2),
                     ("with system hooks for both tools", None, True,
                      "trivial install, system hooks, vs original", None)]
            for title, wrap, hooks, measure, target in cases:
                if hooks is False and wrap is None:
                    print(f"1. {title}: skipped (needs root, unshare and {benchlib.HOOKS_DIR})")
                    continue
                if hooks and not any(Path(benchlib.HOOKS_DIR).glob("*.hook")):
                    print(f"1. {title}: skipped (no system hooks in {benchlib.HOOKS_DIR})")
                    continue
                before = benchlib.metadata_latency(base)
                with Runner(wrap or ()) as runner:
                    tools = install_tools(ours, pkg, base, hooks, args.runs,
                                          args.also_click_build)
                    startup = startup_tool(ours, base) if not hooks else None
                    if startup is not None:
                        tools.append(startup)
                    results = benchlib.interleave(runner, tools, args.runs, title)
                cleanup_hook_output()
                benchlib.table(f"1. Trivial install, {title}", results, base="click install")
                print(f"  file system: a file made and removed in {base} took "
                      f"{before * 1e6:.0f} us before these runs, "
                      f"{benchlib.metadata_latency(base) * 1e6:.0f} us after (median of 40; "
                      "lower is a quieter disk, see benchlib.metadata_latency)")
                ratio, text = benchlib.ratio_line(results["click-build install"],
                                                  results["click install"])
                print(f"  click-build vs the original: {text}")
                if ALSO in results:
                    _, other = benchlib.ratio_line(results["click-build install"], results[ALSO])
                    print(f"  click-build vs {args.also_click_build}: {other}")
                if STARTUP in results:
                    share, _ = benchlib.ratio_line(results[STARTUP], results["click install"])
                    print(f"  of which {STARTUP} (click-build's interpreter, 'import re, sys'"
                          f" as its script starts): {results[STARTUP].median * 1000:.0f} ms, "
                          f"{share:.2f}x of the original's whole install")
                if not args.quick and target is not None:
                    verdicts.judge(measure, f"{ratio:.2f}x", f"<= {target}x", ratio <= target)

        # 2. install cost with N apps present -----------------------------------------------
        from click_build.frameworks import frameworks_dir
        from click_build.install.database import Database
        from click_build.install.installer import Installer

        full = fresh_root(base, "full")
        empty_hooks.mkdir(exist_ok=True)
        installer = Installer(Database([str(full)]), frameworks_dir(work / "no-frameworks"),
                              hooks_dir=str(empty_hooks), force_missing_framework=True,
                              allow_unauthenticated=True)
        elapsed = 0.0
        for i in range(args.apps):  # real installs, in one process to save time
            app = make_package(work / "pkgs", f"{NAME}.app{i:04d}")
            start = time.perf_counter()
            with contextlib.redirect_stdout(io.StringIO()), \
                    contextlib.redirect_stderr(io.StringIO()):  # its warnings, 1,000 times
                installer.install(str(app), user=user())
            elapsed += time.perf_counter() - start
            app.unlink()
            benchlib.progress(f"filling a database: {i + 1}/{args.apps} apps")
        benchlib.clear_progress()
        print(f"\nfilled a database with {args.apps} apps ({elapsed:.1f} s of in-process "
              "installs by the checkout's library, untimed)")
        probes = [make_package(work / "probes", f"{NAME}.probe{r:03d}")
                  for r in range(args.runs)]
        flags = ["--allow-unauthenticated", "--force-missing-framework", f"--user={user()}"]
        roots: dict[int, Path] = {}
        tools = [
            Tool(f"into {args.apps} apps", lambda r: (
                [ours, "install", f"--root={full}", *flags, probes[r]], work)),
            Tool("into an empty database", lambda r: (
                [ours, "install", f"--root={roots[r]}", *flags, probes[r]], work),
                before=lambda r: roots.__setitem__(r, fresh_root(base, "empty"))),
        ]
        with Runner(prefix or ()) as runner:
            results = benchlib.interleave(runner, tools, args.runs, "full vs empty")
        benchlib.table("2. click-build install, no hooks"
                       f"{'' if prefix else ' (CLICK_HOOKS_DIR unset: system hooks for both)'}",
                       results, base="into an empty database")
        ratio, text = benchlib.ratio_line(results[f"into {args.apps} apps"],
                                          results["into an empty database"])
        print(f"  with {args.apps} apps present vs empty: {text}")
        cleanup_hook_output()
        if not args.quick:
            verdicts.judge(f"install with {args.apps} apps present vs empty", f"{ratio:.2f}x",
                           "<= 1.1x", ratio <= 1.1)

        # 3. list of N apps ----------------------------------------------------------------
        count = args.apps + args.runs
        tools = [Tool("click-build list", lambda r: ([ours, "list", f"--root={full}"], work))]
        if Path(ORIGINAL).exists():
            tools.append(Tool("click list", lambda r: ([ORIGINAL, "list", f"--root={full}"], work)))
        with Runner() as runner:
            results = benchlib.interleave(runner, tools, args.runs, "list")
        benchlib.table(f"3. list of {count} apps", results,
                       base="click list" if len(tools) > 1 else None)
        ms = results["click-build list"].median * 1000
        if not args.quick:
            verdicts.judge(f"list of {count} apps", f"{ms:.0f} ms", "< 300 ms", ms < 300)
        verdicts.summary(args.json)
    finally:
        cleanup_hook_output()
        if not args.keep:
            shutil.rmtree(work, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
