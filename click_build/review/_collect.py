"""One streaming pass over the data archive, keeping only what the checks need.

The sink sees every entry that the core audit (:func:`scan_data`) accepts.
Nothing is kept per member: the audit's index answers what kind a path is
(8 bytes a path), findings that list paths keep the first few and a count
(:class:`Sample`), and the bytes kept are those of the few small files the
checks parse (desktop entries, AppArmor and hook JSON), within a total cap.
ELF headers are read from the first chunk of each file, which is read anyway;
QML files and compiled code are read line by line (:mod:`.qml`) as they pass.
"""

from __future__ import annotations

import fnmatch
import re
from collections.abc import Iterator

from .. import _console
from ..deb822 import whole_number
from ..elf import HEADER_SIZE, ElfInfo, parse_elf_header
from ..package import ClickPackage, DataEntry, ScanResult, resolve_in_package, scan_data
from .qmlscan import QSETTINGS, QmlFacts, QmlScanner
from .sample import Sample

TYPE_CHECKING = False  # not typing.TYPE_CHECKING: importing typing costs start-up time

if TYPE_CHECKING:
    from .abiscan import Scanner

__all__ = ["LEFTOVER_PATTERNS", "MAX_PARSED_FILE", "MAX_PARSED_TOTAL", "OTHER_MACHINES",
           "VCS_PATTERNS", "Collected", "Sample", "collect"]

#: Hook files bigger than this are not read (and reported): they are a few KiB.
MAX_PARSED_FILE = 1 << 20
#: All the parsed files together (a manifest may name many).
MAX_PARSED_TOTAL = 16 << 20
#: Qt's symbol version tags (``Qt_5.15``) name the Qt release compiled code needs.
_QT = re.compile(rb"Qt_([0-9]{1,2})\.([0-9]{1,2})(?![0-9])")
_QT_TAIL = 8
#: Python modules and bytecode by name; scripts by their ``#!`` line.
_PYTHON_SUFFIXES = (".py", ".pyc")
_PYTHON_SHEBANG = re.compile(rb"#![^\n]*\bpython")
_KEPT_ELF = 4096  # ELF facts kept by path, for hard links to them
_KEPT_QML = 4096  # QML facts kept by path, likewise
_KEPT_FOLDERS = 1024  # reported folders whose contents are not reported again
_KEPT_TRIPLETS = 256  # lib/<triplet>/bin folders
_KEPT_GROUPS = 64  # unknown ELF machines, Qt versions: a group (and a finding) each
#: The group of compiled code for machines beyond the first _KEPT_GROUPS unknown ones.
OTHER_MACHINES = "other ELF machines"
#: Names of version-control data (``lint.vcs``) and of build leftovers
#: (``lint.build-leftover``), matched on each path's last part as the pass sees it.
VCS_PATTERNS = (".bzr*", ".git*", ".svn*", ".hg*", "CVS", "RCS", "_darcs", "{arch}")
LEFTOVER_PATTERNS = ("CMakeFiles", "CMakeCache.txt", "cmake_install.cmake", "CTestTestfile.cmake",
                     "*.o", "*.obj", "*.a", "*.la", "*.lo", ".deps", ".qmake.stash",
                     "*.pro.user", "CMakeLists.txt.user", "*.click")
_VCS = re.compile("|".join(fnmatch.translate(p) for p in VCS_PATTERNS))
_LEFTOVER = re.compile("|".join(fnmatch.translate(p) for p in LEFTOVER_PATTERNS))


