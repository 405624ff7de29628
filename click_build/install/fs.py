"""File-system moves the installer relies on: atomic flips, safe removal, owners.

Every change a reader can see is one ``rename``: a new link or tree is made
under a temporary name inside the database, then renamed over the old one,
so a process killed at any point leaves either the old or the new state.
"""

from __future__ import annotations

import errno
import os
import pwd

__all__ = [
    "CLICKPKG",
    "atomic_symlink",
    "chown_to",
    "clickpkg_ids",
    "exchange",
    "is_symlink",
    "makedirs",
    "open_dir",
    "read_link",
    "remove_tree",
    "sorted_entries",
]

CLICKPKG = "clickpkg"
_DIR_FLAGS = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC


def open_dir(path: str, dir_fd: int | None = None) -> int:
    """Open a directory without following a symlink in its last component."""
    return os.open(path, _DIR_FLAGS, dir_fd=dir_fd)


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
    """``mkdir -p`` that gives each directory it creates to ``owner``."""
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


def is_symlink(path: str) -> bool:
    return os.path.islink(path)


def read_link(path: str) -> str | None:
    try:
        return os.readlink(path)
    except OSError:
        return None


def sorted_entries(path: str) -> list[str]:
    """Directory entries in byte order (as the original's ``Click.Dir``); [] if absent."""
    try:
        names = os.listdir(path)
    except (FileNotFoundError, NotADirectoryError):
        return []
    names.sort(key=os.fsencode)
    return names


def atomic_symlink(target: str, link: str, tmp_dir: str | None = None,
                   owner: tuple[int, int] | None = None) -> None:
    """Point ``link`` at ``target`` with one rename; readers never see it missing.

    The new link is made as ``tmp_dir/.NAME.PID.new`` (default: beside the
    link), so a crash leaves at most a stray temporary link.
    """
    directory, name = os.path.split(link)
    tmp = os.path.join(tmp_dir or directory, f".{name}.{os.getpid()}.new")
    try:
        os.symlink(target, tmp)
    except FileExistsError:
        os.unlink(tmp)
        os.symlink(target, tmp)
    try:
        chown_to(tmp, owner)
        os.rename(tmp, link)
    except BaseException:
        _unlink_quietly(tmp)
        raise


def _unlink_quietly(path: str) -> None:
    try:
        os.unlink(path)
    except OSError:
        pass


def remove_tree(path: str) -> None:
    """Remove a file, link or directory tree without following symlinks."""
    import stat

    try:
        mode = os.lstat(path).st_mode
    except FileNotFoundError:
        return
    if not stat.S_ISDIR(mode):
        os.unlink(path)
        return
    import shutil  # only removal needs it

    shutil.rmtree(path)


_libc_renameat2 = None


def exchange(a: str, b: str) -> bool:
    """Swap two paths atomically (``renameat2(RENAME_EXCHANGE)``); False if unsupported."""
    global _libc_renameat2
    if _libc_renameat2 is None:
        import ctypes

        libc = ctypes.CDLL(None, use_errno=True)
        func = getattr(libc, "renameat2", None)
        if func is None:
            _libc_renameat2 = False
            return False
        func.argtypes = [ctypes.c_int, ctypes.c_char_p, ctypes.c_int, ctypes.c_char_p,
                         ctypes.c_uint]
        _libc_renameat2 = func
    if _libc_renameat2 is False:
        return False
    at_fdcwd, rename_exchange = -100, 2
    if _libc_renameat2(at_fdcwd, os.fsencode(a), at_fdcwd, os.fsencode(b), rename_exchange) == 0:
        return True
    import ctypes

    err = ctypes.get_errno()
    if err in (errno.ENOSYS, errno.EINVAL, errno.EOPNOTSUPP):
        return False
    raise OSError(err, os.strerror(err), a)
