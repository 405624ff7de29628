"""``_cmake``: the hidden helper behind the CMake package (``cmake/ClickBuild.cmake``).

CMake cannot be trusted to write JSON from user strings and must not grow a
second copy of the packaging rules, so the ``click_*`` functions hand the
manifest, the AppArmor files and the staged tree to the core through this
command.  It is internal: its arguments change with click-build itself, and the
CMake files refuse to run with a click_build of another version.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from collections.abc import Mapping
from pathlib import Path

from ..errors import ManifestError

__all__ = ["policy_version", "register"]


def policy_version(framework: str) -> str | None:
    """The AppArmor policy version of the (first) framework, from the backend's one table."""
    from ..framework_table import framework_facts

    return framework_facts(framework).apparmor_policy or None


def register(subparsers: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    # No help=: the command stays out of 'click-build --help'.
    p = subparsers.add_parser(
        "_cmake",
        description="Internal helper for the ClickBuild CMake package; not for direct use.",
    )
    actions = p.add_subparsers(dest="action", metavar="ACTION", required=True,
                               parser_class=type(p))
    m = actions.add_parser("manifest", description=(
        "Assemble manifest.json from a configured template, fields and hooks, validate it "
        "with the core's rules, fill AppArmor files, and print a JSON summary."))
    m.add_argument("--output", required=True, metavar="FILE")
    m.add_argument("--input", metavar="FILE", help="a configured manifest.json.in")
    m.add_argument("--source", metavar="NAME", help="what to call the manifest in messages")
    m.add_argument("--set-file", nargs=2, action="append", default=[], metavar=("KEY", "FILE"),
                   help="set KEY to the text of FILE (any character survives the trip)")
    m.add_argument("--architecture", action="append", default=[], metavar="ARCH")
    m.add_argument("--default", nargs=2, action="append", default=[], metavar=("KEY", "VALUE"),
                   help="a value used only when the manifest lacks KEY")
    m.add_argument("--hook", nargs=3, action="append", default=[],
                   metavar=("APP", "HOOK", "PATH"))
    m.add_argument("--apparmor", nargs=2, action="append", default=[], metavar=("SRC", "DEST"),
                   help="copy the AppArmor JSON SRC to DEST with policy_version filled in")
    m.add_argument("--policy-version", metavar="VERSION",
                   help="the AppArmor policy version (default: from the framework)")
    m.set_defaults(func=run_manifest)
    v = actions.add_parser("policy-version", description=(
        "Print a framework's policy version; without FRAMEWORK, the default framework "
        "(the templates') and its policy version, one per line."))
    v.add_argument("framework", nargs="?")
    v.set_defaults(func=run_policy_version)
    k = actions.add_parser("package", description=(
        "Build the package of an install tree (its manifest.json, every file but the ones "
        "IGNORE patterns leave out) as 'click-build build' does, in one pass that reads "
        "each file once; then write a JSON summary of the package to FILE."))
    k.add_argument("directory")
    k.add_argument("--output-dir", required=True, metavar="DIR")
    k.add_argument("--summary", required=True, metavar="FILE",
                   help="where to write the package's file name and its manifest's name, "
                        "version, framework and architecture (JSON), once it is built")
    k.add_argument("--ignore", action="append", default=[], metavar="PATTERN")
    k.add_argument("--guessed-architecture", default="", metavar="ARCH", help=(
        "the architecture the build wrote into the manifest before anything was compiled: "
        "a manifest that still says ARCH gets the one of the ELF files in the tree instead "
        "('all' when there are none)"))
    k.set_defaults(func=run_package)


def _write_if_changed(path: Path, text: str) -> None:
    """Leave an unchanged file alone, so its time stamp does not trigger rebuilds."""
    from ..atomicfile import write_file

    path.parent.mkdir(parents=True, exist_ok=True)
    write_file(path, text.encode("utf-8"), only_if_changed=True)


def _fill_apparmor(src: Path, dest: Path, policy: str, framework: str) -> None:
    """Copy an AppArmor file with policy_version filled in: the core's rule, every route's."""
    from ..placeholders import fill_apparmor

    try:
        text = src.read_text(encoding="utf-8")
    except UnicodeDecodeError:
        raise ManifestError(["is not valid UTF-8"], str(src)) from None
    except OSError as e:
        raise ManifestError([f"cannot be read: {e.strerror}"], str(src)) from None
    filled = fill_apparmor(text, policy, framework, str(src))
    _write_if_changed(dest, text if filled is None else filled)


def _merge_hooks(data: dict[str, object], hooks: list[list[str]], source: str) -> None:
    if not hooks:
        return
    table = data.setdefault("hooks", {})
    if not isinstance(table, dict):
        raise ManifestError(["hooks: must be an object mapping app names to their hooks"], source)
    for app, hook, path in hooks:
        entry = table.setdefault(app, {})
        if not isinstance(entry, dict):
            raise ManifestError([f"hooks.{app}: must be an object mapping hook names to files"],
                                source)
        if hook in entry and entry[hook] != path:
            raise ManifestError([
                f"hooks.{app}.{hook}: given both in the manifest ({entry[hook]!r}) and by "
                f"click_add_hook() ({path!r}); remove one of them"], source)
        entry[hook] = path


def run_manifest(args: argparse.Namespace) -> int:
    from .. import _console
    from ..manifest import Manifest, dump_manifest, parse_json_object

    source = args.source or args.input or "click_manifest()"
    data: dict[str, object] = {}
    if args.input:
        data = parse_json_object(Path(args.input).read_bytes(), source)
    for key, path in args.set_file:
        data[key] = Path(path).read_text(encoding="utf-8")
    if args.architecture:
        data["architecture"] = (args.architecture[0] if len(args.architecture) == 1
                                else list(args.architecture))
    for key, value in args.default:
        if value and key not in data:
            data[key] = value
    _merge_hooks(data, args.hook, source)
    manifest = Manifest.from_dict(data, source)
    for warning in manifest.warnings:
        _console.warn(warning)
    expected = args.policy_version or policy_version(manifest.framework)
    for src, dest in args.apparmor:
        _fill_apparmor(Path(src), Path(dest), expected or "", manifest.framework)
    _write_if_changed(Path(args.output), dump_manifest(manifest.data))
    summary: Mapping[str, object] = {
        "name": manifest.name,
        "version": manifest.version,
        "architecture": manifest.control_architecture,
        "framework": manifest.framework,
        "filename": manifest.filename,
        "policy_version": expected or "",
    }
    sys.stdout.write(json.dumps(summary) + "\n")
    return 0


def run_policy_version(args: argparse.Namespace) -> int:
    if args.framework is None:
        from ..framework_table import DEFAULT_FRAMEWORK

        print(DEFAULT_FRAMEWORK)
        args.framework = DEFAULT_FRAMEWORK
    print(policy_version(args.framework) or "")
    return 0


def run_package(args: argparse.Namespace) -> int:
    """The click target's packing in one process: the checks, the architecture and the
    archive come from one read of each staged file (see :mod:`click_build.finish`)."""
    from .. import _console
    from ..build import stage_tree
    from ..choices import Request
    from ..errors import ConfigError
    from ..finish import REVIEW_MODES, finish
    from ..placeholders import read_manifest_file
    from ..timestamps import source_date_epoch

    source_date_epoch()  # a bad value stops the build before anything is written
    root = args.directory
    manifest_path = os.path.join(root, "manifest.json")
    # The tree's own manifest.json: its size is what Installed-Size counts, as the
    # original's du does (ManifestSource.counted's default).
    source = read_manifest_file(manifest_path, manifest_path)
    review = os.environ.get("CLICK_BUILD_REVIEW") or "errors"  # as 'click-build build'
    if review not in REVIEW_MODES:
        raise ConfigError(f"$CLICK_BUILD_REVIEW: {review!r} is not one of "
                          f"{', '.join(REVIEW_MODES)}")
    entries = stage_tree(root, args.ignore, exclude=[manifest_path])
    # No po_dir: click_translations() compiled the project's catalogs into the tree, and
    # the backend's CMake kind packs the same tree with none.
    request = Request(review=review, review_switch="CLICK_BUILD_REVIEW=report",
                      guessed_architecture=args.guessed_architecture)
    os.makedirs(args.output_dir, exist_ok=True)
    done = finish(source, entries, args.output_dir, request,
                  place=f"the install tree {root}",
                  fix="install it (click_add_hook() or install(FILES ...)) or fix the path")
    shown = os.path.join(args.output_dir, os.path.basename(done.path))
    _console.info(f"Successfully built package in '{shown}'.")
    final = done.manifest
    summary = {"filename": os.path.basename(done.path), "name": final.name,
               "version": final.version, "framework": final.framework,
               "architecture": final.architecture if isinstance(final.architecture, str)
               else list(final.architecture)}
    _write_if_changed(Path(args.summary), json.dumps(summary) + "\n")
    return 0
