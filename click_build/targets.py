"""Several packages from one source: every target prepared, the stores' rules checked
across them, then each written and reviewed, and one summary table.

A target is one framework and one architecture.  Every route stages a tree per
target its own way (the backend once per target, ``click-build build --framework``
once for all) and hands the list here, so a matrix that breaks a store rule is
refused before a single file is written.  The rules are the OpenStore's for one
upload channel:

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

from . import _console
from ._record import Record
from .build import Entry, build_click, check_output_dir
from .errors import BuildError, ClickError
from .finish import Prepared, Target, prepare, review_built
from .framework_table import framework_facts, framework_suffix
from .placeholders import ManifestSource
from .versions import compare_versions

TYPE_CHECKING = False  # not typing.TYPE_CHECKING: importing typing costs start-up time

if TYPE_CHECKING:
    from collections.abc import Sequence

    from .review import Finding

__all__ = ["Built", "Plan", "build_targets", "check_store_rules", "expand_names", "suffix_for",
           "summary_table", "target_label"]


class Plan(Record):
    """One target, staged: what :func:`build_targets` prepares and writes."""

    source: ManifestSource
    entries: list[Entry]
    target: Target
    scratch: str  # a folder the caller owns for generated files; must outlive the write


class Built(Record):
    """What became of one target."""

    label: str  # "ubuntu-sdk-20.04/all": the package's framework and architecture
    path: str  # "" when the review removed it
    size: int
    findings: list[Finding]
    error: str = ""


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


def _permissions(prepared: Prepared) -> dict[str, list[str]]:
    """App -> its AppArmor policy groups (sorted), from the files the package will hold."""
    sources = {e.arcname: e.source for e in prepared.entries if e.kind == "file" and e.source}
    out: dict[str, list[str]] = {}
    for app, hooks in sorted(prepared.manifest.hooks.items()):
        target = hooks.get("apparmor")
        source = sources.get(os.path.normpath(target).strip("/")) if isinstance(target, str) else None
        if source is None:
            continue
        try:
            with open(source, encoding="utf-8") as f:
                data = json.load(f)
        except (OSError, ValueError):
            continue  # the finishing stage's checks and the review say what is wrong
        groups = data.get("policy_groups") if isinstance(data, dict) else None
        if isinstance(groups, list):
            out[app] = sorted(str(g) for g in groups)
    return out


def _arch_word(prepared: Prepared) -> str:
    arch = prepared.manifest.architecture
    return ",".join(arch) if isinstance(arch, (list, tuple)) else str(arch or "all")


def check_store_rules(prepared: Sequence[tuple[str, Prepared]]) -> None:
    """Refuse a set of packages the OpenStore would refuse, with the rule and the fix."""
    fix = ("build each framework with its own version: leave the version without placeholders "
           "(click-build appends ~2004, ~2404...) or put @CLICK_FRAMEWORK_SUFFIX@ in it")
    by_version: dict[str, list[tuple[str, Prepared]]] = {}
    for label, p in prepared:
        by_version.setdefault(p.manifest.version, []).append((label, p))
    for version, group in by_version.items():
        frameworks = sorted({p.manifest.framework for _, p in group})
        if len(frameworks) > 1:
            raise BuildError(
                f"store rule: one version has one framework on every architecture, but version "
                f"{version!r} would be built for {' and '.join(frameworks)} "
                f"({', '.join(label for label, _ in group)}); {fix}")
        arches = [_arch_word(p) for _, p in group]
        if "all" in arches and len(set(arches)) > 1:
            raise BuildError(
                f"store rule: 'all' and architecture-specific packages cannot share a version, "
                f"but version {version!r} would be built for {', '.join(sorted(set(arches)))}; "
                "build the app either for 'all' or per architecture")
        names = [(label, p.manifest.name, _arch_word(p)) for label, p in group]
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
    ordered = sorted(prepared, key=lambda lp: _policy_order(lp[1].manifest.framework))
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


def build_targets(plans: Sequence[Plan], outdir: str | os.PathLike[str]) -> list[Built]:
    """Prepare every plan, check the store rules, then write and review each.

    Nothing is written unless every target passes the finishing stage's checks
    and the rules together.  A target whose review fails is removed (as a single
    build) and the others are kept; the summary table shows both, then the build
    fails naming the removed ones and the files that were written.
    """
    outdir = os.fspath(outdir)
    check_output_dir(outdir)
    prepared = []
    for plan in plans:
        p = prepare(plan.source, plan.entries, plan.target, plan.scratch)
        prepared.append((target_label(p.manifest.framework, _arch_word(p)), p))
    check_store_rules(prepared)
    results: list[Built] = []
    for plan, (label, p) in zip(plans, prepared):
        try:
            path = build_click(p.manifest, p.entries, outdir, manifest_size=p.manifest_size,
                               level=plan.target.level)
        except ClickError as e:
            raise BuildError(f"{label}: {e} ({_written(outdir, results)})") from None
        size = os.path.getsize(path)
        try:
            findings = review_built(path, plan.target.review, plan.target.review_switch)
        except ClickError as e:
            results.append(Built(label, "", size, [], str(e)))
            continue
        results.append(Built(label, path, size, findings))
    for line in summary_table(results):
        _console.info(line)
    failed = [b for b in results if b.error]
    if failed:
        mode = plans[0].target.review
        what = "errors and warnings" if mode == "strict" else "errors"
        reasons = "; ".join(f"{b.label}: {_reason(b.error)}" for b in failed)
        raise BuildError(
            f"{len(failed)} of {len(results)} packages failed the review and "
            f"{'was' if len(failed) == 1 else 'were'} removed ({reasons}); "
            f"{_written(outdir, results)}; the stores reject packages with {what}: fix them, "
            f"or build anyway with {plans[0].target.review_switch}")
    return results


def _reason(error: str) -> str:
    """What a review failure found (\"review: 1 error in NAME.click (listed above)\")."""
    return error.split(";")[0].removeprefix("review: ")


def _written(outdir: str, results: Sequence[Built]) -> str:
    """Which packages a build for several targets wrote, and kept, so far."""
    kept = [os.path.join(outdir, os.path.basename(b.path)) for b in results if b.path]
    return f"written: {', '.join(kept)}" if kept else "no package was written"


def summary_table(results: Sequence[Built]) -> list[str]:
    """The lines of the table printed at the end: target, file, size, findings."""
    from .review import summary

    rows = [("target", "file", "size", "findings")]
    for b in results:
        name = os.path.basename(b.path) if b.path else "(removed)"
        said = f"failed: {b.error.split(';')[0]}" if b.error else summary(b.findings)
        rows.append((b.label, name, f"{(b.size + 1023) // 1024} KiB", said))
    widths = [max(len(r[i]) for r in rows) for i in range(3)]
    return [f"{r[0]:<{widths[0]}}  {r[1]:<{widths[1]}}  {r[2]:>{widths[2]}}  {r[3]}"
            for r in rows]
