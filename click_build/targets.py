"""Several packages from one source: what a target is called, its version suffix, and
the stores' rules across the targets of one build.

A target is one framework and one architecture.  Every route stages a tree per
target its own way (the backend once per target, ``click-build build --framework``
once for all) and hands the list to the finishing stage
(:func:`click_build.finish.finish_jobs`), which checks these rules across them before a
single package is written.  The rules are the OpenStore's for one upload channel:

- versions strictly increase per architecture and framework, and a newer
  framework's package sorts higher (a device that moves to 24.04 updates from its
  20.04 package);
- one version has one framework, and the same permissions on every architecture;
- ``all`` and architecture-specific packages cannot share a version.

Standard library only, like the rest of the core.
"""

from __future__ import annotations

import json
import os

from ._record import Record
from .errors import BuildError
from .framework_table import framework_facts, framework_suffix
from .versions import compare_versions

TYPE_CHECKING = False  # not typing.TYPE_CHECKING: importing typing costs start-up time

if TYPE_CHECKING:
    from collections.abc import Mapping, Sequence

    from .build import Entry
    from .manifest import Manifest

__all__ = ["Candidate", "arch_word", "check_store_rules", "expand_names", "suffix_for", "target_label"]


class Candidate(Record):
    """A package about to be written, as the store rules see it."""

    label: str  # "ubuntu-sdk-20.04/all": the package's framework and architecture
    manifest: Manifest
    entries: Sequence[Entry]  # what it will hold
    kept: Mapping[str, bytes]  # files the build has read (source path -> bytes)


def target_label(framework: str, arch: str) -> str:
    return f"{framework}/{arch}"


def expand_names(values: Sequence[str]) -> list[str]:
    """``["a,b", "c"]`` -> ``["a", "b", "c"]``: lists given as one comma-separated word
    (``-C click-build.frameworks=A,B``) or as a list, duplicates dropped."""
    out: list[str] = []
    for value in values:
        for name in value.split(","):
            name = name.strip()
            if name and name not in out:
                out.append(name)
    return out


def suffix_for(framework: str, frameworks: Sequence[str], version_written: object) -> str:
    """The version suffix of one framework of a build for ``frameworks``.

    One framework: none (its version is the app's).  Several: ``~2004``,
    ``~2404`` (:func:`~click_build.framework_table.framework_suffix`), unless the
    version names a placeholder that differs per framework (``@CLICK_FRAMEWORK_SUFFIX@``,
    ``@CLICK_FRAMEWORK_BASE@``...) or the environment (``$ENV{VAR}``): the author's own
    scheme, which the store rules check.
    """
    if len(frameworks) < 2:
        return ""
    if isinstance(version_written, str) and ("$ENV{" in version_written or any(
            f"@{name}@" in version_written for name in _PER_FRAMEWORK)):
        return ""
    return framework_suffix(framework)


#: Placeholders whose value differs per framework: a version naming one has its own scheme
#: (``@PROJECT_VERSION@`` does not, and gets the suffix).
_PER_FRAMEWORK = ("CLICK_FRAMEWORK_SUFFIX", "CLICK_FRAMEWORK_BASE", "CLICK_FRAMEWORK",
                  "SDK_FRAMEWORK", "APPARMOR_POLICY", "CLICK_APPARMOR_POLICY")


def _permissions(candidate: Candidate) -> dict[str, list[str]]:
    """App -> its AppArmor policy groups (sorted), from the files the package will hold."""
    sources = {e.arcname: e.source for e in candidate.entries if e.kind == "file" and e.source}
    out: dict[str, list[str]] = {}
    for app, hooks in sorted(candidate.manifest.hooks.items()):
        named = hooks.get("apparmor")
        source = sources.get(os.path.normpath(named).strip("/")) if isinstance(named, str) else None
        if source is None:
            continue
        try:
            raw = candidate.kept.get(source)
            if raw is None:  # a file the build generated (a filled policy_version)
                with open(source, "rb") as f:
                    raw = f.read()
            data = json.loads(raw.decode("utf-8"))
        except (OSError, ValueError):
            continue  # the finishing stage's checks and the review say what is wrong
        groups = data.get("policy_groups") if isinstance(data, dict) else None
        if isinstance(groups, list):
            out[app] = sorted(str(g) for g in groups)
    return out


def arch_word(manifest: Manifest) -> str:
    """The architecture as a package's target names it: ``all``, ``arm64``, ``armhf,arm64``."""
    arch = manifest.architecture
    return ",".join(arch) if isinstance(arch, (list, tuple)) else str(arch or "all")


def check_store_rules(candidates: Sequence[Candidate]) -> None:
    """Refuse a set of packages the OpenStore would refuse, with the rule and the fix."""
    fix = ("build each framework with its own version: leave the version without placeholders "
           "(click-build appends ~2004, ~2404...) or put @CLICK_FRAMEWORK_SUFFIX@ in it")
    by_version: dict[str, list[tuple[str, Candidate]]] = {}
    for c in candidates:
        by_version.setdefault(c.manifest.version, []).append((c.label, c))
    for version, group in by_version.items():
        frameworks = sorted({p.manifest.framework for _, p in group})
        if len(frameworks) > 1:
            raise BuildError(
                f"store rule: one version has one framework on every architecture, but version "
                f"{version!r} would be built for {' and '.join(frameworks)} "
                f"({', '.join(label for label, _ in group)}); {fix}")
        arches = [arch_word(p.manifest) for _, p in group]
        if "all" in arches and len(set(arches)) > 1:
            raise BuildError(
                f"store rule: 'all' and architecture-specific packages cannot share a version, "
                f"but version {version!r} would be built for {', '.join(sorted(set(arches)))}; "
                "build the app either for 'all' or per architecture")
        names = [(label, p.manifest.name, arch_word(p.manifest)) for label, p in group]
        seen: dict[tuple[str, str], str] = {}
        for label, name, arch in names:
            if (name, arch) in seen:
                raise BuildError(
                    f"store rule: versions strictly increase per architecture and framework, but "
                    f"{seen[(name, arch)]} and {label} would both be {name} {version} for {arch} "
                    "(the same file); list each framework and architecture once")
            seen[(name, arch)] = label
        perms = {label: _permissions(p) for label, p in group}
        first_label, first = next(iter(perms.items()))
        for label, groups in perms.items():
            if groups != first:
                raise BuildError(
                    f"store rule: one version has the same permissions on every architecture, "
                    f"but version {version!r} asks for {groups} in {label} and {first} in "
                    f"{first_label}; use one AppArmor file for every architecture")
    ordered = sorted(((c.label, c) for c in candidates),
                     key=lambda lc: _policy_order(lc[1].manifest.framework))
    for i, (old_label, old) in enumerate(ordered):
        for new_label, new in ordered[i + 1:]:
            if _policy_order(new.manifest.framework) == _policy_order(old.manifest.framework):
                continue
            if compare_versions(new.manifest.version, old.manifest.version) <= 0:
                raise BuildError(
                    f"store rule: a newer framework's package must sort higher (a device that "
                    f"moves to {new.manifest.framework} updates from its "
                    f"{old.manifest.framework} package), but {new_label} is version "
                    f"{new.manifest.version!r} and {old_label} {old.manifest.version!r}; {fix}")


def _policy_order(framework: str) -> float:
    policy = framework_facts(framework).apparmor_policy
    try:
        return float(policy)
    except ValueError:
        return 0.0
