"""deb822 paragraphs: control files, hook files, framework files.

Two readers with one job each: :func:`parse_control` is strict (it reads
untrusted packages), :func:`parse_simple` is the original's lenient reader of
system files (hooks and frameworks), which stops at the first blank line.
"""

from __future__ import annotations

import re

from . import charpattern
from .errors import PackageError

__all__ = ["MAX_DIGITS", "parse_control", "parse_simple", "whole_number"]

# Compiled on first use by re's cache: an install reads no hook or framework file
# unless there is one, and compiling costs every command's start-up.
_FIELD = r"([^:\s]+)\s*:\s(\S.*?)\s*"
#: A control field's name: printable ASCII but ':' (dpkg's rule), without a regex compile.
_FIELD_NAME = charpattern.compile(r"^[!-9;-~]+$")
#: Digits a number may have: up to 10**18, far above any size or count.
MAX_DIGITS = 18


def whole_number(text: str) -> int | None:
    """The one rule for a number in a control field, manifest or header text:
    ASCII digits only (``str.isdigit`` also takes '²' and other scripts'
    digits, which ``int`` then refuses or reads), no sign, no spaces, at most
    :data:`MAX_DIGITS` of them.  None when ``text`` is not such a number.
    """
    if 0 < len(text) <= MAX_DIGITS and text.isascii() and text.isdigit():
        return int(text)
    return None


def parse_simple(text: str) -> dict[str, str]:
    """The original's reader (``deb822.vala``): lower-cased keys, first paragraph."""
    data: dict[str, str] = {}
    for line in text.split("\n"):
        if not line.strip():
            break
        m = re.fullmatch(_FIELD, line.strip())
        if m:
            data[m.group(1).lower()] = m.group(2)
    return data


def parse_control(text: str, source: str = "control") -> dict[str, str]:
    """A single strict paragraph; field names keep their case, lookups do not.

    Refuses duplicate fields, a second paragraph and lines that are neither a
    field nor a continuation, as dpkg does.
    """
    fields: dict[str, str] = {}
    seen: set[str] = set()
    current: str | None = None
    lines = text.split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    for number, line in enumerate(lines, 1):
        if not line.strip():
            if any(l.strip() for l in lines[number:]):
                raise PackageError(f"{source}: more than one paragraph (line {number})")
            break
        if line[0] in " \t":
            if current is None:
                raise PackageError(f"{source}: continuation line before any field (line {number})")
            fields[current] += "\n" + line[1:]
            continue
        name, colon, value = line.partition(":")  # `Name: value`, blanks and tabs around the value
        if not colon or not _FIELD_NAME.fullmatch(name):
            raise PackageError(f"{source}: line {number} is not a 'Field: value' line")
        if name.lower() in seen:
            raise PackageError(f"{source}: field {name} appears twice")
        seen.add(name.lower())
        fields[name] = value.strip(" \t")
        current = name
    return fields
