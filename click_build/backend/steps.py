"""The project's own build steps: ``prebuild``, ``build`` (kind ``custom``), ``postbuild``.

Each step is a shell command, as Clickable runs them: ``bash -c`` (``sh`` where bash is
missing), with Clickable's variables (``ARCH``, ``ARCH_TRIPLET``, ``ROOT``,
``INSTALL_DIR``...) plus ``CLICK_BUILD_STAGE`` and the ``env`` setting in its
environment.  They are the project's code, run as CMake runs ``CMakeLists.txt``.  A
failing step stops the build: its output stays on the terminal (under ``-q`` it is held
back and shown only then) and the error names the step and its exit status.

``postbuild`` may change what is packed, so it runs on a real staging folder: kinds that
stage in place (``qml``, ``html5``, ``python``, ``precompiled``) have their tree copied
there first, and the tree is staged again from it afterwards.
"""

from __future__ import annotations

import os
import shutil
import signal
import stat
import subprocess
import sys
import tempfile
from collections.abc import Mapping, Sequence
from pathlib import Path

from .. import _console
from ..build import Entry, stage_tree
from ..errors import BuildError
from ..placeholders import ManifestSource, read_manifest_file
from ..staging import open_staged
from .context import Staged, Staging, clean, expand

__all__ = ["SETTINGS", "environment_setting", "expand", "postbuild", "run_steps", "run_tool",
           "stage_folder", "staged_folder", "step_environment"]

SETTINGS = "pyproject.toml: tool.click-build"


def stage_folder(ctx: Staging) -> Path:
    """The staging folder of a build (``$INSTALL_DIR``, ``$CLICK_BUILD_STAGE``)."""
    return ctx.work / "stage"


def step_environment(ctx: Staging, build: Path, source: Path | None = None,
                     extra: Mapping[str, str] | None = None) -> dict[str, str]:
    """The environment of a step: this process's, Clickable's variables with this build's
    values (``source``: ``ROOT``, default the project), ``CLICK_BUILD_STAGE``, and the
    build's own (``ctx.environment``: the ``env`` setting, the libraries' folders).

    Built against the phone's root, ``CLICK_SYSROOT`` names it and ``CMAKE_TOOLCHAIN_FILE``
    is its toolchain file, which CMake (3.21 and later) uses when no other is named: a
    ``custom`` build that runs CMake builds for the phone."""
    from .cmake import clickable_environment

    stage = stage_folder(ctx)
    env = dict(os.environ)
    env.update(clickable_environment(ctx, source or ctx.project.root, build, stage))
    env["SRC_DIR"] = str(ctx.source_root) if source is None else str(source)
    env["CLICK_BUILD_STAGE"] = str(stage)
    if ctx.sysroot is not None:
        env["CLICK_SYSROOT"] = str(ctx.sysroot.root)
    if ctx.sysroot_toolchain is not None:
        env["CMAKE_TOOLCHAIN_FILE"] = str(ctx.sysroot_toolchain)
    env.update(ctx.environment)
    env.update(extra or {})
    return env


def _shell() -> list[str]:
    bash = shutil.which("bash")
    return [bash, "-c"] if bash else ["/bin/sh", "-c"]


def _shown(command: str) -> str:
    one = " ".join(command.split())
    return one if len(one) <= 60 else one[:57] + "..."


def run_steps(where: str, commands: Sequence[str], cwd: Path, env: Mapping[str, str]) -> None:
    """Run ``commands`` one after the other in ``cwd``; the first failure stops the build.

    ``where`` names the setting in messages (``pyproject.toml: tool.click-build.prebuild``).
    """
    for i, command in enumerate(commands, 1):
        label = f"{where}[{i}]" if len(commands) > 1 else where
        _console.info(f"* {label.rsplit('.', 1)[-1]}: {_shown(command)}")
        run_tool([*_shell(), command], cwd, env, f"{label} ({_shown(command)!r})")


