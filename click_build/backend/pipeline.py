"""One build, from project to ``.click``: settings -> kind -> staged entries -> finish.

A kind only stages entries (copies a tree, runs setuptools and pip, or
CMake).  Everything after that is the core's finishing stage
(:func:`click_build.finish.finish`), the very one ``click-build build`` and
the CMake module run, so the three routes cannot disagree.
"""

from __future__ import annotations

import os
from pathlib import Path

from .. import _console
from ..build import COMPRESS_LEVEL
from ..elf import ARCH_TRIPLETS, host_architecture
from ..errors import ConfigError, ManifestError
from ..finish import Target, choose_framework, declared_architecture, finish
from .appmanifest import find_manifest
from .context import Context, work_dir
from .kinds import resolve, stage
from .settings import Project

__all__ = ["build_package", "target_of"]

Arch = str | list[str]

#: How messages name the settings, and how a backend user switches review errors off.
SETTINGS = "pyproject.toml: tool.click-build"
REVIEW_SWITCH = ('review = "report" in [tool.click-build] (python -m build -C '
                 'click-build.review=report, click-build build --no-validate)')


def target_of(project: Project) -> Target:
    """What the project's settings ask of the finishing stage."""
    s = project.settings
    return Target(framework=s.framework, architecture=s.architecture, version=project.version,
                  name=project.name, review=s.review, origin=SETTINGS,
                  review_switch=REVIEW_SWITCH)


def _build_arch(kind: str, declared: Arch | None) -> str:
    """What to compile for, before anything is built."""
    if isinstance(declared, str):
        return declared
    if isinstance(declared, list):
        if kind == "cmake":
            raise ConfigError(
                "pyproject.toml: tool.click-build.architecture: a cmake project builds one "
                "architecture at a time; build each with -C click-build.architecture=ARCH "
                "and join them with 'click-build merge'")
        return "all"
    return host_architecture() if kind == "cmake" else "all"


def build_package(project: Project, outdir: str | os.PathLike[str],
                  level: int = COMPRESS_LEVEL) -> Path:
    """Build ``project`` (from :func:`~.settings.load_project`) into ``outdir``; return the
    .click path.  ``level``: the gzip level (``click-build build -z``)."""
    kind = resolve(project)
    source = find_manifest(project, kind)
    peek = source.peek(placeholders=True) if source else {}
    label = source.label if source else "manifest.json"
    target = target_of(project)._replace(level=level)
    facts = choose_framework(target.framework, peek.get("framework"), label, SETTINGS)
    if target.framework or isinstance(peek.get("framework"), str):
        target = target._replace(framework=facts.framework)  # the choice holds for every step
    declared = declared_architecture(target.architecture, peek.get("architecture"), label,
                                     SETTINGS)
    arch = _build_arch(kind, declared)
    if declared is None and kind == "cmake":  # CMake is told the host's; the code decides
        target = target._replace(guessed_architecture=arch)
    if kind != "cmake":  # CMake projects compile theirs with click_translations()
        target = target._replace(po_dir=str(project.root / "po"))
    shown = ", ".join(declared) if isinstance(declared, list) else arch
    _console.info(f"* Building {kind} app for {shown} ({facts.framework})")
    with work_dir(project, kind, arch) as work:
        ctx = Context(project, kind, work, arch, ARCH_TRIPLETS.get(arch, ""), facts, source,
                      Path(outdir), arch_guessed=bool(target.guessed_architecture),
                      architectures=tuple(declared) if isinstance(declared, list) else ())
        staged = stage(ctx)
        source = staged.manifest or source
        if source is None:
            raise ManifestError(
                ["not found: neither the project nor the CMake install has a manifest.json"],
                "manifest.json")
        scratch = work / "click-finish"
        finished = finish(source, staged.entries, outdir, target, scratch=str(scratch))
    path = Path(finished.path)
    _console.info(f"* Built {path.name}")
    return path
