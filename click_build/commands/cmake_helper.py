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
    t = actions.add_parser("check-tree", description=(
        "Run the finishing stage's checks on an install tree (a valid manifest.json, every "
        "hook file, every folder the desktop files and the QML entry point name); nothing "
        "is written."))
    t.add_argument("directory")
    t.add_argument("--architecture-from-elf", metavar="FILE", help=(
        "the manifest's architecture is the build's guess: replace it with the one of the "
        "ELF files in the tree ('all' when there are none), write the manifest to FILE and "
        "print the package's file name"))
    t.set_defaults(func=run_check_tree)


def _write_if_changed(path: Path, text: str) -> None:
    """Leave an unchanged file alone, so its time stamp does not trigger rebuilds."""
    try:
        if path.read_text(encoding="utf-8") == text:
            return
    except OSError:
        pass
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.tmp")
    tmp.write_text(text, encoding="utf-8")
    os.replace(tmp, path)


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


def run_check_tree(args: argparse.Namespace) -> int:
    """The finishing stage's checks on the install tree, before ``click-build build`` packs it."""
    from ..build import stage_tree
    from ..finish import Target, check_staged
    from ..manifest import dump_manifest
    from ..placeholders import read_manifest_file

    root = args.directory
    manifest_path = os.path.join(root, "manifest.json")
    source = read_manifest_file(manifest_path, manifest_path)
    entries = stage_tree(root, exclude=[manifest_path])
    target = Target()
    if args.architecture_from_elf:  # the finishing stage's rule for a guessed architecture
        written = source.peek(placeholders=True).get("architecture")
        target = Target(guessed_architecture=written if isinstance(written, str) else "")
    manifest = check_staged(source, entries, target, place=f"the install tree {root}",
                            fix="install it (click_add_hook() or install(FILES ...)) or fix "
                                "the path")
    if args.architecture_from_elf:
        _write_if_changed(Path(args.architecture_from_elf), dump_manifest(manifest.data))
        sys.stdout.write(manifest.filename + "\n")
    return 0
