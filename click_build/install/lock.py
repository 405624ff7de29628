"""The per-database lock and scratch area that make writers safe together.

Every writer (install, register, unregister, gc, hooks) holds an exclusive
``flock`` on ``ROOT/.click/lock`` for its whole run, so writers serialise
while readers (list, pkgdir, info) never wait: they only follow links that
are flipped atomically.  Temporary trees and links live in ``ROOT/.click/tmp``,
which the original tool never reads; whatever a killed writer left there is
removed by the next writer, before it does anything else.
"""

from __future__ import annotations

import fcntl
import os
import time

from ..errors import InstallError
from .fs import chown_to, makedirs, remove_tree, sorted_entries

__all__ = ["DatabaseLock"]


class DatabaseLock:
    """``with DatabaseLock(root, owner) as lock:`` -- exclusive access to one database."""

    def __init__(self, root: str, owner: tuple[int, int] | None = None) -> None:
        self.root = root
        self.owner = owner
        self.admin = os.path.join(root, ".click")
        self.tmp: str | None = os.path.join(self.admin, "tmp")
        self._fd = -1

    def __enter__(self) -> DatabaseLock:
        if os.path.islink(self.admin) or os.path.islink(self.tmp or ""):
            raise InstallError(f"{self.admin} is a symbolic link; refusing to write through it")
        try:
            makedirs(self.admin, self.owner)
            lock = os.path.join(self.admin, "lock")
            try:
                self._fd = os.open(lock, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC | os.O_NOFOLLOW,
                                   0o644)
                chown_to(lock, self.owner)
            except PermissionError:  # a user registering in a shared database
                self._fd = os.open(lock, os.O_RDONLY | os.O_CLOEXEC | os.O_NOFOLLOW)
            fcntl.flock(self._fd, fcntl.LOCK_EX)
            tmp = os.path.join(self.admin, "tmp")
            if not os.access(self.admin, os.W_OK):
                self.tmp = None
            elif not os.path.isdir(tmp):
                makedirs(tmp, self.owner)
            else:
                self.clean()
        except PermissionError as e:
            self.close()
            raise InstallError(
                f"cannot write to the database {self.root} ({e.strerror}); run as root, "
                "or pass --root DIR for a database you own"
            ) from None
        except BaseException:
            self.close()
            raise
        return self

    def clean(self) -> None:
        """Remove what earlier, killed writers left in the scratch area."""
        if self.tmp is not None:
            for name in sorted_entries(self.tmp):
                remove_tree(os.path.join(self.tmp, name))

    def scratch_dir(self, label: str) -> str:
        """A new empty directory in the scratch area (same file system as the database)."""
        if self.tmp is None:
            raise InstallError(f"cannot write to the database {self.root}; run as root, "
                               "or pass --root DIR for a database you own")
        # We hold the lock, so pid + clock cannot collide; no tempfile/random import.
        for attempt in range(100):
            path = os.path.join(self.tmp, f"{label}.{os.getpid()}.{time.monotonic_ns()}.{attempt}")
            try:
                os.mkdir(path, 0o755)
            except FileExistsError:
                continue
            os.chmod(path, 0o755)  # whatever the umask
            return path
        raise InstallError(f"cannot create a scratch directory in {self.tmp}")

    def close(self) -> None:
        if self._fd >= 0:
            os.close(self._fd)  # releases the flock
            self._fd = -1

    def __exit__(self, *exc: object) -> None:
        self.close()
