"""What a data archive's paths may be, and the tree they form, in bounded memory.

:func:`path_problem` is the one rule for a file name inside a package: the
builder refuses exactly what the reader refuses.  It follows what the
original accepts (dpkg refuses a newline in a name, nothing else; the
original's md5sums cannot list one): a relative path of clean components, no
newline, no NUL.  Other control characters, invalid UTF-8 and the like are
names dpkg installs; ``contents`` quotes them as tar does.

:class:`TreeCheck` refuses a path seen twice and a path that would be written
through a file or a symbolic link of the package, and checks that a hard link
names an earlier regular file.  It keeps nothing per member while the archive
is in the order every package builder writes (a sorted depth-first walk:
each path sorts after the one before, comparing component by component).
In that order a folder's members follow it without a gap, so the chain of
the previous path's ancestors is all the state the checks need: a repeated
path would not sort after its predecessor, and a path's ancestors that
appeared at all are on that chain.  The first member out of that order, or
the first hard link (whose target may be anywhere earlier), switches to a
:class:`PathIndex` of every path seen, rebuilt by reading the archive's
beginning again: 8 bytes a path, so at most 16 MiB for the largest archive
the reader accepts, paid only by archives no builder writes (and by
``review``, which asks about arbitrary paths after the pass).
"""

from __future__ import annotations

import array

from .errors import PackageError

TYPE_CHECKING = False  # not typing.TYPE_CHECKING: importing typing costs start-up time

if TYPE_CHECKING:
    from collections.abc import Callable, Iterable

__all__ = ["DIR", "EXEC", "FILE", "SYMLINK", "PathIndex", "TreeCheck", "path_problem", "shown"]

DIR, FILE, EXEC, SYMLINK = 1, 2, 3, 4
_KIND_NAMES = {DIR: "directory", FILE: "file", EXEC: "file", SYMLINK: "symbolic link"}


def shown(path: str) -> str:
    """A package path in a message: as it is when printable, else quoted, so that no
    name (a carriage return, a terminal escape) can forge or hide an error line."""
    return path if path.isprintable() else repr(path)


#: The longest file name (one path component) Linux file systems take, in bytes.
NAME_MAX = 255


def path_problem(path: str) -> str | None:
    """Why ``path`` (relative, '/'-separated) cannot name a file in a package, or None."""
    if not path:
        return "an empty path"
    if path.startswith("/"):
        return f"absolute path {path!r}"
    if "\n" in path or "\0" in path:
        return f"path {path!r} contains a newline or NUL (dpkg refuses it)"
    parts = path.split("/")
    if "" in parts or "." in parts or ".." in parts:
        return f"path {path!r} is not clean (empty, '.' or '..' component)"
    if parts[0] == ".click":
        return f"{shown(path)} is inside the reserved top-level .click directory"
    for part in parts:
        if len(part.encode("utf-8", "surrogateescape")) > NAME_MAX:
            return (f"{shown(path)} has a name of more than {NAME_MAX} bytes, which no "
                    "file system takes")
    return None


class PathIndex:
    """The kind of every path seen, by a keyed 61-bit hash, 8 bytes a slot.

    Python's string hash is keyed per process, so an archive cannot be
    crafted to collide; a collision could only make a path look seen twice
    (a refusal), never let a path through unchecked.
    """

    def __init__(self) -> None:
        self._slots = array.array("Q", bytes(8 << 12))
        self._mask = (1 << 12) - 1
        self._used = 0

    def __len__(self) -> int:
        return self._used

    @staticmethod
    def _key(path: str) -> int:
        key = hash(path) & 0xFFFF_FFFF_FFFF_FFF8
        return key or 8

    def get(self, path: str) -> int:
        """The kind stored for ``path``; 0 when never seen."""
        key = self._key(path)
        slots, mask = self._slots, self._mask
        i = (key >> 3) & mask
        while True:
            value = slots[i]
            if not value:
                return 0
            if value & ~7 == key:
                return value & 7
            i = (i + 1) & mask

    def add(self, path: str, kind: int) -> bool:
        """Record ``path``; False (and nothing changed) when it is already there."""
        key = self._key(path)
        slots, mask = self._slots, self._mask
        i = (key >> 3) & mask
        while True:
            value = slots[i]
            if not value:
                break
            if value & ~7 == key:
                return False
            i = (i + 1) & mask
        slots[i] = key | kind
        self._used += 1
        if self._used * 4 > mask * 3:
            self._grow()
        return True

    def _grow(self) -> None:
        old = self._slots
        size = len(old) * 2
        self._slots = slots = array.array("Q", bytes(8 * size))
        self._mask = mask = size - 1
        for value in old:
            if value:
                i = (value >> 3) & mask
                while slots[i]:
                    i = (i + 1) & mask
                slots[i] = value


class TreeCheck:
    """Duplicate, parent and hard-link checks over the paths of one archive.

    ``replay`` yields the (path, kind) of the members already added, from
    the start of the archive; it is called once, if at all, when the check
    needs its index.  ``index=True`` keeps the index from the start.
    """

    def __init__(self, replay: Callable[[int], Iterable[tuple[str, int]]], index: bool = False):
        self._replay = replay
        self._prev: list[str] = []  # components of the previous path
        self._prev_kind = 0
        self._added = 0
        self.index: PathIndex | None = None
        if index:
            self.index = PathIndex()

    def add(self, path: str, kind: int) -> None:
        """Check and record a member: DIR, FILE, EXEC or SYMLINK."""
        parts = path.split("/")
        if self.index is None:
            if parts > self._prev:
                self._ordered(path, parts, kind)
                self._added += 1
                return
            self._build_index()
        self._indexed(path, kind)
        self._added += 1

    def add_hardlink(self, path: str, target: str) -> int:
        """Check a hard link to ``target``; returns the target's kind (FILE or EXEC)."""
        if self.index is None:
            self._build_index()
        assert self.index is not None
        kind = self.index.get(target)
        if kind not in (FILE, EXEC):
            raise PackageError(f"data: hard link {shown(path)} -> {shown(target)} does not "
                               "point to an earlier file of the package")
        self._indexed(path, kind)
        self._added += 1
        return kind

    def _ordered(self, path: str, parts: list[str], kind: int) -> None:
        prev = self._prev
        depth = len(parts) - 1
        common = 0
        limit = min(depth, len(prev))
        while common < limit and parts[common] == prev[common]:
            common += 1
        # Every ancestor on the previous chain is a folder, except the previous
        # path itself, which is this path's parent when it is the whole chain.
        if common and common == len(prev) and self._prev_kind != DIR:
            raise PackageError(
                f"data: {shown(path)} would be written through {shown('/'.join(prev))}, which is a "
                f"{_KIND_NAMES[self._prev_kind]}")
        self._prev = parts
        self._prev_kind = kind

    def _indexed(self, path: str, kind: int) -> None:
        index = self.index
        assert index is not None
        if not index.add(path, kind):
            raise PackageError(f"data: {shown(path)} appears twice")
        parent = path.rpartition("/")[0]
        while parent:
            have = index.get(parent)
            if have:
                if have != DIR:
                    raise PackageError(f"data: {shown(path)} would be written through "
                                       f"{shown(parent)}, which is a {_KIND_NAMES[have]}")
                break
            index.add(parent, DIR)  # implied by the path
            parent = parent.rpartition("/")[0]

    def _build_index(self) -> None:
        self.index = PathIndex()
        for path, kind in self._replay(self._added):
            self._indexed(path, kind)