class Collected:
    """What the review knows about the data tree after the pass."""

    def __init__(self, scan: ScanResult, package_name: str = "",
                 abi: Scanner | None = None) -> None:
        self.scan = scan
        self.abi = abi  # reads compiled code for the ABI checks; None: nothing to check
        self.package_name = package_name
        self.world_writable = Sample()
        self.code = Sample(ordered=True)  # ELF files with code
        self.python = Sample()  # Python modules, bytecode and scripts
        self.machines: dict[str, tuple[frozenset[str], Sample]] = {}  # code, by machine
        self.qt: dict[tuple[int, int], Sample] = {}  # code, by the newest Qt it links
        self.vcs = Sample()
        self.leftovers = Sample()
        self.lib_triplets: set[str] = set()  # X of lib/X/bin/NAME files
        self.contents: dict[str, bytes] = {}
        self.too_large: set[str] = set()
        self.uses_qsettings = False  # some compiled code names QSettings
        self.lomiri = Sample(ordered=True)  # QML files that import Lomiri modules
        self.mainviews = Sample(ordered=True)  # QML files with a MainView
        self.named = Sample(ordered=True)  # those that set an applicationName: "PATH ('NAME')"
        self.named_paths = Sample(ordered=True)  # and their paths
        self.name_matches = False  # some MainView's applicationName is the package name
        self.inline_named = Sample(ordered=True)  # MainView { applicationName: on one line
        self._elf: dict[str, tuple[ElfInfo, tuple[int, int] | None]] = {}
        self._qml: dict[str, QmlFacts] = {}
        self.has_qml = False  # some file ends in .qml (a web app has none)
        self._flagged: set[str] = set()

    def resolve(self, path: str) -> str | None:
        """The package path that ``path`` names after symlinks and hard links.

        None for an absolute path or one that leaves the package.
        """
        if path.startswith("/"):
            return None
        resolved = resolve_in_package(path, self.scan)
        if resolved is None:
            return None
        return self.scan.hardlinks.get(resolved, resolved)

    def kind(self, path: str) -> str | None:
        """'file' or 'dir' for what ``path`` names; None if missing or outside."""
        resolved = self.resolve(path)
        if resolved is None:
            return None
        kind = self.scan.kind(resolved)
        return kind if kind in ("file", "dir") else None

    def is_executable(self, path: str) -> bool:
        resolved = self.resolve(path)
        return resolved is not None and self.scan.is_executable(resolved)

    def content(self, path: str) -> bytes | None:
        resolved = self.resolve(path)
        return None if resolved is None else self.contents.get(resolved)

    def add_elf(self, path: str, elf: ElfInfo, qt: tuple[int, int] | None) -> None:
        if len(self._elf) < _KEPT_ELF:
            self._elf[path] = (elf, qt)
        if not elf.is_code:
            return
        self.code.add(path)
        key, arches = elf.description, elf.arches
        if key not in self.machines and not arches and len(self.machines) >= _KEPT_GROUPS:
            key = OTHER_MACHINES  # a group (and a finding) per unknown machine, up to a cap
        group = self.machines.get(key)
        if group is None:
            group = self.machines[key] = (arches, Sample(ordered=True))
        group[1].add(path)
        if qt is not None:
            # Fewer Qt releases exist than the cap: past it, the groups kept are
            # findings enough (an unknown Qt is an error), and the rest is dropped.
            versions = self.qt.get(qt)
            if versions is None and len(self.qt) < _KEPT_GROUPS:
                versions = self.qt[qt] = Sample(ordered=True)
            if versions is not None:
                versions.add(path)

    def add_qml(self, path: str, facts: QmlFacts) -> None:
        self.has_qml = True
        if len(self._qml) < _KEPT_QML:
            self._qml[path] = facts
        if facts.imports_lomiri:
            self.lomiri.add(path)
        if not facts.has_mainview:
            return
        self.mainviews.add(path)
        if facts.inline_name:
            self.inline_named.add(path)
        if facts.application_names:
            self.named.add(f"{path} ({facts.application_name!r})")
            self.named_paths.add(path)
            self.name_matches = self.name_matches or facts.names_package

    def note(self, path: str, is_dir: bool, elf: ElfInfo | None = None) -> None:
        """Version-control data and build leftovers, folders reported once."""
        if not path or (self._flagged and _inside(path, self._flagged)):
            return
        base = path.rpartition("/")[2]
        if _VCS.match(base):
            self.vcs.add(path)
        elif _LEFTOVER.match(base) or (elf is not None and elf.is_core_dump):
            self.leftovers.add(path)
        else:
            return
        if is_dir and len(self._flagged) < _KEPT_FOLDERS:
            self._flagged.add(path)


def _inside(path: str, folders: set[str]) -> bool:
    while "/" in path:
        path = path.rsplit("/", 1)[0]
        if path in folders:
            return True
    return False


