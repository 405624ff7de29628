"""What compiled code asks of the system that loads it, read from its ELF dynamic tables.

A program or library names the libraries it needs (``DT_NEEDED``), where else to look
for them (``DT_RUNPATH``, ``DT_RPATH``), its own name (``DT_SONAME``), the symbol
versions it needs from each library (``.gnu.version_r``: ``GLIBC_2.34`` of
``libc.so.6``), the versions it defines (``.gnu.version_d``) and the symbols it leaves
for others to define, each with its version (``.dynsym`` and ``.gnu.version``).  These
say whether it will load on a given system, whatever machine it was built for: ELF32
and ELF64, either byte order (amd64, arm64, armhf, i386 alike).

Standard library only.  The file is the attacker's: every size and count is bounded by
the bytes that are really there, chains of version entries may loop (each is walked at
most :data:`MAX_VERSION_ENTRIES` steps all told), names are at most :data:`MAX_NAME`
bytes, and the dynamic section at most :data:`MAX_DYNAMIC`; anything else is an
:class:`~click_build.errors.ElfError` with one line saying what.  The review reads a
package as a stream, so :class:`Capture` keeps what these tables need of a file passing
by: its first :data:`PREFIX` bytes (where linkers put them), plus its dynamic section
and section headers wherever they are.
"""

from __future__ import annotations

import bisect
import struct

from .elf import ET_DYN, ET_EXEC, ElfInfo, parse_elf_header
from .errors import ElfError

TYPE_CHECKING = False  # not typing.TYPE_CHECKING: importing typing costs start-up time

if TYPE_CHECKING:
    from collections.abc import Iterator
    from typing import BinaryIO

__all__ = [
    "MAX_DYNAMIC",
    "MAX_NAME",
    "MAX_VERSION_ENTRIES",
    "PREFIX",
    "BytesSource",
    "Capture",
    "Dynamic",
    "FileSource",
    "Source",
    "read_dynamic",
    "version_key",
]

#: The bytes of a streamed file kept for its tables (a 117 MB libLLVM has them in its
#: first 5 MiB: linkers put them before the code).
PREFIX = 16 << 20
#: A dynamic section is a few hundred bytes; more than this is not a real one.
MAX_DYNAMIC = 64 << 10
#: Section header tables beyond this are ignored (real ones have under 100 sections).
MAX_SECTION_TABLE = 1 << 20
#: Library names, search paths and version names.
MAX_NAME = 4096
#: Version entries read from one file, needed and defined, files and versions together.
MAX_VERSION_ENTRIES = 1 << 14

PT_LOAD, PT_DYNAMIC = 1, 2
SHT_DYNSYM = 11
DT_NULL, DT_NEEDED, DT_HASH, DT_STRTAB, DT_SYMTAB, DT_STRSZ, DT_SYMENT = 0, 1, 4, 5, 6, 10, 11
DT_SONAME, DT_RPATH, DT_RUNPATH = 14, 15, 29
DT_GNU_HASH = 0x6FFFFEF5
DT_VERSYM, DT_VERDEF, DT_VERDEFNUM, DT_VERNEED, DT_VERNEEDNUM = (
    0x6FFFFFF0, 0x6FFFFFFC, 0x6FFFFFFD, 0x6FFFFFFE, 0x6FFFFFFF)
VER_FLG_BASE, VER_FLG_WEAK = 1, 2
STB_WEAK = 2
SHN_UNDEF = 0


class Source:
    """Random access to a file's bytes: exactly the bytes asked for, or an ElfError."""

    size: int

    def read(self, offset: int, length: int) -> bytes:
        raise NotImplementedError

    def _check(self, offset: int, length: int) -> None:
        if offset < 0 or length < 0 or offset + length > self.size:
            raise ElfError(f"truncated: bytes {offset}-{offset + length} lie past the end "
                           f"of the file ({self.size} bytes)")


class BytesSource(Source):
    def __init__(self, data: bytes) -> None:
        self.data = data
        self.size = len(data)

    def read(self, offset: int, length: int) -> bytes:
        self._check(offset, length)
        return self.data[offset:offset + length]


