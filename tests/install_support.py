"""Helpers for the installer tests: real packages, an isolated system, invariants.

Every test gets its own database root, hooks directory, frameworks directory
and an empty databases config directory through the environment, so nothing
touches /var/lib/clickpkg or /usr/share/click.  A CLI that other users can run
(the venv may live under /root) is made by copying the package into a
world-readable directory and running it with the system Python.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from deadlines import seconds

from click_build.build import build_click, stage_tree
from click_build.manifest import Manifest

REPO = Path(__file__).resolve().parent.parent


def make_click(outdir: Path, name: str = "com.example.app", version: str = "1.0",
               hooks: dict[str, dict[str, str]] | None = None, framework: str = "fw-1",
               files: dict[str, str] | None = None, **extra: object) -> Path:
    """Build a real package with the core builder; files get default content."""
    tree = outdir / f"src-{name}-{version}"
    if tree.exists():
        shutil.rmtree(tree)
    tree.mkdir(parents=True)
    hooks = {"app": {"desktop": "app.desktop"}} if hooks is None else hooks
    wanted = dict(files or {})
    for app_hooks in hooks.values():
        for target in app_hooks.values():
            wanted.setdefault(target, f"{name} {version} {target}\n")
    for rel, content in wanted.items():
        path = tree / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(content)
    data = {"name": name, "version": version, "framework": framework,
            "maintainer": "Jane Doe <jane@example.com>", "title": "Test app", "hooks": hooks}
    data.update(extra)
    manifest = Manifest.from_dict(data)
    outdir.mkdir(parents=True, exist_ok=True)
    return Path(build_click(manifest, stage_tree(tree), outdir, mtime=1_700_000_000))


@dataclass
class Env:
    """An isolated Click world under one directory."""

    base: Path

    @property
    def root(self) -> Path:
        return self.base / "db"

    @property
    def hooks(self) -> Path:
        return self.base / "hooks"

    @property
    def frameworks(self) -> Path:
        return self.base / "frameworks"

    @property
    def confdir(self) -> Path:
        return self.base / "databases.d"

    def vars(self) -> dict[str, str]:
        return {"CLICK_HOOKS_DIR": str(self.hooks), "CLICK_FRAMEWORKS_DIR": str(self.frameworks),
                "CLICK_DATABASES_DIR": str(self.confdir)}

    def setup(self) -> Env:
        for d in (self.hooks, self.frameworks, self.confdir):
            d.mkdir(parents=True, exist_ok=True)
        (self.frameworks / "fw-1.framework").write_text("Base-Name: fw\nBase-Version: 1\n")
        return self

    def add_hook(self, name: str, text: str) -> Path:
        path = self.hooks / f"{name}.hook"
        path.write_text(text)
        return path


def make_env(base: Path) -> Env:
    return Env(base).setup()


def current_user() -> str:
    import pwd

    return pwd.getpwuid(os.getuid()).pw_name


def tree_snapshot(top: Path, skip: Path | None = None) -> dict[str, tuple[int, int, str]]:
    """(mode, size, link target) of everything under top, except under skip."""
    out = {}
    for dirpath, dirnames, filenames in os.walk(top):
        if skip is not None and Path(dirpath).resolve() == skip.resolve():
            dirnames[:] = []
            continue
        for name in dirnames + filenames:
            path = os.path.join(dirpath, name)
            st = os.lstat(path)
            target = os.readlink(path) if os.path.islink(path) else ""
            out[os.path.relpath(path, top)] = (st.st_mode, st.st_size, target)
    return out


def complete_version(path: str) -> bool:
    """A version directory that an install finished: its manifest is readable."""
    package = os.path.basename(os.path.dirname(path))
    manifest = os.path.join(path, ".click", "info", f"{package}.manifest")
    try:
        with open(manifest) as f:
            data = json.load(f)
    except (OSError, ValueError):
        return False
    return data.get("version") == os.path.basename(path) and os.path.isfile(
        os.path.join(path, ".click", "info", f"{package}.list"))


def check_invariants(root: Path) -> list[str]:
    """Every ``current`` and registration link points at a complete version."""
    problems = []
    for package in sorted(os.listdir(root)) if root.exists() else []:
        if package == ".click":
            continue
        pdir = root / package
        current = pdir / "current"
        if current.is_symlink():
            target = os.readlink(current)
            if "/" in target or not complete_version(str(pdir / target)):
                problems.append(f"{current} -> {target} is not a complete version")
        for version in os.listdir(pdir):
            vdir = pdir / version
            if version != "current" and not complete_version(str(vdir)):
                problems.append(f"{vdir} is not a complete version")
    users = root / ".click" / "users"
    for user in sorted(os.listdir(users)) if users.exists() else []:
        for package in os.listdir(users / user):
            link = users / user / package
            target = os.readlink(link)
            if target.startswith("@"):
                continue
            if not complete_version(target):
                problems.append(f"{link} -> {target} is not a complete version")
    return problems


def run(cmd: list[str], env: dict[str, str] | None = None, user: str | None = None,
        cwd: str | None = None, within: float = 120) -> subprocess.CompletedProcess[str]:
    """``cmd``, as ``user`` if given; it fails when it takes more than ``seconds(within)``."""
    full = dict(os.environ)
    full.update(env or {})
    if user is not None:
        import pwd

        pw = pwd.getpwnam(user)
        cmd = ["setpriv", f"--reuid={pw.pw_uid}", f"--regid={pw.pw_gid}", "--clear-groups",
               "--reset-env", "--", "/usr/bin/env",
               *[f"{k}={v}" for k, v in (env or {}).items()], *cmd]
    return subprocess.run(cmd, env=full, capture_output=True, text=True, cwd=cwd,
                          timeout=seconds(within))


def flocks(pid: int) -> set[tuple[str, int]]:
    """The flock(2) locks process ``pid`` "holds" or "waits" for, with their files' inode
    numbers (from /proc/locks): what a test waits for to know a writer is at the lock."""
    found = set()
    with open("/proc/locks") as table:
        for line in table:  # "1: FLOCK  ADVISORY  WRITE 42 fe:00:1234 0 EOF", "1: -> FLOCK ..."
            fields = line.split()
            state = "waits" if fields[1] == "->" else "holds"
            if state == "waits":
                del fields[1]
            if fields[1] == "FLOCK" and fields[4] == str(pid):
                found.add((state, int(fields[5].rsplit(":", 1)[1])))
    return found


def share_with_every_user(top: Path) -> None:
    """The Python packages under ``top`` byte-compiled for the system Python, then every
    file readable and every folder enterable by all.  No user can write ``__pycache__``
    here: uncompiled, every run would compile each module it imports again, which a
    click-build pip installed never does (it took a third of a small command's time)."""
    subprocess.run(["/usr/bin/python3", "-m", "compileall", "-q", str(top)], check=True,
                   stdout=subprocess.DEVNULL, timeout=seconds(120))
    for dirpath, dirnames, filenames in os.walk(top):
        for name in dirnames:
            os.chmod(os.path.join(dirpath, name), 0o755)
        for name in filenames:
            os.chmod(os.path.join(dirpath, name), 0o644)


def portable_cli() -> Iterator[Path]:
    """A ``click-build`` script any user can run: a world-readable copy + system Python."""
    top = Path(tempfile.mkdtemp(prefix="click-build-cli."))
    try:
        os.chmod(top, 0o755)
        shutil.copytree(REPO / "click_build", top / "lib" / "click_build",
                        ignore=shutil.ignore_patterns("__pycache__"))
        share_with_every_user(top)
        script = top / "click-build"
        script.write_text(f'#!/bin/sh\nPYTHONPATH={top / "lib"} exec /usr/bin/python3 -P '
                          '-m click_build "$@"\n')
        script.chmod(0o755)
        yield script
    finally:
        shutil.rmtree(top, ignore_errors=True)
