"""A project built for several targets in one command: ``frameworks`` x ``architectures``.

Each target is staged as a single build is (its own framework facts, so the
python kind vendors that framework's wheels; its own build folder and toolchain
for cmake), then the core's :func:`click_build.targets.build_targets` prepares
them all, checks the stores' rules across them and only then writes any.
"""

from __future__ import annotations

import contextlib
import os
import re
from dataclasses import replace
from pathlib import Path

from .. import _console
from ..elf import ARCH_TRIPLETS
from ..errors import BuildError, ConfigError
from ..finish import (
    Target,
    architecture_declaration,
    choose_framework,
    declared_architecture,
)
from ..hostarch import host_architecture
from ..manifest import FRAMEWORK_RE
from ..targets import Plan, build_targets, expand_names, suffix_for, target_label
from .appmanifest import find_manifest
from .context import Staging, work_dir
from .kinds import OWN_TRANSLATIONS, builds_for_host, resolve, stage
from .settings import Project

__all__ = ["build_matrix", "toolchain_args", "toolchain_for", "wants_matrix",
           "with_toolchain"]

SETTINGS = "pyproject.toml: tool.click-build"
#: What ``toolchains`` may say instead of a file: this machine is the target's SDK.
HOST = "host"


def wants_matrix(project: Project) -> bool:
    return bool(project.settings.frameworks or project.settings.architectures)


def toolchain_for(project: Project, framework: str, arch: str) -> str | None:
    """The toolchain named for a target: ``FRAMEWORK/ARCH``, then ``FRAMEWORK``, then ``ARCH``
    (``framework`` "" when none is known yet: ``ARCH`` alone)."""
    table = project.settings.toolchains
    keys = (target_label(framework, arch), framework, arch) if framework else (arch,)
    for key in keys:
        if key in table:
            return table[key]
    return None


def _toolchain_in_settings(project: Project) -> bool:
    """Do the cmake settings (or CMake's own environment variable) name a toolchain file
    for every build?"""
    cmake = project.settings.cmake
    return ("CMAKE_TOOLCHAIN_FILE" in cmake.define or bool(os.environ.get("CMAKE_TOOLCHAIN_FILE"))
            or any(a.startswith("--toolchain") or "CMAKE_TOOLCHAIN_FILE" in a for a in cmake.args))


def toolchain_args(project: Project, targets: list[tuple[str, str]]) -> dict[tuple[str, str], str]:
    """The toolchain argument of each cmake target ("" for none), or a refusal naming every
    target that cannot be built on this machine and why.

    One rule for a single build and several targets: the toolchain ``toolchains`` names for
    the target; else the one the cmake settings give every build (``cmake.args``
    ``--toolchain``, ``cmake.define.CMAKE_TOOLCHAIN_FILE``, ``$CMAKE_TOOLCHAIN_FILE``); else
    this machine's compiler, which is said, when it builds for the target's architecture
    (or ``all``: nothing is compiled); another architecture is refused before anything is
    configured.  ``"host"`` says this machine is the target's SDK.
    """
    host = host_architecture()
    own = _toolchain_in_settings(project)
    out: dict[tuple[str, str], str] = {}
    cannot = []
    for fw, arch in targets:
        label = target_label(fw, arch) if fw else arch
        named = toolchain_for(project, fw, arch)
        if named is None:
            out[(fw, arch)] = ""
            if own or arch == "all":
                continue
            if arch != host:
                cannot.append(f"{label} (no toolchain named)")
                continue
            _console.info(f"* {label}: built with this machine's compiler and libraries (no "
                          f"toolchain named; [tool.click-build.toolchains] \"{arch}\" = \"host\" "
                          "says this machine is that target's SDK)")
        elif named == HOST:
            if arch not in (host, "all"):
                cannot.append(f"{label} ('host' compiles for {host}, not {arch})")
            out[(fw, arch)] = ""
        else:
            path = (project.root / named).resolve()
            if not path.is_file():
                cannot.append(f"{label} (toolchain {named} not found)")
            out[(fw, arch)] = f"-DCMAKE_TOOLCHAIN_FILE={path}"
    if cannot:
        raise BuildError(
            f"{SETTINGS}.toolchains: cannot build on this machine: {'; '.join(cannot)}. "
            f"This machine compiles for {host}: code for another architecture needs a compiler "
            "for it, and must link the "
            "framework's own Qt and libraries (20.04 has Qt 5.12 and libssl 1.1, 24.04 Qt 5.15 "
            "and libssl 3), not this machine's: name a toolchain file per target (toolchains "
            "= {\"ubuntu-sdk-20.04/arm64\" = \"path/to/toolchain.cmake\"})")
    return out


