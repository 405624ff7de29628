"""One streaming pass over the data archive, keeping only what the checks need.

The sink sees every entry that the core audit (:func:`scan_data`) accepts.  It
keeps the ELF header of every file (from the first chunk, which is read
anyway), the modes, the bytes of the few small files the checks parse
(desktop entries, AppArmor and hook JSON), and what the QML files and compiled
code say (:mod:`.qml`, read line by line).  Nothing else is held in memory.
"""

from __future__ import annotations

import re
from collections.abc import Iterator

from .. import _console
from ..elf import HEADER_SIZE, ElfInfo, parse_elf_header
from ..package import ClickPackage, DataEntry, ScanResult, resolve_in_package, scan_data
from .qml import QSETTINGS, QmlFacts, QmlScanner

__all__ = ["MAX_PARSED_FILE", "Collected", "collect"]

#: Hook files bigger than this are not read (and reported): they are a few KiB.
MAX_PARSED_FILE = 1 << 20
#: Qt's symbol version tags (``Qt_5.15``) name the Qt release compiled code needs.
_QT = re.compile(rb"Qt_([0-9]{1,2})\.([0-9]{1,2})(?![0-9])")
_QT_TAIL = 8


class Collected:
    """What the review knows about the data tree after the pass."""

    def __init__(self, scan: ScanResult) -> None:
        self.scan = scan
        self.executables: set[str] = set()
        self.world_writable: list[str] = []
        self.elf: dict[str, ElfInfo] = {}
        self.contents: dict[str, bytes] = {}
        self.too_large: set[str] = set()
        self.hardlinks: dict[str, str] = {}
        self.qt: dict[str, tuple[int, int]] = {}  # ELF -> newest Qt linked
        self.qml: dict[str, QmlFacts] = {}  # every .qml file
        self.uses_qsettings = False  # some compiled code names QSettings
        self.order: list[str] = []  # every path, archive order

    def resolve(self, path: str) -> str | None:
        """The package path that ``path`` names after symlinks and hard links.

        None for an absolute path or one that leaves the package.
        """
        if path.startswith("/"):
            return None
        resolved = resolve_in_package(path, self.scan)
        if resolved is None:
            return None
        return self.hardlinks.get(resolved, resolved)

    def kind(self, path: str) -> str | None:
        """'file' or 'dir' for what ``path`` names; None if missing or outside."""
        resolved = self.resolve(path)
        if resolved is None:
            return None
        if resolved == "":
            return "dir"
        kind = self.scan.kinds.get(resolved)
        return kind if kind in ("file", "dir") else None

    def is_executable(self, path: str) -> bool:
        resolved = self.resolve(path)
        return resolved is not None and resolved in self.executables

    def content(self, path: str) -> bytes | None:
        resolved = self.resolve(path)
        return None if resolved is None else self.contents.get(resolved)


class _Sink:
    def __init__(self, out: Collected, wanted: set[str], progress: _console.Progress | None):
        self.out = out
        self.wanted = wanted
        self.progress = progress

    def _note(self, entry: DataEntry) -> None:
        self.out.order.append(entry.path)
        if entry.stored_mode >= 0 and entry.stored_mode & 0o002 and entry.path:
            self.out.world_writable.append(entry.path)

    def directory(self, entry: DataEntry) -> None:
        self._note(entry)

    def file(self, entry: DataEntry, chunks: Iterator[bytes]) -> None:
        self._note(entry)
        out = self.out
        if entry.mode & 0o111:
            out.executables.add(entry.path)
        first = next(chunks, b"")
        elf = parse_elf_header(first[:HEADER_SIZE])
        keep = entry.path in self.wanted
        if keep and entry.size > MAX_PARSED_FILE:
            out.too_large.add(entry.path)
            keep = False
        if elf is not None:
            out.elf[entry.path] = elf
        code = elf is not None and elf.is_code
        qml = QmlScanner() if entry.path.endswith(".qml") else None
        if keep or code or qml is not None:
            parts, qt, tail = [first], set(_QT.findall(first)), first[-_QT_TAIL:]
            settings = code and QSETTINGS in first
            if qml is not None:
                qml.feed(first)
            for chunk in chunks:
                if keep:
                    parts.append(chunk)
                if code:
                    qt.update(_QT.findall(tail + chunk))
                    settings = settings or QSETTINGS in tail + chunk
                    tail = chunk[-_QT_TAIL:]
                if qml is not None:
                    qml.feed(chunk)
            if keep:
                out.contents[entry.path] = b"".join(parts)
            if code and qt:
                out.qt[entry.path] = max((int(a), int(b)) for a, b in qt)
            out.uses_qsettings = out.uses_qsettings or settings
            if qml is not None:
                out.qml[entry.path] = qml.close()
        if self.progress is not None:
            self.progress.advance(entry.size >> 10)

    def symlink(self, entry: DataEntry) -> None:
        self._note(entry)

    def hardlink(self, entry: DataEntry) -> None:
        self._note(entry)
        out = self.out
        out.hardlinks[entry.path] = entry.target
        if entry.target in out.executables:
            out.executables.add(entry.path)
        if entry.target in out.elf:
            out.elf[entry.path] = out.elf[entry.target]
        if entry.target in out.qt:
            out.qt[entry.path] = out.qt[entry.target]
        if entry.target in out.qml and entry.path.endswith(".qml"):
            out.qml[entry.path] = out.qml[entry.target]


class _Capture:
    """Second, rare pass: the bytes of files reached only through links."""

    def __init__(self, out: Collected, wanted: set[str]):
        self.out = out
        self.wanted = wanted

    def directory(self, entry: DataEntry) -> None:
        pass

    def file(self, entry: DataEntry, chunks: Iterator[bytes]) -> None:
        if entry.path in self.wanted:
            if entry.size > MAX_PARSED_FILE:
                self.out.too_large.add(entry.path)
            else:
                self.out.contents[entry.path] = b"".join(chunks)

    def symlink(self, entry: DataEntry) -> None:
        pass

    def hardlink(self, entry: DataEntry) -> None:
        pass


def collect(pkg: ClickPackage, wanted: set[str]) -> Collected:
    """Stream the data archive once (audited by the core) and keep what matters.

    ``wanted`` are the package paths whose bytes the checks parse.  Raises
    :class:`PackageError` when the core audit refuses the data.
    """
    size = pkg.field("Installed-Size") or "0"
    total = int(size) if size.isdigit() else 0
    out = Collected(ScanResult())
    with _console.Progress("KiB reviewed", total) as progress:
        out.scan = scan_data(pkg, _Sink(out, wanted, progress))
    # A hook may name a link; read what it points to if the pass skipped it.
    missing = set()
    for path in wanted:
        resolved = out.resolve(path)
        if (resolved is not None and resolved not in out.contents
                and resolved not in out.too_large and out.scan.kinds.get(resolved) == "file"):
            missing.add(resolved)
    if missing:
        scan_data(pkg, _Capture(out, missing))
    return out
