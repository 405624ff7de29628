"""``contents``: a package's data listing, line for line as ``dpkg-deb -c`` prints it.

dpkg-deb lists with GNU ``tar -tv``; this reproduces that format (column
widths that only grow, local time, tar's 'escape' quoting of names in a UTF-8
locale) without either tool.  Names are shown as stored, hostile ones
included, quoted as tar quotes them; owner names, which tar prints raw, are
quoted the same way so that no archive can write control characters to the
terminal.  Nothing is kept per member: a million-member listing runs in the
memory of a small one.
"""

from __future__ import annotations

import re
import stat
import time

from .errors import ArchiveError, PackageError
from .package import ClickPackage, open_data

TYPE_CHECKING = False  # not typing.TYPE_CHECKING: importing typing costs start-up time

if TYPE_CHECKING:
    from collections.abc import Iterator
    from typing import TextIO

    from .tarread import Meta

__all__ = ["contents_lines", "quote_name", "write_contents"]

_TYPE_CHARS = {b"0": "-", b"1": "h", b"2": "l", b"3": "c", b"4": "b", b"5": "d", b"6": "p"}
_PLAIN = re.compile(rb"[ -\[\]-~]*\Z")  # printable ASCII but '\': shown as is
_ESCAPES = {"\\": "\\\\", "\a": "\\a", "\b": "\\b", "\f": "\\f", "\n": "\\n", "\r": "\\r",
            "\t": "\\t", "\v": "\\v"}


def quote_name(raw: bytes) -> str:
    """GNU tar's 'escape' quoting (what ``tar -tv`` prints in a UTF-8 locale).

    Backslash escapes for ``\\`` and ``\\a\\b\\f\\n\\r\\t\\v``; octal escapes of
    the bytes of other characters the C library calls unprintable (controls,
    line and paragraph separators, unassigned code points, invalid UTF-8).
    Format characters, private use and spaces such as U+00A0 print as they are.
    """
    if _PLAIN.match(raw):
        return raw.decode("ascii")
    out = []
    for ch in raw.decode("utf-8", "surrogateescape"):
        code = ord(ch)
        if ch in _ESCAPES:
            out.append(_ESCAPES[ch])
        elif 32 <= code < 127 or (code >= 160 and _printable(ch)):
            out.append(ch)
        else:
            raw_ch = bytes([code - 0xDC00]) if 0xDC80 <= code <= 0xDCFF else ch.encode()
            out.extend(f"\\{b:03o}" for b in raw_ch)
    return "".join(out)


def _printable(ch: str) -> bool:
    if ch.isprintable():
        return True
    if ch in "\u2028\u2029" or 0xD800 <= ord(ch) <= 0xDFFF:
        return False
    import unicodedata  # only for names with unusual characters

    return unicodedata.category(ch) != "Cn"  # glibc prints format, private-use and spaces


def _when(mtime: int) -> str:
    try:
        return time.strftime("%Y-%m-%d %H:%M", time.localtime(mtime))
    except (OverflowError, OSError, ValueError):
        return str(mtime)  # as tar, for times the C library cannot convert


def _width(text: str) -> int:
    return len(text) if text.isascii() else len(text.encode("utf-8", "surrogateescape"))


def write_contents(pkg: ClickPackage, out: TextIO) -> None:
    """Write the listing to ``out``, a few thousand lines at a time."""
    for batch in _batches(pkg):
        batch.append("")
        text = "\n".join(batch)
        # In pieces no bigger than the stream's buffer: when the reader goes away in the
        # middle of one big write, CPython drops the rest without an error (and
        # `contents | head` would end with status 0, not SIGPIPE's).
        for start in range(0, len(text), _PIECE):
            out.write(text[start:start + _PIECE])


_PIECE = 8192


def contents_lines(pkg: ClickPackage) -> Iterator[str]:
    """The data listing in ``dpkg-deb -c`` (GNU ``tar -tv``) format."""
    for batch in _batches(pkg):
        yield from batch


def _batches(pkg: ClickPackage, lines: int = 4096) -> Iterator[list[str]]:
    """The listing's lines, ``lines`` at a time (a million lines: one call a line costs)."""
    size_width = 19  # tar's user/group/size column: it only grows
    date_width = 16  # and its date column
    # What a member's shared fields (mode, owner, time) print as, computed once per
    # distinct tuple (members in a row usually share one).  Keyed by id(), the tuple
    # itself kept alive in the value so that the id cannot be reused.
    shown: dict[int, tuple[Meta, str, str, int, str]] = {}
    last = None
    perms = owner = when = ""
    owner_width = 0
    # A regular file's line up to its name depends on its size alone while the shared
    # fields and the column widths stay: one look-up instead of the formatting.
    prefixes: dict[int, str] = {}
    batch: list[str] = []
    add = batch.append
    try:
        for name, kind, member_size, linkname, meta in open_data(pkg):
            if meta is not last:
                cached = shown.get(id(meta))
                if cached is None or cached[0] is not meta:
                    cached = _meta_text(meta)
                    if len(shown) < 4096:
                        shown[id(meta)] = cached
                _meta, perms, owner, owner_width, when = cached
                date_width = max(date_width, len(when))
                when = f"{when:<{date_width}}"
                last = meta
                prefixes = {}
            if kind == b"0":
                prefix = prefixes.get(member_size)
                if prefix is not None:
                    add(prefix + (name.decode("ascii") if _PLAIN.match(name) else quote_name(name)))
                    if len(batch) >= lines:
                        yield batch
                        batch = []
                        add = batch.append
                    continue
            size = str(member_size) if kind == b"0" or kind < b"3" or kind > b"4" \
                else f"{meta[6]},{meta[7]}"
            if owner_width + len(size) > size_width:
                size_width = owner_width + len(size)
                prefixes = {}
            prefix = (f"{_TYPE_CHARS.get(kind, '-')}{perms} {owner} "
                      f"{size:>{size_width - owner_width}} {when} ")
            if kind == b"0" and len(prefixes) < 1024:
                prefixes[member_size] = prefix
            line = prefix + (name.decode("ascii") if _PLAIN.match(name) else quote_name(name))
            if kind == b"2":
                line += f" -> {quote_name(linkname)}"
            elif kind == b"1":
                line += f" link to {quote_name(linkname)}"
            add(line)
            if len(batch) >= lines:
                yield batch
                batch = []
                add = batch.append
    except ArchiveError as e:
        raise PackageError(str(e)) from None
    if batch:
        yield batch


def _meta_text(meta: Meta) -> tuple[Meta, str, str, int, str]:
    mode, uid, gid, mtime, uname, gname = meta[:6]
    user = quote_name(uname) if uname else str(uid)
    group = quote_name(gname) if gname else str(gid)
    return (meta, stat.filemode(mode)[1:], f"{user}/{group}", _width(user) + _width(group) + 2,
            _when(mtime))