class FileSource(Source):
    """An open file (a maintainer script's library, a test's program)."""

    def __init__(self, file: BinaryIO) -> None:
        self.file = file
        file.seek(0, 2)
        self.size = file.tell()

    def read(self, offset: int, length: int) -> bytes:
        self._check(offset, length)
        self.file.seek(offset)
        data = self.file.read(length)
        if len(data) != length:
            raise ElfError(f"truncated: bytes {offset}-{offset + length} could not be read")
        return data


class _Header:
    """The ELF header's layout facts."""

    def __init__(self, head: bytes, info: ElfInfo) -> None:
        self.info = info
        self.bits = 64 if head[4] == 2 else 32
        self.order = "<" if head[5] == 1 else ">"
        fmt = self.order + ("HHIQQQIHHHHHH" if self.bits == 64 else "HHIIIIIHHHHHH")
        (_, _, _, _, self.phoff, self.shoff, _, _, self.phentsize, self.phnum,
         self.shentsize, self.shnum, _) = struct.unpack_from(fmt, head, 16)
        self.phsize = 56 if self.bits == 64 else 32
        self.shsize = 64 if self.bits == 64 else 40
        self.word = "Q" if self.bits == 64 else "I"

    def phdrs(self, src: Source) -> list[tuple[int, int, int, int]]:
        """(type, offset, vaddr, filesz) of each program header."""
        if not self.phnum:
            return []
        if self.phentsize < self.phsize:
            raise ElfError(f"program headers of {self.phentsize} bytes, fewer than "
                           f"{self.phsize}")
        raw = src.read(self.phoff, self.phnum * self.phentsize)
        out = []
        for i in range(self.phnum):
            at = i * self.phentsize
            if self.bits == 64:
                kind, _, off, vaddr, _, filesz = struct.unpack_from(self.order + "IIQQQQ", raw, at)
            else:
                kind, off, vaddr, _, filesz = struct.unpack_from(self.order + "IIIII", raw, at)
            out.append((kind, off, vaddr, filesz))
        return out

    def section_table(self) -> tuple[int, int] | None:
        """(offset, size) of the section header table, if there is one worth reading."""
        size = self.shnum * self.shentsize
        if not self.shoff or not self.shnum or self.shentsize < self.shsize \
                or size > MAX_SECTION_TABLE:
            return None
        return self.shoff, size


def _header(src: Source) -> _Header | None:
    head = src.read(0, min(64, src.size))
    info = parse_elf_header(head)
    if info is None or len(head) < (64 if head[4] == 2 else 52):
        return None
    return _Header(head, info)


def version_key(version: str) -> tuple[int, ...] | None:
    """``2.34`` -> (2, 34); None for names that are not dotted numbers (``TM_1``)."""
    parts = version.split(".")
    if not all(p.isdigit() and len(p) < 10 for p in parts):
        return None
    return tuple(int(p) for p in parts)


