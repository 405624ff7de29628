"""The per-database lock and scratch area that make writers safe together.

Every writer (install, register, unregister, gc, hooks) holds an exclusive
``flock`` on ``ROOT/.click/lock`` for its whole run, so writers serialise
while readers (list, pkgdir, info) never wait: they only follow links that
are flipped atomically.  Temporary trees and links live in ``ROOT/.click/tmp``,
which the original tool never reads; whatever a killed writer left there is
removed by the next writer, before it does anything else.

The lock file itself holds the *intent* of the writer that holds the lock:
before a change to ``current``, a registration or hook links, the writer
writes what it is about to do there (:mod:`.intents`), and empties the file
once the change is complete.  A writer that finds an intent when it takes the
lock was preceded by one that was killed, and finishes that change first (the
``on_locked`` callback), so every link matches the database again.

A reinstall on a file system that cannot swap two trees in one step moves the
installed tree aside (to ``tmp/``:data:`RETIRED`), then the new one in; that
tree is kept through the cleaning, so that the next writer can put it back if
the first was killed between the two, and removed once ``on_locked`` ran.

A hook link outside the database that must be replaced on another file
system cannot be made in the scratch area; its temporary twin is made beside
it, and its path is first written to ``tmp/outside-links`` so that the next
writer removes it if this one is killed in between.

The lock holds the open directories (:class:`~.fs.Dir`) every write goes
through: the root, ``.click`` and ``.click/tmp``, each refused if it is a
symbolic link.
"""

from __future__ import annotations

import fcntl
import os
import stat
from collections.abc import Callable

from ..errors import ClickError, InstallError
from .fs import Dir, check_own_file, makedirs, refused
from .names import temp_name

__all__ = ["RETIRED", "DatabaseLock"]

_JOURNAL = "outside-links"
#: The installed tree a reinstall moved aside, in the scratch area: only one writer at a
#: time, so one name, which the intent recorded with it tells the place of.
RETIRED = ".click-build.retired"
#: An intent is a few names; a lock file holding more was not written by a writer.
MAX_INTENT = 64 << 10
_LOCK_FLAGS = os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC


