"""The unpacker: a :class:`~click_build.package.DataSink` that writes a version tree.

The audit streams the data archive once and hands every checked entry here.
Everything is created relative to directory file descriptors opened with
``O_NOFOLLOW`` and files with ``O_CREAT|O_EXCL``, so nothing can be written
through a symlink or over an existing file, whatever the archive says.  Modes
are the audit's normalised 0644/0755, mtimes are the archive's.  The tree is
built in a scratch directory of the database; the installer renames it into
place only when the audit has finished, so a refused package leaves nothing.

Nothing is kept per member: the path list (``.click/info/NAME.list``) is
written as entries arrive, and the directories' archive mtimes wait in a
nameless file of the admin directory until the tree is complete.  A package of
a million members unpacks in the memory of one.  The admin directory is
made first; no entry can land in it (the audit refuses a top-level
``.click``).
"""

from __future__ import annotations

import os
import posixpath
import stat
import time
from collections.abc import Callable, Iterable, Iterator

from ..package import ClickPackage, DataEntry
from ..pkgfile import anonymous_file

TYPE_CHECKING = False  # not typing.TYPE_CHECKING: importing typing costs start-up time

if TYPE_CHECKING:
    from typing import BinaryIO

__all__ = ["Unpacker", "write_admin_dir"]

_FILE_FLAGS = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC
_DIR_FLAGS = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC
_MAX_OPEN_DIRS = 128
_BUFFER = 1 << 16


class Unpacker:
    """Writes entries under the directory ``root_fd`` and their paths to
    ``.click/info/PACKAGE.list``; call :meth:`finish` at the end, :meth:`close` always."""

    def __init__(self, root_fd: int, package: str,
                 on_file: Callable[[], None] | None = None) -> None:
        self.root_fd = root_fd
        self._on_file = on_file
        self._fds: dict[str, int] = {}
        self._streams: list[BinaryIO] = []
        self.entries = 0
        admin = _make_admin_dirs(root_fd)
        try:
            info = os.open("info", _DIR_FLAGS, dir_fd=admin)
            try:
                self._listing = self._stream(f"{package}.list", info)
            finally:
                os.close(info)
            # Directory mtimes are set once every entry is in (an entry added later
            # changes its folder's mtime); until then they wait on disk, a line each,
            # in a nameless file (no name to make and remove on every install).
            self._dir_mtimes = anonymous_file(admin)
            self._streams.append(self._dir_mtimes)
        except BaseException:
            self.close()
            raise
        finally:
            os.close(admin)
        self._list("/.")

    def _stream(self, name: str, dir_fd: int) -> BinaryIO:
        fd = os.open(name, (_FILE_FLAGS & ~os.O_WRONLY) | os.O_RDWR, 0o644, dir_fd=dir_fd)
        stream = open(fd, "w+b", buffering=_BUFFER)
        self._streams.append(stream)
        return stream

    def _list(self, path: str) -> None:
        # the original's list: "/." then "/PATH" per entry, in archive order
        self._listing.write((path + "\n").encode("utf-8", "surrogateescape"))
        self.entries += 1

    # -- directory fds -----------------------------------------------------------

    def _dir_fd(self, path: str) -> int:
        """fd of an already created directory of the tree ("" is the root).

        Walks down from the deepest directory still open, without recursion,
        keeping at most ``_MAX_OPEN_DIRS`` descriptors however deep the tree.
        """
        if not path:
            return self.root_fd
        fd = self._fds.get(path)
        if fd is not None:
            return fd
        base, rest = self.root_fd, path
        cut = len(path)
        while True:
            cut = path.rfind("/", 0, cut)
            if cut < 0:
                break
            cached = self._fds.get(path[:cut])
            if cached is not None:
                base, rest = cached, path[cut + 1:]
                break
        current, opened = base, []
        try:
            for name in rest.split("/"):
                try:
                    current = os.open(name, _DIR_FLAGS, dir_fd=current)
                except FileNotFoundError:  # implied by a deeper path, not in the archive
                    os.mkdir(name, 0o755, dir_fd=current)
                    current = os.open(name, _DIR_FLAGS, dir_fd=current)
                opened.append(current)
        except BaseException:
            for fd in opened:
                os.close(fd)
            raise
        for intermediate in opened[:-1]:
            os.close(intermediate)
        if len(self._fds) >= _MAX_OPEN_DIRS:
            self._close_fds()  # after the walk: ``base`` may be one of them
        self._fds[path] = current
        return current

    def _close_fds(self) -> None:
        for fd in self._fds.values():
            os.close(fd)
        self._fds.clear()

    def _place(self, path: str) -> tuple[int, str]:
        parent, name = posixpath.split(path)
        return self._dir_fd(parent), name

    # -- DataSink ------------------------------------------------------------------

    def directory(self, entry: DataEntry) -> None:
        if entry.path:
            parent_fd, name = self._place(entry.path)
            try:
                os.mkdir(name, 0o755, dir_fd=parent_fd)
            except FileExistsError:  # created earlier as an implied parent: must be a dir
                if not stat.S_ISDIR(os.stat(name, dir_fd=parent_fd, follow_symlinks=False).st_mode):
                    raise
            self._list("/" + entry.path)
        self._dir_mtimes.write(f"{entry.mtime} {entry.path}\n".encode("utf-8", "surrogateescape"))

    def file(self, entry: DataEntry, chunks: Iterator[bytes]) -> None:
        parent_fd, name = self._place(entry.path)
        fd = os.open(name, _FILE_FLAGS, entry.mode, dir_fd=parent_fd)
        try:
            for chunk in chunks:
                view = memoryview(chunk)
                while view:
                    view = view[os.write(fd, view):]
            os.utime(fd, (entry.mtime, entry.mtime))
        finally:
            os.close(fd)
        self._list("/" + entry.path)
        if self._on_file is not None:
            self._on_file()

    def symlink(self, entry: DataEntry) -> None:
        parent_fd, name = self._place(entry.path)
        os.symlink(entry.target, name, dir_fd=parent_fd)
        os.utime(name, (entry.mtime, entry.mtime), dir_fd=parent_fd, follow_symlinks=False)
        self._list("/" + entry.path)

    def hardlink(self, entry: DataEntry) -> None:
        src_fd, src_name = self._place(entry.target)
        src_fd = os.dup(src_fd)  # placing the link may close the cached descriptors
        try:
            dst_fd, dst_name = self._place(entry.path)
            os.link(src_name, dst_name, src_dir_fd=src_fd, dst_dir_fd=dst_fd,
                    follow_symlinks=False)
        finally:
            os.close(src_fd)
        self._list("/" + entry.path)

    def finish(self) -> None:
        """Complete the list; give directories their archive mtimes.

        In any order: setting a folder's times changes no other folder's mtime,
        and every entry is in by now.
        """
        self._dir_mtimes.seek(0)
        for line in self._dir_mtimes:
            stamp, _, raw = line[:-1].partition(b" ")
            mtime, path = int(stamp), raw.decode("utf-8", "surrogateescape")
            if path:
                parent_fd, name = self._place(path)
                os.utime(name, (mtime, mtime), dir_fd=parent_fd, follow_symlinks=False)
            else:
                os.utime(self.root_fd, (mtime, mtime))
        self._listing.close()  # its last write may fail (a full disk): say so
        self.close()

    def close(self) -> None:
        self._close_fds()
        while self._streams:
            try:
                self._streams.pop().close()
            except OSError:  # after a failure: the scratch tree is discarded anyway
                pass


