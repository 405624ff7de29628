"""The one place ``run`` and ``device run`` build a project.

Both call :func:`build_project`; it is the only caller of the backend's build
here, so a change of the build pipeline's signature is one line to follow.
"""

from __future__ import annotations

import io
import os
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

TYPE_CHECKING = False  # not typing.TYPE_CHECKING: importing typing costs start-up time
if TYPE_CHECKING:
    from ..backend.settings import Project

__all__ = ["Planned", "build_for_arch", "build_output_on_stderr", "build_project",
           "is_project", "plan_project"]


def is_project(path: str) -> bool:
    """A folder click-build can build: a pyproject.toml or a manifest (.json or .json.in)."""
    return os.path.isdir(path) and any(
        os.path.isfile(os.path.join(path, name))
        for name in ("pyproject.toml", "manifest.json", "manifest.json.in"))


def build_project(project_dir: str, outdir: str, architecture: str | None = None,
                  config: dict[str, str] | None = None) -> Path:
    """Build the project in ``project_dir`` into ``outdir``; return the .click.

    ``architecture`` overrides the project's (``-C click-build.architecture``):
    ``device run`` uses it to build for the phone; ``config`` adds other ``-C`` settings.
    """
    from ..backend.pipeline import build_package
    from ..backend.settings import load_project

    config = dict(config or {})
    if architecture:
        config["click-build.architecture"] = architecture
    project = load_project(project_dir, config or None, require_pyproject=False)
    os.makedirs(outdir, 0o755, exist_ok=True)
    return build_package(project, outdir)


@dataclass(frozen=True)
class Planned:
    """What a build of the project will be, known before anything is built."""

    kind: str
    framework: str  # the framework it builds for (click-build's default if nobody chose)
    chosen: bool  # by the settings, the manifest or Clickable's variables
    compiles: bool  # it compiles for a machine (cmake, qmake, ...), not "all"
    toolchain: str | None  # what tool.click-build.toolchains names for ARCH, if asked
    matrix: tuple[str, ...] = ()  # tool.click-build.frameworks: one package each


def plan_project(project_dir: str, arch: str | None = None,
                 config: dict[str, str] | None = None) -> Planned:
    """The kind, framework and toolchain of a build of ``project_dir`` (``arch``: for
    that architecture), read from its settings and manifest as the backend reads them."""
    from .. import _console
    from ..backend.kinds import builds_for_host, resolve
    from ..backend.pipeline import request_of
    from ..backend.plan import plan_build, toolchain_for
    from ..backend.settings import load_project
    from ..choices import environment_framework
    from ..placeholders import FRAMEWORK_PLACEHOLDERS, is_placeholder

    project = load_project(project_dir, config, require_pyproject=False)
    matrix = tuple(project.settings.frameworks)
    if matrix:  # one package per framework: which one is the caller's to choose
        kind = resolve(project)
        framework, chosen = matrix[0], True
    else:
        with _console.quieted():  # the build says it, when it runs
            plan = plan_build(_any_toolchain(project), request_of(project))
        kind, target = plan.kind, plan.targets[0]
        framework = target.facts.framework
        if kind == "cmake" or plan.source is None:
            chosen = bool(target.framework_chosen_by)
        else:  # the settings, the manifest (not a placeholder) or Clickable's variables
            written = plan.source.peek(placeholders=True).get("framework")
            chosen = bool(project.settings.framework) or environment_framework() is not None \
                or (isinstance(written, str)
                    and not is_placeholder(written, FRAMEWORK_PLACEHOLDERS))
    declared = project.settings.architecture
    compiles = builds_for_host(project, kind) and declared in ("auto", arch)
    toolchain = toolchain_for(project, framework if chosen else "", arch) if arch else None
    return Planned(kind, framework, chosen, compiles, toolchain, matrix)


def _any_toolchain(project: Project) -> Project:
    """``project`` for planning alone: a phone's architecture the settings name no
    toolchain for is planned against its root (Clickable's ``$ARCH`` may ask for one),
    as the build that follows is; planning only reads the roots' cache."""
    from dataclasses import replace

    from ..backend.crossroot import SYSROOT
    from ..sysroot.profiles import ARCHES

    toolchains = {**{arch: SYSROOT for arch in ARCHES}, **project.settings.toolchains}
    return replace(project, settings=replace(project.settings, toolchains=toolchains))


def build_for_arch(project_dir: str, outdir: str, arch: str,
                   config: dict[str, str] | None = None) -> Path:
    """Build the project for ``arch`` (``config``: more ``-C`` settings): a compiled app
    against the phone's root of its framework on ``arch`` (made when missing), unless
    its settings name a toolchain of their own or ``arch`` is this machine's; an app for
    ``all`` as it is.  A framework or architecture no root is made for stops it before
    anything is built."""
    from ..hostarch import host_architecture

    config = dict(config or {})
    planned = plan_project(project_dir, arch, config or None)
    if not planned.compiles:
        return build_project(project_dir, outdir, config=config)
    if planned.toolchain is not None or arch == host_architecture():
        return build_project(project_dir, outdir, arch, config)
    from ..backend.phone import build_for_phone
    from ..sysroot import profile_for

    profile_for(planned.framework, arch)  # no root for it: one line, before the build
    return build_for_phone(project_dir, planned.framework, arch, outdir, config)
@contextmanager
def build_output_on_stderr() -> Iterator[None]:
    """Send what the build's programs (CMake, ninja, the compiler) write to stdout to stderr.

    ``run`` builds before it starts the app: its stdout is the app's (or, with
    ``--print-env``, the launch script), and click-build's own lines.  The programs the
    build starts inherit file descriptor 1, so that one is pointed at stderr meanwhile,
    while ``sys.stdout`` keeps writing where stdout went.
    """
    from .. import _console

    sys.stderr.flush()
    with _console.StdoutFd(2) as fd1:
        if fd1.saved is None:  # no stdout: nothing to protect
            yield
            return
        own = sys.stdout
        ours = io.TextIOWrapper(io.FileIO(fd1.saved, "w", closefd=False),
                                encoding=getattr(own, "encoding", None) or "utf-8",
                                errors=getattr(own, "errors", None) or "strict",
                                line_buffering=True)
        sys.stdout = ours
        try:
            yield
        finally:
            ours.close()  # flushes; StdoutFd closes the descriptor
            sys.stdout = own
