"""Archive formats only: ar, deterministic GNU tar and (parallel) gzip writers.

Nothing here knows about manifests or apps.  Writers are streaming and
deterministic: the same input gives the same bytes with the same deflate
engine (:mod:`click_build.deflate`), whatever the machine's number of cores.
The ar reader is :mod:`click_build.arread` (re-exported here), so that
reading a package loads none of the writers.
"""

from __future__ import annotations

import io
import os
import struct
import zlib
from collections.abc import Callable

from . import deflate
from .arread import AR_MAGIC, ArMember, MemberReader, read_ar_members
from .errors import ArchiveError

TYPE_CHECKING = False  # not typing.TYPE_CHECKING: importing typing costs start-up time

if TYPE_CHECKING:
    import concurrent.futures
    from types import ModuleType
    from typing import BinaryIO

__all__ = [
    "AR_MAGIC",
    "ArMember",
    "GzipBlockWriter",
    "looks_incompressible",
    "tar_header",
    "MemberReader",
    "TarWriter",
    "copy_range",
    "crc32_combine",
    "read_ar_members",
    "write_ar_header",
    "write_ar_member",
]

TAR_BLOCK = 512
TAR_RECORD = 20 * TAR_BLOCK


# --------------------------------------------------------------------- ar ---

#: The largest time an ar member header holds: 12 decimal digits.
AR_MAX_MTIME = 999_999_999_999


def write_ar_header(out: BinaryIO, name: str, size: int, mtime: int) -> None:
    """One 60-byte member header, as dpkg-deb and the original write it.

    Every field is checked to fit: a value one digit too long would shift the
    header and leave an archive no reader takes.
    """
    if len(name) > 15 or "/" in name or not name.isascii():
        raise ArchiveError(f"ar member name {name!r} is not valid")
    if not 0 <= size <= 9_999_999_999:
        raise ArchiveError(f"ar member {name} is too large ({size} bytes)")
    if not 0 <= mtime <= AR_MAX_MTIME:
        raise ArchiveError(f"ar member {name}: time {mtime} does not fit its header "
                           f"(0 to {AR_MAX_MTIME})")
    header = b"%-16s%-12d0     0     100644  %-10d`\n" % (name.encode(), mtime, size)
    assert len(header) == 60
    out.write(header)


def write_ar_member(out: BinaryIO, name: str, data: bytes, mtime: int) -> None:
    write_ar_header(out, name, len(data), mtime)
    out.write(data)
    if len(data) % 2:
        out.write(b"\n")


def copy_range(src: BinaryIO, dst: BinaryIO, length: int) -> None:
    """Copy ``length`` bytes between files, in the kernel when it can."""
    src_fd, dst_fd = src.fileno(), dst.fileno()
    dst.flush()
    remaining = length
    if hasattr(os, "copy_file_range"):
        try:
            while remaining:
                n = os.copy_file_range(src_fd, dst_fd, min(remaining, 1 << 30))
                if n == 0:
                    break
                remaining -= n
        except OSError:
            pass
    while remaining:
        chunk = os.read(src_fd, min(remaining, 1 << 20))
        if not chunk:
            raise ArchiveError("file shrank while being copied")
        os.write(dst_fd, chunk)
        remaining -= len(chunk)
    dst.seek(0, io.SEEK_END)


# ------------------------------------------------------------------- gzip ---

_BLOCK = 256 * 1024  # per worker task; 128 KiB to 1 MiB give the same size and CPU at level 9
_WINDOW = 32 * 1024
#: Smaller files are always deflated: each stored file splits the deflate
#: stream, and the probe needs two samples.  (16 KiB rather than 64 KiB: output
#: 0.03% smaller on the benchmark's mixed tree, since stored beats deflated on
#: random data, and less CPU.)
STORE_PROBE_MIN = 16 * 1024
_PROBE = 8 * 1024
#: Store when deflate saves less than this share of a sample.  A loose bound
#: (3%) stored real PNGs and JPEGs that level 9 shrinks by 1-3% (their headers
#: and metadata compress): 1% of their size lost against dpkg-deb.
_STORE_RATIO = 0.99
#: zlib's memLevel, as dpkg-deb and gzip use it: 9 (larger blocks of symbols)
#: made level-9 output 0.1% larger and 5% slower on app source.
_MEM_LEVEL = 8


