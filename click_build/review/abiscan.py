"""The stream half of the ABI checks (:mod:`.abi`): each ELF file's needs, as it passes.

For each program and library of an architecture the package declares, what the loader
will ask of the device (:mod:`..elfdyn`) is compared with the facts of every framework
the package names (:mod:`..abi_facts`), and what is kept is a short summary, grouped with
the files that share it; :mod:`.abi` turns the groups into findings once the package's
own files are known.  Bounded: 1024 kinds of code, 4 MiB of names, 16 reasons for
unreadable files, summaries of 4096 files kept for hard links.
"""

from __future__ import annotations

from .. import elfdyn
from .._record import Record
from ..abi_facts import SPECIAL_VERSIONS, AbiFacts, facts_for
from ..elf import ET_DYN, ET_EXEC, ElfInfo
from ..elfdyn import Capture, Dynamic, read_dynamic, version_key
from ..errors import ElfError
from ..versions import compare_versions
from .sample import Sample

__all__ = ["MAX_GROUPS", "Problem", "QtProblem", "Scanner", "Summary", "Target",
           "VersionProblem", "targets"]

MAX_GROUPS = 1024  # kinds of compiled code told apart (a real app has a handful)
_MAX_GROUP_BYTES = 4 << 20  # the names they hold, together
_MAX_REASONS = 16  # unreadable files: a finding per reason, up to this
_MAX_NEEDED = 256  # needed libraries and search paths a file may list
_MAX_LIBRARY_NAME = 255
_KEPT_PATHS = 4096  # summaries kept by path, for hard links
_EXAMPLES = 3


class Target(Record):
    """One framework on one architecture, with its facts."""

    framework: str
    architecture: str
    facts: AbiFacts


def targets(frameworks: list[str], architectures: list[str]) -> list[Target]:
    """Every framework x architecture of the package that has facts."""
    found = []
    for framework in frameworks:
        for arch in architectures:
            facts = facts_for(framework, arch)
            if facts is not None:
                found.append(Target(framework, arch, facts))
    return found


class VersionProblem(Record):
    """A file needs a symbol version the target's runtime lacks."""

    target: int  # index into Scanner.targets
    library: str  # the library the version is needed of: libc.so.6
    version: str  # GLIBC_2.34
    example: str  # an undefined symbol that needs it, or ""


class QtProblem(Record):
    """A file uses Qt symbols newer than the target's Qt."""

    target: int
    library: str  # libQt5Core.so.5
    newest: str  # the first Qt version that has the newest of them
    symbols: int  # how many
    shown: tuple[str, ...]  # a few of them


Problem = VersionProblem | QtProblem
#: What a file needs: (needed libraries, search paths, problems, the targets it is for)
Summary = tuple[tuple[str, ...], tuple[str, ...], tuple[Problem, ...], tuple[int, ...]]


