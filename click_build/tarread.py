"""A bounded reader of (compressed) tar streams, for archives an attacker wrote.

Every read path of click-build (the control and data archives of a package,
``contents``, ``verify``, ``review``, ``install``, ``merge``) reads tar here,
never through :mod:`tarfile`, because the attacker chooses every header:

- Metadata is capped: a GNU long name or link record (``L``/``K``) holds at
  most :data:`MAX_LONG_NAME` bytes, a pax record (``x``/``g``) at most
  :data:`MAX_PAX`; a member has at most one of each, so no chain of headers
  (which sends :mod:`tarfile` into recursion) is accepted.  The number of
  members scales with the bytes stored (:func:`member_limit`): any archive
  may hold :data:`MAX_MEMBERS`, more only with a stored byte each.
- Sparse members are refused, as the original (dpkg) refuses them: the old
  GNU ``S`` type and the pax ``GNU.sparse.*`` forms (0.0, 0.1 and 1.0).  So
  are member types that no package writer emits (volume labels,
  multi-volume continuations, GNU dump directories...).
- Sizes are checked against what is there: data is read exactly as declared
  and a stream that ends early is an error, never a short file or a wait.
  Only regular files carry data; a link, folder or device that declares a
  size is refused, because readers disagree on whether data follows it (the
  kind of difference smuggling attacks use).
- Every header is checked: the checksum (unsigned or signed, as tar
  accepts), octal or base-256 numbers only.  Errors are
  :class:`~click_build.errors.ArchiveError`; nothing else escapes, never a
  ``MemoryError`` or ``RecursionError``.
- Memory is a decompressed chunk of :data:`CHUNK` bytes whatever the archive
  holds, and time is proportional to the bytes in the stream: data is
  decompressed once, a chunk at a time, and headers are parsed in place.

What real package writers produce is accepted: GNU format (``click build``,
click-build, dpkg-deb), ustar with its name prefix, pax names and sizes,
base-256 numbers, concatenated gzip members.  Names are returned as the raw
bytes of the archive; deciding what a name may be is the caller's job.
"""

from __future__ import annotations

import os
import struct
import zlib

from ._record import Record
from .errors import ArchiveError

TYPE_CHECKING = False  # not typing.TYPE_CHECKING: importing typing costs start-up time

if TYPE_CHECKING:
    from collections.abc import Iterator
    from typing import BinaryIO, Protocol

    #: mode, uid, gid, mtime, uname, gname, devmajor, devminor, POSIX magic
    Meta = tuple[int, int, int, int, bytes, bytes, int, int, bool]

    class _Decompressor(Protocol):
        @property
        def eof(self) -> bool: ...

        @property
        def unused_data(self) -> bytes: ...

        @property
        def needs_input(self) -> bool: ...

        def decompress(self, data: bytes, max_length: int = ...) -> bytes: ...

__all__ = [
    "CHUNK",
    "COMPRESSIONS",
    "CONTROL_COMPRESSIONS",
    "MAX_LONG_NAME",
    "MAX_MEMBERS",
    "MAX_PAX",
    "Decompressed",
    "TarMember",
    "TarReader",
    "load_decompressor",
    "member_limit",
    "open_stream",
]

BLOCK = 512
#: Decompressed bytes held at a time (and the largest data chunk handed out).
CHUNK = 1 << 20
_INPUT = 1 << 18  # compressed bytes read at a time
#: A GNU long name or link name record, NUL included (PATH_MAX is 4096).
MAX_LONG_NAME = 8 << 10
#: One pax extended header: a path and a link path of PATH_MAX and the rest.
MAX_PAX = 16 << 10
#: Memory xz may use to decompress (its dictionary): what ``xz -9``, the most any preset
#: asks, needs (65 MiB); no more.
XZ_MEMLIMIT = 66 << 20
#: Decompressed bytes may exceed this many times the compressed bytes read only within
#: the first EXPANSION_FREE bytes.  gzip tops out near 1,032 to 1, xz near 7,000 (runs of
#: zeros); bzip2 reaches a million, so a few kilobytes could keep a reader busy for
#: minutes: a bomb, not an app.
MAX_EXPANSION = 50_000
EXPANSION_FREE = 64 << 20
#: Members any archive may hold, however small (ten times a big real app).
MAX_MEMBERS = 1 << 20
#: Magic bytes of the compressions a package member may use, by file suffix: every one
#: dpkg-deb reads in a data member.  The old lzma format has no magic bytes.
COMPRESSIONS = {".gz": b"\x1f\x8b", ".xz": b"\xfd7zXZ\x00", ".zst": b"\x28\xb5\x2f\xfd",
                ".bz2": b"BZh", ".lzma": b"", "": b""}
