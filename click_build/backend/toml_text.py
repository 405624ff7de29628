"""Writing TOML: the tables ``import-clickable`` adds to pyproject.toml.

The standard library reads TOML (``tomllib``) but does not write it.  This writes the
few shapes the settings have (strings, booleans, lists of strings, tables of them), every
string as a basic string with its control and invisible characters escaped, so what the
file says is what a reader sees.  ``tests/test_import_clickable.py`` reads everything it
writes back with ``tomllib``.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Mapping, Sequence

__all__ = ["key", "string", "table_lines", "value"]

_BARE = re.compile(r"[A-Za-z0-9_-]+\Z")
#: Control and format characters (bidi overrides, zero-width ones), separators other than
#: the space, and what Unicode does not assign: escaped, so the file shows what it holds.
_HIDDEN = ("Cc", "Cf", "Zl", "Zp", "Zs", "Co", "Cn")
_SHORT = {"\b": "\\b", "\t": "\\t", "\n": "\\n", "\f": "\\f", "\r": "\\r", '"': '\\"',
          "\\": "\\\\"}


def string(text: str) -> str:
    """``text`` as a TOML basic string, hidden characters escaped (``_HIDDEN``); a lone
    surrogate, which no TOML file can hold, is a ValueError."""
    out = ['"']
    for ch in text:
        if ch in _SHORT:
            out.append(_SHORT[ch])
        elif 0xD800 <= ord(ch) <= 0xDFFF:
            raise ValueError(f"U+{ord(ch):04X} is a lone surrogate")
        elif unicodedata.category(ch) in _HIDDEN and ch != " ":
            out.append(f"\\u{ord(ch):04X}" if ord(ch) <= 0xFFFF else f"\\U{ord(ch):08X}")
        else:
            out.append(ch)
    out.append('"')
    return "".join(out)


def key(name: str) -> str:
    return name if _BARE.match(name) else string(name)


def value(v: object) -> str:
    """A string, a boolean or a list of strings, on one line."""
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, str):
        return string(v)
    if isinstance(v, (list, tuple)):
        return "[" + ", ".join(value(item) for item in v) + "]"
    raise TypeError(f"cannot write {type(v).__name__} as TOML")


def _line(name: str, v: object) -> str:
    text = f"{key(name)} = {value(v)}"
    if isinstance(v, (list, tuple)) and len(text) > 88 and v:
        items = "".join(f"    {value(item)},\n" for item in v)
        return f"{key(name)} = [\n{items}]"
    return text


def table_lines(path: Sequence[str], table: Mapping[str, object]) -> list[str]:
    """``[path]`` with ``table``'s values, then a ``[path.NAME]`` section for each table in
    it (depth first, in order).  A table holding only tables gets no header of its own."""
    scalars = [(k, v) for k, v in table.items() if not isinstance(v, Mapping)]
    tables = [(k, v) for k, v in table.items() if isinstance(v, Mapping)]
    out: list[str] = []
    if scalars or not tables:
        out.append("[" + ".".join(key(p) for p in path) + "]")
        out.extend(_line(k, v) for k, v in scalars)
    for name, sub in tables:
        if out:
            out.append("")
        out.extend(table_lines([*path, name], sub))
    return out
