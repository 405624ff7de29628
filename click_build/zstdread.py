"""zstd decompression, for packages built with ``dpkg-deb -Zzstd``.

Python's standard library has no zstd before 3.14, and dpkg reads it through
the system's libzstd, so this drives the same library through :mod:`ctypes`
(a machine with dpkg has it: dpkg depends on it).  It is loaded only when a
package holds a ``.zst`` member.  The decompressor keeps the interface of
:class:`lzma.LZMADecompressor` (``decompress``, ``eof``, ``needs_input``,
``unused_data``) so the tar reader drives every compression alike.

One decompressor reads one frame, as dpkg reads only the first frame of a
member: what follows it is left in ``unused_data`` for the caller to judge.
The memory a frame may ask for is bounded by :data:`WINDOW_LOG_MAX`, the
limit libzstd and dpkg apply by default, set here explicitly.
"""

from __future__ import annotations

import ctypes

from .errors import ArchiveError

__all__ = ["WINDOW_LOG_MAX", "ZstdDecompressor", "ZstdError", "load"]

#: The largest window a frame may use, as a power of two (128 MiB): libzstd's
#: default limit (ZSTD_WINDOWLOG_LIMIT_DEFAULT), which dpkg keeps.
WINDOW_LOG_MAX = 27
_D_WINDOW_LOG_MAX = 100  # ZSTD_d_windowLogMax
_NAMES = ("libzstd.so.1", "libzstd.so", "libzstd.1.dylib", "libzstd.dylib")


class ZstdError(ValueError):
    """Corrupt or unreadable zstd data (libzstd's reason)."""


class _InBuffer(ctypes.Structure):
    _fields_ = [("src", ctypes.c_char_p), ("size", ctypes.c_size_t), ("pos", ctypes.c_size_t)]


class _OutBuffer(ctypes.Structure):
    _fields_ = [("dst", ctypes.c_void_p), ("size", ctypes.c_size_t), ("pos", ctypes.c_size_t)]


_lib: ctypes.CDLL | None = None


def load() -> ctypes.CDLL:
    """libzstd, loaded once (also before a process drops its privileges)."""
    global _lib
    if _lib is not None:
        return _lib
    for name in _NAMES:
        try:
            lib = ctypes.CDLL(name)
        except OSError:
            continue
        size_t, ptr = ctypes.c_size_t, ctypes.c_void_p
        lib.ZSTD_createDStream.restype = ptr
        lib.ZSTD_createDStream.argtypes = []
        lib.ZSTD_freeDStream.restype = size_t
        lib.ZSTD_freeDStream.argtypes = [ptr]
        lib.ZSTD_DCtx_setParameter.restype = size_t
        lib.ZSTD_DCtx_setParameter.argtypes = [ptr, ctypes.c_int, ctypes.c_int]
        lib.ZSTD_decompressStream.restype = size_t
        lib.ZSTD_decompressStream.argtypes = [ptr, ctypes.POINTER(_OutBuffer),
                                              ctypes.POINTER(_InBuffer)]
        lib.ZSTD_isError.restype = ctypes.c_uint
        lib.ZSTD_isError.argtypes = [size_t]
        lib.ZSTD_getErrorName.restype = ctypes.c_char_p
        lib.ZSTD_getErrorName.argtypes = [size_t]
        _lib = lib
        return lib
    raise ArchiveError("zstd data needs the zstd library (libzstd.so.1, Debian's libzstd1, "
                       "which dpkg uses), and it is not on this system")


class ZstdDecompressor:
    """One zstd frame, decompressed a piece at a time."""

    def __init__(self) -> None:
        self._lib = load()
        self._stream = self._lib.ZSTD_createDStream()
        if not self._stream:
            raise MemoryError("libzstd could not allocate a decompression stream")
        self._check(self._lib.ZSTD_DCtx_setParameter(self._stream, _D_WINDOW_LOG_MAX,
                                                     WINDOW_LOG_MAX))
        self._data = b""  # the input ``_in`` points into
        self._in = _InBuffer(self._data, 0, 0)
        self._out = _OutBuffer(None, 0, 0)
        self._buffer: ctypes.Array[ctypes.c_char] | None = None
        self.eof = False
        self.needs_input = True
        self.unused_data = b""

    def _check(self, code: int) -> int:
        if self._lib.ZSTD_isError(code):
            reason = self._lib.ZSTD_getErrorName(code)
            raise ZstdError(reason.decode("ascii", "replace") if reason else f"error {code}")
        return code

    def decompress(self, data: bytes, max_length: int = 1 << 20) -> bytes:
        if self.eof:
            raise EOFError("end of the zstd frame already reached")
        if data:
            if self._in.pos < self._in.size:  # after a call whose output filled up
                data = self._data[self._in.pos:] + data
            self._data = data
            self._in = _InBuffer(data, len(data), 0)
        if self._buffer is None or len(self._buffer) < max_length:
            self._buffer = ctypes.create_string_buffer(max_length)
        out = self._out
        out.dst, out.size, out.pos = ctypes.addressof(self._buffer), max_length, 0
        while out.pos < out.size:
            before = (self._in.pos, out.pos)
            # 0: the frame is complete and flushed; the input stops right after it
            if self._check(self._lib.ZSTD_decompressStream(
                    self._stream, ctypes.byref(out), ctypes.byref(self._in))) == 0:
                self.eof = True
                self.unused_data = self._data[self._in.pos:]
                self.close()
                break
            if (self._in.pos, out.pos) == before:
                if self._in.pos < self._in.size:  # never spin on input it will not take
                    raise ZstdError("libzstd made no progress on its input")
                break  # it needs more input
        self.needs_input = (not self.eof and self._in.pos == self._in.size
                            and out.pos < out.size)
        return ctypes.string_at(self._buffer, out.pos)

    def close(self) -> None:
        if self._stream:
            self._lib.ZSTD_freeDStream(self._stream)
            self._stream = None

    def __del__(self) -> None:  # memory only: nothing is lost if it never runs
        self.close()