#: The ones dpkg-deb reads in a control member (never bzip2 or lzma).
CONTROL_COMPRESSIONS = (".gz", ".xz", ".zst", "")
#: Imported when needed (zlib always is).
_DECOMPRESSORS = {".xz": "lzma", ".lzma": "lzma", ".bz2": "bz2", ".zst": "click_build.zstdread"}

_ZERO_BLOCK = bytes(BLOCK)
#: name, mode+uid+gid, size, mtime, checksum, type, link name, magic..device numbers
_FIELDS = struct.Struct("100s24s12s12s8sc100s88s")
_POSIX_MAGIC = b"ustar\0"
_REGULAR = (b"0", b"\0")
_EXTENDED = (b"L", b"K", b"x", b"g")
_NO_DATA = (b"1", b"2", b"3", b"4", b"5", b"6")
_TYPE_NAMES = {b"S": "a GNU sparse file", b"V": "a volume label", b"M": "a multi-volume part",
               b"N": "an old GNU long name", b"D": "a GNU dump directory",
               b"7": "a contiguous file"}  # tar lists it apart, tarfile reads it as a file
_SPARSE = b"GNU.sparse."
_GLOBAL_REFUSED = (b"path", b"linkpath", b"size")
_numbers: dict[bytes, int] = {}  # parsed sizes: few distinct values in an archive
_checksums: dict[bytes, int] = {}  # checksum field -> adler32's low half when right


class TarMember(Record):
    """One member's header, every name as the raw bytes the archive holds.

    ``meta`` holds the fields that repeat from member to member (mode, owner,
    time, device numbers); members with equal fields share one tuple, which
    lets a reader cache what it derives from them.  A tuple: made a million
    times for a big app, it costs one C call.
    """

    name: bytes
    type: bytes  # b"0" file, b"1" hard link, b"2" symlink, b"3"/b"4" devices, b"5" folder,
    size: int  # b"6" FIFO (a pre-POSIX "\0" is read as b"0", or b"5" for a name ending in /)
    linkname: bytes
    meta: Meta

    @property
    def mode(self) -> int:
        return self.meta[0]

    @property
    def uid(self) -> int:
        return self.meta[1]

    @property
    def gid(self) -> int:
        return self.meta[2]

    @property
    def mtime(self) -> int:
        return self.meta[3]

    @property
    def uname(self) -> bytes:
        return self.meta[4]

    @property
    def gname(self) -> bytes:
        return self.meta[5]

    @property
    def devmajor(self) -> int:
        return self.meta[6]

    @property
    def devminor(self) -> int:
        return self.meta[7]

    def isreg(self) -> bool:
        return self.type == b"0"

    def isdir(self) -> bool:
        return self.type == b"5"

    def issym(self) -> bool:
        return self.type == b"2"

    def islnk(self) -> bool:
        return self.type == b"1"

    def display_name(self) -> str:
        return self.name.decode("utf-8", "backslashreplace")


# ----------------------------------------------------------- decompression ---

