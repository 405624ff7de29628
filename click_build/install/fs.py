"""File-system moves the installer relies on: directory fds, atomic flips, safe removal.

Inside a database nothing is reached by a path: every directory is opened
relative to its parent's descriptor with ``O_NOFOLLOW`` (:class:`Dir`), so a
symbolic link planted where a directory belongs (by another user, a crashed
run, a malicious app) is refused with an error naming it, never followed,
and a directory swapped for a link between a check and a use changes
nothing.  The only links the installer follows are the ones it makes as
links (``current``, registrations), and those only by reading their target.

Every change a reader can see is one ``rename``: a new link or tree is made
under a temporary name in the database's scratch area, then renamed over
the old one, so a process killed at any point leaves the old or the new
state.
"""

from __future__ import annotations

import errno
import os
import pwd
import stat

from ..errors import InstallError
from ..pkgfile import read_regular
from .names import temp_name

TYPE_CHECKING = False  # not typing.TYPE_CHECKING: importing typing costs start-up time

if TYPE_CHECKING:
    from typing import Any

__all__ = [
    "CLICKPKG",
    "Dir",
    "Tampered",
    "check_own_file",
    "chown_to",
    "clickpkg_ids",
    "exchange",
    "makedirs",
    "sorted_names",
]

CLICKPKG = "clickpkg"
_CLOEXEC = getattr(os, "O_CLOEXEC", 0)
_DIR_FLAGS = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | _CLOEXEC


def clickpkg_ids() -> tuple[int, int] | None:
    """The ``clickpkg`` account when running as root and it exists, else None."""
    if os.geteuid() != 0:
        return None
    try:
        pw = pwd.getpwnam(CLICKPKG)
    except KeyError:
        return None
    return pw.pw_uid, pw.pw_gid


def chown_to(path: str, ids: tuple[int, int] | None, dir_fd: int | None = None) -> None:
    """lchown when running as root (``ids`` None means leave it to the caller)."""
    if ids is not None:
        os.chown(path, ids[0], ids[1], dir_fd=dir_fd, follow_symlinks=False)


def makedirs(path: str, owner: tuple[int, int] | None = None) -> None:
    """``mkdir -p`` of a path outside any database (a root, a hook's directory).

    Each directory it creates goes to ``owner``.
    """
    missing = []
    current = os.path.abspath(path)
    while not os.path.isdir(current):
        missing.append(current)
        parent = os.path.dirname(current)
        if parent == current:
            break
        current = parent
    for directory in reversed(missing):
        try:
            os.mkdir(directory, 0o755)
        except FileExistsError:
            if not os.path.isdir(directory):
                raise
            continue
        chown_to(directory, owner)


def sorted_names(names: list[str]) -> list[str]:
    """Directory entries in byte order (as the original's ``Click.Dir``)."""
    names.sort(key=os.fsencode)
    return names


_KINDS = ((stat.S_ISLNK, "a symbolic link"), (stat.S_ISREG, "a file"),
          (stat.S_ISDIR, "a directory"), (stat.S_ISFIFO, "a FIFO"), (stat.S_ISSOCK, "a socket"))


def _what(mode: int) -> str:
    return next((name for test, name in _KINDS if test(mode)), "a device")


class Tampered(InstallError):
    """Something in a database that the installer did not make: never skipped quietly."""


def refused(path: str, mode: int, expected: str = "a directory") -> Tampered:
    """The one error for something in the database that is not what we made there."""
    if stat.S_ISLNK(mode):
        return Tampered(f"{path} is a symbolic link where {expected} belongs; refusing "
                            "to follow a link the installer did not make (remove it)")
    return Tampered(f"{path} is {_what(mode)} where {expected} belongs; the installer did "
                    "not make it (remove it)")


def check_own_file(fd: int, path: str) -> os.stat_result:
    """The open file ``path`` is a regular file with no other name: a database file
    (the lock, the log) that the installer made.  A hard link planted in its place
    would make root write to, or give away, a file outside the database."""
    st = os.fstat(fd)
    if not stat.S_ISREG(st.st_mode):
        raise refused(path, st.st_mode, "a file")
    if st.st_nlink != 1:
        raise Tampered(f"{path} has {st.st_nlink} hard links; the installer made it with one "
                       "and will not write to a file that has other names (remove it)")
    return st


