"""The copy of a CMake project's sources that CMake runs on, updated file by file.

Builds write into their source tree (``po/*.pot``), so CMake runs on a mirror inside
the build folder: the checkout is never touched and unchanged files keep their times
(the build stays incremental).  Both sides may be someone else's: CI builds, as root,
a checkout anyone could push to, and the build folder lies in it.  So each source file
is opened again as the walk saw it (:func:`~click_build.staging.open_staged`: in its
folder, no link followed, the same file), and the mirror is written through folder
descriptors opened without following a link: a link planted or swapped in anywhere is
removed or refused, never copied from or written through.
"""

from __future__ import annotations

import errno
import io
import os
import shutil
import stat
from pathlib import Path

from ..errors import BuildError
from ..staging import Folders, open_staged, stage_tree

__all__ = ["mirror_sources"]

_DIR_FLAGS = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC
_NEW_FILE = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC


def mirror_sources(root: Path, mirror: Path, ignores: list[str],
                   exclude: list[Path] | None = None) -> int:
    """Make the folder ``mirror`` hold the project's source files; copy only what changed
    (another size or modification time), keeping each file's time and permissions.

    Returns the number of files copied.  Whatever else the mirror holds (a ``.pot``
    the build regenerated, a file gone from the checkout) is removed.
    """
    entries = stage_tree(root, ignores, exclude=exclude or [])
    copied = 0
    with _Mirror(mirror) as out, Folders() as sources:
        for e in entries:
            folder, name = out.folder_of(e.arcname)
            have = _lstat(folder, name)
            if e.kind == "dir":
                if have is None or not stat.S_ISDIR(have.st_mode):
                    _remove(folder, name, have)
                    os.mkdir(name, 0o755, dir_fd=folder)
            elif e.kind == "symlink":
                if have is not None and stat.S_ISLNK(have.st_mode) and \
                        os.readlink(name, dir_fd=folder) == e.target:
                    continue
                _remove(folder, name, have)
                os.symlink(e.target, name, dir_fd=folder)
            else:
                with open_staged(e, sources) as src:  # the file the walk saw, or one error
                    st = os.fstat(src.fileno())
                    if have is not None and stat.S_ISREG(have.st_mode) and \
                            have.st_size == st.st_size and have.st_mtime_ns == st.st_mtime_ns:
                        continue
                    _remove(folder, name, have)
                    _copy(src, st, folder, name)
                copied += 1
        _prune(out.top, mirror, "", {e.arcname for e in entries})
    return copied


class _Mirror:
    """The mirror's folders, each opened from the top without following a link; the
    folder of the last entry is kept open (the walk's order puts a folder's files in a
    row)."""

    def __init__(self, top: Path) -> None:
        self.path = top
        self.top = _open_folder(None, str(top), top)
        self._last: tuple[str, int] | None = None

    def folder_of(self, arcname: str) -> tuple[int, str]:
        """The open folder that holds ``arcname``, and its name there."""
        parent, _, name = arcname.rpartition("/")
        if not parent:
            return self.top, name
        if self._last is None or self._last[0] != parent:
            self._close_last()
            fd = self.top
            for part in parent.split("/"):
                sub = _open_folder(fd, part, self.path / parent)
                if fd != self.top:
                    os.close(fd)
                fd = sub
            self._last = (parent, fd)
        return self._last[1], name

    def _close_last(self) -> None:
        if self._last is not None:
            os.close(self._last[1])
            self._last = None

    def __enter__(self) -> _Mirror:
        return self

    def __exit__(self, *exc: object) -> None:
        self._close_last()
        os.close(self.top)


def _open_folder(parent: int | None, name: str, shown: Path) -> int:
    try:
        return os.open(name, _DIR_FLAGS, dir_fd=parent)
    except OSError as e:
        if e.errno in (errno.ELOOP, errno.ENOTDIR):
            raise BuildError(
                f"{shown}: the build's copy of the sources holds a link or file where it "
                "made a folder (someone changed the build folder during the build); "
                "nothing was written through it: build again") from None
        raise BuildError(f"{shown}: cannot open: {e.strerror}") from None


def _lstat(folder: int, name: str) -> os.stat_result | None:
    try:
        return os.stat(name, dir_fd=folder, follow_symlinks=False)
    except FileNotFoundError:
        return None


def _copy(src: io.FileIO, st: os.stat_result, folder: int, name: str) -> None:
    """A new file ``name`` in ``folder`` with the bytes, permissions and times of ``src``."""
    fd = os.open(name, _NEW_FILE, 0o600, dir_fd=folder)
    with open(fd, "wb") as dest:
        shutil.copyfileobj(src, dest)
        dest.flush()
        os.fchmod(fd, stat.S_IMODE(st.st_mode))
        os.utime(fd, ns=(st.st_atime_ns, st.st_mtime_ns))


def _remove(folder: int, name: str, have: os.stat_result | None) -> None:
    """Remove ``name`` from ``folder`` whatever it is, never following a link."""
    if have is None:
        return
    if not stat.S_ISDIR(have.st_mode):
        os.unlink(name, dir_fd=folder)
        return
    try:
        fd = os.open(name, _DIR_FLAGS, dir_fd=folder)
    except OSError as e:
        if e.errno not in (errno.ELOOP, errno.ENOTDIR):
            raise
        os.unlink(name, dir_fd=folder)  # swapped for a link or file meanwhile
        return
    try:
        for child in os.listdir(fd):
            _remove(fd, child, _lstat(fd, child))
    finally:
        os.close(fd)
    os.rmdir(name, dir_fd=folder)


def _prune(folder: int, top: Path, prefix: str, wanted: set[str]) -> None:
    """Remove what the mirror ``top`` holds below ``folder`` but the sources do not."""
    with os.scandir(folder) as it:
        children = [(c.name, c.is_dir(follow_symlinks=False)) for c in it]
    for name, is_dir in children:
        rel = prefix + name
        if rel not in wanted:
            _remove(folder, name, _lstat(folder, name))
        elif is_dir:
            sub = _open_folder(folder, name, top / rel)
            try:
                _prune(sub, top, rel + "/", wanted)
            finally:
                os.close(sub)