class _Sink:
    def __init__(self, out: Collected, wanted: set[str], progress: _console.Progress | None):
        self.out = out
        self.wanted = wanted
        self.progress = progress
        self.kept = 0  # bytes of parsed files kept

    def _note(self, entry: DataEntry) -> None:
        if entry.stored_mode >= 0 and entry.stored_mode & 0o002 and entry.path:
            self.out.world_writable.add(entry.path)
        parts = entry.path.split("/")
        if (len(parts) == 4 and parts[0] == "lib" and parts[2] == "bin"
                and len(self.out.lib_triplets) < _KEPT_TRIPLETS):
            self.out.lib_triplets.add(parts[1])

    def directory(self, entry: DataEntry) -> None:
        self._note(entry)
        self.out.note(entry.path, True)

    def file(self, entry: DataEntry, chunks: Iterator[bytes]) -> None:
        self._note(entry)
        out = self.out
        first = next(chunks, b"")
        elf = parse_elf_header(first[:HEADER_SIZE])
        out.note(entry.path, False, elf)
        if entry.path.endswith(_PYTHON_SUFFIXES) or _PYTHON_SHEBANG.match(first):
            out.python.add(entry.path)
        keep = entry.path in self.wanted
        if keep and (entry.size > MAX_PARSED_FILE or self.kept + entry.size > MAX_PARSED_TOTAL):
            out.too_large.add(entry.path)
            keep = False
        newest = None
        code = elf is not None and elf.is_code
        qml = QmlScanner(out.package_name) if entry.path.endswith(".qml") else None
        capture = out.abi.capture(entry.size, elf) if code and out.abi and elf else None
        if keep or code or qml is not None:
            parts, qt, tail = [first], set(_QT.findall(first)), first[-_QT_TAIL:]
            settings = code and QSETTINGS in first
            if qml is not None:
                qml.feed(first)
            if capture is not None:
                capture.feed(first)
            for chunk in chunks:
                if keep:
                    parts.append(chunk)
                if code:
                    qt.update(_QT.findall(tail + chunk))
                    settings = settings or QSETTINGS in tail + chunk
                    tail = chunk[-_QT_TAIL:]
                    if capture is not None:
                        capture.feed(chunk)
                if qml is not None:
                    qml.feed(chunk)
            if capture is not None and out.abi is not None and elf is not None:
                out.abi.file(entry.path, elf, capture, tagged=bool(qt))
            if keep:
                out.contents[entry.path] = b"".join(parts)
                self.kept += entry.size
            if code and qt:
                newest = max((int(a), int(b)) for a, b in qt)
            out.uses_qsettings = out.uses_qsettings or settings
            if qml is not None:
                out.add_qml(entry.path, qml.close())
        if elf is not None:
            out.add_elf(entry.path, elf, newest)
        if self.progress is not None:
            self.progress.advance(entry.size >> 10)

    def symlink(self, entry: DataEntry) -> None:
        self._note(entry)
        self.out.note(entry.path, False)

    def hardlink(self, entry: DataEntry) -> None:
        self._note(entry)
        out = self.out
        known = out._elf.get(entry.target)
        out.note(entry.path, False, known[0] if known else None)
        if entry.path.endswith(_PYTHON_SUFFIXES):
            out.python.add(entry.path)
        if known is not None:
            out.add_elf(entry.path, *known)
        if out.abi is not None:
            out.abi.hardlink(entry.path, entry.target)
        facts = out._qml.get(entry.target)
        if facts is not None and entry.path.endswith(".qml"):
            out.add_qml(entry.path, facts)


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


def collect(pkg: ClickPackage, wanted: set[str], abi: Scanner | None = None) -> Collected:
    """Stream the data archive once (audited by the core) and keep what matters.

    ``wanted`` are the package paths whose bytes the checks parse; ``abi`` reads the
    compiled code for the ABI checks.  Raises :class:`PackageError` when the core audit
    refuses the data.
    """
    total = whole_number(pkg.field("Installed-Size") or "0") or 0
    out = Collected(ScanResult(), pkg.name, abi)
    with _console.Progress("KiB reviewed", total) as progress:
        out.scan = scan_data(pkg, _Sink(out, wanted, progress), index=True)
    # A hook may name a link; read what it points to if the pass skipped it.
    missing = set()
    for path in wanted:
        resolved = out.resolve(path)
        if (resolved is not None and resolved not in out.contents
                and resolved not in out.too_large and out.scan.kind(resolved) == "file"):
            missing.add(resolved)
    if missing:
        scan_data(pkg, _Capture(out, missing))
    return out
