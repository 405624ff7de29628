"""Will the compiled code load on its framework?  The dynamic needs of every ELF file.

As the data archive streams past, each program and library of an architecture the
package declares is read for what the loader will ask of the device (:mod:`..elfdyn`):
the libraries it needs, where it looks for them, the symbol versions it needs of each,
and, for code that links Qt, the Qt symbols it uses.  Each file is compared then with the
facts of every framework the package names (:mod:`..abi_facts`), and what is kept is a
short summary, grouped with the files that share it.  After the pass, when the
package's own files are known, come the findings:

- ``lint.abi-glibc``: a ``GLIBC_``, ``GLIBCXX_`` or ``CXXABI_`` version above the
  framework's (unless the package bundles the library that defines it);
- ``lint.abi-soname``: a needed library that neither the framework nor the package
  (``lib/<triplet>/``, ``lib/``, the file's ``$ORIGIN`` search paths) provides;
- ``lint.qt-version``: Qt symbols newer than the framework's Qt, for code that carries no
  ``Qt_5.NN`` tag (the tag exists only on x86: this is how ARM code is checked);
- ``lint.abi-unreadable``: a file whose tables cannot be read, so none of this was checked.
"""

from __future__ import annotations

import posixpath

from .. import elfdyn
from .._record import Record
from ..abi_facts import SPECIAL_VERSIONS, AbiFacts, facts_for, families
from ..elf import ARCH_TRIPLETS, ET_DYN, ET_EXEC, ElfInfo
from ..elfdyn import Capture, Dynamic, read_dynamic, version_key
from ..errors import ElfError
from ..framework_table import QT_MIN_FRAMEWORK
from ..versions import compare_versions
from ._collect import Sample
from .findings import Context

__all__ = ["BUILD_FIX", "Scanner", "Target", "check", "targets"]

#: The general fix for code built against another system than its framework's.
BUILD_FIX = ("build with the framework's own toolchain and libraries (e.g. 'clickable build', "
             "which builds inside the framework's SDK image)")