def run_tool(argv: Sequence[str], cwd: Path, env: Mapping[str, str], what: str) -> None:
    """Run one program of the build with its output live (held back under ``-q`` and shown
    if it fails); a failure is one error naming ``what`` and the exit status."""
    sys.stdout.flush()
    sys.stderr.flush()
    with tempfile.TemporaryFile() as log:
        quiet = _console.is_quiet()
        try:
            result = subprocess.run(list(argv), cwd=cwd, env=dict(env),
                                    stdout=log if quiet else None, stdin=subprocess.DEVNULL)
        except OSError as e:
            raise BuildError(f"{what}: cannot be run: {e.strerror}") from None
        if result.returncode == 0:
            return
        if quiet:
            log.seek(0)
            sys.stderr.write(log.read().decode("utf-8", "replace"))
            sys.stderr.flush()
    code = result.returncode
    if code < 0:
        try:
            name = signal.Signals(-code).name
        except ValueError:
            name = f"signal {-code}"
        raise BuildError(f"{what} was killed by {name} (its output is above)")
    raise BuildError(f"{what} failed with exit status {code} (its output is above)")


# ----------------------------------------------------------------- postbuild ---

def postbuild(ctx: Staging, staged: Staged) -> Staged:
    """Run the ``postbuild`` steps on the staging folder and stage it again."""
    commands = ctx.project.settings.postbuild
    if not commands:
        return staged
    stage = stage_folder(ctx)
    if staged.folder != stage:
        _materialise(ctx, staged, stage)
    env = step_environment(ctx, ctx.work)
    run_steps(f"{SETTINGS}.postbuild", commands, ctx.project.root, env)
    return staged_folder(ctx, stage, staged.manifest or ctx.manifest,
                         "in the staging folder after postbuild")


def _materialise(ctx: Staging, staged: Staged, stage: Path) -> None:
    """Copy a tree staged in place into ``stage``, times included, with its manifest file."""
    clean(stage)
    stage.mkdir(parents=True)
    for e in staged.entries:
        dest = stage / e.arcname
        if e.kind == "dir":
            dest.mkdir(parents=True, exist_ok=True)
            continue
        dest.parent.mkdir(parents=True, exist_ok=True)
        if e.kind == "symlink":
            dest.symlink_to(e.target)
        else:
            with open_staged(e) as src, open(dest, "wb") as out:  # the file the walk saw
                shutil.copyfileobj(src, out)
            os.chmod(dest, e.mode)
    manifest = staged.manifest or ctx.manifest
    if manifest is not None and manifest.path:
        name = "manifest.json.in" if manifest.template else "manifest.json"
        shutil.copy2(manifest.path, stage / name)
    # Each copy keeps the time it is packed with (so a postbuild that changes nothing
    # changes no byte); deepest first, as making a child touched its folder.
    for e in sorted(staged.entries, key=lambda e: e.arcname.count("/"), reverse=True):
        os.utime(stage / e.arcname, (e.mtime, e.mtime), follow_symlinks=False)


def staged_folder(ctx: Staging, stage: Path, manifest: ManifestSource | None,
                  what: str) -> Staged:
    """The tree of a staging folder, its own ``manifest.json`` (or ``.json.in``), if it has
    one, taking the place of ``manifest``; ``what`` says how it got there, for messages
    (``installed by make install``)."""
    try:
        is_folder = stat.S_ISDIR(os.lstat(stage).st_mode)
    except FileNotFoundError:
        is_folder = False
    if not is_folder:  # a step removed it, or made it a link to somewhere else
        raise BuildError(f"{stage}: the staging folder is gone (or is no longer a folder) "
                         f"after the steps ({what}); they must leave the app's files in it")
    found: ManifestSource | None = None
    names = [stage / "manifest.json", stage / "manifest.json.in"]
    for path in names:
        if _regular(path):
            found = read_manifest_file(path, f"{path.name} ({what})")
            break
    entries: list[Entry] = stage_tree(stage, ctx.project.settings.exclude,
                                      exclude=[p for p in names if _regular(p)])
    return Staged(entries, found or manifest, folder=stage)


def _regular(path: Path) -> bool:
    try:
        return stat.S_ISREG(os.lstat(path).st_mode)
    except OSError:
        return False


def environment_setting(ctx: Staging) -> dict[str, str]:
    """The ``env`` setting, its values' Clickable placeholders (``${ROOT}``) and
    environment variables in braces replaced."""
    values = step_environment(ctx, ctx.work)
    return {k: expand(v, values) for k, v in ctx.project.settings.env.items()}
