"""Opening a package file that an attacker may own, even while we read it.

:func:`open_regular` refuses anything that is not a regular file (a FIFO, a
device, a directory, a socket) without ever blocking on it;
:func:`read_regular` reads a small one (a framework, hook or database file) so.
:func:`private_copy` goes further: it copies the file once into a nameless
file that only this process can reach, so the bytes whose signature is
checked are exactly the bytes that are audited and unpacked, whatever
happens to the original meanwhile.
"""

from __future__ import annotations

import errno
import io
import os
import stat

from .errors import PackageError

TYPE_CHECKING = False  # not typing.TYPE_CHECKING: importing typing costs start-up time

if TYPE_CHECKING:
    from typing import BinaryIO

__all__ = ["anonymous_file", "open_regular", "private_copy", "read_regular"]

_READ_FLAGS = (os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0)
               | getattr(os, "O_NOCTTY", 0))

_KINDS = (
    (stat.S_ISDIR, "a directory"), (stat.S_ISFIFO, "a FIFO"), (stat.S_ISSOCK, "a socket"),
    (stat.S_ISCHR, "a character device"), (stat.S_ISBLK, "a block device"),
)


def _kind(mode: int) -> str:
    return next((name for test, name in _KINDS if test(mode)), "not a regular file")


def open_regular(path: str | os.PathLike[str]) -> BinaryIO:
    """Open ``path`` for reading; refuse at once anything but a regular file.

    ``O_NONBLOCK`` keeps the open itself from waiting on a FIFO with no
    writer; the type is then checked on the open descriptor, so a file
    swapped in between a check and the open cannot slip through.
    """
    where = os.fspath(path)
    flags = os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0) | getattr(os, "O_NOCTTY", 0)
    try:
        fd = os.open(where, flags)
    except OSError as e:
        try:  # a socket cannot be opened at all: still say what it is
            mode = os.stat(where).st_mode
        except OSError:
            mode = stat.S_IFREG
        if not stat.S_ISREG(mode):
            raise PackageError(
                f"{where}: is {_kind(mode)}; a package must be a regular file") from None
        raise PackageError(f"{where}: cannot open: {e.strerror}") from None
    try:
        mode = os.fstat(fd).st_mode
        if not stat.S_ISREG(mode):
            raise PackageError(f"{where}: is {_kind(mode)}; a package must be a regular file")
        os.set_blocking(fd, True)
        f = os.fdopen(fd, "rb")
        f.raw.name = where  # type: ignore[attr-defined]  # messages name the path, not the fd
    except BaseException:
        os.close(fd)
        raise
    return f


def read_regular(path: str, limit: int, dir_fd: int | None = None,
                 follow: bool = True) -> tuple[os.stat_result, bytes | None]:
    """``path``'s status and, when it is a regular file of at most ``limit`` bytes,
    up to ``limit + 1`` of its bytes (None otherwise: the caller says why).  Opened
    without blocking, so a FIFO put there never makes us wait; ``follow=False``
    refuses a link."""
    flags = _READ_FLAGS if not follow else _READ_FLAGS & ~os.O_NOFOLLOW
    fd = os.open(path, flags, dir_fd=dir_fd)
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode) or st.st_size > limit:
            return st, None
        return st, os.read(fd, limit + 1)
    finally:
        os.close(fd)


def anonymous_file(directory: str | int | None = None) -> BinaryIO:
    """A nameless read-write scratch file (``O_TMPFILE`` where the file system has it).

    ``directory`` is a path or an open directory's descriptor (default
    ``$TMPDIR`` or ``/tmp``).  Nobody else can open the file by name, and it
    vanishes when closed or when the process dies.
    """
    dir_fd = directory if isinstance(directory, int) else None
    where = "." if dir_fd is not None else (directory or os.environ.get("TMPDIR") or "/tmp")
    assert isinstance(where, str)
    flags = os.O_RDWR | getattr(os, "O_CLOEXEC", 0)
    if hasattr(os, "O_TMPFILE"):
        try:
            return os.fdopen(os.open(where, flags | os.O_TMPFILE, 0o600, dir_fd=dir_fd), "w+b")
        except OSError:
            pass  # file systems without O_TMPFILE support
    for _ in range(100):
        name = os.path.join(where, f".click-build.{os.urandom(6).hex()}.tmp")
        try:
            fd = os.open(name, flags | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o600,
                         dir_fd=dir_fd)
        except FileExistsError:
            continue
        os.unlink(name, dir_fd=dir_fd)
        return os.fdopen(fd, "w+b")
    raise PackageError(f"cannot create a temporary file in {where}")


