"""A folder -> the staged entries of a package, and their files opened again safely.

:func:`stage_tree` walks a folder in sorted order into :class:`Entry` records
with the original's ignore rules and normalised modes.  The folder may belong
to someone else than the user who builds (CI packs a checkout anyone could
push to, as root), so the walk never follows a link: it holds each folder open
and lists, inspects and enters its children relative to it (``O_NOFOLLOW``),
checking that a folder it enters is the one it listed.  Each file's identity
(device and inode) goes into its entry, and :func:`open_staged` opens it again
for packing the same way, in its folder, without following a link, and
refuses anything but the regular file the walk saw.  A file, or a folder above
it, swapped for a link between the walk and the packing (to ``/etc/shadow``)
stops the build with one error naming the file; the link's target is never
read.
"""

from __future__ import annotations

import errno
import fnmatch
import io
import os
import re
import stat

from ._record import Record
from .errors import BuildError
from .timestamps import FALLBACK_EPOCH, package_timestamp, source_date_epoch

TYPE_CHECKING = False  # not typing.TYPE_CHECKING: importing typing costs start-up time

if TYPE_CHECKING:
    from collections.abc import Iterable, Sequence
    from types import TracebackType
    from typing import Literal

    from .elf import ElfInfo

__all__ = [
    "DEFAULT_IGNORES",
    "SOURCE_IGNORES",
    "Entry",
    "Folders",
    "IgnoreRules",
    "changed",
    "normalise_mode",
    "open_staged",
    "stage_tree",
    "staged_code",
]

#: dpkg-source's default ignores (``tar_ignore_default_pattern``), as the original.
DEFAULT_IGNORES: tuple[str, ...] = (
    "*.click", ".*.sw?", "*~", ",,*", ".[#~]*", ".arch-ids", ".arch-inventory",
    ".bzr", ".bzr-builddeb", ".bzr.backup", ".bzr.tags", ".bzrignore",
    ".cvsignore", ".git", ".gitattributes", ".gitignore", ".gitmodules", ".hg",
    ".hgignore", ".hgsigs", ".hgtags", ".shelf", ".svn", "CVS", "DEADJOE",
    "RCS", "_MTN", "_darcs", "{arch}",
)
#: ``buildsource`` also leaves out build products.
SOURCE_IGNORES: tuple[str, ...] = DEFAULT_IGNORES + (
    "*.a", ".be", ".deps", "*.la", "*.o", "*.so",
)

_CLOEXEC = getattr(os, "O_CLOEXEC", 0)
_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)
#: A folder of the tree, entered without following a link.
_FOLDER_FLAGS = os.O_RDONLY | getattr(os, "O_DIRECTORY", 0) | _NOFOLLOW | _CLOEXEC
#: A file of the tree: no link followed; a FIFO swapped in must not block the open
#: (O_NONBLOCK, without effect on the regular file it must be), nor a terminal attach.
_FILE_FLAGS = (os.O_RDONLY | _NOFOLLOW | _CLOEXEC | getattr(os, "O_NONBLOCK", 0)
               | getattr(os, "O_NOCTTY", 0))


class Entry(Record):
    """One member of the data tree: where it goes and where its bytes come from."""

    arcname: str  # relative POSIX path inside the package, no leading './'
    kind: Literal["file", "dir", "symlink"]
    mode: int = 0o644  # normalised permission bits
    size: int = 0
    mtime: int = FALLBACK_EPOCH
    source: str | None = None  # file to read, for kind == "file"
    target: str = ""  # for kind == "symlink"
    #: The file the walk saw (st_dev, st_ino): packing refuses any other.  0: a file
    #: the build generated itself (a filled AppArmor file, a translation).
    dev: int = 0
    ino: int = 0


def changed(path: str) -> BuildError:
    """The one error for a file or folder of the tree replaced after the walk saw it."""
    return BuildError(
        f"{path}: changed while the package was being built (it, or a folder above it, is "
        "no longer what the walk of the tree found, e.g. replaced by a symbolic link); "
        "nothing was packed from it: build again from a tree nobody else is changing")


class Folders:
    """The folder of the last file opened, kept open: the walk's order packs the
    files of one folder in a row, each then opened relative to it."""

    __slots__ = ("path", "fd")

    def __init__(self) -> None:
        self.path: str | None = None
        self.fd = -1

    def fd_of(self, path: str) -> int:
        if path != self.path:
            self.close()
            self.fd = os.open(path or ".", os.O_RDONLY | getattr(os, "O_DIRECTORY", 0) | _CLOEXEC)
            self.path = path
        return self.fd

    def close(self) -> None:
        if self.fd >= 0:
            os.close(self.fd)
        self.fd, self.path = -1, None

    def __enter__(self) -> Folders:
        return self

    def __exit__(self, kind: type[BaseException] | None, value: BaseException | None,
                 tb: TracebackType | None) -> None:
        self.close()