class Scanner:
    """Reads each ELF file as it streams past and keeps its summary, grouped."""

    def __init__(self, wanted: list[Target]) -> None:
        self.targets = wanted
        self.groups: dict[tuple[str, Summary], Sample] = {}
        self.unreadable: dict[str, Sample] = {}
        self._bytes = 0
        self._by_path: dict[str, tuple[str, Summary] | str | None] = {}

    def capture(self, size: int, elf: ElfInfo) -> Capture | None:
        """A capture for a file with ELF header ``elf`` that some target wants read."""
        if elf.kind in (ET_EXEC, ET_DYN) and self._wanted(elf):
            return Capture(size, elfdyn.PREFIX)
        return None

    def _wanted(self, elf: ElfInfo) -> tuple[int, ...]:
        return tuple(i for i, t in enumerate(self.targets) if t.architecture in elf.arches)

    def file(self, path: str, elf: ElfInfo, capture: Capture, tagged: bool) -> None:
        """The file ``path`` has streamed past; ``tagged``: it carries a Qt_5.NN tag."""
        try:
            dyn = read_dynamic(capture)
            result: tuple[str, Summary] | str | None = None
            if dyn is not None:
                summary = self._summary(dyn, self._wanted(elf), tagged)
                # the folder matters only to search paths relative to the file
                relative = any(p.startswith(("$ORIGIN", "${ORIGIN}")) for p in dyn.runpath)
                result = (path.rpartition("/")[0] if relative else "", summary)
        except ElfError as e:
            result = str(e)
        self._add(path, result)

    def hardlink(self, path: str, target: str) -> None:
        if target in self._by_path:
            result = self._by_path[target]
            if isinstance(result, tuple) and result[0]:
                result = (path.rpartition("/")[0], result[1])
            self._add(path, result)

    def _add(self, path: str, result: tuple[str, Summary] | str | None) -> None:
        if len(self._by_path) < _KEPT_PATHS:
            self._by_path[path] = result
        if result is None:
            return
        if isinstance(result, str):
            if result not in self.unreadable and len(self.unreadable) >= _MAX_REASONS:
                result = "and other reasons"
            self.unreadable.setdefault(result, Sample(ordered=True)).add(path)
            return
        group = self.groups.get(result)
        if group is None:
            size = len(result[0]) + sum(map(len, result[1][0] + result[1][1]))
            if len(self.groups) >= MAX_GROUPS or self._bytes + size > _MAX_GROUP_BYTES:
                self.unreadable.setdefault(
                    f"more than {MAX_GROUPS} kinds of compiled code to tell apart",
                    Sample(ordered=True)).add(path)
                return
            self._bytes += size
            group = self.groups[result] = Sample(ordered=True)
        group.add(path)

    def _summary(self, dyn: Dynamic, wanted: tuple[int, ...], tagged: bool) -> Summary:
        names = dyn.needed + dyn.runpath
        if len(dyn.needed) > _MAX_NEEDED or len(dyn.runpath) > _MAX_NEEDED \
                or any(len(n) > _MAX_LIBRARY_NAME for n in names):
            raise ElfError(f"more than {_MAX_NEEDED} needed libraries or search paths, or a "
                           f"name longer than {_MAX_LIBRARY_NAME} bytes")
        found: list[tuple[int, str, str, int]] = []  # target, library, version, index
        examples: dict[int, bytes] = {}  # version index -> an undefined symbol needing it
        by_index = {(lib, ver): i for i, (lib, ver, _) in dyn.needs.items()}
        for t in wanted:
            for lib, ver in dyn.required_versions():
                if _too_new(ver, self.targets[t].facts):
                    index = by_index.get((lib, ver), -1)
                    found.append((t, lib, ver, index))
                    if index >= 0:
                        examples.setdefault(index, b"")
        qt = [t for t in wanted if self.targets[t].facts.qt_newer] if not tagged else []
        if qt and not any(n.startswith("libQt5") for n in dyn.needed):
            qt = []
        hits: dict[tuple[int, str], list[tuple[str, str]]] = {}
        if qt or examples:
            longest = max([self.targets[t].facts.qt_max_name for t in qt] + [255])
            for name, index in dyn.undefined(longest):
                if index in examples and not examples[index]:
                    examples[index] = name
                for t in qt:
                    hit = self.targets[t].facts.qt_newer.get(name)
                    if hit is None:
                        continue
                    needs = dyn.needs.get(index)
                    if needs is not None and needs[0] != hit[0]:
                        continue  # the same name, from another library
                    hits.setdefault((t, hit[0]), []).append(
                        (hit[1], name.decode("ascii", "replace")))
        out: list[Problem] = [
            VersionProblem(t, lib, ver, examples.get(index, b"").decode("ascii", "replace"))
            for t, lib, ver, index in found]
        for (t, lib), symbols in sorted(hits.items()):
            newest = symbols[0][0]
            for version, _ in symbols:
                if compare_versions(version, newest) > 0:
                    newest = version
            shown = tuple(sorted(name for _, name in symbols)[:_EXAMPLES])
            out.append(QtProblem(t, lib, newest, len(symbols), shown))
        return dyn.needed, dyn.runpath, tuple(out), wanted


def _too_new(version: str, facts: AbiFacts) -> bool:
    prefix, _, number = version.partition("_")
    ceiling = facts.ceilings.get(prefix)
    if ceiling is None:
        return False
    key = SPECIAL_VERSIONS.get(version) or version_key(number)
    return key is not None and key > ceiling[0]
