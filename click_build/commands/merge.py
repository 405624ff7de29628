"""``merge``: join per-architecture builds of one app into a fat package."""

from __future__ import annotations

import argparse
import os

__all__ = ["register"]


def register(subparsers: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    p = subparsers.add_parser(
        "merge", help="merge per-architecture builds into one fat package",
        description=(
            "Merge PACKAGE files built from the same app for different architectures into "
            "NAME_VERSION_multi.click, whose manifest lists every architecture. The "
            "manifests must agree on everything but the architecture, and files present in "
            "several inputs must be identical: keep compiled code in lib/<triplet>/. Every "
            "input is audited first, as 'verify' does (frameworks need not be installed)."
        ),
    )
    p.add_argument("packages", metavar="PACKAGE", nargs="+", help="a .click file (two or more)")
    p.add_argument("-o", "--output-dir", metavar="DIR", default=".",
                   help="write the merged package into DIR, made if missing (default: the "
                        "current directory)")
    p.add_argument("--frameworks-dir", metavar="DIR",
                   help="read *.framework files from DIR (default: $CLICK_FRAMEWORKS_DIR or "
                        "/usr/share/click/frameworks)")
    p.set_defaults(func=run_merge)


def run_merge(args: argparse.Namespace) -> int:
    from .. import _console
    from ..merge import merge_packages

    os.makedirs(args.output_dir, exist_ok=True)  # -o DIR: made when missing, as mkdir -p
    path = merge_packages(args.packages, args.output_dir, args.frameworks_dir)
    _console.info(f"Successfully built package in '{os.path.join(args.output_dir, path.name)}'.")
    return 0
