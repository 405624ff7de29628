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
            "other hooks' JSON files. Each finding has a check id (see docs/review.md), a "
            "severity and a hint that says what to fix. 'click-build build' runs the same "
            "checks after every build."
        ),
        epilog=(
            "Exit status: 0 when there are no errors (and, with --strict, no warnings); "
            "1 otherwise."
        ),
    )
    p.add_argument("path", metavar="PACKAGE-FILE", help="a .click file")
    p.add_argument("--json", action="store_true",
                   help="print the findings as a JSON object instead of text")
    p.add_argument("--strict", action="store_true",
                   help="fail on warnings too, not only on errors")
    p.add_argument(
        "--frameworks-dir", metavar="DIR",
        help="also accept the frameworks described by *.framework files in DIR (default: "
             "$CLICK_FRAMEWORKS_DIR or /usr/share/click/frameworks)",
    )
    p.set_defaults(func=run_review)


def run_review(args: argparse.Namespace) -> int:
    from ..review import count, review_package, summary

    findings = review_package(args.path, args.frameworks_dir)
    counts = count(findings)
    failed = counts["error"] > 0 or (args.strict and counts["warning"] > 0)
    out = sys.stdout
    if args.json:
        json.dump({"package": args.path, "findings": [f.as_dict() for f in findings],
                   "counts": counts, "passed": not failed}, out, indent=2)
        out.write("\n")
    else:
        for finding in findings:
            out.write(f"{finding.severity}: {finding.line()}\n    fix: {finding.hint}\n")
        out.write(f"{args.path}: {summary(findings)}\n")
    return 1 if failed else 0
