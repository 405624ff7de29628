"""Debian version strings (deb-version(5)): validation and dpkg's ordering.

Click versions are Debian versions; the installer orders them the way
``dpkg --compare-versions`` does (garbage collection re-points registrations
to newer versions, the audit refuses a Click-Version newer than ours).
"""

from __future__ import annotations

import functools

from . import charpattern
from ._record import Record
from .deb822 import whole_number

TYPE_CHECKING = False  # not typing.TYPE_CHECKING: importing typing costs start-up time


__all__ = ["DebianVersion", "compare_versions", "epochless", "version_problem"]

# What the parts may hold, matched without compiling a regex (charpattern's note).
_UPSTREAM_CHARS = charpattern.compile(r"^[A-Za-z0-9.+~:-]*$")
_REVISION_CHARS = charpattern.compile(r"^[A-Za-z0-9.+~]*$")
_EPOCH_DIGITS = 18


class DebianVersion(Record):
    epoch: int
    upstream: str
    revision: str

    @classmethod
    def parse(cls, text: str) -> DebianVersion:
        problem = version_problem(text)
        if problem:
            raise ValueError(problem)
        return cls(*_split(text))

    def __str__(self) -> str:
        out = f"{self.epoch}:" if self.epoch else ""
        out += self.upstream
        return out + (f"-{self.revision}" if self.revision else "")


def version_problem(text: str) -> str | None:
    """Why ``text`` is not a valid Click version, or None when it is."""
    if not isinstance(text, str) or not text:
        return "must be a non-empty string"
    if text != text.strip() or any(c.isspace() for c in text):
        return "must not contain whitespace"
    if "_" in text or "/" in text:
        return "must not contain '_' or '/'"
    rest = text
    if ":" in text:
        epoch, _, rest = text.partition(":")
        if whole_number(epoch) is None:
            return f"epoch {epoch!r} must be a number"
    upstream, sep, revision = rest.rpartition("-")
    if not sep:
        upstream, revision = rest, ""
    elif not revision:
        return "revision after the last '-' must not be empty"
    if not upstream:
        return "upstream version must not be empty"
    if not _isdigit(upstream[0]):
        return f"upstream version {upstream!r} must start with a digit"
    if not _UPSTREAM_CHARS.fullmatch(upstream):
        return (
            f"upstream version {upstream!r} may only contain letters, digits "
            "and . + ~ - :"
        )
    if not _REVISION_CHARS.fullmatch(revision):
        return f"revision {revision!r} may only contain letters, digits and . + ~"
    return None


def epochless(version: str) -> str:
    """The version without its epoch, as used in package file names."""
    return _split_epoch(version)[1]


def _isdigit(c: str) -> bool:
    """dpkg's isdigit() in the C locale: ASCII digits only ('²'.isdigit() is True)."""
    return "0" <= c <= "9"


def _order(c: str) -> int:
    if c == "~":
        return -1
    if _isdigit(c):
        return 0
    if c.isascii() and c.isalpha():
        return ord(c)
    return ord(c) + 256


def _compare_part(a: str, b: str) -> int:
    """dpkg's verrevcmp: alternate non-digit and digit runs."""
    i = j = 0
    while i < len(a) or j < len(b):
        first_diff = 0
        while (i < len(a) and not _isdigit(a[i])) or (j < len(b) and not _isdigit(b[j])):
            ac = _order(a[i]) if i < len(a) else 0
            bc = _order(b[j]) if j < len(b) else 0
            if ac != bc:
                return ac - bc
            i += 1
            j += 1
        while i < len(a) and a[i] == "0":
            i += 1
        while j < len(b) and b[j] == "0":
            j += 1
        while i < len(a) and _isdigit(a[i]) and j < len(b) and _isdigit(b[j]):
            if not first_diff:
                first_diff = ord(a[i]) - ord(b[j])
            i += 1
            j += 1
        if i < len(a) and _isdigit(a[i]):
            return 1
        if j < len(b) and _isdigit(b[j]):
            return -1
        if first_diff:
            return first_diff
    return 0


def _split_epoch(text: str) -> tuple[int, str]:
    """(epoch, the rest): an epoch is 1 to 18 ASCII digits before the first ':'."""
    digits, colon, rest = text.partition(":")
    if colon and 0 < len(digits) <= _EPOCH_DIGITS and not digits.strip("0123456789"):
        return int(digits), rest
    return 0, text


def _split(text: str) -> tuple[int, str, str]:
    epoch, rest = _split_epoch(text)
    upstream, sep, revision = rest.rpartition("-")
    if not sep:
        return epoch, rest, ""
    return epoch, upstream, revision


@functools.lru_cache(maxsize=4096)
def compare_versions(a: str, b: str) -> int:
    """Negative, zero or positive as ``a`` sorts before, equal to or after ``b``.

    Lenient like dpkg: any string is ordered, invalid ones included.
    """
    ea, ua, ra = _split(a)
    eb, ub, rb = _split(b)
    if ea != eb:
        return -1 if ea < eb else 1
    result = _compare_part(ua, ub) or _compare_part(ra, rb)
    return (result > 0) - (result < 0)
