"""Settings -> targets: what one build makes, planned once before anything is staged.

A target is one package: a framework and an architecture.  A single build is a list
of one (its framework from the settings, the manifest or the environment; its
architecture declared, or the host's for CMake); a build for several targets
(``frameworks`` x ``architectures``) a longer one.  Each target says what the
finishing stage is asked (:class:`~click_build.choices.Request`), its choice when the
manifest is the project's own (:func:`~click_build.choices.choose`, made here once and
passed down; a CMake project's manifest is written by its build, so that choice is
made on it after staging), and what its staging needs: the framework's facts (the
python kind vendors that framework's wheels), the architecture compiled for, the
build folder and the toolchain.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING

from .. import _console
from ..choices import (
    Choice,
    Request,
    architecture_declaration,
    choose,
    choose_framework,
    declared_architecture,
    environment_framework,
)
from ..errors import BuildError, ConfigError
from ..framework_table import DEFAULT_FRAMEWORK, FrameworkFacts, framework_facts
from ..hostarch import host_architecture
from ..manifest import FRAMEWORK_RE
from ..placeholders import FRAMEWORK_PLACEHOLDERS, ManifestSource, is_placeholder
from ..targets import expand_names, suffix_for, target_label
from .appmanifest import find_manifest
from .context import INSTALLING_KINDS
from .crossroot import SYSROOT, plan_root
from .kinds import OWN_TRANSLATIONS, builds_for_host, resolve
from .settings import Project

if TYPE_CHECKING:
    from ..sysroot.choose import RootChoice

__all__ = ["SETTINGS", "Plan", "Target", "plan_build", "toolchain_args", "toolchain_for",
           "with_toolchain"]

Arch = str | list[str]

#: How messages name the settings.
SETTINGS = "pyproject.toml: tool.click-build"
#: What ``toolchains`` may say instead of a file: this machine is the target's SDK.
HOST = "host"


@dataclass(frozen=True)
class Target:
    """One package of a build: a framework and an architecture."""

    label: str  # "FRAMEWORK/ARCH", as a build for several targets shows it
    request: Request  # what the finishing stage is asked
    choice: Choice | None  # made here when the manifest is the project's; None: after staging
    facts: FrameworkFacts  # the framework staged for
    arch: str  # the architecture compiled for ("all" when nothing is)
    folder: str  # the build folder's ``{arch}``
    toolchain: str = ""  # ``-DCMAKE_TOOLCHAIN_FILE=...``, or ""
    #: The phone's root it builds against (``toolchains = "sysroot"``): chosen here,
    #: held (and made when missing) while it is staged, its toolchain file then passed.
    root: RootChoice | None = None
    arch_guessed: bool = False  # ``arch`` is the host's, as nothing declared one
    architectures: tuple[str, ...] = ()  # a fat package's list (``arch`` is then "all")
    arch_env: str = ""  # the environment variable that declared ``arch``
    framework_chosen_by: str = "settings"  # see Staging.framework_chosen_by


@dataclass(frozen=True)
class Plan:
    """A build's targets and what they share."""

    kind: str
    source: ManifestSource | None  # the project's manifest (None: CMake's install has it)
    targets: list[Target]
    several: bool  # ``frameworks`` or ``architectures`` asked: a summary table, store rules


def plan_build(project: Project, base: Request) -> Plan:
    """The targets of ``project`` (from :func:`~.settings.load_project`); ``base``: what its
    settings ask of every target.  Says what is built, on one line."""
    kind = resolve(project)
    source = find_manifest(project, kind)
    if project.settings.frameworks or project.settings.architectures:
        return Plan(kind, source, _several(project, kind, source, base), True)
    return Plan(kind, source, [_single(project, kind, source, base)], False)


