"""The unpack of a package into the database's scratch area, as ``clickpkg`` when root.

:class:`Unpacked` gives the installer a scratch directory holding the audited,
complete tree, ready to be renamed into place, and removes what is left of it
afterwards.  Run as root, the untrusted archive is parsed and written by a
forked child that has become ``clickpkg`` (:func:`_unpack_as`), so apps never
own their code and root never parses the package's data; otherwise this
process unpacks (:func:`unpack_into`, the audit streaming into
:class:`~.unpack.Unpacker`).
"""

from __future__ import annotations

import fcntl
import os
import sys

from .. import _console
from ..errors import ClickError, InstallError
from .fs import chown_to

TYPE_CHECKING = False  # not typing.TYPE_CHECKING: importing typing costs start-up time

if TYPE_CHECKING:
    from typing import TextIO

    from ..manifest import Manifest
    from ..package import ClickPackage
    from .lock import DatabaseLock

__all__ = ["Unpacked", "unpack_into"]

#: What the unpacking child sends, alone, when the tree is complete.
_UNPACKED = b"\0unpacked\n"


class _Relayed(ClickError):
    """An error raised in the unpacking child, carried to the parent."""

    def __init__(self, lines: list[str]) -> None:
        super().__init__("; ".join(lines))
        self._lines = lines

    def lines(self) -> list[str]:
        return self._lines


class Unpacked:
    """``with Unpacked(pkg, manifest, lock, owner) as scratch:`` -- the package audited
    and unpacked into a scratch directory (``owner``'s: as root, clickpkg's), named
    ``scratch`` in the scratch area.

    Whatever is left of it is removed at the end, and the unpacking child reaped
    then: its teardown overlaps the parent's work.  A class, not ``contextlib``:
    importing it costs start-up time on every install.
    """

    def __init__(self, pkg: ClickPackage, manifest: Manifest, lock: DatabaseLock,
                 owner: tuple[int, int] | None) -> None:
        self.pkg, self.manifest, self.lock, self.owner = pkg, manifest, lock, owner
        self.tmp = lock.writable_tmp()
        self.scratch = ""
        self.child: int | None = None  # the unpacking process, once it said it was done

    def __enter__(self) -> str:
        self.scratch = self.lock.scratch_dir("unpack")
        try:
            chown_to(self.scratch, self.owner, self.tmp.fd)
            scratch_dir = self.tmp.open(self.scratch)
            assert scratch_dir is not None
            with scratch_dir:
                if self.owner is not None:
                    self.child = _unpack_as(self.owner, self.pkg, self.manifest,
                                            scratch_dir.fd)
                else:
                    unpack_into(self.pkg, self.manifest, scratch_dir.fd)
        except BaseException:
            self.__exit__()
            raise
        return self.scratch

    def __exit__(self, *exc: object) -> None:
        self.tmp.remove(self.scratch)
        if self.child is not None:
            os.waitpid(self.child, 0)  # reaped: it has ended by now
            self.child = None


def unpack_into(pkg: ClickPackage, manifest: Manifest, root_fd: int,
                progress_stream: TextIO | None = None) -> None:
    """Audit while streaming into the directory ``root_fd``; raises on any refusal.

    The control data was audited already, frameworks included (clickpkg
    may not be able to read the frameworks directory): ``manifest`` is
    what that audit returned.
    """
    from ..manifest import dump_manifest
    from ..package import audit_data
    from .unpack import Unpacker, write_admin_dir

    mask = os.umask(0o022)
    def files() -> int:  # one md5sums line per file: read again only for a terminal
        return sum(chunk.count(b"\n") for chunk in pkg.md5sums_chunks())

    with _console.Progress(f"unpacking {pkg.name}", files, progress_stream) as progress:
        try:
            unpacker = Unpacker(root_fd, pkg.name, progress.advance)
            try:
                audit_data(pkg, manifest, sink=unpacker)
                write_admin_dir(root_fd, pkg,
                                dump_manifest(pkg.manifest_data).encode("utf-8"))
                unpacker.finish()
            finally:
                unpacker.close()
        finally:
            os.umask(mask)
    _console.debug(f"unpacked {pkg.name} {pkg.version}: {unpacker.entries} entries")


