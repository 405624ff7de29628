"""Built-in review: the checks the app stores run, at build time.

``review_package(path)`` opens a .click, checks its control data and manifest,
streams its data archive once through the core audit (keeping only ELF
headers, modes and the few small files that hooks name), then runs the lint,
desktop, security, hook and QML checks.  Each :class:`Finding` carries a stable
check id (documented in docs/review.md), a severity, the file and a hint that
says what to change.
"""

from __future__ import annotations

import os

from .findings import CHECKS, Check, Context, Finding, Report, Severity

__all__ = [
    "CHECKS",
    "Check",
    "Finding",
    "Severity",
    "count",
    "report_after_build",
    "review_package",
    "summary",
]

#: Hooks whose files the checks parse.
PARSED_HOOKS = ("desktop", "apparmor", "urls", "content-hub", "push-helper", "accounts")


def _well_formed_hooks(manifest: dict[str, object]) -> dict[str, dict[str, str]]:
    hooks = manifest.get("hooks")
    if not isinstance(hooks, dict):
        return {}
    return {
        app: {h: t for h, t in entries.items() if isinstance(t, str)}
        for app, entries in hooks.items()
        if isinstance(app, str) and isinstance(entries, dict)
    }


def review_package(
    path: str | os.PathLike[str],
    frameworks_dir: str | os.PathLike[str] | None = None,
) -> list[Finding]:
    """Every finding for the package at ``path``, errors first.

    ``frameworks_dir`` adds the frameworks installed there to the built-in
    table (default: ``$CLICK_FRAMEWORKS_DIR`` or the system directory).
    Raises :class:`~click_build.errors.PackageError` only when the file is not
    a readable Click package at all.
    """
    from ..errors import PackageError
    from ..frameworks import frameworks_dir as default_frameworks_dir
    from ..package import open_click
    from . import abi, desktop, hooks, lint, qml, security
    from ._collect import collect

    with open_click(path) as pkg:
        manifest = dict(pkg.manifest_data)
        app_hooks = _well_formed_hooks(manifest)
        framework = manifest.get("framework")
        ctx = Context(
            pkg=pkg,
            manifest=manifest,
            hooks=app_hooks,
            frameworks=[f.strip() for f in framework.split(",") if f.strip()]
            if isinstance(framework, str) else [],
            frameworks_dir=default_frameworks_dir(frameworks_dir),
            report=Report(),
        )
        lint.check_control(ctx)
        lint.check_manifest(ctx)
        lint.check_frameworks(ctx)
        wanted = {
            target for entries in app_hooks.values()
            for hook, target in entries.items() if hook in PARSED_HOOKS
        }
        # compiled code for no known framework and architecture is not read for its needs
        wanted_abi = abi.targets(ctx.frameworks, ctx.architectures)
        try:
            ctx.data = collect(pkg, wanted, abi.Scanner(wanted_abi) if wanted_abi else None)
        except PackageError as e:
            lint.report_scan_failure(ctx, str(e))
        if ctx.data is not None:
            lint.check_data(ctx)
            abi.check(ctx)
            desktop.check(ctx)
            security.check(ctx)
            hooks.check(ctx)
            qml.check(ctx)
    return sorted(ctx.report.findings, key=Finding.sort_key)


def count(findings: list[Finding]) -> dict[str, int]:
    """How many findings of each severity."""
    counts = {"error": 0, "warning": 0, "info": 0}
    for finding in findings:
        counts[finding.severity] += 1
    return counts


def summary(findings: list[Finding]) -> str:
    counts = count(findings)
    parts = [f"{n} {kind}{'' if n == 1 else 's'}" for kind, n in counts.items() if n]
    return ", ".join(parts) if parts else "no problems found"


def report_after_build(path: str | os.PathLike[str]) -> None:
    """Review a freshly built package and print what it finds, as warnings.

    A build never fails here (as the original, which ignores click-review's
    result): findings are advice, shown so they are fixed before an upload.
    """
    from .. import _console
    from ..errors import ClickError

    try:
        findings = review_package(path)
    except ClickError as e:
        _console.warn(f"review: could not read the package: {e}")
        return
    for finding in findings:
        if finding.severity == "info":
            _console.info(f"review: {finding.line()}")
        else:
            _console.warn(f"review: {finding.severity}: {finding.line()} - {finding.hint}")
    if any(f.severity != "info" for f in findings):
        _console.warn(f"review: {summary(findings)} (details: 'click-build review {path}')")
