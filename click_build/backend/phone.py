"""A project built for the phone in one call, for the commands that need a package for
one target (``run --arch``, ``device run``): the build backend with that target's
framework and architecture, its toolchain the phone's root (:mod:`.crossroot`)."""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path

from .crossroot import SYSROOT

__all__ = ["build_for_phone"]


def build_for_phone(project_dir: str | os.PathLike[str], framework: str, arch: str,
                    outdir: str | os.PathLike[str],
                    config_settings: Mapping[str, str | list[str]] | None = None) -> Path:
    """Build the project in ``project_dir`` for ``framework`` on ``arch`` against the
    phone's root, as ``python -m build -C click-build.framework=FRAMEWORK -C
    click-build.architecture=ARCH -C click-build.toolchains.FRAMEWORK/ARCH=sysroot``
    does, into ``outdir`` (made when missing); return the package.  ``config_settings``: more ``-C`` settings (the root's
    ``sysroot.profile``...).  The root is made first when missing.  Errors are
    :class:`~click_build.errors.ClickError`, one line each."""
    from .pipeline import build_package
    from .settings import load_project

    settings = {**(config_settings or {}), "click-build.framework": framework,
                "click-build.architecture": arch,
                f"click-build.toolchains.{framework}/{arch}": SYSROOT}
    project = load_project(project_dir, settings)
    os.makedirs(outdir, exist_ok=True)
    return build_package(project, outdir)
