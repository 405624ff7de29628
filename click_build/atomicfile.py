"""Files that appear whole or not at all: every file click-build writes for a user.

A file is written under a hidden temporary name beside its place (``.NAME.<random>.tmp``,
made exclusively and never through a link) and given its name by one rename once it is
complete, so a reader, a crash or an interrupted build never sees it partial; an error
removes it.  One home for that rule: packages, source packages, signed packages, merged
trees, translation catalogs, CMake's generated files and the sysroot's files all use it.
"""

from __future__ import annotations

import errno
import os

TYPE_CHECKING = False  # not typing.TYPE_CHECKING: importing typing costs start-up time

if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import BinaryIO

__all__ = ["AtomicFile", "new_file_mode", "write_file"]

_FLAGS = os.O_RDWR | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | getattr(os, "O_CLOEXEC", 0)


def new_file_mode(bits: int = 0o666) -> int:
    """``bits`` as the umask leaves them, as ``open()`` would create a file."""
    mask = os.umask(0)
    os.umask(mask)
    return bits & ~mask


class AtomicFile:
    """``with AtomicFile(path, mode) as out:`` write ``out.file``, then ``out.publish()``.

    ``mode``: the file's permission bits (default: a new file's under the umask).
    ``dir_fd``: ``path`` is relative to this open folder.  ``owner``: (uid, gid) it
    gets.  ``durable``: its bytes reach the disk before it gets its name.
    ``exclusive``: it gets its name only if nothing has that name (not even a
    dangling link): :meth:`publish` raises :class:`FileExistsError` otherwise.
    Leaving the block without :meth:`publish` (an error, or nothing to keep)
    removes it.
    """

    def __init__(self, path: str | os.PathLike[str], mode: int | None = None, *,
                 dir_fd: int | None = None, owner: tuple[int, int] | None = None,
                 durable: bool = False, exclusive: bool = False) -> None:
        self.path = os.fspath(path)
        self.mode = new_file_mode() if mode is None else mode
        self.dir_fd = dir_fd
        self.owner = owner
        self.durable = durable
        self.exclusive = exclusive
        folder, name = os.path.split(self.path)
        for _ in range(100):
            self.temp = os.path.join(folder, f".{name}.{os.urandom(4).hex()}.tmp")
            try:
                fd = os.open(self.temp, _FLAGS, 0o600, dir_fd=dir_fd)
                break
            except FileExistsError:
                continue
        else:
            raise OSError(errno.EAGAIN, "no free temporary name", self.path)
        self.file: BinaryIO = os.fdopen(fd, "w+b")
        self.published = False

    def publish(self, check: Callable[[str], object] | None = None) -> None:
        """Give the complete file its name.  ``check(temp)``: called on the complete file
        first (still under its temporary name); raising leaves nothing behind."""
        self.file.flush()
        fd = self.file.fileno()
        os.fchmod(fd, self.mode)
        if self.owner is not None:
            os.fchown(fd, *self.owner)
        if self.durable:
            os.fsync(fd)
        if check is not None:
            check(self.temp)
        if self.exclusive:  # link(2) takes no name that exists, a dangling link included
            os.link(self.temp, self.path, src_dir_fd=self.dir_fd, dst_dir_fd=self.dir_fd)
            os.unlink(self.temp, dir_fd=self.dir_fd)
        else:
            os.replace(self.temp, self.path, src_dir_fd=self.dir_fd, dst_dir_fd=self.dir_fd)
        self.published = True

    def __enter__(self) -> AtomicFile:
        return self

    def __exit__(self, *exc: object) -> None:
        self.file.close()
        if not self.published:
            try:
                os.unlink(self.temp, dir_fd=self.dir_fd)
            except OSError:
                pass


def write_file(path: str | os.PathLike[str], data: bytes, mode: int | None = None, *,
               dir_fd: int | None = None, owner: tuple[int, int] | None = None,
               exclusive: bool = False, only_if_changed: bool = False) -> bool:
    """Write ``data`` to ``path`` as :class:`AtomicFile` does; True if it was written.

    ``only_if_changed``: a regular file that holds ``data`` already is left alone, so
    its time does not trigger rebuilds (a link there is replaced, never followed).
    """
    if only_if_changed and _holds(path, data, dir_fd):
        return False
    with AtomicFile(path, mode, dir_fd=dir_fd, owner=owner, exclusive=exclusive) as out:
        out.file.write(data)
        out.publish()
    return True


def _holds(path: str | os.PathLike[str], data: bytes, dir_fd: int | None) -> bool:
    from .pkgfile import read_regular

    try:
        _st, raw = read_regular(os.fspath(path), len(data), dir_fd, follow=False)
    except OSError:
        return False
    return raw == data