def _unpack_as(owner: tuple[int, int], pkg: ClickPackage, manifest: Manifest,
               root_fd: int) -> int:
    """Run :func:`unpack_into` in a child that has become ``clickpkg``; return the
    child's pid, for the caller to reap (it may still be ending).

    A fork, not an exec: the child inherits the package snapshot and the
    scratch directory's fd, parses the untrusted archive without root, and
    every file it creates is clickpkg's from the start (no chown pass
    afterwards, no path it would need permission to walk).  It locks the
    scratch directory (flock on its descriptor) for as long as it lives: if the
    parent is killed, the next writer's clean-up waits for that lock, so it never
    clears the scratch area under a child still writing there.  Every other
    descriptor (the database lock, which it could release, the database's
    directories) is closed in it.
    """
    uid, gid = owner
    # Everything the child runs is imported now: clickpkg may not be able to
    # read this interpreter's library (a venv under /root, say).
    from .. import manifest as _manifest  # noqa: F401
    from .. import package as _package  # noqa: F401
    from ..tarread import load_decompressor
    from . import unpack  # noqa: F401

    load_decompressor(pkg.data_member.name)  # lzma, bz2: never on a gzip package's path

    read_fd, write_fd = os.pipe()
    sys.stdout.flush()
    sys.stderr.flush()
    pid = os.fork()
    if pid == 0:  # child
        code, report = 1, b""
        try:
            os.close(read_fd)
            # progress only, and only a terminal shows it
            terminal = os.fdopen(os.dup(2), "w") if os.isatty(2) else None
            null = os.open(os.devnull, os.O_WRONLY)
            os.dup2(null, 2)  # its warnings repeat the parent's; errors go up the pipe
            kept = {0, 1, 2, pkg.file.fileno(), root_fd, write_fd}
            _close_all_but(kept | ({terminal.fileno()} if terminal is not None else set()))
            os.setgroups([])
            os.setresgid(gid, gid, gid)
            os.setresuid(uid, uid, uid)
            fcntl.flock(root_fd, fcntl.LOCK_EX)  # held until this process ends
            unpack_into(pkg, manifest, root_fd, progress_stream=terminal)
            code = 0
        except ClickError as e:
            report = "\n".join(e.lines()).encode("utf-8", "replace")
        except BaseException as e:  # a bug: say what, never hang the parent
            report = f"unpacking failed: {type(e).__name__}: {e}".encode("utf-8", "replace")
        finally:
            try:
                view = memoryview((_UNPACKED if code == 0 else b"") + report)
                while view:
                    view = view[os.write(write_fd, view):]
                # The parent goes on at this end of file, not after this process's
                # teardown (unmapping every page it shares: about a millisecond).
                os.close(write_fd)
            finally:
                os._exit(code)
    os.close(write_fd)
    with os.fdopen(read_fd, "rb") as pipe:
        said = pipe.read()
    if said == _UNPACKED:
        return pid
    _, status = os.waitpid(pid, 0)
    if os.WIFSIGNALED(status):
        raise InstallError(f"the unpacking process was killed by signal {os.WTERMSIG(status)}")
    text = said.decode("utf-8", "replace")  # the child's error (it says _UNPACKED only alone)
    raise _Relayed(text.splitlines() or ["unpacking failed"])


def _close_all_but(keep: set[int]) -> None:
    """Close every descriptor not in ``keep`` (the unpacking child needs only a few)."""
    low = 0
    for fd in sorted(keep):
        if fd > low:
            os.closerange(low, fd)
        low = fd + 1
    os.closerange(low, os.sysconf("SC_OPEN_MAX"))