def _build_arch(kind: str, declared: Arch | None, for_host: bool) -> str:
    """What to compile for, before anything is built (``for_host``: the kind builds for
    this machine unless told otherwise, :func:`~.kinds.builds_for_host`)."""
    if isinstance(declared, str):
        return declared
    if isinstance(declared, list):
        if for_host:
            raise ConfigError(
                f"{SETTINGS}.architecture: a {kind} project builds one "
                "architecture at a time; build each with -C click-build.architecture=ARCH "
                "and join them with 'click-build merge'")
        return "all"
    return host_architecture() if for_host else "all"


def _cmake_framework(request: Request, written: object, label: str) -> tuple[FrameworkFacts, str]:
    """What CMake is told of the framework, and who chose it: "settings", "manifest",
    "environment" (Clickable's variables), or "" when nobody did: a CMake project's
    ``CMakeLists.txt`` may then choose its own (from ``$SDK_FRAMEWORK``, else its own
    default), so click-build's default is not imposed on it (:func:`~.cmake.stage_cmake`
    decides what CMake is told)."""
    if request.framework:
        return choose_framework(request.framework, written, label, SETTINGS), "settings"
    if isinstance(written, str) and not is_placeholder(written, FRAMEWORK_PLACEHOLDERS):
        return choose_framework("", written, label, SETTINGS), "manifest"
    if environment_framework() is not None:
        return choose_framework("", written, label, SETTINGS), "environment"
    return framework_facts(DEFAULT_FRAMEWORK), ""


def _single(project: Project, kind: str, source: ManifestSource | None,
            request: Request) -> Target:
    peek = source.peek(placeholders=True) if source else {}
    label = source.label if source else "manifest.json"
    written = peek.get("framework")
    choice = None
    if kind == "cmake":
        facts, chosen_by = _cmake_framework(request, written, label)
    elif source is not None and kind not in INSTALLING_KINDS:  # the manifest is the project's
        choice = choose(source, request)
        facts, chosen_by = choice.facts, "settings"
    else:  # the install may write the manifest: the choice is made on it after staging
        facts = choose_framework(request.framework, written, label, SETTINGS)
        chosen_by = "settings"
    if choice is not None:
        declared, arch_env = choice.declared, choice.env_var
    else:
        declared, arch_env = architecture_declaration(request.architecture,
                                                      peek.get("architecture"), label, SETTINGS)
    if request.framework or (kind != "cmake" and isinstance(written, str)):
        request = request._replace(framework=facts.framework)  # the choice holds for every step
    for_host = builds_for_host(project, kind)
    arch = _build_arch(kind, declared, for_host)
    if declared is None and for_host and kind == "precompiled":
        request = request._replace(architecture=arch)  # its folder of files for this machine
        if choice is not None:
            choice = choice._replace(declared=arch)  # declared now, by that folder
    elif declared is None and for_host:  # the build is told the host's; the code decides
        request = request._replace(guessed_architecture=arch)
    if kind not in OWN_TRANSLATIONS:  # CMake projects compile theirs: click_translations()
        request = request._replace(po_dir=str(project.root / "po"))
    shown = ", ".join(declared) if isinstance(declared, list) else arch
    if kind == "precompiled" and declared is None and not for_host:
        shown = "the architecture of its files"
    framework = f" ({facts.framework})" if chosen_by or kind != "cmake" else ""
    _console.info(f"* Building {kind} app for {shown}{framework}")
    toolchain: str | RootChoice = ""
    if kind in INSTALLING_KINDS:  # the toolchain rule of several targets, for this one
        key = (facts.framework if chosen_by else "", arch)
        toolchain = toolchain_args(project, [key], kind)[key]
    return Target(target_label(facts.framework, arch), request, choice, facts, arch, arch,
                  *_toolchain_fields(toolchain), arch_guessed=bool(request.guessed_architecture),
                  architectures=tuple(declared) if isinstance(declared, list) else (),
                  arch_env=arch_env, framework_chosen_by=chosen_by)


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


def _toolchain_fields(toolchain: str | RootChoice) -> tuple[str, RootChoice | None]:
    """A :class:`Target`'s ``toolchain`` and ``root``."""
    return (toolchain, None) if isinstance(toolchain, str) else ("", toolchain)