_MAX_GROUPS = 1024  # kinds of compiled code told apart (a real app has a handful)
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
            if len(self.groups) >= _MAX_GROUPS or self._bytes + size > _MAX_GROUP_BYTES:
                self.unreadable.setdefault(
                    f"more than {_MAX_GROUPS} kinds of compiled code to tell apart",
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


# ------------------------------------------------------------- findings ---

class _Found:
    """Files with one problem against one target, and what to say about it."""

    def __init__(self, problem: Problem | None) -> None:
        self.paths = Sample(ordered=True)
        self.problem = problem


def _merge(into: Sample, paths: Sample) -> None:
    for path in paths.paths:
        into.add(path)
    into.count += paths.count - len(paths.paths)


class _Provider:
    """Whether the package itself gives the loader a library for files in ``folder`` with
    search paths ``runpath``: in ``lib/<triplet>/`` or ``lib/`` (the launcher puts both on
    the app's ``LD_LIBRARY_PATH``) or in a search path relative to the file (``$ORIGIN``)."""

    def __init__(self, ctx: Context, folder: str, runpath: tuple[str, ...]) -> None:
        assert ctx.data is not None
        self.data = ctx.data
        self.places = []
        for entry in runpath:
            for origin in ("$ORIGIN", "${ORIGIN}"):
                if entry == origin or entry.startswith(origin + "/"):
                    place = posixpath.normpath(posixpath.join(folder, entry[len(origin) + 1:]))
                    if not place.startswith(("..", "/")):
                        self.places.append(place)
        self._known: dict[tuple[str, str], bool] = {}

    def has(self, name: str, triplet: str) -> bool:
        key = (name, triplet)
        if key not in self._known:
            self._known[key] = "/" not in name and any(
                self.data.kind(name if place == "." else f"{place}/{name}") == "file"
                for place in [f"lib/{triplet}", "lib", *self.places])
        return self._known[key]


def check(ctx: Context) -> None:
    assert ctx.data is not None
    scanner = ctx.data.abi
    if scanner is None:
        return
    found: dict[tuple[str, int, str], _Found] = {}

    def note(key: tuple[str, int, str], paths: Sample, problem: Problem | None = None) -> None:
        entry = found.setdefault(key, _Found(problem))
        _merge(entry.paths, paths)

    for (folder, (needed, runpath, problems, wanted)), paths in scanner.groups.items():
        provided = _Provider(ctx, folder, runpath)
        for t in wanted:
            target = scanner.targets[t]
            triplet = ARCH_TRIPLETS[target.architecture]
            for name in needed:
                if name not in target.facts.sonames and not provided.has(name, triplet):
                    note(("soname", t, name), paths)
        for problem in problems:
            if provided.has(problem.library,
                            ARCH_TRIPLETS[scanner.targets[problem.target].architecture]):
                continue  # bundled: the package's own library answers
            if isinstance(problem, VersionProblem):
                note(("version", problem.target, problem.version), paths, problem)
            else:
                note(("qt", problem.target, problem.library), paths, problem)
    for key, entry in sorted(found.items()):
        _report(ctx, scanner.targets[key[1]], key, entry)
    for reason, paths in sorted(scanner.unreadable.items()):
        ctx.report.add("lint.abi-unreadable", paths.paths[0],
                       f"cannot be checked against the framework ({reason}): {paths.listing()}",
                       "rebuild it with a standard toolchain; the loader refuses a file whose "
                       "tables it cannot read")


def _shown(text: str) -> str:
    """Names read from an attacker's file, fit for one line of a terminal."""
    return "".join(c if c.isprintable() else f"\\x{ord(c):02x}" for c in text)


def _report(ctx: Context, target: Target, key: tuple[str, int, str], entry: _Found) -> None:
    facts, paths, problem = target.facts, entry.paths, entry.problem
    fw = f"framework {target.framework!r} ({target.architecture})"
    triplet = ARCH_TRIPLETS[target.architecture]
    add = ctx.report.add
    if isinstance(problem, VersionProblem):
        prefix = problem.version.partition("_")[0]
        library = _shown(problem.library)
        why = f" (for {_shown(problem.example)})" if problem.example else ""
        if prefix == "GLIBC":
            fix = f"{BUILD_FIX}; code built against a newer glibc cannot run on an older one"
        else:
            fix = (f"{BUILD_FIX}, or bundle the {library} of the compiler that built it "
                   f"in lib/{triplet}/")
        add("lint.abi-glibc", paths.paths[0],
            f"needs {_shown(problem.version)} of {library}{why}, newer than the {prefix} "
            f"{facts.ceilings[prefix][1]} of {fw}{facts.note('versions:' + prefix)}: "
            f"{paths.listing()}", fix)
    elif isinstance(problem, QtProblem):
        plural = "s" if problem.symbols != 1 else ""
        later = _framework_with_qt(problem.newest)
        if later is not None and families().get(later) == facts.family:
            later = None  # this framework's own Qt is too old: no later one to name
        declare = (f", or declare a framework with that Qt, e.g. {later!r}, and its AppArmor "
                   "policy_version") if later else ""
        add("lint.qt-version", paths.paths[0],
            f"uses {problem.symbols} symbol{plural} of {problem.library} newer than the Qt "
            f"{facts.qt_release} of {fw} ({', '.join(map(_shown, problem.shown))}; the newest "
            f"came in Qt {problem.newest}){facts.note('qt')}: {paths.listing()}",
            f"{BUILD_FIX} (Qt {facts.qt_release}){declare}")
    else:
        name = _shown(key[2])
        stem = name.split(".so")[0]
        kin = sorted(s for s in facts.sonames if s.split(".so")[0] == stem)
        has = f"; the framework has {', '.join(kin)}" if kin else ""
        add("lint.abi-soname", paths.paths[0],
            f"needs {name}, which neither {fw} nor the package (lib/{triplet}/, lib/, the "
            f"file's $ORIGIN search paths) provides{has}{facts.note('sonames')}: {paths.listing()}",
            f"{BUILD_FIX}, or bundle the library: ship {name} (and the libraries it needs) "
            f"in lib/{triplet}/ of the package")


def _framework_with_qt(version: str) -> str | None:
    """The oldest framework whose Qt has ``version`` (5.14.1 -> the one with 5.15)."""
    for qt, framework in sorted(QT_MIN_FRAMEWORK.items(), key=lambda kv: version_key(kv[0]) or ()):
        if compare_versions(qt + ".99", version) >= 0:
            return framework
    return None
