"""Unpacking a ``.deb``'s files into a root with click-build's own ar and tar readers
(``dpkg -x`` for hosts without dpkg).

The archive signed the index that names each ``.deb`` by its SHA-256, so the files
are the archive's own; still nothing lands outside the root: every name is made
relative and checked, and a link on the way to a file is followed only while it
stays inside the root (merged ``/usr``: ``lib -> usr/lib``).  Folders a build never
reads are left out (``usr/share/{doc,man,locale}``), and no file keeps a setuid or
setgid bit.  Ubuntu's packages are zstd-compressed: those need the ``zstandard``
module (``pip install zstandard``).
"""

from __future__ import annotations

import os
import stat
from collections.abc import Iterator
from pathlib import Path

from ..arread import MemberReader, read_ar_members
from ..build_folders import clean
from ..errors import ArchiveError, SysrootError
from ..tarread import Decompressed, TarReader, open_stream

__all__ = ["EXCLUDED", "extract_deb", "excluded"]

#: Folders of a root that a build never reads (leaving them out saves a tenth).
EXCLUDED = ("usr/share/doc", "usr/share/man", "usr/share/locale", "usr/share/info",
            "usr/share/lintian")
_PREFIXES = tuple(f"{p}/" for p in EXCLUDED)
_MAX_LINKS = 40


def excluded(name: str) -> bool:
    return name in EXCLUDED or name.startswith(_PREFIXES)


class _Zstd(Decompressed):
    """A zstd stream, through the optional ``zstandard`` module."""

    def __init__(self, f: object, offset: int, size: int, label: str) -> None:
        try:
            import zstandard  # type: ignore[import-not-found, unused-ignore]
        except ImportError:
            raise SysrootError(
                f"{label} is compressed with zstd (as Ubuntu's packages are): install the "
                "zstandard module beside click-build (pip install zstandard)") from None
        super().__init__(f, offset, size, "", label)  # type: ignore[arg-type]
        raw = MemberReader(f, offset, size)  # type: ignore[arg-type]
        self._reader = zstandard.ZstdDecompressor().stream_reader(raw)
        self._zlabel = label

    def read_chunk(self) -> bytes:
        try:
            return bytes(self._reader.read(1 << 20))
        except Exception as e:  # zstandard.ZstdError and the raw reader's errors
            raise ArchiveError(f"{self._zlabel}: corrupt zstd data ({e})") from None


def _data_stream(f: object, deb: Path) -> Decompressed:
    size = os.fstat(f.fileno()).st_size  # type: ignore[attr-defined]
    label = deb.name
    for member in read_ar_members(f, size):  # type: ignore[arg-type]
        name = member.name
        if not name.startswith("data.tar"):
            continue
        suffix = name[len("data.tar"):]
        if suffix == ".zst":
            return _Zstd(f, member.offset, member.size, label)
        if suffix in (".gz", ".xz", ".bz2", ""):
            return open_stream(f, member.offset, member.size, suffix, label)  # type: ignore[arg-type]
        raise SysrootError(f"{label}: {name} is compressed in a way click-build does not read")
    raise SysrootError(f"{label}: not a Debian package (no data.tar member)")


def _clean(raw: bytes, label: str) -> str:
    name = raw.decode("utf-8", "surrogateescape")
    parts = [p for p in name.split("/") if p not in ("", ".")]
    if any(p == ".." for p in parts):
        raise SysrootError(f"{label}: member {name!r} climbs out of the root")
    return "/".join(parts)


class _Root:
    """Paths inside one root, with links on the way resolved inside it."""

    def __init__(self, root: Path) -> None:
        self.root = os.path.realpath(root)
        self._dirs: dict[str, str] = {"": self.root}

    def _resolve_dir(self, rel: str, depth: int = 0) -> str:
        """The real folder inside the root that ``rel`` (a folder path) names; made
        when missing.  A link is followed only to a place inside the root."""
        known = self._dirs.get(rel)
        if known is not None:
            return known
        if depth > _MAX_LINKS:
            raise SysrootError(f"too many links on the way to {rel!r} in the root")
        parent_rel, _, leaf = rel.rpartition("/")
        parent = self._resolve_dir(parent_rel, depth)
        path = os.path.join(parent, leaf)
        try:
            st = os.lstat(path)
        except FileNotFoundError:
            try:
                os.mkdir(path, 0o755)
            except FileExistsError:  # another thread's package made it just now
                return self._resolve_dir(rel, depth + 1)
            self._dirs[rel] = path
            return path
        if stat.S_ISLNK(st.st_mode):
            target = os.readlink(path)
            if target.startswith("/"):
                inner = target.strip("/")
            else:
                here = os.path.relpath(parent, self.root)
                inner = os.path.normpath(os.path.join("" if here == "." else here, target))
            if inner == "." or inner == "":
                real = self.root
            elif inner.startswith("..") or os.path.isabs(inner):
                raise SysrootError(f"the link {rel} in the root leads out of it ({target})")
            else:
                real = self._resolve_dir(inner, depth + 1)
        elif stat.S_ISDIR(st.st_mode):
            real = path
        else:
            os.unlink(path)  # a file where a later package has a folder
            os.mkdir(path, 0o755)
            real = path
        self._dirs[rel] = real
        return real

    def place(self, rel: str) -> str:
        """The path to write ``rel`` at, its folder made; whatever was there removed
        (but a folder, or a link to one, where a folder is wanted: kept)."""
        parent_rel, _, leaf = rel.rpartition("/")
        return os.path.join(self._resolve_dir(parent_rel), leaf)

    def folder(self, rel: str) -> None:
        self._resolve_dir(rel)


def extract_deb(deb: Path, root: Path, places: _Root | None = None) -> Iterator[str]:
    """Unpack ``deb``'s data into ``root``; yields each path written (relative)."""
    places = places or _Root(root)
    label = deb.name
    with open(deb, "rb") as f:
        reader = TarReader(_data_stream(f, deb), label)
        links: list[tuple[str, str]] = []
        for member in reader:
            rel = _clean(member.name, label)
            if not rel or excluded(rel):
                continue
            kind = member.type
            if kind == b"5":
                places.folder(rel)
                continue
            path = places.place(rel)
            if kind == b"0":
                clean(path)
                fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW,
                             member.mode & 0o777 & ~0o022 | 0o200)
                with os.fdopen(fd, "wb") as out:
                    for chunk in reader.data():
                        out.write(chunk)
                os.chmod(path, member.mode & 0o777 & ~0o022 | 0o200)  # not the umask's
            elif kind == b"2":
                clean(path)
                os.symlink(member.linkname.decode("utf-8", "surrogateescape"), path)
            elif kind == b"1":
                links.append((rel, _clean(member.linkname, label)))
                continue
            else:  # devices and fifos: nothing a build reads
                continue
            yield rel
        for rel, target in links:  # hard links: a copy of a file of this package
            source = places.place(target)
            path = places.place(rel)
            clean(path)
            try:
                os.link(source, path, follow_symlinks=False)
            except OSError as e:
                raise SysrootError(f"{label}: cannot link {rel} to {target}: {e.strerror}") \
                    from None
            yield rel
