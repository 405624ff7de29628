"""Installer benchmarks: click-build against the original ``click install``.

    python benchmarks/bench_install.py [--runs N] [--apps N]

Prints (medians of interleaved whole-process runs):
  1. a trivial install, ours vs the original (target: ratio <= 0.2);
  2. an install into a database holding 1,000 apps vs an empty one (target: <= 1.1);
  3. ``list`` of 1,000 registered apps (target: < 0.3 s), with the original's for scale.
The original needs root (it unpacks as clickpkg); without root part 1 is skipped.
Not a timed test: machines differ, so it prints figures and ratios only.
"""

from __future__ import annotations

import argparse
import compileall
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from click_build.build import build_click, stage_tree  # noqa: E402
from click_build.manifest import Manifest  # noqa: E402

ORIGINAL = "/usr/bin/click"


def our_command() -> list[str]:
    script = Path(sys.executable).with_name("click-build")
    return [str(script)] if script.exists() else [sys.executable, "-m", "click_build"]


def make_package(outdir: Path, name: str, version: str = "1.0") -> Path:
    tree = outdir / f"src-{name}"
    tree.mkdir(parents=True)
    (tree / "app.desktop").write_text("[Desktop Entry]\nName=Bench\nExec=bench\n")
    (tree / "main.qml").write_text("import QtQuick 2.7\nRectangle {}\n")
    manifest = Manifest.from_dict({
        "name": name, "version": version, "framework": "ubuntu-sdk-20.04",
        "maintainer": "Bench <bench@example.com>", "title": "Bench",
        "hooks": {"app": {"desktop": "app.desktop"}}})
    path = Path(build_click(manifest, stage_tree(tree), outdir, mtime=1_700_000_000))
    shutil.rmtree(tree)
    return path


def timed(cmd: list[str], env: dict[str, str]) -> float:
    start = time.perf_counter()
    result = subprocess.run(cmd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    elapsed = time.perf_counter() - start
    if result.returncode != 0:
        raise SystemExit(f"{cmd} failed: {result.stderr.decode()[-500:]}")
    return elapsed


def fresh_root(base: Path, label: str, for_original: bool) -> Path:
    root = Path(tempfile.mkdtemp(prefix=f"{label}.", dir=base))
    os.chmod(root, 0o755)
    if for_original and os.geteuid() == 0:
        shutil.chown(root, "clickpkg", "clickpkg")
    return root


def user() -> str:
    import pwd

    return pwd.getpwuid(os.getuid()).pw_name


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=15)
    parser.add_argument("--apps", type=int, default=1000)
    args = parser.parse_args()

    compileall.compile_dir(str(REPO / "click_build"), quiet=1)  # as an installed wheel has
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    base = Path(tempfile.mkdtemp(prefix="click-bench."))
    os.chmod(base, 0o755)
    env.update(CLICK_HOOKS_DIR=str(base / "hooks"), CLICK_FRAMEWORKS_DIR=str(base / "fw"),
               CLICK_DATABASES_DIR=str(base / "conf"), TEST_QUIET="1")
    ours = our_command()
    flags = ["--allow-unauthenticated", "--force-missing-framework", f"--user={user()}"]
    try:
        pkg = make_package(base, "com.example.bench")
        # -- 1. trivial install vs the original ---------------------------------
        if os.geteuid() == 0 and Path(ORIGINAL).exists():
            # The core needs only the standard library: "-S" skips site-packages and
            # with it the import hook of an editable (development) install.
            lean = [sys.executable, "-S", "-m", "click_build"]
            lean_env = dict(env, PYTHONPATH=str(REPO))
            mine, bare, theirs = [], [], []
            for _ in range(args.runs):
                theirs.append(timed([ORIGINAL, "install", "--root=%s" % fresh_root(
                    base, "orig", True), *flags, str(pkg)], env))
                mine.append(timed([*ours, "install", "--root=%s" % fresh_root(
                    base, "ours", False), *flags, str(pkg)], env))
                bare.append(timed([*lean, "install", "--root=%s" % fresh_root(
                    base, "lean", False), *flags, str(pkg)], lean_env))
            m, b, t = (statistics.median(x) for x in (mine, bare, theirs))
            print(f"trivial install: click-build {m * 1000:.0f} ms, original {t * 1000:.0f} ms, "
                  f"ratio {m / t:.2f} (target <= 0.2)")
            print(f"  without site-packages (python -S): {b * 1000:.0f} ms, ratio {b / t:.2f}")
        else:
            print("trivial install: skipped (the original needs root)")

        # -- 2. install cost with N apps present ---------------------------------
        full = fresh_root(base, "full", False)
        from click_build.frameworks import frameworks_dir
        from click_build.install.database import Database
        from click_build.install.installer import Installer

        installer = Installer(Database([str(full)]), frameworks_dir(base / "fw"),
                              hooks_dir=str(base / "hooks"), force_missing_framework=True,
                              allow_unauthenticated=True)
        import contextlib
        import io

        start = time.perf_counter()
        with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
            for i in range(args.apps):  # real installs, in one process to save time
                app = make_package(base / "pkgs", f"com.example.app{i:04d}")
                installer.install(str(app), user=user())
                app.unlink()
        print(f"populated a database with {args.apps} apps in "
              f"{time.perf_counter() - start:.1f} s (in-process installs)")
        empty_times, full_times = [], []
        for i in range(args.runs):
            probe = make_package(base / "probe", f"com.example.probe{i:03d}")
            empty_times.append(timed([*ours, "install", "--root=%s" % fresh_root(
                base, "empty", False), *flags, str(probe)], env))
            full_times.append(timed([*ours, "install", f"--root={full}", *flags, str(probe)],
                                    env))
            probe.unlink()
        e, f = statistics.median(empty_times), statistics.median(full_times)
        print(f"install with {args.apps} apps present: {f * 1000:.0f} ms, empty database "
              f"{e * 1000:.0f} ms, ratio {f / e:.2f} (target <= 1.1)")

        # -- 3. list of N apps ----------------------------------------------------
        for extra in ([], ["--manifest"]):
            listed = [timed([*ours, "list", f"--root={full}", *extra], env)
                      for _ in range(args.runs)]
            line = (f"list{' --manifest' if extra else ''} of {args.apps + args.runs} apps: "
                    f"{statistics.median(listed) * 1000:.0f} ms (target < 300 ms)")
            if Path(ORIGINAL).exists():
                orig = [timed([ORIGINAL, "list", f"--root={full}", *extra], env)
                        for _ in range(max(3, args.runs // 3))]
                line += f"; original {statistics.median(orig) * 1000:.0f} ms"
            print(line)
    finally:
        shutil.rmtree(base, ignore_errors=True)


if __name__ == "__main__":
    main()
