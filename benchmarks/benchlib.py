"""What every benchmark script shares: installing the tools as users do, timing
interleaved runs from one small runner process, and printing figures honestly.

Fairness rules the scripts follow (and print):

- click-build is measured as users get it: a wheel of this checkout installed
  with pip into a fresh virtual environment of the system's Python, the same
  interpreter (``/usr/bin/python3``) the original Debian ``click`` runs on;
  never the editable development install.
- Every timed command, ours and theirs, is started by the same small runner
  process (so the peak memory the kernel reports is not inflated by a big
  parent) with the same environment, working directory kind and output kind.
- Tools are interleaved: round ``r`` starts with tool ``r mod n``, so load from
  other processes hits every tool alike; figures are medians with the spread.
- As root the runner (and so every timed tool) runs at nice -20: on a shared machine
  the timed tools get nearly all of it, as on an idle one.  Without that, a tool
  with four busy threads would get four shares of a loaded machine and a one-core
  tool one share, which flatters the parallel tool.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
SYSTEM_PYTHON = "/usr/bin/python3"
ORIGINAL = "/usr/bin/click"
HOOKS_DIR = "/usr/share/click/hooks"

# The runner: a small interpreter that starts each command and reports its wall
# time, exit status and peak RSS.  A child started from a big process would
# report that process's memory as its own peak (Linux keeps the high-water mark
# across exec), so the benchmark script never starts timed commands itself.
_RUNNER = r"""
import json, os, subprocess, sys, time
# As root, the timed tools outweigh other processes 87 to 1 (the same for every tool).
# This runner leads its own session, so with autogroup scheduling on, the weight that
# counts against other sessions is its autogroup's: set both.
def autogroup():
    with open("/proc/self/autogroup", "w") as f:
        f.write("-20")
for action in (autogroup, lambda: os.nice(-20 - os.nice(0))):
    try:
        action()
    except OSError:
        pass
try:
    group = open("/proc/self/autogroup").read().split()[-1]
except OSError:
    group = None
print(json.dumps({"hwm_kib": int([l.split()[1] for l in open("/proc/self/status")
                                   if l.startswith("VmHWM:")][0]), "nice": os.nice(0),
                  "group_nice": group}), flush=True)
for line in sys.stdin:
    job = json.loads(line)
    start = time.perf_counter()
    proc = subprocess.Popen(job["cmd"], cwd=job["cwd"], env=job["env"],
                            stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                            stderr=subprocess.PIPE)
    err = proc.stderr.read()
    _, status, usage = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - start
    print(json.dumps({"wall": wall, "rc": os.waitstatus_to_exitcode(status),
                      "maxrss_kib": usage.ru_maxrss, "cpu": usage.ru_utime + usage.ru_stime,
                      "stderr": err[-2000:].decode(errors="replace")}), flush=True)