class DatabaseLock:
    """``with DatabaseLock(root, owner) as lock:`` -- exclusive access to one database.

    ``create=False``: a database that does not exist yet is left alone (the
    lock is then inert and :attr:`root_dir` is None).  ``on_locked`` runs once
    the lock is held and the scratch area clean: the writer finishes there what
    a killed one left in :meth:`intent`.
    """

    def __init__(self, root: str, owner: tuple[int, int] | None = None,
                 create: bool = True,
                 on_locked: Callable[[DatabaseLock], object] | None = None) -> None:
        self.root = root
        self.owner = owner
        self.create = create
        self.on_locked = on_locked
        self.resumed: object = None  # what on_locked said it finished
        self.root_dir: Dir | None = None
        self.admin: Dir | None = None
        self.tmp: Dir | None = None
        self._fd = -1
        self._writable = False
        self._journal = -1

    def __enter__(self) -> DatabaseLock:
        try:
            self._open()
            if self.on_locked is not None and self.tmp is not None:
                self.resumed = self.on_locked(self)
            if self.tmp is not None:
                self.tmp.remove(RETIRED)  # not put back: the new tree was in place
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

    def _open(self) -> None:
        root = Dir.open_root(self.root)
        if root is None:
            if not self.create:
                return
            makedirs(self.root, self.owner)
            root = Dir.open_root(self.root)
            if root is None:
                raise InstallError(f"database root {self.root} vanished while it was created")
        self.root_dir = root
        if not self.create and not root.is_dir(".click"):
            admin = root.open(".click")  # refuses a link; None if absent: nothing to lock
            if admin is None:
                return
            self.admin = admin
        else:
            self.admin = root.ensure(".click", self.owner)
        self._fd, self._writable = self._open_lock(self.admin)
        fcntl.flock(self._fd, fcntl.LOCK_EX)
        if os.access(".", os.W_OK, dir_fd=self.admin.fd):
            self.tmp = self.admin.ensure("tmp", self.owner)
            self.clean()
            # Opened now: hooks may need it while working as another user.
            # O_EXCL: clean() removed it, so this is a new file, never one linked in.
            self._journal = os.open(_JOURNAL, os.O_WRONLY | os.O_APPEND | os.O_CREAT | os.O_EXCL
                                    | os.O_NOFOLLOW | os.O_CLOEXEC, 0o600, dir_fd=self.tmp.fd)

    def _open_lock(self, admin: Dir) -> tuple[int, bool]:
        writable = True
        try:
            fd = os.open("lock", os.O_RDWR | os.O_CREAT | _LOCK_FLAGS, 0o644, dir_fd=admin.fd)
        except PermissionError:  # a user registering in a shared database
            fd = os.open("lock", os.O_RDONLY | _LOCK_FLAGS, dir_fd=admin.fd)
            writable = False
        except OSError:
            st = admin.lstat("lock")
            if st is not None and not stat.S_ISREG(st.st_mode):
                raise refused(admin.join("lock"), st.st_mode, "a file") from None
            raise
        try:
            check_own_file(fd, admin.join("lock"))
            if writable and self.owner is not None:
                os.fchown(fd, *self.owner)  # the file checked, not whatever the name is now
        except BaseException:
            os.close(fd)
            raise
        return fd, writable

    # -- the intent ------------------------------------------------------------------

    def intent(self) -> bytes:
        """What the writer before us recorded and did not finish (b"": nothing)."""
        if self._fd < 0 or not self._writable:
            return b""  # nor can we finish it: left for a writer that may write here
        return os.pread(self._fd, MAX_INTENT + 1, 0)

    def record_intent(self, record: bytes) -> bool:
        """Write what we are about to change; False where the lock is not ours to write."""
        if self._fd < 0 or not self._writable or len(record) > MAX_INTENT:
            return False
        os.pwrite(self._fd, record, 0)  # into an empty file: cleared after every change
        return True

    def clear_intent(self) -> None:
        """The change is complete."""
        if self._fd >= 0 and self._writable:
            os.ftruncate(self._fd, 0)

    # -- the scratch area ------------------------------------------------------------

    def clean(self) -> None:
        """Remove what earlier, killed writers left in the scratch area."""
        if self.tmp is None:
            return
        self._sweep_outside_links()
        for name in self.tmp.entries():
            if name != RETIRED:  # the intent may need it back (see above)
                self._wait_for_unpacker(name)
                self.tmp.remove(name)

    def _wait_for_unpacker(self, name: str) -> None:
        """An unpacking child of a killed writer may still be writing into scratch
        directory ``name``; it holds a flock on it until it ends: wait for that."""
        assert self.tmp is not None
        try:
            fd = os.open(name, os.O_RDONLY | os.O_DIRECTORY | _LOCK_FLAGS, dir_fd=self.tmp.fd)
        except OSError:
            return  # not a directory (or gone): nothing unpacks into it
        try:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:  # say why we wait: whoever holds it decides how long
                from .. import _console

                _console.warn(f"waiting for the process that holds {self.tmp.join(name)} "
                              "(the unpacker of an earlier, killed install) to end")
                fcntl.flock(fd, fcntl.LOCK_EX)
        finally:
            os.close(fd)

    def scratch_dir(self, label: str) -> str:
        """A new empty directory in the scratch area (same file system as the database)."""
        tmp = self.writable_tmp()
        for _ in range(100):
            name = temp_name(label)
            try:
                os.mkdir(name, 0o755, dir_fd=tmp.fd)
            except FileExistsError:
                continue
            os.chmod(name, 0o755, dir_fd=tmp.fd)  # whatever the umask
            return name
        raise InstallError(f"cannot create a scratch directory in {tmp.path}")

    def writable_tmp(self) -> Dir:
        if self.tmp is None:
            raise InstallError(f"cannot write to the database {self.root}; run as root, "
                               "or pass --root DIR for a database you own")
        return self.tmp

    def note_outside_link(self, user: str | None, path: str) -> bool:
        """Record a temporary link about to be made outside the database; False if we cannot."""
        if self._journal < 0:
            return False
        record = os.fsencode(user or "") + b"\0" + os.fsencode(path) + b"\0"
        os.write(self._journal, record)
        return True

    def _sweep_outside_links(self) -> None:
        """Remove the temporary links outside the database that a writer recorded."""
        assert self.tmp is not None
        if self._journal >= 0:
            os.close(self._journal)
            self._journal = -1
        try:
            raw = self.tmp.read(_JOURNAL, 1 << 24)
        except FileNotFoundError:
            return
        except (OSError, InstallError):
            raw = b""  # not ours: removed with the rest of the scratch area
        fields = raw.split(b"\0")
        from .identity import as_user
        from .links import remove_stale_temp

        for user, path in zip(fields[0::2], fields[1::2]):
            try:
                with as_user(os.fsdecode(user) or None):
                    remove_stale_temp(os.fsdecode(path))
            except (OSError, ClickError):
                continue  # gone, or its user is: nothing of ours is left there
        self.tmp.unlink(_JOURNAL)

    # -- lifetime --------------------------------------------------------------------

    def close(self) -> None:
        if self.tmp is not None and self.tmp.fd >= 0 and self._journal >= 0:
            try:
                self._sweep_outside_links()  # normally nothing is left: just the journal
            except OSError:
                pass
        for d in (self.tmp, self.admin, self.root_dir):
            if d is not None:
                d.close()
        if self._fd >= 0:
            os.close(self._fd)  # releases the flock
            self._fd = -1

    def __exit__(self, *exc: object) -> None:
        self.close()
