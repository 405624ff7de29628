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
from pathlib import Path

__all__ = ["build_output_on_stderr", "build_project", "is_project"]


def is_project(path: str) -> bool:
    """A folder click-build can build: a pyproject.toml or a manifest (.json or .json.in)."""
    return os.path.isdir(path) and any(
        os.path.isfile(os.path.join(path, name))
        for name in ("pyproject.toml", "manifest.json", "manifest.json.in"))


def build_project(project_dir: str, outdir: str, architecture: str | None = None) -> Path:
    """Build the project in ``project_dir`` into ``outdir``; return the .click.

    ``architecture`` overrides the project's (``-C click-build.architecture``):
    ``device run`` uses it to build for the phone.
    """
    from ..backend.pipeline import build_package
    from ..backend.settings import load_project

    config = {"click-build.architecture": architecture} if architecture else None
    project = load_project(project_dir, config, require_pyproject=False)
    os.makedirs(outdir, 0o755, exist_ok=True)
    return build_package(project, outdir)


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