def toolchain_args(project: Project, targets: list[tuple[str, str]],
                   kind: str = "cmake") -> dict[tuple[str, str], str | RootChoice]:
    """The toolchain argument of each cmake target ("" for none; the root to build against
    for ``"sysroot"``), or a refusal naming every target that cannot be built on this
    machine and why.  A qmake target takes ``"sysroot"`` only (its kind refuses another
    architecture than this machine's without one), and so does a custom one (its steps
    get the root's toolchain file in their environment; without a root, its commands
    may cross-compile as they please).

    One rule for a single build and several targets: the toolchain ``toolchains`` names for
    the target; else the one the cmake settings give every build (``cmake.args``
    ``--toolchain``, ``cmake.define.CMAKE_TOOLCHAIN_FILE``, ``$CMAKE_TOOLCHAIN_FILE``); else
    this machine's compiler, which is said, when it builds for the target's architecture
    (or ``all``: nothing is compiled); another architecture is refused before anything is
    configured.  ``"host"`` says this machine is the target's SDK; ``"sysroot"`` that the
    target builds against the phone's root (:mod:`.crossroot`: the root is chosen here,
    once; a cmake project nobody chose a framework for gets click-build's default's).
    """
    host = host_architecture()
    own = _toolchain_in_settings(project)
    out: dict[tuple[str, str], str | RootChoice] = {}
    cannot = []
    for fw, arch in targets:
        label = target_label(fw, arch) if fw else arch
        named = toolchain_for(project, fw, arch)
        if named == SYSROOT and arch != "all":
            framework = fw or DEFAULT_FRAMEWORK
            out[(fw, arch)] = plan_root(project, framework, arch, target_label(framework, arch))
        elif kind != "cmake":
            out[(fw, arch)] = ""
        elif named is None:
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


def _several(project: Project, kind: str, source: ManifestSource | None,
             base: Request) -> list[Target]:
    s = project.settings
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
    pairs = [(fw, arch) for fw in frameworks for arch in per_arch]
    if len(pairs) > 1 and s.build_dir and "{arch}" not in s.build_dir:
        raise ConfigError(f"{SETTINGS}.build-dir: {s.build_dir!r} has no {{arch}}, so the "
                          "targets would share one build folder; add {arch} to it")
    toolchains = toolchain_args(project, [(f, a or "all") for f, a in pairs], kind) \
        if kind in INSTALLING_KINDS else {}
    written_fw = peek.get("framework")
    if isinstance(written_fw, str) and written_fw.strip() and "@" not in written_fw \
            and written_fw.strip() not in frameworks:
        _console.info(f"* {label} names {written_fw.strip()}; each package gets its "
                      "target's framework instead")
    written_version = peek.get("version") or project.version
    shown = ", ".join(target_label(f, a or "all") for f, a in pairs)
    count = f"{len(pairs)} targets" if len(pairs) != 1 else "1 target"
    _console.info(f"* Building {kind} app for {count}: {shown}")
    if kind not in OWN_TRANSLATIONS:  # as a single build: CMake projects compile theirs
        base = base._replace(po_dir=str(project.root / "po"))
    targets = []
    for fw, arch in pairs:
        request = base._replace(
            framework=fw, architecture=arch if arch else base.architecture,
            rewrite_framework=True, version_suffix=suffix_for(fw, frameworks, written_version))
        build_arch = arch or "all"
        choice = None
        if kind not in INSTALLING_KINDS and source is not None:  # the project's manifest
            choice = choose(source, request)
            facts = choice.facts
        else:
            facts = choose_framework(fw, "@CLICK_FRAMEWORK@", label, SETTINGS)
        folder = build_arch if len(frameworks) == 1 else f"{build_arch}-{fw}"
        targets.append(Target(target_label(fw, build_arch), request, choice, facts, build_arch,
                              folder, *_toolchain_fields(toolchains.get((fw, build_arch), ""))))
    return targets