class Dir:
    """A directory of a database, open by descriptor, and the path it is shown by."""

    __slots__ = ("_pid", "fd", "path")

    def __init__(self, fd: int, path: str) -> None:
        self.fd = fd
        self.path = path
        self._pid = os.getpid()

    @classmethod
    def open_root(cls, path: str) -> Dir | None:
        """A database root (the path itself is configuration: it may be a link); None if absent."""
        try:
            fd = os.open(path, os.O_RDONLY | os.O_DIRECTORY | _CLOEXEC)
        except FileNotFoundError:
            return None
        except NotADirectoryError:
            raise InstallError(f"database root {path} is not a directory") from None
        return cls(fd, path)

    # -- lifetime ----------------------------------------------------------------------

    def close(self) -> None:
        if self.fd >= 0:
            os.close(self.fd)
            self.fd = -1

    def __enter__(self) -> Dir:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __del__(self) -> None:
        # Only in the process that opened it: a forked child (the unpacker) closed the
        # inherited numbers, which may name its own files by now.
        try:
            if self._pid == os.getpid():
                self.close()
        except (OSError, AttributeError):
            pass

    # -- looking ---------------------------------------------------------------------

    def join(self, *parts: str) -> str:
        return os.path.join(self.path, *parts)

    def lstat(self, name: str) -> os.stat_result | None:
        try:
            return os.stat(name, dir_fd=self.fd, follow_symlinks=False)
        except (FileNotFoundError, NotADirectoryError):
            return None

    def is_dir(self, name: str) -> bool:
        """A real directory (a link to one is not)."""
        st = self.lstat(name)
        return st is not None and stat.S_ISDIR(st.st_mode)

    def open(self, *parts: str) -> Dir | None:
        """The directory ``parts`` below this one; None if one is missing.

        A part that is a link or not a directory is an error naming it.
        """
        current: Dir = self
        for name in parts:
            try:
                fd = os.open(name, _DIR_FLAGS, dir_fd=current.fd)
            except FileNotFoundError:
                fd = -1
            except OSError as e:
                if e.errno not in (errno.ELOOP, errno.ENOTDIR):
                    raise
                st = current.lstat(name)
                if st is None:
                    fd = -1
                else:
                    raise refused(current.join(name), st.st_mode) from None
            if current is not self:
                current.close()
            if fd < 0:
                return None
            current = Dir(fd, current.join(name))
        return current if current is not self else Dir(os.dup(self.fd), self.path)

    def ensure(self, name: str, owner: tuple[int, int] | None = None, mode: int = 0o755) -> Dir:
        """The directory ``name`` here, created (and given to ``owner``) if missing."""
        try:
            os.mkdir(name, mode, dir_fd=self.fd)
        except FileExistsError:
            pass
        else:
            chown_to(name, owner, self.fd)
        found = self.open(name)
        if found is None:  # removed again under us
            raise InstallError(f"{self.join(name)} vanished while it was being created")
        return found

    def entries(self) -> list[str]:
        """The names in this directory, in byte order."""
        return sorted_names(os.listdir(self.fd))

    def readlink(self, name: str) -> str | None:
        """The target of the link ``name``; None if it is missing or not a link."""
        try:
            return os.readlink(name, dir_fd=self.fd)
        except (FileNotFoundError, NotADirectoryError):
            return None
        except OSError as e:
            if e.errno == errno.EINVAL:  # not a link
                return None
            raise

    def read(self, name: str, limit: int) -> bytes:
        """The regular file ``name`` (never through a link, never blocking on a FIFO)."""
        st, data = read_regular(name, limit, self.fd, follow=False)
        if not stat.S_ISREG(st.st_mode):
            raise refused(self.join(name), st.st_mode, "a file")
        if data is None:
            raise InstallError(f"{self.join(name)} is {st.st_size} bytes; the limit is {limit}")
        return data[:limit]

    # -- changing --------------------------------------------------------------------

    def unlink(self, name: str) -> None:
        """Remove a link or file ``name`` if present (never a directory)."""
        try:
            os.unlink(name, dir_fd=self.fd)
        except FileNotFoundError:
            pass

    def remove(self, name: str) -> None:
        """Remove ``name`` whatever it is, never following a link in or under it.

        A tree is flattened as it goes: each subdirectory is renamed up into
        the directory being removed, so however deep the tree, no more than two
        descriptors are open and nothing recurses.
        """
        st = self.lstat(name)
        if st is None:
            return
        if not stat.S_ISDIR(st.st_mode):
            self.unlink(name)
            return
        try:
            top = os.open(name, _DIR_FLAGS, dir_fd=self.fd)
        except OSError as e:
            if e.errno not in (errno.ELOOP, errno.ENOTDIR):
                raise
            self.unlink(name)  # swapped for a link or file meanwhile
            return
        try:
            _empty(top)
        finally:
            os.close(top)
        os.rmdir(name, dir_fd=self.fd)

    def replace_link(self, target: str, name: str, tmp: Dir | None = None,
                     owner: tuple[int, int] | None = None) -> None:
        """Point the link ``name`` here at ``target`` with one rename.

        The new link is made in ``tmp`` (the database's scratch area, on the
        same file system; default: this directory) under a fixed-size
        temporary name.  Something other than a link at ``name`` is an error.
        """
        st = self.lstat(name)
        if st is not None and not stat.S_ISLNK(st.st_mode):
            raise refused(self.join(name), st.st_mode, "a symbolic link")
        where = tmp if tmp is not None else self
        temp = temp_name("link")
        os.symlink(target, temp, dir_fd=where.fd)
        try:
            chown_to(temp, owner, where.fd)
            os.rename(temp, name, src_dir_fd=where.fd, dst_dir_fd=self.fd)
        except BaseException:
            where.unlink(temp)
            raise


