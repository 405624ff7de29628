"""The md5sums check, in memory that does not grow with the number of files.

The check must hold whatever the order of the lines: the builders write them
sorted by path string, the data archive is sorted component by component,
and hand-made packages may use any order.  So neither side is kept: each
regular file of the data archive adds a keyed hash of (path, md5 of its
bytes) to a running sum, each plain line of ``md5sums`` adds a keyed hash of
(path, listed md5) to another, and the sums must agree.  The key is random
per run, so no package can be crafted to make the sums agree with a file
changed, added or removed; a line for a path that is not a regular file (or
a path listed twice) makes them differ too.  The sums are kept per bucket of
paths (256 of them), so that when they differ a second, bounded pass over
the differing buckets names the file, as a per-path table would.

Lines for links are the exception, and links are few (capped by the scan):
the original lists a hard link, and a symbolic link to a file, with the md5
of the file they name, which is checked against that file's own line.
"""

from __future__ import annotations

import os

from .datatree import shown
from .errors import PackageError

TYPE_CHECKING = False  # not typing.TYPE_CHECKING: importing typing costs start-up time

if TYPE_CHECKING:
    from collections.abc import Callable, Iterable, Iterator
    from typing import Any

try:  # the built-in modules: hashlib's OpenSSL binding costs ~4 ms of start-up
    from _blake2 import blake2b
    from _md5 import md5 as builtin_md5  # type: ignore[import-not-found]
except ImportError:  # pragma: no cover - interpreters without them
    from hashlib import blake2b
    from hashlib import md5 as builtin_md5

__all__ = ["BUCKETS", "OPENSSL_MD5_FROM", "Md5Tally", "bucket_of", "builtin_md5",
           "check_md5sums", "md5_for", "md5sums_lines"]

#: From this many bytes on, OpenSSL's md5 (hashlib), about twice as fast as the
#: built-in one, pays for loading its binding; below, the built-in one finishes first.
OPENSSL_MD5_FROM = 4 << 20


def md5_for(total_bytes: int) -> Callable[[], Any]:
    """The md5 constructor that hashes ``total_bytes`` soonest, start-up included."""
    if total_bytes < OPENSSL_MD5_FROM:
        return builtin_md5  # type: ignore[no-any-return]
    import hashlib

    return hashlib.md5

BUCKETS = 256
MAX_LINE = 32 + 2 + (8 << 10)  # an md5, the separator and the longest name the reader takes
_DIAGNOSE_LINES = 1 << 16  # lines a diagnosis holds at once
_HEX = b"0123456789abcdefABCDEF"
_MASK = (1 << 128) - 1


class Md5Tally:
    """Sums of keyed hashes of (path, md5), per bucket of paths."""

    def __init__(self, key: bytes | None = None) -> None:
        self.key = key if key is not None else os.urandom(16)
        self._keyed = blake2b(digest_size=16, key=self.key)  # copied: keying costs more
        self.sums = [0] * BUCKETS
        self.counts = [0] * BUCKETS

    def add(self, path: bytes, digest: bytes) -> None:
        """``digest``: the md5 in lower-case hex."""
        keyed = self._keyed.copy()
        keyed.update(path + b"\0" + digest)
        value = keyed.digest()
        bucket = hash(path) % BUCKETS  # keyed per process, as the sums
        self.sums[bucket] = (self.sums[bucket] + int.from_bytes(value, "little")) & _MASK
        self.counts[bucket] += 1

    def differing(self, other: Md5Tally) -> list[int]:
        return [b for b in range(BUCKETS) if self.sums[b] != other.sums[b]]


def bucket_of(path: bytes) -> int:
    return hash(path) % BUCKETS


def md5sums_lines(chunks: Iterable[bytes]) -> Iterator[tuple[int, bytes, bytes]]:
    """(line number, path, md5 hex) of every line; split on ``\\n`` only.

    Names may hold any other character (a carriage return, a vertical tab,
    U+2028...): only a newline ends a line, as in the file the builder wrote.
    """
    number = 0
    rest = b""
    for chunk in chunks:
        lines = (rest + chunk).split(b"\n")
        rest = lines.pop()
        if len(rest) > MAX_LINE:
            raise PackageError(f"md5sums: line {number + len(lines) + 1} is too long")
        for line in lines:
            number += 1
            if line:
                yield number, *_parse(line, number)
    if rest:
        yield number + 1, *_parse(rest, number + 1)