def open_staged(entry: Entry, folders: Folders | None = None) -> io.FileIO:
    """The file of ``entry``, opened in its folder without following a link, and
    checked to be the regular file the walk saw (same device and inode).

    A mismatch is one :class:`BuildError` naming the file, raised before a byte
    of it is read.  The folder itself is opened by its path: a folder above the
    file replaced by a link leads elsewhere, where no file is the one the walk
    saw.  ``folders``: keeps the folder open for the next file (see :class:`Folders`).
    """
    source = entry.source
    assert source is not None
    directory, name = os.path.split(source)
    try:
        if folders is None:
            with Folders() as own:
                fd = os.open(name, _FILE_FLAGS, dir_fd=own.fd_of(directory))
        else:
            fd = os.open(name, _FILE_FLAGS, dir_fd=folders.fd_of(directory))
    except OSError as e:
        if entry.ino and e.errno in (errno.ELOOP, errno.ENOTDIR, errno.ENXIO):
            raise changed(source) from None  # a link (O_NOFOLLOW), or no longer a folder
        raise BuildError(f"{source}: cannot read: {e.strerror}") from None
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode) or (
                entry.ino and (st.st_ino != entry.ino or st.st_dev != entry.dev)):
            raise changed(source)
        return io.FileIO(fd, "r", closefd=True)
    except BaseException:
        os.close(fd)
        raise


def staged_code(entries: Iterable[Entry]) -> dict[str, ElfInfo]:
    """The compiled files among ``entries`` (arcname -> ELF header), each opened as the
    packing opens it (:func:`open_staged`): a file swapped for a link, a FIFO or another
    file since the walk is one error, never followed, waited on or read.  For a manifest
    that must know the architecture before packing (a template whose hook paths name
    it); otherwise the packing's own pass reads the headers."""
    from .elf import HEADER_SIZE, parse_elf_header

    code = {}
    with Folders() as folders:
        for e in entries:
            if e.kind == "file" and e.source and e.size:
                with open_staged(e, folders) as f:
                    info = parse_elf_header(f.read(HEADER_SIZE))
                if info is not None and info.is_code:
                    code[e.arcname] = info
    return code


def normalise_mode(path: str, st_mode: int) -> int:
    """0755 for directories and executables, 0644 otherwise; refuse special bits.

    A directory's setgid bit is not refused: it only gives new files the
    folder's group, every folder made inside a setgid folder inherits it (a
    checkout in a shared group folder has it throughout), and the package
    never carries it (directories are 0755).
    """
    special = st_mode & (stat.S_ISUID | stat.S_ISGID | stat.S_ISVTX)
    if stat.S_ISDIR(st_mode):
        special &= ~stat.S_ISGID
    if special:
        names = [n for bit, n in ((stat.S_ISUID, "setuid"), (stat.S_ISGID, "setgid"),
                                  (stat.S_ISVTX, "sticky")) if special & bit]
        raise BuildError(
            f"{path}: has the {'/'.join(names)} bit set, which Click packages may not "
            f"carry; clear it with 'chmod u-s,g-s,-t {path}'"
        )
    if stat.S_ISDIR(st_mode) or st_mode & 0o111:
        return 0o755
    return 0o644


class IgnoreRules:
    """Shell patterns compiled into two regexes, checked once per tree entry.

    Patterns without a '/' match a base name at any depth (as the original);
    patterns with a '/' match the path relative to the top of the tree.
    """

    def __init__(self, patterns: Iterable[str]) -> None:
        names = [p for p in patterns if "/" not in p]
        paths = [p.strip("/") for p in patterns if "/" in p]
        self._name = _union(names)
        self._path = _union(paths)

    def __call__(self, name: str, relpath: str) -> bool:
        return bool(
            (self._name is not None and self._name.match(name))
            or (self._path is not None and self._path.match(relpath))
        )


def _union(patterns: list[str]) -> re.Pattern[str] | None:
    if not patterns:
        return None
    return re.compile("|".join(f"(?:{fnmatch.translate(p)})" for p in patterns))


