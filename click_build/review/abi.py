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

The stream's half, reading and grouping, is :mod:`.abiscan`; this module makes the findings.
"""

from __future__ import annotations

import posixpath

from ..abi_facts import families
from ..elf import ARCH_TRIPLETS
from ..elfdyn import version_key
from ..framework_table import QT_MIN_FRAMEWORK
from ..versions import compare_versions
from .abiscan import Problem, QtProblem, Scanner, Target, VersionProblem, targets
from .findings import Context
from .sample import Sample

__all__ = ["BUILD_FIX", "Scanner", "check", "targets"]

#: The fix for code built against another system than its framework's: the framework's
#: libraries and headers in a sysroot (click-build sysroot), which docs/phone.md walks through.
BUILD_FIX = "build against the framework's sysroot: see docs/phone.md"


class _Found:
    """Files with one problem against one target, and what to say about it."""

    def __init__(self, problem: Problem | None) -> None:
        self.paths = Sample(ordered=True)
        self.problem = problem


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
        entry.paths.merge(paths)

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
            f"in lib/{triplet}/ of the package ([tool.click-build.sysroot] bundle names "
            "the root's package that has it)")


def _framework_with_qt(version: str) -> str | None:
    """The oldest framework whose Qt has ``version`` (5.14.1 -> the one with 5.15)."""
    for qt, framework in sorted(QT_MIN_FRAMEWORK.items(), key=lambda kv: version_key(kv[0]) or ()):
        if compare_versions(qt + ".99", version) >= 0:
            return framework
    return None
