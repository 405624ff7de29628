"""``build`` and ``buildsource``: a directory with a manifest.json -> package."""

from __future__ import annotations

import argparse
import os

from ..errors import BuildError

__all__ = ["register", "resolve_manifest"]


def resolve_manifest(directory: str, manifest: str | None) -> str:
    """Where ``-m`` points: relative to DIRECTORY first (as the original), then to the CWD."""
    if manifest is None:
        manifest = "manifest.json"
    candidates = [manifest] if os.path.isabs(manifest) else [
        os.path.join(directory, manifest), manifest]
    for candidate in candidates:
        if os.path.isdir(candidate):
            candidate = os.path.join(candidate, "manifest.json")
        if os.path.exists(candidate):
            return candidate
    raise BuildError(
        f'directory "{directory}" does not contain manifest file "{manifest}" '
        "(every Click app needs a manifest.json; see 'click-build new' for a start)"
    )


def _common(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("directory", metavar="DIRECTORY", help="the app's directory tree")
    parser.add_argument(
        "-m", "--manifest", metavar="PATH",
        help="read the manifest from PATH (default: DIRECTORY/manifest.json); "
             "a relative PATH is looked up in DIRECTORY first",
    )
    parser.add_argument(
        "-I", "--ignore", metavar="PATTERN", action="append", default=[],
        help="leave out files whose name matches the shell PATTERN (repeatable); "
             "a PATTERN with a '/' matches the path relative to DIRECTORY",
    )
    parser.add_argument(
        "-o", "--output-dir", metavar="DIR", default=".",
        help="write the result into DIR, made if missing (default: the current directory)",
    )
    parser.add_argument(
        "-z", "--compression-level", metavar="N", type=_level, default=None,
        help="gzip level from 0 (no compression, fastest) to 9 (smallest, the default, "
             "as dpkg-deb -Zgzip); the output stays reproducible at every level",
    )


def _level(text: str) -> int:
    if not (text.isdigit() and text.isascii() and 0 <= int(text) <= 9):
        raise argparse.ArgumentTypeError(
            f"{text!r} is not a compression level: use a whole number from 0 to 9")
    return int(text)


def register(subparsers: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    p = subparsers.add_parser(
        "build", help="build a .click package from a directory",
        description=(
            "Build NAME_VERSION_ARCH.click from DIRECTORY, which must hold a manifest.json. "
            "VCS folders, editor backups and *.click files are left out. The output is "
            "reproducible: set SOURCE_DATE_EPOCH to stamp it with your commit's time."
        ),
    )
    _common(p)
    p.add_argument(
        "--no-validate", dest="validate", action="store_false",
        help="do not run the review checks on the built package",
    )
    p.set_defaults(func=run_build)
    p = subparsers.add_parser(
        "buildsource", help="build a source tarball from a directory",
        description=(
            "Build NAME_VERSION.tar.gz holding DIRECTORY and its manifest.json, for "
            "distributing the source of a package that contains compiled code."
        ),
    )
    _common(p)
    p.set_defaults(func=run_buildsource)


def _check_directory(directory: str) -> None:
    if not os.path.isdir(directory):
        raise BuildError(f'directory "{directory}" does not exist')


def run_build(args: argparse.Namespace) -> int:
    from .. import _console
    from ..build import COMPRESS_LEVEL, build_click, stage_tree
    from ..manifest import load_manifest

    _check_directory(args.directory)
    manifest_path = resolve_manifest(args.directory, args.manifest)
    manifest = load_manifest(manifest_path)
    entries = stage_tree(
        args.directory, args.ignore,
        exclude=[manifest_path, os.path.join(args.directory, "manifest.json")],
    )
    os.makedirs(args.output_dir, exist_ok=True)  # -o DIR: made when missing, as mkdir -p
    level = COMPRESS_LEVEL if args.compression_level is None else args.compression_level
    # i18n: DIRECTORY/po/*.po -> .mo files and translated desktop files. Moves into the
    # finishing stage (finish.py) when it merges.
    from ..i18n import translated

    with translated(entries, manifest, os.path.join(args.directory, "po")) as entries:
        path = build_click(manifest, entries, args.output_dir, level=level)
    shown = os.path.join(args.output_dir, os.path.basename(path))
    _console.info(f"Successfully built package in '{shown}'.")
    if args.validate:
        _review(path)
    return 0


def _review(path: str) -> None:
    """Run the built-in review when it is available (it reports, never fails the build)."""
    try:
        from ..review import report_after_build
    except ImportError:
        return
    report_after_build(path)


def run_buildsource(args: argparse.Namespace) -> int:
    from .. import _console
    from ..build import COMPRESS_LEVEL, SOURCE_IGNORES, build_source, stage_tree
    from ..manifest import load_manifest

    _check_directory(args.directory)
    manifest_path = resolve_manifest(args.directory, args.manifest)
    manifest = load_manifest(manifest_path)
    entries = stage_tree(args.directory, args.ignore, default_ignores=SOURCE_IGNORES)
    os.makedirs(args.output_dir, exist_ok=True)
    level = COMPRESS_LEVEL if args.compression_level is None else args.compression_level
    path = build_source(manifest, manifest_path, entries, args.output_dir, level=level)
    _console.info(
        f"Successfully built source package in '{os.path.join(args.output_dir, os.path.basename(path))}'."
    )
    return 0