def _enter(parent: int, name: str, seen: os.stat_result, path: str) -> int:
    """The folder ``name`` of the open folder ``parent``, checked to be the one listed."""
    try:
        fd = os.open(name, _FOLDER_FLAGS, dir_fd=parent)
    except OSError as e:
        if e.errno in (errno.ELOOP, errno.ENOTDIR):
            raise changed(path) from None
        raise BuildError(f"{path}: cannot list directory: {e.strerror}") from None
    st = os.fstat(fd)
    if st.st_ino != seen.st_ino or st.st_dev != seen.st_dev:
        os.close(fd)
        raise changed(path)
    return fd


def stage_tree(
    root: str | os.PathLike[str],
    ignores: Iterable[str] = (),
    exclude: Iterable[str | os.PathLike[str]] = (),
    mtime_clamp: int | None = None,
    default_ignores: Sequence[str] = DEFAULT_IGNORES,
    identity: tuple[int, int] | None = None,
) -> list[Entry]:
    """Walk ``root`` in sorted order and describe what goes into the package.

    Patterns without a '/' match a base name at any depth (as the original);
    patterns with a '/' match the path relative to ``root``.  ``exclude``
    names files left out by identity (the manifest being packed).  ``root``
    itself may be a link (the caller named it); nothing inside it is followed.
    ``identity``: the (device, inode) ``root`` must be, as the caller found it.
    """
    root = os.fspath(root)
    ignored = IgnoreRules([*default_ignores, *ignores])
    excluded = set()
    for path in exclude:
        try:
            st = os.stat(path)
            excluded.add((st.st_dev, st.st_ino))
        except OSError:
            pass
    clamp = package_timestamp() if mtime_clamp is None else mtime_clamp
    sde = source_date_epoch()
    entries: list[Entry] = []

    def mtime_of(st: os.stat_result) -> int:
        if sde is None:
            return clamp
        return min(int(st.st_mtime), clamp)

    def walk(fd: int, directory: str, prefix: str) -> None:
        try:
            with os.scandir(fd) as it:
                children = sorted(it, key=lambda e: e.name)
        except OSError as e:
            raise BuildError(f"{directory}: cannot list directory: {e.strerror}") from None
        for child in children:
            name = child.name
            rel = prefix + name
            if ignored(name, rel):
                continue
            path = os.path.join(directory, name)
            try:
                st = child.stat(follow_symlinks=False)  # relative to fd, no link followed
            except OSError as e:
                raise BuildError(f"{path}: {e.strerror}") from None
            if (st.st_dev, st.st_ino) in excluded:
                continue
            if rel == ".click":
                continue  # reserved for the installer's own data
            if stat.S_ISLNK(st.st_mode):
                try:
                    target = os.readlink(name, dir_fd=fd)
                except OSError as e:  # replaced since it was listed
                    raise changed(path) if e.errno == errno.EINVAL else BuildError(
                        f"{path}: {e.strerror}") from None
                try:
                    os.stat(name, dir_fd=fd)  # only to find a loop: nothing is read
                except OSError as e:
                    if e.errno == errno.ELOOP:
                        raise BuildError(
                            f"{path}: symbolic link loop ({name} -> {target})"
                        ) from None
                entries.append(Entry(rel, "symlink", 0o777, 0, mtime_of(st), target=target))
            elif stat.S_ISDIR(st.st_mode):
                mode = normalise_mode(path, st.st_mode)
                entries.append(Entry(rel, "dir", mode, 0, mtime_of(st)))
                sub = _enter(fd, name, st, path)
                try:
                    walk(sub, path, rel + "/")
                finally:
                    os.close(sub)
            elif stat.S_ISREG(st.st_mode):
                mode = normalise_mode(path, st.st_mode)
                if not os.access(name, os.R_OK, dir_fd=fd):
                    raise BuildError(f"{path}: file is not readable (permission denied)")
                entries.append(Entry(rel, "file", mode, st.st_size, mtime_of(st), path,
                                     dev=st.st_dev, ino=st.st_ino))
            else:
                raise BuildError(
                    f"{path}: is a device, fifo or socket; only files, directories "
                    "and symbolic links can go into a Click package"
                )

    try:
        top = os.open(root, os.O_RDONLY | getattr(os, "O_DIRECTORY", 0) | _CLOEXEC)
    except OSError as e:
        if e.errno == errno.ENOTDIR:
            raise BuildError(f"{root}: is not a directory") from None
        raise BuildError(f"{root}: {e.strerror}") from None
    try:
        if identity is not None:
            st = os.fstat(top)
            if (st.st_dev, st.st_ino) != identity:
                raise changed(root)
        walk(top, root, "")
    finally:
        os.close(top)
    return entries