class Decompressed:
    """The decompressed bytes of one window of a file, a chunk at a time.

    ``compression`` is a key of :data:`COMPRESSIONS`.  Gzip data may be several
    members one after the other, as gzip(1) and dpkg read them; trailing zero
    bytes after the last stream are padding.  A stream that ends before its end
    marker is an error.
    """

    def __init__(self, f: BinaryIO, offset: int, size: int, compression: str,
                 label: str = "") -> None:
        self._f = f
        self._label = f"{label}: " if label else ""

        try:  # positional reads: another reader of the same file cannot move us
            self._fd: int | None = f.fileno()
        except (AttributeError, OSError, ValueError):  # io.BytesIO and friends
            self._fd = None
        self._pos = offset
        self._start = offset
        self._end = offset + size
        self._produced = 0
        # bzip2 takes input in small steps, so the expansion check counts what it used
        self._input_size = 1 << 10 if compression == ".bz2" else _INPUT
        self._kind = compression
        self._pending = b""  # compressed input not yet given to the decompressor
        self._done = False
        self._zlib: zlib._Decompress | None = None
        self._other: _Decompressor | None = None
        self._errors: tuple[type[Exception], ...] = (zlib.error, EOFError, ValueError)
        self._new_stream()

    def _new_stream(self) -> None:
        if self._kind == ".gz":
            self._zlib = zlib.decompressobj(16 + zlib.MAX_WBITS)
        elif self._kind in (".xz", ".lzma"):
            import lzma

            # xz declares its dictionary size: without a limit a few bytes could ask
            # for 1.5 GiB; xz -9 needs 65 MiB to decompress.
            kind = lzma.FORMAT_XZ if self._kind == ".xz" else lzma.FORMAT_ALONE
            self._other = lzma.LZMADecompressor(kind, memlimit=XZ_MEMLIMIT)
            self._errors = (lzma.LZMAError, EOFError, ValueError)
        elif self._kind == ".zst":
            from .zstdread import ZstdDecompressor, ZstdError

            self._other = ZstdDecompressor()
            self._errors = (ZstdError, EOFError, ValueError)
        elif self._kind == ".bz2":
            import bz2

            self._other = bz2.BZ2Decompressor()
            self._errors = (OSError, EOFError, ValueError)

    def _input(self) -> bytes:
        if self._pending:
            data, self._pending = self._pending, b""
            return data
        n = min(self._input_size, self._end - self._pos)
        if n <= 0:
            return b""
        try:
            if self._fd is not None:
                data = os.pread(self._fd, n, self._pos)
            else:
                self._f.seek(self._pos)
                data = self._f.read(n)
        except OSError as e:
            raise ArchiveError(f"{self._label}cannot read the package: {e.strerror or e}") from None
        if not data:
            raise ArchiveError(f"{self._label}the file ended early (was it truncated while it "
                               "was read?)")
        self._pos += len(data)
        return data

    def _after_stream(self, rest: bytes) -> bool:
        """A compressed stream ended; True when another one follows."""
        while True:
            rest = rest.lstrip(b"\0")
            if rest:
                break
            rest = self._input()
            if not rest:
                return False
        # gzip(1) and dpkg read gzip members one after another; dpkg stops after the
        # first xz, lzma or bzip2 stream and the first zstd frame, so more would be
        # files that dpkg-deb -c never shows.
        if self._kind != ".gz" or not rest.startswith(COMPRESSIONS[".gz"]):
            raise ArchiveError(f"{self._label}unexpected data after the end of the compressed "
                               "stream")
        self._pending = rest
        self._new_stream()
        return True

    def read_chunk(self) -> bytes:
        """Up to :data:`CHUNK` bytes; ``b""`` at the end of the data."""
        if self._done:
            return b""
        try:
            if self._kind == "":
                data = self._input()
                self._done = not data
                return data
            if self._zlib is not None:
                return self._read_zlib()
            return self._read_other()
        except ArchiveError:
            raise
        except self._errors as e:
            raise ArchiveError(f"{self._label}corrupt compressed data ({e})") from None

    def _read_zlib(self) -> bytes:
        while True:
            d = self._zlib
            assert d is not None
            if d.eof:
                if not self._after_stream(d.unused_data):
                    self._done = True
                    return b""
                continue
            data = d.unconsumed_tail or self._input()
            if not data:
                raise ArchiveError(f"{self._label}compressed data ends early (the archive is "
                                   "truncated)")
            out = d.decompress(data, CHUNK)
            if out:
                return out

    def _read_other(self) -> bytes:
        while True:
            d = self._other
            assert d is not None
            if d.eof:
                if not self._after_stream(d.unused_data):
                    self._done = True
                    return b""
                continue
            data = b""
            if d.needs_input:
                data = self._input()
                if not data:
                    raise ArchiveError(f"{self._label}compressed data ends early (the archive "
                                       "is truncated)")
            out = d.decompress(data, CHUNK)
            if out:
                self._produced += len(out)
                if self._produced > max(EXPANSION_FREE,
                                        MAX_EXPANSION * (self._pos - self._start)):
                    raise ArchiveError(
                        f"{self._label}the compressed data expands more than {MAX_EXPANSION:,} "
                        "times (a decompression bomb, not an app)")
                return out