# dpkg writes these fields first, in this order, in its status file.
_STATUS_ORDER = (
    "Package", "Essential", "Status", "Priority", "Section", "Installed-Size", "Origin",
    "Maintainer", "Bugs", "Architecture", "Multi-Arch", "Source", "Version", "Config-Version",
    "Replaces", "Provides", "Depends", "Pre-Depends", "Recommends", "Suggests", "Breaks",
    "Conflicts", "Enhances", "Conffiles", "Description",
)


def _status(control: dict[str, str]) -> str:
    fields = dict(control)
    fields["Status"] = "install ok installed"
    known = {k.lower(): k for k in fields}
    order = [known[n.lower()] for n in _STATUS_ORDER if n.lower() in known]
    order += [k for k in fields if k not in order]
    lines = [f"{k}: {fields[k]}".replace("\n", "\n ") for k in order]
    return "\n".join(lines) + "\n\n"


def _make_admin_dirs(version_fd: int) -> int:
    """Create ``VERSION/.click/{info,updates,triggers}``; the fd of ``.click``."""
    os.mkdir(".click", 0o755, dir_fd=version_fd)
    admin = os.open(".click", _DIR_FLAGS, dir_fd=version_fd)
    try:
        for sub in ("info", "updates", "triggers"):
            os.mkdir(sub, 0o755, dir_fd=admin)
    except BaseException:
        os.close(admin)
        raise
    return admin


def write_admin_dir(version_fd: int, pkg: ClickPackage, manifest_bytes: bytes) -> None:
    """The rest of ``VERSION/.click/``, the dpkg admin directory the original leaves
    behind (the :class:`Unpacker` made it and wrote ``info/NAME.list``).

    The original's readers need only ``info/NAME.manifest``; the rest lets
    ``dpkg --admindir=VERSION/.click -L NAME`` and friends work as before.
    """
    name = pkg.name
    admin = os.open(".click", _DIR_FLAGS, dir_fd=version_fd)
    try:
        info = os.open("info", _DIR_FLAGS, dir_fd=admin)
        files: list[tuple[int, str, Iterable[bytes], int]] = [
            (info, f"{name}.manifest", (manifest_bytes,), 0o644),
            # streamed: a line per file, tens of MiB for a big app
            (info, f"{name}.md5sums", pkg.md5sums_chunks(), 0o644),
            (info, "format", (b"1\n",), 0o644),
            (admin, "status", (_status(pkg.control).encode("utf-8"),), 0o644),
            (admin, "available", (), 0o644),
        ]
        if pkg.preinst is not None:
            files.append((info, f"{name}.preinst", (pkg.preinst,), 0o755))
        try:
            for dir_fd, filename, chunks, mode in files:
                fd = os.open(filename, _FILE_FLAGS, mode, dir_fd=dir_fd)
                try:
                    for chunk in chunks:
                        view = memoryview(chunk)
                        while view:  # a write may be short
                            view = view[os.write(fd, view):]
                finally:
                    os.close(fd)
        finally:
            os.close(info)
    finally:
        os.close(admin)


def log_line(action: str, pkg: ClickPackage, old: str | None) -> str:
    """A dpkg-style line for ``ROOT/.click/log``."""
    stamp = time.strftime("%Y-%m-%d %H:%M:%S")
    arch = pkg.field("Architecture") or "all"
    return (f"{stamp} {action} {pkg.name}:{arch} {old or '<none>'} {pkg.version}\n"
            f"{stamp} status installed {pkg.name}:{arch} {pkg.version}\n")
