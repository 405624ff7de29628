"""The ar reader: a package file's members, and a window onto one of them.

Apart from the writers in :mod:`click_build.archive` because every command that
reads a package (install, info, verify) loads it and none of them writes one.
It trusts nothing: every header field is checked before it is used.
"""

from __future__ import annotations

import io

from ._record import Record
from .errors import ArchiveError

TYPE_CHECKING = False  # not typing.TYPE_CHECKING: importing typing costs start-up time

if TYPE_CHECKING:
    from typing import BinaryIO

__all__ = ["AR_MAGIC", "MAX_AR_MEMBERS", "ArMember", "MemberReader", "read_ar_members"]

AR_MAGIC = b"!<arch>\n"
_AR_HEADER = 60
#: A package has four members and a few signatures (``_gpgorigin``, ``_gpgmaint``,
#: ...): a file with more is refused at the first extra header, before millions of
#: empty members cost memory and minutes.
MAX_AR_MEMBERS = 64


class ArMember(Record):
    name: str
    offset: int  # of the member's data in the archive file
    size: int
    header_offset: int


def _ar_number(field: bytes, what: str, name: str, base: int = 10) -> int:
    text = field.rstrip(b" ")
    if not text or not all(c in b"0123456789"[:base] for c in text):  # no 8 or 9 in octal
        raise ArchiveError(f"ar header of {name or 'a member'}: {what} {field!r} is not a number")
    return int(text, base)


def read_ar_members(f: BinaryIO, file_size: int) -> list[ArMember]:
    """Parse every ar header; refuse anything a strict reader would not accept."""
    f.seek(0)
    if f.read(len(AR_MAGIC)) != AR_MAGIC:
        raise ArchiveError("not a Click package: it does not start with an ar archive header")
    members: list[ArMember] = []
    pos = len(AR_MAGIC)
    while pos < file_size:
        f.seek(pos)
        header = f.read(_AR_HEADER)
        if len(header) < _AR_HEADER:
            raise ArchiveError(f"truncated ar member header at byte {pos}")
        if header[58:60] != b"`\n":
            raise ArchiveError(f"corrupt ar member header at byte {pos}")
        raw_name = header[:16].rstrip(b" ")
        if raw_name.endswith(b"/") and raw_name not in (b"/", b"//"):
            raw_name = raw_name[:-1]  # GNU ar's name terminator
        try:
            name = raw_name.decode("ascii")
        except UnicodeDecodeError:
            raise ArchiveError(f"ar member name {raw_name!r} is not ASCII") from None
        if not name or not name.isprintable() or "/" in name:
            raise ArchiveError(f"ar member name {raw_name!r} is not valid")
        _ar_number(header[16:28], "mtime", name)
        _ar_number(header[40:48], "mode", name, 8)
        size = _ar_number(header[48:58], "size", name)
        start = pos + _AR_HEADER
        if start + size > file_size:
            raise ArchiveError(f"ar member {name} is truncated ({size} bytes declared)")
        if len(members) == MAX_AR_MEMBERS:
            raise ArchiveError(f"more than {MAX_AR_MEMBERS} ar members: not a Click package "
                               f"(it has 4, and a signature or a few)")
        members.append(ArMember(name, start, size, pos))
        pos = start + size + (size % 2)
        if pos == file_size + 1 and size % 2:
            break  # tolerate a missing final padding byte, as dpkg does
    return members


class MemberReader(io.RawIOBase):
    """A read-only window onto one ar member, so readers cannot run past it."""

    def __init__(self, f: BinaryIO, offset: int, size: int) -> None:
        self._f = f
        self._start = offset
        self._size = size
        self._pos = 0

    def readable(self) -> bool:
        return True

    def seekable(self) -> bool:
        return True

    def tell(self) -> int:
        return self._pos

    def seek(self, pos: int, whence: int = io.SEEK_SET) -> int:
        base = {io.SEEK_SET: 0, io.SEEK_CUR: self._pos, io.SEEK_END: self._size}[whence]
        self._pos = max(0, min(self._size, base + pos))
        return self._pos

    def readinto(self, buffer: memoryview) -> int:  # type: ignore[override]
        n = min(len(buffer), self._size - self._pos)
        if n <= 0:
            return 0
        self._f.seek(self._start + self._pos)
        data = self._f.read(n)
        buffer[: len(data)] = data
        self._pos += len(data)
        return len(data)