def with_toolchain(project: Project, arg: str) -> Project:
    """The project with ``arg`` (``-DCMAKE_TOOLCHAIN_FILE=...``) added to its cmake args."""
    if not arg:
        return project
    s = project.settings
    return replace(project, settings=replace(s, cmake=replace(s.cmake, args=[*s.cmake.args, arg])))


def build_matrix(project: Project, outdir: str | os.PathLike[str], base: Target) -> list[Path]:
    """Build every target of the project's matrix into ``outdir``; return the packages.

    ``base``: what the project's settings ask of every target (review mode, version...).
    """
    s = project.settings
    kind = resolve(project)
    source = find_manifest(project, kind)
    peek = source.peek(placeholders=True) if source else {}
    label = source.label if source else "manifest.json"
    if s.framework and s.frameworks:
        raise ConfigError(f"{SETTINGS}: framework {s.framework!r} and frameworks "
                          f"{s.frameworks!r} are both set; keep one of them")
    if s.architecture != "auto" and s.architectures:
        raise ConfigError(f"{SETTINGS}: architecture {s.architecture!r} and architectures "
                          f"{s.architectures!r} are both set; keep one of them")
    frameworks = expand_names(s.frameworks)
    for fw in frameworks:
        if not re.match(FRAMEWORK_RE, fw):
            raise ConfigError(f"{SETTINGS}.frameworks: {fw!r} is not a framework name such "
                              "as 'ubuntu-sdk-20.04'")
    if not frameworks:
        frameworks = [choose_framework("", peek.get("framework"), label, SETTINGS).framework]
    arches = expand_names(s.architectures)
    for name in arches:
        declared_architecture(name, None, label, f"{SETTINGS}.architectures")
    if kind in ("qml", "html5"):
        if arches:
            _console.info(f"* {kind} apps hold no compiled code: one 'all' package per "
                          "framework (architectures is for cmake and python apps)")
        per_arch: list[str | None] = [None]
    elif builds_for_host(project, kind):  # as a single build: the environment's, else the host's
        from_env = architecture_declaration("auto", None, label, SETTINGS)[0]
        per_arch = list(arches) or [from_env if isinstance(from_env, str) else host_architecture()]
    else:
        per_arch = list(arches) or [None]
    targets = [(fw, arch) for fw in frameworks for arch in per_arch]
    if len(targets) > 1 and s.build_dir and "{arch}" not in s.build_dir:
        raise ConfigError(f"{SETTINGS}.build-dir: {s.build_dir!r} has no {{arch}}, so the "
                          "targets would share one build folder; add {arch} to it")
    toolchains = toolchain_args(project, [(f, a or "all") for f, a in targets]) \
        if kind == "cmake" else {}
    written_fw = peek.get("framework")
    if isinstance(written_fw, str) and written_fw.strip() and "@" not in written_fw \
            and written_fw.strip() not in frameworks:
        _console.info(f"* {label} names {written_fw.strip()}; each package gets its "
                      "target's framework instead")
    written_version = peek.get("version") or project.version
    shown = ", ".join(target_label(f, a or "all") for f, a in targets)
    count = f"{len(targets)} targets" if len(targets) != 1 else "1 target"
    _console.info(f"* Building {kind} app for {count}: {shown}")
    if kind not in OWN_TRANSLATIONS:  # as a single build: CMake projects compile theirs
        base = base._replace(po_dir=str(project.root / "po"))
    plans = []
    with contextlib.ExitStack() as stack:
        for fw, arch in targets:
            target = base._replace(
                framework=fw, architecture=arch if arch else base.architecture,
                rewrite_framework=True,
                version_suffix=suffix_for(fw, frameworks, written_version))
            build_arch = arch or "all"
            built = with_toolchain(project, toolchains.get((fw, build_arch), ""))
            facts = choose_framework(fw, "@CLICK_FRAMEWORK@", label, SETTINGS)
            folder = build_arch if len(frameworks) == 1 else f"{build_arch}-{fw}"
            work = stack.enter_context(work_dir(built, kind, folder))
            _console.info(f"* Staging {target_label(fw, build_arch)}")
            ctx = Staging(built, kind, work, build_arch, ARCH_TRIPLETS.get(build_arch, ""),
                          facts, source, Path(outdir))
            staged = stage(ctx)
            found = staged.manifest or source
            if found is None:
                raise BuildError(f"{label}: not found: neither the project nor the CMake "
                                 "install has a manifest.json")
            plans.append(Plan(found, staged.entries, target, str(work / "click-finish")))
        results = build_targets(plans, outdir)
    return [Path(b.path) for b in results if b.path]

