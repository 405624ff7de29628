"""Which packages a root needs: the asked-for ones and everything they depend on, as
``apt-get install --no-install-recommends`` picks them into an empty system.

``Depends`` and ``Pre-Depends`` are followed; of alternatives (``a | b``) the
first that can be had is taken unless another is already in; a virtual package
is satisfied by a package that provides it.  Of several versions the newest that
fits wins (``bookworm-updates`` over ``bookworm``).  Conflicts are not weighed: a
build root runs no maintainer scripts, so two packages that could not be installed
together still unpack side by side.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from ..errors import SysrootError
from ..versions import compare_versions
from .index import Candidate

__all__ = ["Index", "resolve"]

_RELATION = re.compile(r"\s*([a-z0-9][a-z0-9+.-]*)(?::[a-z0-9-]+)?\s*"
                       r"(?:\(\s*(<<|<=|=|>=|>>|<|>)\s*([^)\s]+)\s*\))?\s*(?:\[[^]]*\])?"
                       r"\s*(?:<[^>]*>\s*)*$")
_OPS = {
    "<<": lambda c: c < 0, "<": lambda c: c <= 0, "<=": lambda c: c <= 0,
    "=": lambda c: c == 0, ">=": lambda c: c >= 0, ">": lambda c: c >= 0,
    ">>": lambda c: c > 0,
}

Relation = tuple[str, str | None, str | None]


def _parse(field: str, owner: str) -> list[list[Relation]]:
    groups = []
    for group in field.split(","):
        if not group.strip():
            continue
        alts = []
        for alt in group.split("|"):
            m = _RELATION.match(alt)
            if m is None:
                raise SysrootError(f"{owner}: cannot read the relation {alt.strip()!r}")
            alts.append((m.group(1), m.group(2), m.group(3)))
        groups.append(alts)
    return groups


def _fits(version: str | None, op: str | None, wanted: str | None) -> bool:
    if op is None or wanted is None:
        return True
    if version is None:
        return False  # an unversioned Provides satisfies only unversioned relations
    return bool(_OPS[op](compare_versions(version, wanted)))


class Index:
    """Every candidate of the root's sources, by name and by what they provide."""

    def __init__(self, candidates: Iterable[Candidate]) -> None:
        self.by_name: dict[str, list[Candidate]] = {}
        self.providers: dict[str, list[tuple[Candidate, str | None]]] = {}
        for c in candidates:
            self.by_name.setdefault(c.name, []).append(c)
        for found in self.by_name.values():
            found.sort(key=_Newest, reverse=True)
            best = found[0]
            for group in _parse(best.provides, best.name):
                for provided, _op, version in group:
                    self.providers.setdefault(provided, []).append((best, version))

    def pick(self, name: str, op: str | None, version: str | None) -> Candidate | None:
        for c in self.by_name.get(name, ()):
            if _fits(c.version, op, version):
                return c
        for c, provided in sorted(self.providers.get(name, ()), key=lambda p: p[0].name):
            if _fits(provided, op, version):
                return c
        return None


class _Newest:
    def __init__(self, c: Candidate) -> None:
        self.version = c.version

    def __lt__(self, other: _Newest) -> bool:
        return compare_versions(self.version, other.version) < 0


def resolve(wanted: Iterable[str], index: Index) -> list[Candidate]:
    chosen: dict[str, Candidate] = {}
    provided: dict[str, list[str | None]] = {}

    def satisfied(name: str, op: str | None, version: str | None) -> bool:
        c = chosen.get(name)
        if c is not None and _fits(c.version, op, version):
            return True
        return any(_fits(v, op, version) for v in provided.get(name, ()))

    def take(c: Candidate) -> None:
        chosen[c.name] = c
        for group in _parse(c.provides, c.name):
            for name, _op, version in group:
                provided.setdefault(name, []).append(version)
        queue.append(c)

    queue: list[Candidate] = []
    for name in wanted:
        c = index.pick(name, None, None)
        if c is None:
            raise SysrootError(f"package {name} is not in the root's archives (a typo, or "
                               "a package of another release?)")
        if name not in chosen:
            take(c)
    while queue:
        c = queue.pop()
        for group in _parse(c.pre_depends, c.name) + _parse(c.depends, c.name):
            if any(satisfied(*alt) for alt in group):
                continue
            for alt in group:
                found = index.pick(*alt)
                if found is not None and found.name not in chosen:
                    take(found)
                    break
            else:
                wanted_text = " | ".join(
                    n + (f" ({op} {v})" if op else "") for n, op, v in group)
                raise SysrootError(f"{c.name} {c.version} needs {wanted_text}, which the "
                                   "root's archives do not have")
    return sorted(chosen.values(), key=lambda c: c.name)
