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

from ..errors import ConfigError, ManifestError

TYPE_CHECKING = False  # not typing.TYPE_CHECKING: importing typing costs start-up time
if TYPE_CHECKING:
    from ..manifest import Manifest

__all__ = ["policy_version", "register"]


def policy_version(framework: str) -> str | None:
    """The AppArmor policy version of the (first) framework, from the backend's one table."""
    from ..backend.placeholders import framework_facts

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
        "Check that an install tree holds a valid manifest.json and every hook file it names."))
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


def _json_number(text: str, what: str) -> int | float:
    try:
        return int(text) if text.isdigit() else float(text)
    except ValueError:
        raise ConfigError(f"{what} {text!r} is not a number such as 20.04") from None


def _fill_apparmor(src: Path, dest: Path, expected: str | None, framework: str) -> None:
    from ..manifest import parse_json_object

    try:
        raw = src.read_bytes()
    except OSError as e:
        raise ManifestError([f"cannot be read: {e.strerror}"], str(src)) from None
    data = parse_json_object(raw, str(src))
    problems = []
    groups = data.get("policy_groups", [])
    if not isinstance(groups, list) or not all(isinstance(g, str) for g in groups):
        problems.append("policy_groups: must be a list of policy group names")
    if "template" in data and not isinstance(data["template"], str):
        problems.append("template: must be a string such as 'ubuntu-sdk'")
    current = data.get("policy_version")
    if current is None:
        if expected is None:
            problems.append(
                f"policy_version: missing, and no AppArmor policy version is known for "
                f"framework {framework!r}; add \"policy_version\" to this file or pass "
                "-DCLICK_APPARMOR_POLICY=VERSION to cmake")
        else:
            data["policy_version"] = _json_number(expected, "CLICK_APPARMOR_POLICY")
    elif isinstance(current, bool) or not isinstance(current, (int, float)):
        problems.append(f"policy_version: {current!r} must be a number such as 20.04")
    elif expected is not None and float(current) != float(expected):
        from .. import _console

        _console.warn(
            f"{src}: policy_version {current} does not match framework {framework!r} "
            f"(which uses {expected}); the store's review rejects this: remove "
            "policy_version from the file to have it filled in")
    if problems:
        raise ManifestError(problems, str(src))
    _write_if_changed(dest, json.dumps(data, indent=4, ensure_ascii=False) + "\n")


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
        _fill_apparmor(Path(src), Path(dest), expected, manifest.framework)
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
        from ..new import FRAMEWORKS

        print(FRAMEWORKS[0])
        args.framework = FRAMEWORKS[0]
    print(policy_version(args.framework) or "")
    return 0


def run_check_tree(args: argparse.Namespace) -> int:
    from ..manifest import load_manifest

    root = Path(args.directory)
    manifest_path = root / "manifest.json"
    manifest = load_manifest(manifest_path)
    problems = []
    for app, hooks in sorted(manifest.hooks.items()):
        for hook, path in sorted(hooks.items()):
            if not os.path.lexists(root / path):
                problems.append(
                    f"hooks.{app}.{hook}: {path!r} is not in the install tree {root}; "
                    "install it (click_add_hook() or install(FILES ...)) or fix the path")
    if problems:
        raise ManifestError(problems, str(manifest_path))
    if args.architecture_from_elf:
        _decide_architecture(root, manifest, Path(args.architecture_from_elf))
    return 0


def _decide_architecture(root: Path, manifest: Manifest, output: Path) -> None:
    # Until the core's finishing stage decides this for every route, the backend's rule:
    # no compiled code is 'all', code for one architecture is that one.
    from ..backend.elf import scan_architectures
    from ..manifest import Manifest, dump_manifest

    files = (os.path.join(top, name) for top, _, names in os.walk(root) for name in names)
    found = scan_architectures(f for f in files if not os.path.islink(f))
    if len(found) > 1:
        examples = ", ".join(f"{os.path.relpath(paths[0], root)} ({arch})"
                             for arch, paths in sorted(found.items()))
        raise ManifestError([(f"architecture: the tree holds code for several architectures: "
                              f"{examples}; install the code of one")], str(root / "manifest.json"))
    data = dict(manifest.data)
    data["architecture"] = next(iter(found), "all")
    decided = Manifest.from_dict(data, str(root / "manifest.json"))
    _write_if_changed(output, dump_manifest(decided.data))
    sys.stdout.write(decided.filename + "\n")
