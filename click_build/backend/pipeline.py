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
from ..elf import ARCH_TRIPLETS
from ..errors import ConfigError, ManifestError
from ..finish import (
    Target,
    architecture_declaration,
    choose_framework,
    environment_framework,
    finish,
)
from ..framework_table import DEFAULT_FRAMEWORK, FrameworkFacts, framework_facts
from ..hostarch import host_architecture
from ..placeholders import FRAMEWORK_PLACEHOLDERS, is_placeholder
from .appmanifest import find_manifest
from .context import Staging, work_dir
from .kinds import OWN_TRANSLATIONS, builds_for_host, resolve, stage
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


def _build_arch(kind: str, declared: Arch | None, for_host: bool) -> str:
    """What to compile for, before anything is built (``for_host``: the kind builds for
    this machine unless told otherwise, :func:`~.kinds.builds_for_host`)."""
    if isinstance(declared, str):
        return declared
    if isinstance(declared, list):
        if for_host:
            raise ConfigError(
                f"pyproject.toml: tool.click-build.architecture: a {kind} project builds one "
                "architecture at a time; build each with -C click-build.architecture=ARCH "
                "and join them with 'click-build merge'")
        return "all"
    return host_architecture() if for_host else "all"


def _framework(kind: str, target: Target, written: object,
               label: str) -> tuple[FrameworkFacts, str]:
    """The framework before staging, and who chose it: "settings", "manifest",
    "environment" (Clickable's variables), or "" (click-build's default).

    A CMake project's ``CMakeLists.txt`` may choose its own framework (from
    ``$SDK_FRAMEWORK``, else its own default): when nobody chose one, the default is not
    imposed on it (:func:`~.cmake.stage_cmake` decides what CMake is told).
    """
    if target.framework:
        return choose_framework(target.framework, written, label, SETTINGS), "settings"
    if isinstance(written, str) and not is_placeholder(written, FRAMEWORK_PLACEHOLDERS):
        return choose_framework("", written, label, SETTINGS), "manifest"
    if environment_framework() is not None:
        return choose_framework("", written, label, SETTINGS), "environment"
    if kind == "cmake":
        return framework_facts(DEFAULT_FRAMEWORK), ""
    return choose_framework("", written, label, SETTINGS), ""


def build_package(project: Project, outdir: str | os.PathLike[str],
                  level: int = COMPRESS_LEVEL) -> Path:
    """Build ``project`` (from :func:`~.settings.load_project`) into ``outdir``; return the
    .click path.  ``level``: the gzip level (``click-build build -z``)."""
    from ..timestamps import source_date_epoch
    from .plan import build_matrix, toolchain_args, wants_matrix, with_toolchain

    source_date_epoch()  # a bad value stops the build before anything is built or written
    if wants_matrix(project):  # several packages; a PEP 517 frontend hears of the first
        return build_matrix(project, outdir, target_of(project)._replace(level=level))[0]
    kind = resolve(project)
    source = find_manifest(project, kind)
    peek = source.peek(placeholders=True) if source else {}
    label = source.label if source else "manifest.json"
    target = target_of(project)._replace(level=level)
    facts, chosen_by = _framework(kind, target, peek.get("framework"), label)
    if target.framework or (kind != "cmake" and isinstance(peek.get("framework"), str)):
        target = target._replace(framework=facts.framework)  # the choice holds for every step
    declared, arch_env = architecture_declaration(target.architecture, peek.get("architecture"),
                                                  label, SETTINGS)
    for_host = builds_for_host(project, kind)
    arch = _build_arch(kind, declared, for_host)
    if declared is None and for_host and kind == "precompiled":
        target = target._replace(architecture=arch)  # its folder of files for this machine
    elif declared is None and for_host:  # the build is told the host's; the code decides
        target = target._replace(guessed_architecture=arch)
    if kind not in OWN_TRANSLATIONS:  # CMake projects compile theirs: click_translations()
        target = target._replace(po_dir=str(project.root / "po"))
    shown = ", ".join(declared) if isinstance(declared, list) else arch
    if kind == "precompiled" and declared is None and not for_host:
        shown = "the architecture of its files"
    framework = f" ({facts.framework})" if chosen_by or kind != "cmake" else ""
    _console.info(f"* Building {kind} app for {shown}{framework}")
    if kind == "cmake":  # the toolchain rule of a build for several targets, for this one
        key = (facts.framework if chosen_by else "", arch)
        project = with_toolchain(project, toolchain_args(project, [key])[key])
    with work_dir(project, kind, arch) as work:
        ctx = Staging(project, kind, work, arch, ARCH_TRIPLETS.get(arch, ""), facts, source,
                      Path(outdir), arch_guessed=bool(target.guessed_architecture),
                      architectures=tuple(declared) if isinstance(declared, list) else (),
                      arch_env=arch_env, framework_chosen_by=chosen_by)
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