def _empty(top: int) -> None:
    """Remove everything in the directory ``top``, hoisting subdirectories into it."""
    while True:
        names = os.listdir(top)
        if not names:
            return
        for name in names:
            try:
                sub = os.open(name, _DIR_FLAGS, dir_fd=top)
            except OSError as e:
                if e.errno not in (errno.ELOOP, errno.ENOTDIR):
                    raise
                os.unlink(name, dir_fd=top)  # a file or a link: never followed
                continue
            try:
                if not os.access(".", os.W_OK | os.X_OK, dir_fd=sub):
                    os.chmod(sub, 0o700)  # ours (we may remove it): let us empty it
                for entry in os.listdir(sub):
                    st = os.stat(entry, dir_fd=sub, follow_symlinks=False)
                    if stat.S_ISDIR(st.st_mode):
                        os.rename(entry, temp_name("flat"), src_dir_fd=sub, dst_dir_fd=top)
                    else:
                        os.unlink(entry, dir_fd=sub)
            finally:
                os.close(sub)
            try:
                os.rmdir(name, dir_fd=top)
            except OSError as e:
                if e.errno != errno.ENOTEMPTY:  # refilled meanwhile: the next pass
                    raise


def exchange(a: Dir, a_name: str, b: Dir, b_name: str) -> bool:
    """Swap two entries atomically (``renameat2(RENAME_EXCHANGE)``); False if unsupported."""
    global _renameat2
    if _renameat2 is None:
        import ctypes

        func = getattr(ctypes.CDLL(None, use_errno=True), "renameat2", None)
        if func is None:
            _renameat2 = False
            return False
        func.argtypes = [ctypes.c_int, ctypes.c_char_p, ctypes.c_int, ctypes.c_char_p,
                         ctypes.c_uint]
        _renameat2 = func
    if _renameat2 is False:
        return False
    rename_exchange = 2
    if _renameat2(a.fd, os.fsencode(a_name), b.fd, os.fsencode(b_name), rename_exchange) == 0:
        return True
    import ctypes

    err = ctypes.get_errno()
    if err in (errno.ENOSYS, errno.EINVAL, errno.EOPNOTSUPP):
        return False
    raise OSError(err, os.strerror(err), b.join(b_name))


_renameat2: Any = None  # libc's renameat2, False where it has none