"""


class Runner:
    """One long-lived runner process; ``prefix`` wraps it (e.g. in a mount namespace)."""

    def __init__(self, prefix: Sequence[str] = ()) -> None:
        self._proc = subprocess.Popen(
            [*prefix, SYSTEM_PYTHON if os.path.exists(SYSTEM_PYTHON) else sys.executable,
             "-S", "-c", _RUNNER],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, start_new_session=True)
        first = self._read()
        self.floor_mib = float(first["hwm_kib"]) / 1024  # type: ignore[arg-type]
        self.nice = int(first["nice"])  # type: ignore[call-overload]
        group = first["group_nice"]
        self.group_nice = None if group is None else int(group)  # type: ignore[call-overload]

    def describe(self) -> None:
        """Say under what priority the timed runs go and the memory floor."""
        if self.nice == -20 and self.group_nice in (None, -20):
            print("timed runs at nice -20 (as root; their own scheduling autogroup at -20 too):"
                  " on a shared machine they get nearly all of it, as on an idle one; "
                  "every tool alike")
        else:
            print(f"timed runs at nice {self.nice}, autogroup nice {self.group_nice} (not root):"
                  " on a loaded machine a multi-threaded tool gets more than its share; judge "
                  "ratios on an idle one")
        print(f"peak memory is per process (the largest of a tool's processes); the runner's "
              f"own {self.floor_mib:.0f} MiB is a floor no figure can go below")

    def _read(self) -> dict[str, object]:
        assert self._proc.stdout is not None
        line = self._proc.stdout.readline()
        if not line:
            raise SystemExit(f"benchmark runner stopped (exit {self._proc.wait()})")
        result: dict[str, object] = json.loads(line)
        return result

    def run(self, cmd: Sequence[str], cwd: str | os.PathLike[str] = ".",
            env: dict[str, str] | None = None) -> dict[str, object]:
        assert self._proc.stdin is not None
        job = {"cmd": [str(c) for c in cmd], "cwd": str(cwd), "env": env or clean_env()}
        self._proc.stdin.write(json.dumps(job) + "\n")
        self._proc.stdin.flush()
        result = self._read()
        if result["rc"] != 0:
            raise SystemExit(f"{' '.join(job['cmd'])} failed ({result['rc']}):\n"
                             f"{result['stderr']}")
        return result

    def close(self) -> None:
        if self._proc.poll() is None:
            assert self._proc.stdin is not None
            self._proc.stdin.close()
            self._proc.wait()

    def __enter__(self) -> Runner:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


@contextlib.contextmanager
def work_folder(keep: Path | None, prefix: str) -> Iterator[Path]:
    """The folder a script works in: ``--keep DIR`` (kept), else a temporary one that is
    removed at the end."""
    work = (keep or Path(tempfile.mkdtemp(prefix=prefix))).absolute()
    work.mkdir(parents=True, exist_ok=True)
    try:
        yield work
    finally:
        if not keep:
            shutil.rmtree(work, ignore_errors=True)


def clean_env(**extra: str) -> dict[str, str]:
    """The environment every timed command gets: ours, the original, dpkg-deb alike."""
    env = {k: v for k, v in os.environ.items()
           if k not in ("PYTHONDONTWRITEBYTECODE", "PYTHONPATH", "PYTHONHOME")
           and not k.startswith("CLICK_")}
    env.update(SOURCE_DATE_EPOCH="1700000000", LC_ALL="C.UTF-8", **extra)
    return env


def no_hooks_prefix(empty_dir: Path) -> list[str] | None:
    """Wrap a runner in a private mount namespace where the system hooks folder is empty.

    The original's hooks folder is fixed, so this is the one way to run both
    tools without hooks.  Needs root and ``unshare``; None when unavailable.
    """
    if os.geteuid() != 0 or not shutil.which("unshare") or not os.path.isdir(HOOKS_DIR):
        return None
    empty_dir.mkdir(parents=True, exist_ok=True)
    return ["unshare", "--mount", "--propagation", "private", "--", "sh", "-c",
            f'mount --bind "$0" {HOOKS_DIR} && exec "$@"', str(empty_dir)]


def install_click_build(work: Path) -> Path:
    """click-build from a wheel of this checkout, installed by pip into a fresh venv.

    The venv is made with the system's Python, the interpreter the original
    ``click`` runs on.  Reused (under ``--keep``) only while the wheel is the same.
    """
    wheels = work / "wheel"
    source = work / "source"  # setuptools builds in the source tree: not in the checkout
    for stale in (wheels, source):
        shutil.rmtree(stale, ignore_errors=True)
    skip = shutil.ignore_patterns(".git", ".venv*", "build", "dist", "*.egg-info",
                                  "__pycache__", ".*_cache", ".hypothesis", "demo")
    work_dir = work.resolve()
    shutil.copytree(REPO, source, ignore=lambda folder, names: {
        *skip(folder, names), *(n for n in names if Path(folder, n).resolve() == work_dir)})
    env = clean_env()
    # As the README tells users: `pip wheel .` (build isolation fetches the setuptools
    # pyproject.toml asks for); offline, the setuptools of this interpreter.
    for extra in ([], ["--no-build-isolation"]):
        built = subprocess.run([sys.executable, "-m", "pip", "wheel", "-q", "--no-deps", *extra,
                                "-w", str(wheels), str(source)], env=env,
                               stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
        if built.returncode == 0:
            break
    else:
        raise SystemExit(f"cannot build a wheel of {REPO}:\n{built.stderr[-3000:]}")
    shutil.rmtree(source)
    (wheel,) = wheels.glob("click_build-*.whl")
    digest = hashlib.sha256(wheel.read_bytes()).hexdigest()
    venv = work / "venv"
    stamp = venv / "wheel.sha256"
    script = venv / "bin" / "click-build"
    if stamp.exists() and stamp.read_text() == digest and script.exists():
        return script
    shutil.rmtree(venv, ignore_errors=True)
    python = SYSTEM_PYTHON if os.path.exists(SYSTEM_PYTHON) else sys.executable
    subprocess.run([python, "-m", "venv", "--without-pip", str(venv)], check=True)
    # The benchmark's own pip installs into the venv (as `venv/bin/pip install` would,
    # without spending seconds on ensurepip): the wheel's files, compiled .pyc, the script,
    # and its dependencies from the package index, as a user gets them (zlib-ng).
    # Without SOURCE_DATE_EPOCH, as in a user's shell: with it, pip compiles .pyc files that
    # re-hash their source on every import (checked-hash), where a user's are checked by
    # timestamp, like the original's Debian-compiled ones.
    install_env = {k: v for k, v in env.items() if k != "SOURCE_DATE_EPOCH"}
    subprocess.run([sys.executable, "-m", "pip", "--python", str(venv / "bin" / "python"),
                    "install", "-q", str(wheel)],
                   check=True, env=install_env, stdout=subprocess.DEVNULL)
    compiled = list((venv / "lib").glob("python3*/site-packages/click_build/__pycache__/*.pyc"))
    if not compiled:
        raise SystemExit("the wheel install has no compiled .pyc files")
    if any(pyc_flags(p) != 0 for p in compiled):
        raise SystemExit("the wheel install compiled hash-based .pyc files, not a user's")
    stamp.write_text(digest)
    return script


def pyc_flags(path: Path) -> int:
    """The flags word of a .pyc header (PEP 552): 0 for timestamp-checked files."""
    with open(path, "rb") as f:
        return int.from_bytes(f.read(8)[4:8], "little")


@dataclass
class Samples:
    walls: list[float] = field(default_factory=list)
    cpus: list[float] = field(default_factory=list)  # user + system, children included
    peaks_mib: list[float] = field(default_factory=list)
    sizes: list[int] = field(default_factory=list)
    extra: dict[str, int] = field(default_factory=dict)

    @property
    def median(self) -> float:
        return statistics.median(self.walls)

    def spread(self) -> str:
        lo, hi = min(self.walls), max(self.walls)
        return f"{_t(lo)}-{_t(hi)}"

    @property
    def peak_mib(self) -> float:
        return max(self.peaks_mib)


def _t(seconds: float) -> str:
    return f"{seconds * 1000:.0f} ms" if seconds < 1 else f"{seconds:.2f} s"


@dataclass
class Tool:
    """One contender: ``command(round)`` gives (argv, cwd); ``after`` checks and measures."""

    label: str
    command: Callable[[int], tuple[Sequence[str | os.PathLike[str]], Path]]
    after: Callable[[int, Samples], None] | None = None
    before: Callable[[int], None] | None = None


def interleave(runner: Runner, tools: Sequence[Tool], rounds: int, what: str,
               env: dict[str, str] | None = None) -> dict[str, Samples]:
    """Run every tool once per round, round r starting with tool r mod n."""
    results = {t.label: Samples() for t in tools}
    for r in range(rounds):
        order = [*tools[r % len(tools):], *tools[:r % len(tools)]]
        for tool in order:
            if tool.before:
                tool.before(r)
            cmd, cwd = tool.command(r)
            res = runner.run(cmd, cwd, env)
            s = results[tool.label]
            s.walls.append(float(res["wall"]))  # type: ignore[arg-type]
            s.cpus.append(float(res["cpu"]))  # type: ignore[arg-type]
            s.peaks_mib.append(float(res["maxrss_kib"]) / 1024)  # type: ignore[arg-type]
            if tool.after:
                tool.after(r, s)
        progress(f"{what}: round {r + 1}/{rounds}")
    return results


def paired_ratios(a: Samples, b: Samples) -> list[float]:
    """Per-round ratios a/b: both ran back to back, under the same load."""
    return [x / y for x, y in zip(a.walls, b.walls)]


def ratio_line(a: Samples, b: Samples) -> tuple[float, str]:
    """The ratio of medians, and the spread of the per-round ratios."""
    ratio = a.median / b.median
    pr = paired_ratios(a, b)
    return ratio, f"{ratio:.2f}x (per round {min(pr):.2f}-{max(pr):.2f})"


def table(title: str, results: dict[str, Samples], base: str | None = None,
          sizes: bool = False) -> None:
    clear_progress()
    print(f"\n{title}  (wall time; cpu = median user+system time of the process and "
          "its children)")
    head = (f"  {'tool':<34}{'median':>10}  {'min-max':<20}{'ratio':>7}{'cpu':>10}"
            f"{'peak MiB':>10}")
    print(head + (f"{'bytes':>14}" if sizes else ""))
    for label, s in results.items():
        ratio = f"{s.median / results[base].median:.2f}" if base else ""
        line = (f"  {label:<34}{_t(s.median):>10}  {s.spread():<20}{ratio:>7}"
                f"{_t(statistics.median(s.cpus)):>10}{s.peak_mib:>10.1f}")
        if sizes:
            line += f"{s.sizes[-1]:>14,}" if s.sizes else f"{'':>14}"
        print(line)


class Verdicts:
    """Targets met or missed, printed as they are judged and again at the end."""

    def __init__(self, issue: int = 15) -> None:
        self.rows: list[tuple[str, str, str, bool]] = []
        self.issue = issue

    def judge(self, measure: str, value: str, target: str, ok: bool) -> None:
        self.rows.append((measure, value, target, ok))
        print(f"  [{'MET' if ok else 'MISSED'}] {measure}: {value} (target {target})")

    def summary(self, json_path: str | None = None) -> None:
        """The verdicts again, after the load the figures were taken under."""
        print(f"load average at the end: {load_now()}")
        print(f"\nTargets (issue {self.issue}):" if self.rows else "\n(no verdicts: quick mode)")
        for measure, value, target, ok in self.rows:
            print(f"  {'met   ' if ok else 'MISSED'}  {measure}: {value}; target {target}")
        if json_path:
            Path(json_path).write_text(json.dumps(
                [{"measure": m, "value": v, "target": t, "met": ok}
                 for m, v, t, ok in self.rows], indent=2))


def environment(ours: Path | None) -> None:
    """What the figures were taken on, and under what load."""
    import zlib

    load = open("/proc/loadavg").read().split()[:3] if os.path.exists("/proc/loadavg") else "?"
    print(f"machine: {os.cpu_count()} cores, load average {' '.join(load)} at start")
    print(f"python {sys.version.split()[0]} (benchmark), zlib {zlib.ZLIB_RUNTIME_VERSION}")
    if ours:
        print(f"click-build: {ours} (a wheel of {REPO} in a fresh venv of "
              f"{SYSTEM_PYTHON if os.path.exists(SYSTEM_PYTHON) else sys.executable})")
        python = ours.parent / "python"
        if python.exists():
            engine = subprocess.run([python, "-c", "from click_build import deflate; "
                                     "print(deflate.describe())"], capture_output=True, text=True)
            print(f"click-build deflates data past 256 KiB with: "
                  f"{engine.stdout.strip() or engine.stderr.strip()[-200:]}")
    for tool, package in ((ORIGINAL, "click"), ("dpkg-deb", "dpkg")):
        if shutil.which(tool) and shutil.which("dpkg-query"):
            version = subprocess.run(["dpkg-query", "-W", "-f", "${Version}", package],
                                     capture_output=True, text=True).stdout
            print(f"{tool}: Debian package {package} {version or '?'}")


def load_now() -> str:
    try:
        return " ".join(open("/proc/loadavg").read().split()[:3])
    except OSError:
        return "?"


def metadata_latency(folder: Path, count: int = 40) -> float:
    """Median seconds to create an empty file in ``folder`` and remove it again.

    An install is mostly the making of folders, files and links.  On this
    project's virtual machine the figure was tens of microseconds on a quiet disk
    and ten times that or more after long heavy disk work, so bench_install.py
    prints it beside its ratios: read them knowing how busy the disk was.
    """
    times = []
    fd = os.open(folder, os.O_RDONLY | os.O_DIRECTORY)
    try:
        for i in range(count):
            name = f".latency-probe-{os.getpid()}-{i}"
            start = time.perf_counter()
            os.close(os.open(name, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600, dir_fd=fd))
            os.unlink(name, dir_fd=fd)
            times.append(time.perf_counter() - start)
    finally:
        os.close(fd)
    return statistics.median(times)


def progress(text: str) -> None:
    """A progress line on a terminal, overwritten by the next one; nothing otherwise."""
    if sys.stderr.isatty():
        print(f"\r\033[K{text}", end="", file=sys.stderr, flush=True)


def clear_progress() -> None:
    if sys.stderr.isatty():
        print("\r\033[K", end="", file=sys.stderr, flush=True)