def load_decompressor(member_name: str) -> None:
    """Import now the module that decompresses ``member_name`` (``data.tar.xz``:
    :mod:`lzma`), which the reader imports only when it meets such a member (gzip
    packages never load it).  A process about to drop its privileges calls this:
    the user it becomes may not be able to read this Python's library."""
    module = _DECOMPRESSORS.get(member_name.rpartition(".tar")[2])
    if module is not None:
        __import__(module)
    if module == "click_build.zstdread":
        from .zstdread import load

        load()  # the library itself, which the user may not be able to read either


def open_stream(f: BinaryIO, offset: int, size: int, compression: str,
                label: str = "") -> Decompressed:
    """The decompressed bytes of ``size`` bytes of ``f`` at ``offset``.

    In this thread: decompressing in a second one was measured slower (the two
    threads hand the GIL to each other after every chunk).
    """
    return Decompressed(f, offset, size, compression, label)


def member_limit(stored: int) -> int:
    """The most members an archive of ``stored`` (compressed) bytes may hold.

    Beyond :data:`MAX_MEMBERS`, one stored byte a member.  Real archives take
    more (a tar of 100,000 tiny QML files: 2 bytes a member with ``xz -9``, 10
    with ``gzip -9``, 13 in the data.tar.gz click-build writes), so an app of any
    number of files is read; a header repeated to waste time stores in a
    fraction of a byte with xz (2 bytes with gzip).  Either way the members
    read, and so the time spent, stay proportional to the bytes in the file;
    memory does not depend on the number of members at all.
    """
    return max(MAX_MEMBERS, stored)


# ----------------------------------------------------------------- numbers ---

def _parse_number(field: bytes) -> int:
    """Octal digits (space and NUL padded), or GNU base-256."""
    if field[0] == 0x80:
        return int.from_bytes(field[1:], "big")
    if field[0] == 0xFF:
        return int.from_bytes(field, "big", signed=True)
    text = field.split(b"\0", 1)[0].strip(b" ")
    if not text:
        return 0
    if text.isdigit():  # ASCII digits only: int() alone would take '+', '_' and spaces
        try:
            return int(text, 8)
        except ValueError:
            pass
    raise ArchiveError(f"header field {field!r} is not an octal number")


def _checksum_field(field: bytes) -> int:
    """What adler32's low half is for an ASCII header whose checksum field is
    ``field`` and right: 1 + the declared sum - 256 + the field's own bytes."""
    try:
        want = _parse_number(field) - 255 + sum(field)
    except ArchiveError:
        want = -1
    if len(_checksums) < 8192:
        _checksums[field] = want
    return want


def _checksum_ok(header: bytes, field: bytes) -> bool:
    """The exact sums, unsigned and signed (old tars summed signed chars, and
    tar accepts both)."""
    try:
        stored = _parse_number(field)
    except ArchiveError:
        return False
    unsigned = sum(header[:148]) + sum(header[156:]) + 8 * 32
    high = sum(1 for b in header[:148] + header[156:] if b >= 0x80)
    return stored in (unsigned, unsigned - 256 * high)


def _nts(field: bytes) -> bytes:
    i = field.find(b"\0")
    return field if i < 0 else field[:i]


# --------------------------------------------------------------------- pax ---

def _pax_records(payload: bytes, label: str) -> dict[bytes, bytes]:
    """``LENGTH KEYWORD=VALUE\\n`` records, strictly."""
    records: dict[bytes, bytes] = {}
    pos = 0
    while pos < len(payload):
        space = payload.find(b" ", pos, pos + 12)
        digits = payload[pos:space] if space > pos else b""
        if not digits.isdigit():
            raise ArchiveError(f"{label}: malformed pax header record")
        end = pos + int(digits)
        if end > len(payload) or end <= space + 2 or payload[end - 1] != 0x0A:
            raise ArchiveError(f"{label}: malformed pax header record")
        keyword, eq, value = payload[space + 1:end - 1].partition(b"=")
        if not eq or not keyword:
            raise ArchiveError(f"{label}: malformed pax header record")
        if keyword.startswith(_SPARSE):
            raise ArchiveError(f"{label}: sparse files are not supported")
        records[keyword] = value
        pos = end
    return records


