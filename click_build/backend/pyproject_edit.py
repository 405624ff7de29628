"""Adding imported settings to a project's pyproject.toml, keeping what it already says.

A setting the file already has is never replaced unless asked (``force``): a differing
value is a conflict, named in the error.  Without conflicts, lines are added to the
tables the file already has (after their header) and missing tables are appended, so
comments and layout stay; replacing values rewrites the click-build tables.  Either
way the new text is read back with ``tomllib`` and must hold exactly the intended
data, or nothing is written.  The file is replaced atomically, never written through a
link.
"""

from __future__ import annotations

import os
import stat
import sys
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

from ..atomicfile import write_file
from ..errors import ConfigError
from .toml_text import table_lines

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - Python 3.10
    import tomli as tomllib  # type: ignore[import-not-found, no-redef, unused-ignore]

__all__ = ["Edit", "plan_edit", "write_atomically"]

TOOL = ("tool", "click-build")
BACKEND = "click_build.backend"
Leaf = tuple[tuple[str, ...], object]


@dataclass
class Edit:
    text: str
    created: bool
    added: list[str] = field(default_factory=list)  # dotted settings added
    replaced: list[str] = field(default_factory=list)  # replaced (force)
    kept: list[str] = field(default_factory=list)  # already there, with the same value


def _leaves(table: Mapping[str, object], prefix: tuple[str, ...] = ()) -> list[Leaf]:
    out: list[Leaf] = []
    for k, v in table.items():
        if isinstance(v, Mapping) and v:
            out.extend(_leaves(v, (*prefix, k)))
        else:
            out.append(((*prefix, k), v))
    return out


def _get(data: Mapping[str, object], path: tuple[str, ...]) -> tuple[bool, object]:
    node: object = data
    for part in path:
        if not isinstance(node, Mapping) or part not in node:
            return False, None
        node = node[part]
    return True, node


def _set(data: dict[str, object], path: tuple[str, ...], value: object) -> None:
    node = data
    for part in path[:-1]:
        nxt = node.get(part)
        if not isinstance(nxt, dict):
            nxt = node[part] = {}
        node = nxt
    node[path[-1]] = value


def _dotted(path: tuple[str, ...]) -> str:
    return ".".join(path)


def read_existing(path: Path) -> tuple[str, dict[str, object]] | None:
    """The text and data of pyproject.toml, or None when there is none."""
    try:
        st = os.lstat(path)
    except FileNotFoundError:
        return None
    if stat.S_ISLNK(st.st_mode):
        raise ConfigError(f"{path.name}: a symbolic link; edit the file it names, or replace "
                          "the link with the file")
    if not stat.S_ISREG(st.st_mode):
        raise ConfigError(f"{path.name}: not a regular file")
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as e:
        raise ConfigError(f"{path.name}: cannot be read: {e}") from None
    try:
        return text, tomllib.loads(text)
    except tomllib.TOMLDecodeError as e:
        raise ConfigError(f"{path.name}: invalid TOML: {e}; fix it before importing") from None


def _header(line: str) -> tuple[str, ...] | None:
    """The table a ``[a.b]`` header line opens (read by tomllib itself), else None."""
    stripped = line.strip()
    if not stripped.startswith("[") or stripped.startswith("[["):
        return None
    try:
        node: object = tomllib.loads(stripped)
    except tomllib.TOMLDecodeError:
        return None
    path: list[str] = []
    while isinstance(node, dict) and len(node) == 1:
        name, node = next(iter(node.items()))
        path.append(name)
    return tuple(path) if path else None


