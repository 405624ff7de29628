"""Hook links outside the database, made so that a killed writer leaves no stray link.

A hook's link lives where the hook file says (``/var/lib/apparmor/clicks``,
a user's ``~/.local/share``...), usually on another file system than the
database.  A link that does not exist yet is made by one ``symlink()``:
nothing temporary is ever seen.  A link that must change is replaced by one
``rename()`` of a new link made in the database's scratch area when that is
on the same file system and we may write there, otherwise beside the old
one under a fixed-size temporary name that the lock's journal records first
(:meth:`~.lock.DatabaseLock.note_outside_link`), so the next writer removes
it if this one is killed before the rename.
"""

from __future__ import annotations

import errno
import os
import stat

from ..errors import HookError
from .names import temp_name

TYPE_CHECKING = False  # not typing.TYPE_CHECKING: importing typing costs start-up time

if TYPE_CHECKING:
    from typing import Protocol

    from .fs import Dir

    class Journal(Protocol):
        """What a link needs of the writer's lock (:class:`~.lock.DatabaseLock`, which
        imports this module to sweep what a killed writer left): its scratch area, and
        its record of temporary links made outside the database."""

        @property
        def tmp(self) -> Dir | None: ...

        def note_outside_link(self, user: str | None, path: str) -> bool: ...

__all__ = ["TEMP_PREFIX", "place_link", "remove_stale_temp"]

TEMP_PREFIX = ".click-build."


def _read_link(path: str) -> str | None:
    try:
        return os.readlink(path)
    except OSError:
        return None


def place_link(target: str, link: str, lock: Journal | None, user: str | None) -> None:
    """Make ``link`` point at ``target`` (``user``: whose identity we are working with)."""
    if _read_link(link) == target:
        return
    try:
        st: os.stat_result | None = os.lstat(link)
    except FileNotFoundError:
        st = None
    if st is not None and stat.S_ISDIR(st.st_mode):
        raise HookError(f"cannot make hook link {link}: a directory is in the way")
    if st is None:
        try:
            os.symlink(target, link)
            return
        except FileExistsError:
            pass  # appeared meanwhile: replace it below
    tmp = lock.tmp if lock is not None else None
    if tmp is not None:
        temp = temp_name("link")
        try:
            os.symlink(target, temp, dir_fd=tmp.fd)
        except PermissionError:  # working as a user, who may not write there
            pass
        else:
            try:
                os.rename(temp, link, src_dir_fd=tmp.fd)
                return
            except OSError as e:
                tmp.unlink(temp)
                if e.errno != errno.EXDEV:
                    raise
    temp = os.path.join(os.path.dirname(link), temp_name("link"))
    if lock is not None:
        lock.note_outside_link(user, temp)
    os.symlink(target, temp)
    try:
        os.rename(temp, link)
    except BaseException:
        try:
            os.unlink(temp)
        except OSError:
            pass
        raise


def remove_stale_temp(path: str) -> None:
    """Remove a temporary link a killed writer left outside the database (ours only)."""
    if os.path.basename(path).startswith(TEMP_PREFIX) and os.path.islink(path):
        os.unlink(path)