def _pax_int(value: bytes, keyword: bytes, label: str, signed: bool = False) -> int:
    text = value.split(b".", 1)[0] if keyword == b"mtime" else value
    body = text[1:] if signed and text.startswith(b"-") else text
    if not body.isdigit() or len(body) > 30:
        raise ArchiveError(f"{label}: pax {keyword.decode()} {value!r} is not a number")
    return int(text)


# ------------------------------------------------------------------ reader ---

class TarReader:
    """Iterate the members of a tar stream; :meth:`data` streams the current one's.

    Data a caller does not read is skipped when the next member is asked for.
    ``label`` names the archive in error messages.
    """

    def __init__(self, source: Decompressed, label: str,
                 max_members: int = MAX_MEMBERS) -> None:
        self._source = source
        self._label = label
        self._max = max_members
        # Positions are in _buf, the decompressed bytes at hand; _next and
        # _data_end may lie beyond its end (data not decompressed yet).
        self._buf = b""
        self._pos = 0  # the next byte data() hands out
        self._data_end = 0  # the end of the current member's data
        self._next = 0  # where the next header starts
        self._current: TarMember | None = None
        # Extended headers for the next member (L, K, x), and the global pax records
        # (g) for all that follow; _pending is true when any of them is set.
        self._extended_for: dict[bytes, bytes] = {}
        self._pax: dict[bytes, bytes] = {}
        self._global: dict[bytes, bytes] = {}
        self._pending = False
        self._globals = 0  # global headers in a row, before member number:
        self._globals_before = -1
        self.members = 0

    # -- buffer ---------------------------------------------------------------

    def _refill(self) -> bool:
        """Replace the bytes at hand by the next chunk; False at the end of the stream."""
        old = len(self._buf)
        self._buf = self._source.read_chunk()
        self._pos -= old
        self._data_end -= old
        self._next -= old
        return bool(self._buf)

    def _read_at_next(self, size: int, what: str) -> bytes | None:
        """``size`` bytes at _next (skipping what comes before), _next moved past them
        and their padding; None when the stream ends cleanly right at _next."""
        while self._next >= len(self._buf):
            if not self._refill():
                if self._next > 0:
                    raise ArchiveError(f"{self._label}: the archive ends inside "
                                       f"{self._current_name()}")
                return None
        while len(self._buf) - self._next < size:
            chunk = self._source.read_chunk()
            if not chunk:
                raise ArchiveError(f"{self._label}: the archive ends inside a {what}")
            shift = self._next
            self._buf = self._buf[shift:] + chunk
            self._pos -= shift
            self._data_end -= shift
            self._next = 0
        start = self._next
        self._next = self._pos = self._data_end = start + size + (-size % BLOCK)
        return self._buf[start:start + size]

    def _current_name(self) -> str:
        current = self._current
        return repr(current.display_name()) if current is not None else "a member"

    def _payload(self, size: int, limit: int, what: str) -> bytes:
        if size > limit:
            raise ArchiveError(
                f"{self._label}: {what} of {size} bytes (at most {limit} are accepted)")
        self._current = None
        data = self._read_at_next(size, what)
        if data is None:
            raise ArchiveError(f"{self._label}: the archive ends inside a {what}")
        return data

    # -- members --------------------------------------------------------------

    def __iter__(self) -> Iterator[TarMember]:
        # One loop with everything local: this runs once per member, a million
        # times for a big app, so the common case (a header whole in the buffer,
        # fields seen before) costs a few slices and dictionary look-ups.
        label = self._label
        adler = zlib.adler32
        zero = _ZERO_BLOCK
        metas: dict[tuple[bytes, bytes, bytes], Meta] = {}
        unpack = _FIELDS.unpack_from
        checks = _checksums
        sizes = _numbers
        count, limit = self.members, self._max
        new = tuple.__new__
        last_owner = last_mtime = last_tail = b""
        last_meta: Meta = (0, 0, 0, 0, b"", b"", 0, 0, False)  # never used: b"" matches no field
        try:
            while True:
                pos = self._next
                buf = self._buf
                if pos + BLOCK <= len(buf):
                    header = buf[pos:pos + BLOCK]
                    pos += BLOCK
                else:
                    block = self._read_at_next(BLOCK, "header")
                    if block is None or block == zero:
                        self._end()
                        return
                    header, buf, pos = block, self._buf, self._next
                (name, owner, size_field, mtime_field, field, kind, linkname,
                 tail) = unpack(header)
                # The checksum: the byte sum with its own field counted as spaces.
                # adler32's low half is 1 + the byte sum while that stays under 65521,
                # which an ASCII block always does (512 * 127): one C call checks it.
                want = checks.get(field)
                if want is None:
                    want = _checksum_field(field)
                if ((adler(header) & 0xFFFF) != want or not header.isascii()) \
                        and not _checksum_ok(header, field):
                    if header == zero:  # the end (its checksum cannot be right)
                        self._end()
                        return
                    raise ArchiveError(f"{label}: not a valid tar header (bad checksum)")
                if kind in _EXTENDED:
                    self._next = pos
                    self.members = count
                    self._extended(header, kind)
                    continue
                if owner != last_owner or mtime_field != last_mtime or tail != last_tail:
                    key = (owner, mtime_field, tail)
                    meta = metas.get(key)
                    if meta is None:
                        meta = self._meta(header)
                        if len(metas) < 4096:
                            metas[key] = meta
                    last_owner, last_mtime, last_tail = key
                    last_meta = meta
                else:  # members in a row mostly share these fields
                    meta = last_meta
                size = sizes.get(size_field)
                if size is None:
                    size = self._size(size_field)
                end = name.find(0)
                if end >= 0:
                    name = name[:end]
                if meta[8] and header[345]:
                    name = _nts(header[345:500]) + b"/" + name
                linkname = _nts(linkname) if linkname[0] else b""
                count += 1
                if count > limit:
                    raise ArchiveError(f"{label}: more than {limit} members")
                member = new(TarMember, (name, kind, size, linkname, meta))
                self._pos = pos
                if kind == b"0" and name and not self._pending:
                    self._data_end = end = pos + size
                    self._next = end + (-size % BLOCK)
                else:
                    self._data_end = self._next = pos
                    member = self._special(member)
                self._current = member
                yield member
        finally:
            self.members = count

    def _end(self) -> None:
        if self._extended_for or self._pax:
            raise ArchiveError(f"{self._label}: the archive ends after an extended header")

    def _meta(self, header: bytes) -> tuple[int, int, int, int, bytes, bytes, int, int, bool]:
        """Mode, owner, time and device numbers: few distinct values, so cached."""
        try:
            mode, uid, gid = (_parse_number(header[i:i + 8]) for i in (100, 108, 116))
            mtime = _parse_number(header[136:148])
            devmajor, devminor = _parse_number(header[329:337]), _parse_number(header[337:345])
        except ArchiveError as e:
            raise ArchiveError(f"{self._label}: not a valid tar header ({e})") from None
        if mode < 0 or uid < 0 or gid < 0 or devmajor < 0 or devminor < 0:
            raise ArchiveError(f"{self._label}: not a valid tar header (negative number)")
        return (mode, uid, gid, mtime, _nts(header[265:297]), _nts(header[297:329]),
                devmajor, devminor, header[257:263] == _POSIX_MAGIC)

    def _size(self, field: bytes) -> int:
        try:
            size = _parse_number(field)
        except ArchiveError as e:
            raise ArchiveError(f"{self._label}: not a valid tar header ({e})") from None
        if size < 0:
            raise ArchiveError(f"{self._label}: not a valid tar header (negative size)")
        if len(_numbers) < 4096:
            _numbers[field] = size
        return size

    def _extended(self, header: bytes, kind: bytes) -> None:
        """A GNU long name/link or pax record: read (capped), kept for the next member."""
        if kind in self._extended_for or (kind == b"x" and self._pax):
            raise ArchiveError(f"{self._label}: two extended headers of type {kind.decode()} "
                               "for one member")
        size = self._size(header[124:136])
        self._pending = True
        if kind in (b"L", b"K"):
            what = "long name record" if kind == b"L" else "long link record"
            self._extended_for[kind] = _nts(self._payload(size, MAX_LONG_NAME, what))
            return
        records = _pax_records(self._payload(size, MAX_PAX, "pax header"), self._label)
        if kind == b"x":
            self._pax = records
            return
        # Global headers apply to all that follow: a few in a row, not thousands.
        if self._globals_before != self.members:
            self._globals_before, self._globals = self.members, 0
        self._globals += 1
        if self._globals > 16:
            raise ArchiveError(f"{self._label}: too many global pax headers in a row")
        refused = [k for k in _GLOBAL_REFUSED if k in records]
        if refused:
            raise ArchiveError(f"{self._label}: a global pax header sets {refused[0].decode()}")
        self._global.update(records)  # kept for every member that follows, as tar does

    def _extend(self, member: TarMember) -> TarMember:
        """``member`` with the pending long name, long link and pax records applied."""
        label = self._label
        extended, pax = self._extended_for, self._pax
        self._extended_for, self._pax = {}, {}
        self._pending = bool(self._global)
        name = extended.get(b"L", member.name)
        linkname = extended.get(b"K", member.linkname)
        size = member.size
        meta = list(member.meta)
        # the member's own records after the global ones
        for keyword, value in (*self._global.items(), *pax.items()):
            if keyword == b"path":
                name = value
            elif keyword == b"linkpath":
                linkname = value
            elif keyword == b"size":
                size = _pax_int(value, keyword, label)
            elif keyword == b"mtime":
                meta[3] = _pax_int(value, keyword, label, signed=True)
            elif keyword == b"uid":
                meta[1] = _pax_int(value, keyword, label)
            elif keyword == b"gid":
                meta[2] = _pax_int(value, keyword, label)
            elif keyword == b"uname":
                meta[4] = value
            elif keyword == b"gname":
                meta[5] = value
        if not name or b"\0" in name or b"\0" in linkname:
            raise ArchiveError(f"{label}: a member has an empty name or a NUL in its name")
        return TarMember(name, member.type, size, linkname, tuple(meta))  # type: ignore[arg-type]

    def _special(self, member: TarMember) -> TarMember:
        """Every member but a plain regular file: extended headers applied, types
        checked, data refused but for regular files."""
        label = self._label
        if self._pending:
            member = self._extend(member)
        kind = member.type
        if kind in _REGULAR:
            folder = kind == b"\0" and member.name.endswith(b"/")
            # pre-POSIX tars mark folders by a trailing '/'
            member = member._replace(type=b"5" if folder else b"0")
        elif kind not in _NO_DATA:
            if kind == b"S":
                raise ArchiveError(f"{label}: sparse files are not supported")
            what = _TYPE_NAMES.get(kind, f"of unknown type {kind!r}")
            raise ArchiveError(f"{label}: a member is {what}; packages hold only files, "
                               "folders, links and devices")
        if not member.name:
            raise ArchiveError(f"{label}: a member has an empty name")
        if member.type == b"0":
            self._data_end = self._pos + member.size
            self._next = self._data_end + (-member.size % BLOCK)
        elif member.size:
            raise ArchiveError(
                f"{label}: {member.display_name()!r} is not a regular file but declares "
                f"{member.size} bytes of data")
        return member

    def data(self) -> Iterator[bytes]:
        """The current member's data in chunks of at most :data:`CHUNK` bytes."""
        while self._pos < self._data_end:
            pos = self._pos
            if pos >= len(self._buf):
                if not self._refill():
                    raise ArchiveError(f"{self._label}: the archive ends inside "
                                       f"{self._current_name()}")
                continue
            end = min(len(self._buf), self._data_end)
            self._pos = end
            yield self._buf[pos:end]

    def read(self, limit: int) -> bytes:
        """The current member's data whole; refused when larger than ``limit``."""
        if self._data_end - self._pos > limit:
            raise ArchiveError(f"{self._label}: a member of {self._data_end - self._pos} bytes "
                               "is implausibly large")
        return b"".join(self.data())