def looks_incompressible(data: bytes | memoryview) -> bool:
    """A cheap, deterministic probe of a file's first bytes: worth deflating or not?

    Packing already-compressed files (OGG, JPEG, zipped data) at level 9 costs
    as much CPU as text and saves nothing; storing them is ten times faster.
    Two samples are deflated at level 1, the start (where headers and metadata
    sit) and the middle; the data is stored only if neither shrinks by 1%.
    """
    if len(data) < 2 * _PROBE:
        return False
    mid = len(data) // 2
    probe = None
    for start in (0, mid - _PROBE // 2):
        sample = bytes(data[start:start + _PROBE])
        # Text has many spaces, machine code and tables many zeros: deflate will gain.
        # (Random bytes hold each value 32 times per 8 KiB; this only skips the probe.)
        if sample.count(32) > _PROBE // 64 or sample.count(0) > _PROBE // 64:
            return False
        # One compressor for both samples (setting one up costs as much as deflating
        # 2 KiB); a full flush makes the second sample start afresh.
        probe = probe or zlib.compressobj(1, zlib.DEFLATED, -15, _MEM_LEVEL)
        if len(probe.compress(sample) + probe.flush(zlib.Z_FULL_FLUSH)) < _PROBE * _STORE_RATIO:
            return False
    return True


def _deflate(block: bytes, history: bytes, level: int, last: bool, z: ModuleType = zlib) -> bytes:
    """Deflate one block as a sync-flushed piece of a single deflate stream.

    The compressor is primed with the 32 KiB before the block, as pigz does,
    so pieces compressed apart concatenate into one standard stream that
    compresses as well as a serial one (measured: within 0.05% at level 9).
    ``z`` is the engine (:mod:`click_build.deflate`): zlib or zlib-ng.
    """
    if level and history:
        comp = z.compressobj(level, z.DEFLATED, -15, _MEM_LEVEL, z.Z_DEFAULT_STRATEGY, history)
    else:
        comp = z.compressobj(level, z.DEFLATED, -15, _MEM_LEVEL)
    piece: bytes = comp.compress(block) + comp.flush(z.Z_FINISH if last else z.Z_SYNC_FLUSH)
    return piece


class Slot:
    """Bytes of a gzip stream that are known only later (:meth:`GzipBlockWriter.reserve`)."""

    __slots__ = ("size", "crc_before", "end", "data", "offset")

    def __init__(self, size: int, crc_before: int) -> None:
        self.size, self.crc_before = size, crc_before
        self.end = 0  # stream position after the slot
        self.data: bytes | None = None
        self.offset: int | None = None  # where the block went in the output, if written

    def block(self) -> bytes:
        """A stored (uncompressed) deflate block holding the bytes, zeros until filled."""
        data = self.data if self.data is not None else bytes(self.size)
        return b"\x00" + struct.pack("<HH", self.size, self.size ^ 0xFFFF) + data


def _gf2_times(a: int, b: int) -> int:
    """a * b modulo the CRC-32 polynomial (bit-reflected), as zlib's multmodp."""
    product = 0
    m = 1 << 31
    while True:
        if a & m:
            product ^= b
            if not a & (m - 1):
                return product
        m >>= 1
        b = (b >> 1) ^ 0xEDB88320 if b & 1 else b >> 1


def _x_powers() -> list[int]:
    """x^(2^k) modulo the polynomial, for k = 0..31 (zlib's x2n_table)."""
    p = 1 << 30  # x^1
    table = [p]
    for _ in range(31):
        p = _gf2_times(p, p)
        table.append(p)
    return table


_X2N = _x_powers()


def crc32_combine(crc1: int, crc2: int, len2: int) -> int:
    """The CRC-32 of A + B from those of A and B and the length of B (zlib's
    crc32_combine, which Python's zlib does not offer)."""
    p = 1 << 31  # x^0
    n, k = len2, 3  # bytes: multiply by x^(8 * len2)
    while n:
        if n & 1:
            p = _gf2_times(_X2N[k & 31], p)
        n >>= 1
        k += 1
    return _gf2_times(p, crc1) ^ crc2


class GzipBlockWriter(io.RawIOBase):
    """A single standard gzip member, compressed in parallel pigz-style.

    The output depends only on the input bytes, ``level``, the
    :meth:`store_next` hints (which callers derive from the content) and
    ``engine``: block boundaries are fixed, so one core and many cores give
    the same bytes.  ``engine`` is a name :func:`click_build.deflate.load`
    takes (None: zlib-ng when installed); it deflates what follows the first
    256 KiB, which zlib always deflates, so a small package never pays for
    zlib-ng's import.  The header carries no file name and a fixed mtime.
    """

    def __init__(self, out: BinaryIO, mtime: int, level: int = 9, threads: int | None = None,
                 engine: str | None = None):
        self._out = out
        self._level = level
        self._store = False
        self._crc = 0
        self._size = 0
        self._buf = bytearray()
        self._history = b""
        self._submitted = 0  # input bytes handed to _deflate so far
        self._engine = engine
        self._z: ModuleType | None = None  # the engine, loaded at the first byte past 256 KiB
        # Twice as many workers as cores: blocks differ in cost (stored vs deflated),
        # and a deeper pipeline keeps every core busy (measured: 2 cores, 2 workers
        # 5.1 s, 4 workers 3.8 s on the 154 MB benchmark tree).
        self._workers = threads if threads is not None else min(16, 2 * (os.cpu_count() or 1))
        self._pool: concurrent.futures.ThreadPoolExecutor | None = None
        self._pending: list[concurrent.futures.Future[bytes] | Slot] = []
        # Blocks in flight: a deep queue lets reading run ahead of slow (deflated)
        # blocks while fast (stored) ones pass; 32 x 256 KiB on 2 cores (3.3 s vs
        # 4.2 s at 8 on the benchmark tree), capped so memory stays small.
        self._max_pending = min(64, 8 * self._workers)
        self.compressed_size = 0
        self._slot: Slot | None = None  # the reserved bytes not filled in yet
        if not 0 <= mtime <= 0xFFFF_FFFF:
            raise ArchiveError(f"time {mtime} does not fit a gzip header (0 to {0xFFFF_FFFF})")
        xfl = 2 if level == 9 else 4 if level == 1 else 0
        header = b"\x1f\x8b\x08\x00" + struct.pack("<I", mtime) + bytes([xfl, 3])
        self._emit(header)

    def writable(self) -> bool:
        return True

    def _emit(self, data: bytes) -> None:
        self._out.write(data)
        self.compressed_size += len(data)

    def store_next(self, store: bool) -> None:
        """Say whether the bytes that follow are worth compressing (False) or not."""
        if store != self._store:
            if self._buf:
                self._submit(bytes(self._buf), last=False)
                self._buf.clear()
            self._store = store

    def write(self, data: bytes | bytearray | memoryview) -> int:  # type: ignore[override]
        n = len(data)
        self._crc = zlib.crc32(data, self._crc)
        self._size += n
        buf = self._buf
        buf += data
        if len(buf) >= _BLOCK:
            with memoryview(buf) as view:
                blocks = [bytes(view[i:i + _BLOCK]) for i in range(0, len(buf) - _BLOCK + 1, _BLOCK)]
            del buf[:len(blocks) * _BLOCK]  # cheap: a bytearray drops its head in place
            for block in blocks:
                self._submit(block, last=False)
        return n

    def _submit(self, block: bytes, last: bool) -> None:
        history = self._history
        self._history = block[-_WINDOW:] if len(block) >= _WINDOW else (history + block)[-_WINDOW:]
        level = 0 if self._store else self._level
        # By where the piece starts, not how the stream was cut (stored files cut it
        # too): a package of 256 KiB or less, stored icons and all, is zlib's alone.
        if self._submitted < _BLOCK:
            z = zlib
        else:
            z = self._z = self._z or deflate.load(self._engine)
        self._submitted += len(block)
        if self._pool is None:
            if self._workers < 2 or last:
                self._emit(_deflate(block, history, level, last, z))
                return
            import concurrent.futures

            self._pool = concurrent.futures.ThreadPoolExecutor(self._workers)
        self._pending.append(self._pool.submit(_deflate, block, history, level, last, z))
        while len(self._pending) >= self._max_pending or (last and self._pending):
            item = self._pending.pop(0)
            if isinstance(item, Slot):
                self._emit_slot(item)
            else:
                self._emit(item.result())

    def reserve(self, size: int) -> Slot:
        """Keep the next ``size`` bytes of the stream (1 to 65,535) for :meth:`fill`,
        which gives them once they are known: a tar header whose time is derived
        from the data that follows it.

        They become one stored deflate block, of a length known in advance, so
        once they are known the output is patched in place (``out`` must then be
        seekable) or, still queued, written as they are: memory stays bounded
        whatever follows.  What follows does not refer back to them (it starts
        without history), and the CRC is combined (:func:`crc32_combine`).  One
        slot is open at a time.
        """
        if not 0 < size <= 0xFFFF or self._slot is not None:
            raise ValueError("one slot of 1 to 65535 bytes at a time")
        if self._buf:
            self._submit(bytes(self._buf), last=False)  # the stream is cut here
            self._buf.clear()
        slot = Slot(size, self._crc)
        self._crc = 0  # of what follows the slot, until it is filled
        self._size += size
        self._submitted += size
        slot.end = self._size
        self._history = b""
        self._slot = slot
        if self._pending:
            self._pending.append(slot)
        else:
            self._emit_slot(slot)
        return slot

    def fill(self, slot: Slot, data: bytes) -> None:
        """The bytes of a slot from :meth:`reserve`."""
        if slot is not self._slot or len(data) != slot.size:
            raise ValueError("not the open slot, or not its size")
        self._crc = crc32_combine(zlib.crc32(data, slot.crc_before), self._crc,
                                  self._size - slot.end)
        slot.data = data
        self._slot = None
        if slot.offset is not None:  # already written out as zeros: patch it
            out = self._out
            here = out.tell()
            out.seek(slot.offset)
            out.write(slot.block())
            out.seek(here)

    def _emit_slot(self, slot: Slot) -> None:
        if slot.data is None:
            slot.offset = self._out.tell()
        self._emit(slot.block())

    def close(self) -> None:
        if self.closed:
            return
        if self._slot is not None:
            raise ArchiveError("a reserved part of the gzip stream was never filled")
        try:
            self._submit(bytes(self._buf), last=True)
            self._buf.clear()
            self._emit(struct.pack("<II", self._crc, self._size & 0xFFFFFFFF))
        finally:
            if self._pool is not None:
                self._pool.shutdown(wait=True, cancel_futures=True)
            super().close()


# -------------------------------------------------------------------- tar ---

_GNU_MAGIC = b"ustar  \0"


def _tar_num(n: int, digits: int) -> bytes:
    """An octal field, or GNU base-256 when the value does not fit (as tarfile).

    Negative values (a file time before 1970, kept under SOURCE_DATE_EPOCH) are
    base-256 in two's complement, 0xFF first, as tarfile and GNU tar write them.
    """
    if 0 <= n < 8 ** (digits - 1):
        return b"%0*o\0" % (digits - 1, n)
    if 0 <= n < 256 ** (digits - 1):
        return b"\x80" + n.to_bytes(digits - 1, "big")
    if -(256 ** (digits - 1)) <= n < 0:
        return n.to_bytes(digits, "big", signed=True)  # the first byte is 0xFF
    raise ArchiveError(f"value {n} does not fit a tar header field")


#: name mode uid gid size mtime checksum type linkname magic uname gname, then zeros
#: (devmajor, devminor, prefix, padding); "s" fields are cut or NUL-padded to length.
_TAR_FIELDS = struct.Struct("100s8s8s8s12s12s8sc100s8s32s32s183x")
_ZERO_ID = b"0000000\0"


def _tar_block(name: bytes, kind: bytes, mode: int, size: int, mtime: int, linkname: bytes,
               owner: bytes) -> bytes:
    head = _TAR_FIELDS.pack(name, _tar_num(mode & 0o7777, 8), _ZERO_ID, _ZERO_ID,
                            _tar_num(size, 12), _tar_num(mtime, 12), b" " * 8, kind, linkname,
                            _GNU_MAGIC, owner, owner)
    checksum = sum(head)  # the checksum field counts as eight spaces
    return head[:148] + b"%06o\0" % checksum + head[155:]


def tar_header(name: str, kind: bytes, mode: int = 0o644, size: int = 0, mtime: int = 0,
               linkname: str = "") -> bytes:
    """A GNU-format header owned by root:root, byte for byte what
    ``tarfile.TarInfo.tobuf(GNU_FORMAT, "utf-8", "surrogateescape")`` writes.

    Written here rather than through :mod:`tarfile` because importing tarfile
    (and the shutil it pulls in) is a sizeable share of a small build's time.
    """
    names, block = _tar_header_parts(name, kind, mode, size, mtime, linkname)
    return names + block


def _tar_header_parts(name: str, kind: bytes, mode: int, size: int, mtime: int,
                      linkname: str = "") -> tuple[bytes, bytes]:
    """The GNU long-name blocks (none for short names), then the 512-byte header:
    only the second holds the time."""
    raw_name = name.encode("utf-8", "surrogateescape")
    raw_link = linkname.encode("utf-8", "surrogateescape")
    out = b""
    for long_value, long_kind in ((raw_link, b"K"), (raw_name, b"L")):
        if len(long_value) > 100:
            payload = long_value + b"\0"
            out += _tar_block(b"././@LongLink", long_kind, 0, len(payload), 0, b"", b"")
            out += payload + b"\0" * (-len(payload) % TAR_BLOCK)
    return out, _tar_block(raw_name, kind, mode, size, mtime, raw_link, b"root")


#: What the tar writer reads of a file at a time (and holds of a file whose time
#: is derived from its content before its header is written).
READ_CHUNK = 1 << 20


class TarWriter:
    """Streams a GNU tar archive with entries fully described by the caller.

    Data is streamed in chunks, never whole.
    """

    def __init__(self, out: BinaryIO, gzip: GzipBlockWriter | None = None) -> None:
        self._out = out
        self._gzip = gzip  # told which file data is not worth compressing
        self._written = 0

    def _write(self, data: bytes | memoryview) -> None:
        self._out.write(data)
        self._written += len(data)

    def add_dir(self, name: str, mode: int, mtime: int) -> None:
        name = name if name.endswith("/") else name + "/"
        self._write(tar_header(name, b"5", mode, 0, mtime))

    def add_symlink(self, name: str, target: str, mtime: int) -> None:
        self._write(tar_header(name, b"2", 0o777, 0, mtime, target))

    def add_bytes(self, name: str, data: bytes, mode: int, mtime: int) -> None:
        self.add_file(name, io.BytesIO(data), len(data), mode, mtime)

    def add_file(
        self, name: str, source: BinaryIO, size: int, mode: int, mtime: int | Callable[[], int],
        on_chunk: Callable[[bytes], object] | None = None,
    ) -> None:
        """Copy exactly ``size`` bytes of ``source``; refuse a file that changed size.

        ``on_chunk`` sees each chunk read; ``mtime``: see :meth:`begin_file`.
        """
        member = self.begin_file(name, size, mode, mtime)
        remaining = size
        while remaining:
            chunk = source.read(min(remaining, READ_CHUNK))
            if not chunk:
                raise ArchiveError(f"{name}: file shrank while it was being packed")
            if on_chunk is not None:
                on_chunk(chunk)
            member.write(chunk)
            remaining -= len(chunk)
        if source.read(1):
            raise ArchiveError(f"{name}: file grew while it was being packed")
        member.end()

    def begin_file(self, name: str, size: int, mode: int,
                   mtime: int | Callable[[], int]) -> TarMemberWriter:
        """A member whose ``size`` bytes the caller pushes (several archives can then be
        fed from one read of a file): :meth:`TarMemberWriter.write` each chunk of at most
        :data:`READ_CHUNK` bytes, then :meth:`TarMemberWriter.end`.

        ``mtime``: the time, or a function that gives it once every byte has been
        pushed (a time derived from the content).  The header comes before the
        data, so a file of up to :data:`READ_CHUNK` bytes is then held before its
        header is written, and a larger one gets its header through
        :meth:`GzipBlockWriter.reserve`: a single read either way, and memory
        bounded by one chunk.
        """
        return TarMemberWriter(self, name, size, mode, mtime)

    def _data(self, chunk: bytes) -> None:
        # Every MiB is judged on its own: one verdict for a whole file stored a
        # 200 MB file whose first MiB was compressed data and the rest zeros or
        # text (twice the original's package).  A short tail keeps the verdict.
        if self._gzip is not None and len(chunk) >= STORE_PROBE_MIN:
            self._gzip.store_next(looks_incompressible(chunk))
        self._write(chunk)

    def _data_end(self, size: int) -> None:
        if self._gzip is not None:
            self._gzip.store_next(False)
        if size % TAR_BLOCK:
            self._write(b"\0" * (TAR_BLOCK - size % TAR_BLOCK))

    def close(self) -> None:
        self._write(b"\0" * (2 * TAR_BLOCK))
        if self._written % TAR_RECORD:
            self._write(b"\0" * (TAR_RECORD - self._written % TAR_RECORD))


class TarMemberWriter:
    """One regular file of a :class:`TarWriter`, its data pushed a chunk at a time."""

    __slots__ = ("_held", "_mtime", "_name", "_mode", "_pushed", "_size", "_slot", "_tar")

    def __init__(self, tar: TarWriter, name: str, size: int, mode: int,
                 mtime: int | Callable[[], int]) -> None:
        self._tar, self._name, self._size, self._mode, self._mtime = tar, name, size, mode, mtime
        self._pushed = 0
        self._held: bytearray | None = None  # a small file's data, until its time is known
        self._slot: Slot | None = None  # a large file's header, filled in at the end
        if not callable(mtime):
            tar._write(tar_header(name, b"0", mode, size, mtime))
        elif size <= READ_CHUNK:
            self._held = bytearray()
        else:
            if tar._gzip is None:
                raise ArchiveError(f"{name}: a time from the content needs the gzip writer")
            names, _ = _tar_header_parts(name, b"0", mode, size, 0)
            tar._write(names)
            self._slot = tar._gzip.reserve(TAR_BLOCK)
            tar._written += TAR_BLOCK

    def write(self, chunk: bytes) -> None:
        self._pushed += len(chunk)
        if self._pushed > self._size:
            raise ArchiveError(f"{self._name}: file grew while it was being packed")
        if self._held is not None:
            self._held += chunk
        else:
            self._tar._data(chunk)

    def end(self) -> None:
        if self._pushed < self._size:
            raise ArchiveError(f"{self._name}: file shrank while it was being packed")
        tar = self._tar
        if self._held is not None:
            assert callable(self._mtime)
            tar._write(tar_header(self._name, b"0", self._mode, self._size, self._mtime()))
            if self._held:
                tar._data(bytes(self._held))
        tar._data_end(self._size)
        if self._slot is not None:
            assert tar._gzip is not None and callable(self._mtime)
            tar._gzip.fill(self._slot, _tar_header_parts(self._name, b"0", self._mode,
                                                         self._size, self._mtime())[1])