def _parse(line: bytes, number: int) -> tuple[bytes, bytes]:
    """``MD5  PATH`` or ``MD5 *PATH``: 32 hex digits, the separator, a path of at least
    one byte (sliced, not matched: compiling a regex costs every install's start-up)."""
    digest, separator, path = line[:32], line[32:34], line[34:]
    if len(digest) < 32 or digest.strip(_HEX) or separator not in (b"  ", b" *") or not path:
        raise PackageError(f"md5sums: line {number} is not 'MD5  path'")
    if path.startswith(b"./"):
        path = path[2:]
    return path, digest.lower()


def check_md5sums(
    data: Md5Tally,
    lines: Callable[[], Iterable[tuple[int, bytes, bytes]]],
    links: dict[bytes, str],
    hardlinks: dict[str, str],
    symlinks: dict[str, str | None],
    rescan: Callable[[set[int]], Iterator[tuple[bytes, bytes]]],
) -> None:
    """Compare ``md5sums`` with what the data scan saw.

    ``data``: the scan's tally of regular files.  ``lines()`` reads md5sums
    (again, when a diagnosis needs it).  ``links``: raw path -> path of every
    link the scan saw; ``hardlinks``: link -> the file it repeats;
    ``symlinks``: link -> the package path it resolves to (None when it
    leaves the package).  ``rescan(buckets)`` yields (raw path, md5 hex) of the
    data files in those buckets, for a diagnosis.
    """
    listed = Md5Tally(data.key)
    link_lines: dict[str, bytes] = {}
    file_lines: dict[str, bytes] = {}
    needed = set(hardlinks.values())
    for resolved in symlinks.values():
        if resolved is not None:
            needed.add(hardlinks.get(resolved, resolved))
    for _number, path, digest in lines():
        link = links.get(path) if links else None
        if link is not None:
            if link in link_lines:
                raise PackageError(f"md5sums: {shown(link)} is listed twice")
            link_lines[link] = digest
            continue
        listed.add(path, digest)
        if needed:
            name = path.decode("utf-8", "surrogateescape")
            if name in needed:
                file_lines[name] = digest  # a repeat makes the sums differ
    bad = data.differing(listed)
    if bad:
        _diagnose(bad, listed, lines, links, rescan)
    for link, target in hardlinks.items():
        have = link_lines.get(link)
        if have is None:
            raise PackageError(f"md5sums: {shown(link)} is not listed")
        if have != file_lines.get(target):
            raise PackageError(f"md5sums: {shown(link)} does not match its checksum "
                               "(altered file)")
    # The original lists symbolic links to files with their target's sum: check
    # it when the target is a file of this package, ignore it otherwise.
    for link, resolved in symlinks.items():
        have = link_lines.get(link)
        if have is None or resolved is None:
            continue
        want = file_lines.get(hardlinks.get(resolved, resolved))
        if want is not None and have != want:
            raise PackageError(f"md5sums: {shown(link)} does not match its checksum")


def _diagnose(bad: list[int], listed: Md5Tally,
              lines: Callable[[], Iterable[tuple[int, bytes, bytes]]],
              links: dict[bytes, str],
              rescan: Callable[[set[int]], Iterator[tuple[bytes, bytes]]]) -> None:
    """Name a file that makes the sums differ: a second pass over a few buckets."""
    chosen: set[int] = set()
    total = 0
    for bucket in bad:
        size = listed.counts[bucket]
        if chosen and total + size > _DIAGNOSE_LINES:
            break
        chosen.add(bucket)
        total += size
    wanted: dict[bytes, bytes] = {}
    for _number, path, digest in lines():
        if path in links or bucket_of(path) not in chosen:
            continue
        if path in wanted:
            raise PackageError(f"md5sums: {_name(path)} is listed twice")
        wanted[path] = digest
    for path, digest in rescan(chosen):
        want = wanted.pop(path, None)
        if want is None:
            raise PackageError(f"md5sums: {_name(path)} is not listed")
        if want != digest:
            raise PackageError(f"md5sums: {_name(path)} does not match its checksum "
                               "(altered file)")
    for path in wanted:
        raise PackageError(f"md5sums: {_name(path)} is listed but not in the package")
    raise PackageError("md5sums does not match the data archive")  # pragma: no cover


def _name(path: bytes) -> str:
    return shown(path.decode("utf-8", "surrogateescape"))
