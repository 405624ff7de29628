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
    "read_ar_members",
    "write_ar_header",
    "write_ar_member",
]

TAR_BLOCK = 512
TAR_RECORD = 20 * TAR_BLOCK


# --------------------------------------------------------------------- ar ---

def write_ar_header(out: BinaryIO, name: str, size: int, mtime: int) -> None:
    """One 60-byte member header, as dpkg-deb and the original write it."""
    if len(name) > 15 or "/" in name or not name.isascii():
        raise ArchiveError(f"ar member name {name!r} is not valid")
    if size > 9_999_999_999:
        raise ArchiveError(f"ar member {name} is too large ({size} bytes)")
    header = b"%-16s%-12d0     0     100644  %-10d`\n" % (name.encode(), mtime, size)
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
        self._pending: list[concurrent.futures.Future[bytes]] = []
        # Blocks in flight: a deep queue lets reading run ahead of slow (deflated)
        # blocks while fast (stored) ones pass; 32 x 256 KiB on 2 cores (3.3 s vs
        # 4.2 s at 8 on the benchmark tree), capped so memory stays small.
        self._max_pending = min(64, 8 * self._workers)
        self.compressed_size = 0
        xfl = 2 if level == 9 else 4 if level == 1 else 0
        header = b"\x1f\x8b\x08\x00" + struct.pack("<I", mtime & 0xFFFFFFFF) + bytes([xfl, 3])
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
            self._emit(self._pending.pop(0).result())

    def close(self) -> None:
        if self.closed:
            return
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
    raw_name = name.encode("utf-8", "surrogateescape")
    raw_link = linkname.encode("utf-8", "surrogateescape")
    out = b""
    for long_value, long_kind in ((raw_link, b"K"), (raw_name, b"L")):
        if len(long_value) > 100:
            payload = long_value + b"\0"
            out += _tar_block(b"././@LongLink", long_kind, 0, len(payload), 0, b"", b"")
            out += payload + b"\0" * (-len(payload) % TAR_BLOCK)
    return out + _tar_block(raw_name, kind, mode, size, mtime, raw_link, b"root")


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
        self, name: str, source: BinaryIO, size: int, mode: int, mtime: int,
        on_chunk: Callable[[bytes], object] | None = None,
    ) -> None:
        """Copy exactly ``size`` bytes of ``source``; refuse a file that changed size."""
        self._write(tar_header(name, b"0", mode, size, mtime))
        remaining = size
        while remaining:
            chunk = source.read(min(remaining, 1 << 20))
            if not chunk:
                raise ArchiveError(f"{name}: file shrank while it was being packed")
            # Every MiB is judged on its own: one verdict for a whole file stored a
            # 200 MB file whose first MiB was compressed data and the rest zeros or
            # text (twice the original's package).  A short tail keeps the verdict.
            if self._gzip is not None and len(chunk) >= STORE_PROBE_MIN:
                self._gzip.store_next(looks_incompressible(chunk))
            if on_chunk is not None:
                on_chunk(chunk)
            self._write(chunk)
            remaining -= len(chunk)
        if self._gzip is not None:
            self._gzip.store_next(False)
        if source.read(1):
            raise ArchiveError(f"{name}: file grew while it was being packed")
        if size % TAR_BLOCK:
            self._write(b"\0" * (TAR_BLOCK - size % TAR_BLOCK))

    def close(self) -> None:
        self._write(b"\0" * (2 * TAR_BLOCK))
        if self._written % TAR_RECORD:
            self._write(b"\0" * (TAR_RECORD - self._written % TAR_RECORD))