class Dynamic:
    """The dynamic facts of one ELF program or library."""

    def __init__(self, src: Source, head: _Header) -> None:
        self.src = src
        self.elf = head.info
        self._head = head
        self._o = head.order
        self.needed: tuple[str, ...] = ()
        self.soname: str | None = None
        #: RUNPATH entries, else RPATH's (the loader ignores RPATH when RUNPATH is set)
        self.runpath: tuple[str, ...] = ()
        #: version index (as .gnu.version holds it) -> (library, version, weak)
        self.needs: dict[int, tuple[str, str, bool]] = {}
        #: versions this file defines (a library's own: GLIBC_2.17 ... in libc.so.6)
        self.definitions: tuple[str, ...] = ()
        self._loads: list[tuple[int, int, int]] = []
        self._strtab = b""
        self._symtab: tuple[int, int] | None = None  # (offset, count)
        self._versym: int | None = None

    # ----------------------------------------------------------- reading ---

    def _offset(self, addr: int, what: str) -> int:
        for vaddr, size, off in self._loads:
            if vaddr <= addr < vaddr + size:
                return addr - vaddr + off
        raise ElfError(f"the {what} (address {addr:#x}) is in no loaded segment")

    def _string(self, offset: int, what: str) -> str:
        table = self._strtab
        if not 0 <= offset < len(table):
            raise ElfError(f"a {what} lies outside the string table")
        end = table.find(b"\0", offset, offset + MAX_NAME + 1)
        if end < 0:
            raise ElfError(f"a {what} is longer than {MAX_NAME} bytes or not terminated")
        return table[offset:end].decode("utf-8", "replace")

    def _read(self, entries: list[tuple[int, int]]) -> None:
        tags: dict[int, int] = {}
        needed, runpath, rpath = [], [], []
        for tag, value in entries:
            if tag == DT_NEEDED:
                needed.append(value)
            elif tag == DT_RUNPATH:
                runpath.append(value)
            elif tag == DT_RPATH:
                rpath.append(value)
            else:
                tags.setdefault(tag, value)
        if DT_STRTAB not in tags:
            if needed or runpath or rpath or DT_SONAME in tags:
                raise ElfError("names in the dynamic section, but no string table")
            return
        size = min(tags.get(DT_STRSZ, 0), self.src.size)
        self._strtab = self.src.read(self._offset(tags[DT_STRTAB], "string table"), size)
        self.needed = tuple(self._string(v, "needed library name") for v in needed)
        paths = runpath or rpath
        self.runpath = tuple(p for v in paths for p in self._string(v, "search path").split(":")
                             if p)
        if DT_SONAME in tags:
            self.soname = self._string(tags[DT_SONAME], "library name")
        budget = [MAX_VERSION_ENTRIES]
        if DT_VERNEED in tags:
            self._read_needs(self._offset(tags[DT_VERNEED], "version needs"),
                             tags.get(DT_VERNEEDNUM, 0), budget)
        if DT_VERDEF in tags:
            self._read_definitions(self._offset(tags[DT_VERDEF], "version definitions"),
                                   tags.get(DT_VERDEFNUM, 0), budget)
        if DT_SYMTAB in tags:
            entsize = 24 if self._head.bits == 64 else 16
            if tags.get(DT_SYMENT, entsize) != entsize:
                raise ElfError(f"dynamic symbols of {tags[DT_SYMENT]} bytes, not {entsize}")
            offset = self._offset(tags[DT_SYMTAB], "symbol table")
            count = self._symbol_count(tags, offset)
            count = max(0, min(count, (self.src.size - offset) // entsize))
            self._symtab = (offset, count)
            if DT_VERSYM in tags:
                self._versym = self._offset(tags[DT_VERSYM], "symbol versions")

    @staticmethod
    def _step(offset: int, seen: set[int], budget: list[int], what: str) -> None:
        """One more entry of a chain of version entries: never one twice, never more than
        the budget of the whole file."""
        if offset in seen:
            raise ElfError(f"the {what} chain loops")
        budget[0] -= 1
        if budget[0] < 0:
            raise ElfError(f"more than {MAX_VERSION_ENTRIES} version entries")
        seen.add(offset)

    def _read_needs(self, offset: int, count: int, budget: list[int]) -> None:
        """``count`` entries (or up to a zero ``next`` when the count is missing)."""
        o, at, done = self._o, offset, 0
        seen: set[int] = set()
        while True:
            self._step(at, seen, budget, "version needs")
            _, cnt, name, aux, nxt = struct.unpack(o + "HHIII", self.src.read(at, 16))
            library = self._string(name, "versioned library name")
            a, left = at + aux, cnt
            seen_aux: set[int] = set()
            while left:
                self._step(a, seen_aux, budget, "needed version")
                _, flags, index, vname, anext = struct.unpack(o + "IHHII", self.src.read(a, 16))
                self.needs[index & 0x7FFF] = (library, self._string(vname, "version name"),
                                              bool(flags & VER_FLG_WEAK))
                left -= 1
                if not anext:
                    break
                a += anext
            done += 1
            if not nxt or done == count:
                return
            at += nxt

    def _read_definitions(self, offset: int, count: int, budget: list[int]) -> None:
        o, at, done, names = self._o, offset, 0, []
        seen: set[int] = set()
        while True:
            self._step(at, seen, budget, "version definitions")
            _, flags, _, cnt, _, aux, nxt = struct.unpack(o + "HHHHIII", self.src.read(at, 20))
            if cnt and not flags & VER_FLG_BASE:
                (vname,) = struct.unpack(o + "I", self.src.read(at + aux, 4))
                names.append(self._string(vname, "version name"))
            done += 1
            if not nxt or done == count:
                break
            at += nxt
        self.definitions = tuple(names)

    def _symbol_count(self, tags: dict[int, int], symtab: int) -> int:
        """How many dynamic symbols: the section table says, else the hash tables do."""
        head, src, o = self._head, self.src, self._o
        table = head.section_table()
        if table is not None:
            try:
                raw = src.read(*table)
            except ElfError:
                raw = b""  # sections are optional: the hash tables tell as well
            fmt = o + ("IIQQQQ" if head.bits == 64 else "IIIIII")
            for i in range(len(raw) // head.shentsize):
                _, kind, _, _, off, size = struct.unpack_from(fmt, raw, i * head.shentsize)
                if kind == SHT_DYNSYM and off == symtab:
                    return int(size) // (24 if head.bits == 64 else 16)
        if DT_HASH in tags:
            nchain: int = struct.unpack(o + "I", src.read(self._offset(tags[DT_HASH], "hash") + 4,
                                                          4))[0]
            return nchain
        if DT_GNU_HASH in tags:
            return self._gnu_hash_count(self._offset(tags[DT_GNU_HASH], "GNU hash"))
        strtab = tags.get(DT_STRTAB, 0)
        return (self._offset(strtab, "string table") - symtab) // 16 if strtab else 0

    def _gnu_hash_count(self, offset: int) -> int:
        """One past the last symbol the GNU hash table reaches (its chains end in an odd
        value); every read is bounded by the file."""
        o, src = self._o, self.src
        nbuckets, first, nbloom, _ = struct.unpack(o + "IIII", src.read(offset, 16))
        buckets_at = offset + 16 + nbloom * (8 if self._head.bits == 64 else 4)
        if nbuckets > (src.size - buckets_at) // 4:
            raise ElfError("the GNU hash table runs past the end of the file")
        buckets = struct.unpack(f"{o}{nbuckets}I", src.read(buckets_at, 4 * nbuckets))
        last: int = max(buckets, default=0)
        if last < first:
            return int(first)
        chains_at = buckets_at + 4 * nbuckets + 4 * (last - first)
        index = last
        while True:  # bounded: every step reads further into the file
            size = min(4 << 10, src.size - chains_at) // 4 * 4
            if size <= 0:
                raise ElfError("the GNU hash table's last chain runs past the end of the file")
            for value in struct.unpack(f"{o}{size // 4}I", src.read(chains_at, size)):
                if value & 1:
                    return index + 1
                index += 1
            chains_at += size

    # ------------------------------------------------------------ asking ---

    def required_versions(self) -> list[tuple[str, str]]:
        """(library, version) the loader insists on: GLIBC_2.34 of libc.so.6..."""
        return sorted({(lib, ver) for lib, ver, weak in self.needs.values() if not weak})

    def undefined(self, max_name: int = MAX_NAME) -> Iterator[tuple[bytes, int]]:
        """(name, version index) of each symbol this file needs from others and cannot do
        without (weak ones are left out).  Names longer than ``max_name`` are skipped: a
        caller looking names up in a table passes its longest."""
        if self._symtab is None:
            return
        offset, count = self._symtab
        bits, o, table = self._head.bits, self._o, self._strtab
        size = 24 if bits == 64 else 16
        if not count:
            return
        raw = self.src.read(offset, count * size)
        versions: tuple[int, ...] = ()
        if self._versym is not None:
            try:
                versions = struct.unpack(f"{o}{count}H", self.src.read(self._versym, 2 * count))
            except ElfError:
                versions = ()
        fmt = o + ("IBBHQQ" if bits == 64 else "IIIBBH")
        index = -1
        for fields in struct.iter_unpack(fmt, raw):
            index += 1
            if bits == 64:
                name, info, _, shndx = fields[:4]
            else:
                name, info, shndx = fields[0], fields[3], fields[5]
            if shndx != SHN_UNDEF or not name or info >> 4 == STB_WEAK:
                continue
            end = table.find(b"\0", name, name + max_name + 1)
            if end < 0:
                continue
            yield table[name:end], (versions[index] & 0x7FFF) if versions else -1


def read_dynamic(src: Source) -> Dynamic | None:
    """The dynamic facts of a program or shared library; None for a file that is not
    one, or that loads nothing (a static program, an object file).  Raises ElfError
    when the tables are there but cannot be read."""
    head = _header(src)
    if head is None or head.info.kind not in (ET_EXEC, ET_DYN):
        return None
    phdrs = head.phdrs(src)
    dynamic = [p for p in phdrs if p[0] == PT_DYNAMIC]
    if not dynamic:
        return None
    out = Dynamic(src, head)
    out._loads = [(vaddr, filesz, off) for kind, off, vaddr, filesz in phdrs if kind == PT_LOAD]
    _, off, _, size = dynamic[0]
    entsize = 16 if head.bits == 64 else 8
    raw = src.read(off, min(size, MAX_DYNAMIC, max(0, src.size - off)))
    entries = []
    fmt = head.order + ("qQ" if head.bits == 64 else "iI")
    for tag, value in struct.iter_unpack(fmt, raw[:len(raw) - len(raw) % entsize]):
        if tag == DT_NULL:
            break
        entries.append((tag, value))
    else:
        raise ElfError(f"the dynamic section has no end (DT_NULL) within its "
                       f"{len(raw)} bytes" + (" read" if size > MAX_DYNAMIC else ""))
    out._read(entries)
    return out


class Capture(Source):
    """What :func:`read_dynamic` needs of a file that streams past, chunk by chunk.

    Keeps references to the chunks of the first :data:`PREFIX` bytes (no copy), and of
    the dynamic section and section header table when they lie beyond; nothing else.
    Reading anything else raises ElfError.
    """

    def __init__(self, size: int, prefix: int = PREFIX) -> None:
        self.size = size
        self._prefix = prefix
        self._pos = 0
        self._starts: list[int] = []
        self._pieces: list[bytes] = []
        self._wanted: list[tuple[int, int]] | None = None  # planned from the headers

    def feed(self, chunk: bytes) -> None:
        start = self._pos
        end = self._pos = start + len(chunk)
        if start < self._prefix:
            self._add(start, chunk if end <= self._prefix else chunk[:self._prefix - start])
        if self._wanted is None:
            self._plan()
        for lo, hi in self._wanted or ():
            lo, hi = max(lo, start, self._prefix), min(hi, end)
            if lo < hi:
                self._add(lo, chunk[lo - start:hi - start])

    def _add(self, offset: int, data: bytes) -> None:
        if data:
            self._starts.append(offset)
            self._pieces.append(data)

    def _plan(self) -> None:
        """Once the program headers are in: where the dynamic section and the section
        headers are, so they are kept even past the prefix."""
        try:
            head = _header(self)
            if head is None:
                self._wanted = []
                return
            phdrs = head.phdrs(self)
        except ElfError:
            if self._pos >= self._prefix:
                self._wanted = []  # never coming: read_dynamic will say why
            return
        wanted = [(off, off + min(size, MAX_DYNAMIC)) for kind, off, _, size in phdrs
                  if kind == PT_DYNAMIC][:1]
        table = head.section_table()
        if table is not None:
            wanted.append((table[0], table[0] + table[1]))
        self._wanted = [(lo, hi) for lo, hi in wanted if hi > self._prefix]

    def read(self, offset: int, length: int) -> bytes:
        self._check(offset, length)
        end = offset + length
        i = bisect.bisect_right(self._starts, offset) - 1
        parts: list[bytes] = []
        at = offset
        while at < end and 0 <= i < len(self._pieces):
            start, piece = self._starts[i], self._pieces[i]
            if not start <= at < start + len(piece):
                break
            take = min(end, start + len(piece))
            parts.append(piece[at - start:take - start])
            at = take
            i += 1
        if at < end:
            kept = f"{self._prefix >> 20} MiB" if self._prefix >= 1 << 20 else f"{self._prefix} bytes"
            raise ElfError(f"its tables lie beyond the first {kept} (bytes {offset}-{end}), "
                           "which is all the review keeps of a file")
        return parts[0] if len(parts) == 1 else b"".join(parts)
