"""``review``: the store's checks on a built package, with a fix for each finding."""

from __future__ import annotations

import argparse
import json
import sys

__all__ = ["register"]


def register(subparsers: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    p = subparsers.add_parser(
        "review", help="check a package the way the app stores do",
        description=(
            "Check PACKAGE-FILE the way the app stores' review does: manifest and control "
            "data, framework, architecture against the compiled code inside, file modes and "
            "links, the hooks every app needs, the desktop file, the AppArmor policy and the "
            "other hooks' JSON files. Each finding has a stable check id, a severity (error: "
            "the stores refuse the package or hold it for a manual review; warning: they "
            "flag it) and a hint that says what to fix; the checks and severities are the "
            "stores' own. 'click-build build' runs the same checks after every build."
        ),
        epilog=(
            "Several packages are reviewed in turn, each ending with its summary line.\n"
            "Exit status: 0 when no package has errors (and, with --strict, warnings); "
            "1 otherwise."
        ),
    )
    p.add_argument("paths", metavar="PACKAGE-FILE", nargs="+", help="a .click file")
    p.add_argument("--json", action="store_true",
                   help="print the findings as a JSON object instead of text (a list of "
                        "them for several packages)")
    p.add_argument("--strict", action="store_true",
                   help="fail on warnings too, not only on errors")
    p.add_argument(
        "--frameworks-dir", metavar="DIR",
        help="also accept the frameworks described by *.framework files in DIR (default: "
             "$CLICK_FRAMEWORKS_DIR or /usr/share/click/frameworks)",
    )
    p.set_defaults(func=run_review)


def run_review(args: argparse.Namespace) -> int:
    from .inspect import each_package

    reports: list[dict[str, object]] = []
    status = each_package(args.paths, lambda path: _review(args, path, reports))
    if args.json:
        json.dump(reports[0] if len(args.paths) == 1 and reports else reports, sys.stdout,
                  indent=2)
        sys.stdout.write("\n")
    return status


def _review(args: argparse.Namespace, path: str, reports: list[dict[str, object]]) -> int:
    from ..review import count, review_package, summary

    findings = review_package(path, args.frameworks_dir)
    counts = count(findings)
    failed = counts["error"] > 0 or (args.strict and counts["warning"] > 0)
    if args.json:
        reports.append({"package": path, "findings": [f.as_dict() for f in findings],
                        "counts": counts, "passed": not failed})
    else:
        out = sys.stdout
        for finding in findings:
            out.write(f"{finding.severity}: {finding.line()}\n    fix: {finding.hint}\n")
        out.write(f"{path}: {summary(findings)}\n")
    return 1 if failed else 0