class _Snapshot(io.RawIOBase):
    """The private copy, read by position alone (``pread``): its offset is this object's.

    The kernel keeps one file offset per open file, shared by every descriptor
    duplicated from it and by a child after ``fork`` (the installer's unpacker).
    A buffered reader that moves that shared offset, or rewinds it relative to
    where it thinks it is (``lseek(-n, SEEK_CUR)`` when it closes), is wrong as
    soon as another process reads: here nothing ever moves it.
    """

    def __init__(self, fd: int, name: str) -> None:
        super().__init__()
        self._fd = fd
        self._pos = 0
        self.name = name  # messages name the package, not the nameless copy

    def readable(self) -> bool:
        return True

    def seekable(self) -> bool:
        return True

    def fileno(self) -> int:
        return self._fd

    def tell(self) -> int:
        return self._pos

    def seek(self, pos: int, whence: int = io.SEEK_SET) -> int:
        if whence == io.SEEK_CUR:
            pos += self._pos
        elif whence == io.SEEK_END:
            pos += os.fstat(self._fd).st_size
        elif whence != io.SEEK_SET:
            raise ValueError(f"invalid whence ({whence})")
        if pos < 0:
            raise ValueError(f"negative seek position {pos}")
        self._pos = pos
        return pos

    def readinto(self, buffer: memoryview) -> int:  # type: ignore[override]
        n = os.preadv(self._fd, [buffer], self._pos)
        self._pos += n
        return n

    def close(self) -> None:
        if not self.closed:
            try:
                os.close(self._fd)
            finally:
                super().close()


def private_copy(path: str | os.PathLike[str], directory: str | int | None = None) -> BinaryIO:
    """A private, immutable snapshot of the package at ``path``, positioned at 0.

    The copy is made in one pass (``copy_file_range`` where the kernel has
    it) into an :func:`anonymous_file` in ``directory`` (a path or a
    directory descriptor); its ``name`` is ``path``, for messages.  Every
    later read (signature, audit, unpack) sees these bytes.
    """
    from .arread import AR_MAGIC

    where = os.fspath(path)
    with open_regular(where) as src:
        # Checked before a byte is copied, so that a terabyte of nothing (a sparse
        # file costs its owner no disk) is refused at once, not written out; the
        # copy is then audited from its first byte on.
        if os.pread(src.fileno(), len(AR_MAGIC), 0) != AR_MAGIC:
            raise PackageError(f"{where}: not a Click package: it does not start with an ar "
                               "archive header")
        size = os.fstat(src.fileno()).st_size
        copy = anonymous_file(directory)
        try:
            _check_room(copy.fileno(), size, where)
            _copy(src.fileno(), copy.fileno(), size, where)
            raw = _Snapshot(os.dup(copy.fileno()), where)
        finally:
            copy.close()
    return io.BufferedReader(raw)


def _check_room(dst: int, size: int, where: str) -> None:
    try:
        st = os.fstatvfs(dst)
    except OSError:
        return
    free = st.f_bavail * st.f_frsize
    if size > free:
        raise PackageError(f"{where}: {size} bytes, and the copy that is checked and unpacked "
                           f"needs that much room: only {free} bytes are free there")


def _copy(src: int, dst: int, size: int, where: str) -> None:
    """Copy the ``size`` bytes the file had when opened: one that grows meanwhile
    cannot make the copy endless, one that shrinks gives a shorter copy."""
    left = size
    try:
        if hasattr(os, "copy_file_range"):
            try:
                while left > 0:
                    done = os.copy_file_range(src, dst, min(left, 1 << 30))
                    if not done:
                        return
                    left -= done
                return
            except OSError as e:
                if e.errno in (errno.ENOSPC, errno.EDQUOT, errno.EIO):
                    raise
                # Not supported here (different file systems on old kernels...):
                # restart from the beginning with plain reads.
                os.lseek(src, 0, os.SEEK_SET)
                os.lseek(dst, 0, os.SEEK_SET)
                os.ftruncate(dst, 0)
                left = size
        while left > 0:
            chunk = os.read(src, min(left, 1 << 20))
            if not chunk:
                return
            left -= len(chunk)
            view = memoryview(chunk)
            while view:
                view = view[os.write(dst, view):]
    except OSError as e:
        raise PackageError(f"{where}: cannot copy: {e.strerror}") from None
