"""Checks of a staged tree against what its own files refer to.

A build that leaves part of an app behind (an exclude too wide, a kind that packs
only code, an install rule that did not run) must stop before a package is
written.  So every hook file must be there, and every folder that a desktop file,
a hook or the QML file the desktop file starts names must be in the package.  A
missing *file* is the review's finding; a missing *folder* means lost content.
Called by :mod:`click_build.finish` for every route.
"""

from __future__ import annotations

import os
import re

from . import _console
from .errors import BuildError

TYPE_CHECKING = False  # not typing.TYPE_CHECKING: importing typing costs start-up time

if TYPE_CHECKING:
    from collections.abc import Callable, Iterable, Mapping, Sequence

    from .build import Entry
    from .manifest import Manifest

    Need = Callable[[str, str, "str | None", bool], None]

__all__ = ["check_hooks", "check_tree"]


def check_hooks(manifest: Manifest, entries: Sequence[Entry], label: str,
                place: str = "the package", fix: str = "") -> None:
    """Hook files must exist; real-world oddities only warn.

    ``place`` and ``fix`` let a route say where the tree came from and what
    to do about a missing file (the CMake helper names its install tree).
    """
    present = {e.arcname: e for e in entries}
    for app, hooks in sorted(manifest.hooks.items()):
        for hook, target in sorted(hooks.items()):
            rel = os.path.normpath(target).strip("/")
            if rel not in present:
                raise BuildError(
                    f"{label}: hooks.{app}.{hook}: {target!r} is not in {place}; "
                    + (fix or f"expected a file at {rel} in the staged tree"))
            if hook == "apparmor" and rel.endswith(".json"):
                _console.warn(f"{label}: hooks.{app}.apparmor: {target!r} is named *.json; "
                              "it works, but review tools expect *.apparmor")
        if "desktop" not in hooks and "push-helper" not in hooks and "scope" not in hooks:
            _console.warn(f"{label}: hooks.{app}: has no desktop file; it will not show "
                          "in the app drawer")


#: A QML file's relative imports and Qt.resolvedUrl() literals: folders it needs.
_QML_REFERENCES = re.compile(
    r'^\s*import\s+"([^"\n]+)"|Qt\.resolvedUrl\(\s*"([^"\n]+)"\s*\)', re.MULTILINE)
_MAX_READ = 1 << 20


def _folders(entries: Iterable[Entry]) -> set[str]:
    out = {""}
    for e in entries:
        parent = e.arcname.rpartition("/")[0] if e.kind != "dir" else e.arcname
        while parent not in out:
            out.add(parent)
            parent = parent.rpartition("/")[0]
    return out


def _read(entry: Entry | None, kept: dict[str, bytes] | None) -> bytes | None:
    if entry is None or entry.kind != "file" or not entry.source or entry.size > _MAX_READ:
        return None
    if kept is not None and entry.source in kept:
        return kept[entry.source]
    from .staging import open_staged

    try:
        with open_staged(entry) as f:  # the file the walk saw, or one error naming it
            data = f.read(_MAX_READ)
    except OSError:
        return None
    if kept is not None:
        kept[entry.source] = data  # the archive writer packs these bytes: one read
    return data


def _package_path(base: str, ref: str) -> str | None:
    """``ref`` (relative to the folder ``base``) as a package path; None if it is not one."""
    if not ref or ref.startswith(("/", "%", "$", "-")) or "://" in ref or ref.startswith("qrc:"):
        return None
    if any(c.isspace() for c in ref):
        return None  # a shell command line (sh -c "..."), not a path
    path = os.path.normpath(os.path.join(base, ref)).replace(os.sep, "/")
    if path == ".." or path.startswith("../"):
        return None  # outside the package: the review reports it
    return "" if path == "." else path


def _folder_of(path: str, is_folder: bool) -> str:
    return path if is_folder else path.rpartition("/")[0]


def check_tree(manifest: Manifest, entries: Sequence[Entry], label: str,
               place: str = "the package", fix: str = "",
               kept: dict[str, bytes] | None = None) -> None:
    """Refuse a package that lost a folder its desktop files, hooks or QML entry point name.

    Only folders are checked: a missing *file* is the review's finding, but a
    missing folder means the build left part of the app out (an exclude, a
    kind that packs only code, an install rule that did not run).  ``kept``:
    the files read here are added to it (source path -> bytes), so that the
    archive writer packs them without reading them again.
    """
    from .review.desktop import parse_desktop, split_exec

    check_hooks(manifest, entries, label, place, fix)
    present = {e.arcname: e for e in entries}
    folders = _folders(entries)
    problems: list[str] = []

    def need(where: str, ref: str, path: str | None, is_folder: bool = False) -> None:
        if path is None:
            return
        folder = _folder_of(path, is_folder)
        if folder not in folders:
            problems.append(f"{where} refers to {ref!r}, but the package has no folder "
                            f"{folder}/: the build left it out (check the exclude and "
                            "source-dir settings or the install rules) or the path is wrong")

    icon = manifest.data.get("icon")
    if isinstance(icon, str) and "/" in icon:
        need(f"{label}: icon", icon, _package_path("", icon))
    if isinstance(icon, str) and ("/" in icon or "." in icon) and icon.strip("/") not in present:
        _console.warn(f"{label}: icon: {icon!r} is not in the package (an icon theme name "
                      "has no extension)")
    for app, hooks in sorted(manifest.hooks.items()):
        for hook, target in sorted(hooks.items()):
            need(f"{label}: hooks.{app}.{hook}", target, _package_path("", target))
        desktop = hooks.get("desktop")
        raw = _read(present.get(os.path.normpath(desktop).strip("/")), kept) if desktop else None
        if raw is None:
            continue
        try:
            entry = parse_desktop(raw)
            args = split_exec(entry.get("Exec") or "")
        except ValueError:
            continue  # the review reports a desktop file it cannot parse
        where = f"{desktop}: Exec"
        while args and (args[0] == "env" or ("=" in args[0] and not args[0].startswith("-"))):
            args = args[1:]
        for i, arg in enumerate(args):
            if arg.startswith("--www="):
                value = arg[len("--www="):]
                need(where, value, _package_path("", value), True)
            elif arg == "--www" and i + 1 < len(args):
                need(where, args[i + 1], _package_path("", args[i + 1]), True)
            elif "/" in arg:
                need(where, arg, _package_path("", arg.removeprefix("file://")))
            if arg.endswith(".qml"):
                _check_qml(arg, present, need, kept)
        icon = (entry.get("Icon") or "").strip()
        if "/" in icon:
            need(f"{desktop}: Icon", icon, _package_path("", icon))
    if problems:
        more = f" (and {len(problems) - 1} more)" if len(problems) > 1 else ""
        raise BuildError(problems[0] + more)


def _check_qml(arg: str, present: Mapping[str, Entry], need: Need,
               kept: dict[str, bytes] | None) -> None:
    """The folders the QML entry point imports or resolves, relative to itself."""
    path = _package_path("", arg)
    raw = _read(present.get(path), kept) if path else None
    if raw is None or path is None:
        return
    base = path.rpartition("/")[0]
    for m in _QML_REFERENCES.finditer(raw.decode("utf-8", "replace")):
        ref = m.group(1) or m.group(2)
        is_import = m.group(1) is not None
        target = _package_path(base, ref)
        is_folder = is_import and not ref.endswith((".js", ".qml", ".mjs"))
        need(f"{path}: {'import' if is_import else 'Qt.resolvedUrl'}", ref, target, is_folder)