def plan_edit(path: Path, table: dict[str, object], requires: str, force: bool) -> Edit:
    """The new pyproject.toml: ``table`` in ``[tool.click-build]``, ``[build-system]``
    naming the backend; a refusal naming the conflicts when ``force`` is not set."""
    existing = read_existing(path)
    system: dict[str, object] = {"requires": [requires], "build-backend": BACKEND}
    if existing is None:
        lines = [*table_lines(["build-system"], system), ""]
        lines += table_lines(list(TOOL), table)
        edit = Edit("\n".join(lines) + "\n", True, added=[_dotted(p) for p, _ in _leaves(table)])
        _verify(edit.text, {"build-system": system, "tool": {"click-build": table}})
        return edit
    text, data = existing
    edit = Edit(text, False)
    expected: dict[str, object] = _copy(data)
    conflicts: list[str] = []
    have_system, old_system = _get(data, ("build-system",))
    new_system = not have_system
    if have_system:
        backend = old_system.get("build-backend") if isinstance(old_system, dict) else None
        if backend != BACKEND:
            conflicts.append(f"build-system.build-backend is {backend!r}, not {BACKEND!r}")
            new_system = True
    if new_system:
        expected["build-system"] = system
    added: list[Leaf] = []
    for leaf_path, value in _leaves(table):
        full = (*TOOL, *leaf_path)
        found, old = _get(data, full)
        blocked = next((full[:i] for i in range(1, len(full))
                        if _get(data, full[:i])[0]
                        and not isinstance(_get(data, full[:i])[1], dict)), None)
        if blocked is not None:
            conflicts.append(f"{_dotted(blocked)} is not a table")
        elif not found:
            added.append((leaf_path, value))
        elif old == value:
            edit.kept.append(_dotted(leaf_path))
            continue
        else:
            conflicts.append(f"{_dotted(full)} is {old!r}, the import says {value!r}")
            edit.replaced.append(_dotted(leaf_path))
        _set(expected, full, value)
    edit.added = [_dotted(p) for p, _ in added]
    if conflicts and not force:
        more = f" (and {len(conflicts) - 3} more)" if len(conflicts) > 3 else ""
        raise ConfigError(f"{path.name} already says otherwise: {'; '.join(conflicts[:3])}"
                          f"{more}; --force replaces them")
    if conflicts:
        edit.text = _rewritten(text, expected, new_system)
    else:
        edit.text = _inserted(text, added, system if new_system else None)
    _verify(edit.text, expected)
    return edit


def _copy(data: Mapping[str, object]) -> dict[str, object]:
    return {k: _copy(v) if isinstance(v, Mapping) else v for k, v in data.items()}


def _inserted(text: str, added: list[Leaf], system: dict[str, object] | None) -> str:
    """``text`` with each added setting after its table's header, or in a new table."""
    lines = text.splitlines()
    headers = {h: i for i, line in enumerate(lines) if (h := _header(line)) is not None}
    inserts: dict[int, list[str]] = {}
    appended: dict[str, object] = {}
    for leaf_path, value in added:
        parent = (*TOOL, *leaf_path[:-1])
        if parent in headers:
            rendered = table_lines(["x"], {leaf_path[-1]: value})[1:]
            inserts.setdefault(headers[parent], []).extend(rendered)
        else:
            _set(appended, leaf_path, value)
    out: list[str] = []
    for i, line in enumerate(lines):
        out.append(line)
        out.extend(inserts.get(i, []))
    if appended:
        out += ["", *table_lines(list(TOOL), appended)]
    if system is not None:
        out = [*table_lines(["build-system"], system), "", *out] if _starts_with_table(out) \
            else [*out, "", *table_lines(["build-system"], system)]
    return "\n".join(out) + "\n"


def _starts_with_table(lines: list[str]) -> bool:
    for line in lines:
        if line.strip() and not line.lstrip().startswith("#"):
            return line.lstrip().startswith("[")
    return True


def _rewritten(text: str, expected: dict[str, object], system: bool) -> str:
    """``text`` without its click-build tables (and ``[build-system]`` when it is replaced),
    then those tables written from ``expected``."""
    out: list[str] = []
    dropping = False
    for line in text.splitlines():
        header = _header(line)
        if header is not None or line.lstrip().startswith("[["):
            dropping = header is not None and (header[:2] == TOOL or (
                system and header == ("build-system",)))
        if not dropping:
            out.append(line)
    while out and not out[-1].strip():
        out.pop()
    tool = expected["tool"]
    assert isinstance(tool, dict)
    click_build = tool["click-build"]
    assert isinstance(click_build, dict)
    if system:
        bs = expected["build-system"]
        assert isinstance(bs, dict)
        out = [*table_lines(["build-system"], bs), "", *out]
    out += ["", *table_lines(list(TOOL), click_build)]
    return "\n".join(out) + "\n"


def _verify(text: str, expected: dict[str, object]) -> None:
    try:
        got = tomllib.loads(text)
    except tomllib.TOMLDecodeError:
        got = None
    if got != expected:
        raise ConfigError("pyproject.toml: its [tool.click-build] is written in a form this "
                          "import cannot add to (an inline table or dotted keys); move it "
                          "into [tool.click-build] tables, or add the settings shown with "
                          "--dry-run yourself")


def write_atomically(path: Path, text: str) -> None:
    """Replace ``path`` with ``text``: a new file beside it, renamed over it (a link there
    is replaced, never followed); the old file's permissions are kept."""
    try:
        mode: int | None = stat.S_IMODE(os.lstat(path).st_mode)
    except FileNotFoundError:
        mode = None  # a new file's, under the umask
    write_file(path, text.encode("utf-8"), mode)
