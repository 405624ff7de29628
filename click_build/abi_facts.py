"""What each framework's system gives compiled code, from the files in ``framework-abi/``.

One JSON file per framework family and architecture (``ubuntu-sdk-20.04_arm64.json``),
written by ``scripts/framework-abi``, which records in each where every fact came from:
the highest ``GLIBC_``, ``GLIBCXX_`` and ``CXXABI_`` versions of its C and C++ runtime,
the shared libraries (sonames) its packages install, its Qt release and the Qt symbols
newer than that release.  ``index.json`` names the family of each framework; a
framework it does not name has no facts, and gets no finding that would need them.

Facts not read from the framework's own archive (a Debian release standing in for the
Ubuntu one, or a value stated by hand) are marked approximate, and :meth:`AbiFacts.note`
says so in the words a finding can carry.
"""

from __future__ import annotations

import json
import os

from .elfdyn import version_key

__all__ = ["DATA_DIR", "SPECIAL_VERSIONS", "AbiFacts", "facts_for", "families"]

DATA_DIR = os.path.join(os.path.dirname(__file__), "framework-abi")
#: Version names that are not numbers, with the release that brought them.
SPECIAL_VERSIONS: dict[str, tuple[int, ...]] = {
    "GLIBC_ABI_DT_RELR": (2, 36),  # packed relative relocations (ld -z pack-relative-relocs)
}


class AbiFacts:
    """The facts of one framework family on one architecture."""

    def __init__(self, data: dict[str, object]) -> None:
        self.family = str(data["family"])
        self.architecture = str(data["architecture"])
        self.base = str(data["base"])  # "Ubuntu 20.04"
        self.stand_in = data.get("stand_in")  # "Debian bullseye", or None: the real archive
        versions = data["versions"]
        assert isinstance(versions, dict)
        #: "GLIBC" -> (the highest version as numbers, as written, approximate)
        self.ceilings: dict[str, tuple[tuple[int, ...], str, bool]] = {}
        for prefix, fact in versions.items():
            key = version_key(fact["max"])
            if key is not None:
                self.ceilings[prefix] = (key, fact["max"], bool(fact["approximate"]))
        sonames = data["sonames"]
        assert isinstance(sonames, dict)
        self.sonames = frozenset(sonames["names"])
        self.sonames_approximate = bool(sonames["approximate"])
        qt = data["qt"]
        assert isinstance(qt, dict)
        self.qt_release = str(qt["release"])
        self.qt_approximate = bool(qt["approximate"])
        #: mangled name -> (library, the first Qt version that has it)
        self.qt_newer: dict[bytes, tuple[str, str]] = {
            symbol.encode("ascii"): (library, version)
            for library, table in qt["newer"].items() for symbol, version in table.items()
        }
        self.qt_max_name = max(map(len, self.qt_newer), default=0)

    def note(self, fact: str) -> str:
        """`` (approximate: ...)`` for a finding that relies on ``fact`` ('versions',
        'sonames', 'qt') when that fact was not read from the framework's archive."""
        if fact == "sonames" and self.sonames_approximate:
            where = f"read from {self.stand_in}, standing in" if self.stand_in else "made"
            return f" (approximate: the framework's library list is {where} for {self.base})"
        if fact == "qt" and self.qt_approximate:
            return (f" (approximate: Qt {self.qt_release} is stated for {self.base}, not read "
                    "from its archive)")
        if fact.startswith("versions:") and self.ceilings.get(fact[9:], ((), "", False))[2]:
            return (f" (approximate: {fact[9:]} {self.ceilings[fact[9:]][1]} is stated for "
                    f"{self.base}, not read from its archive)")
        return ""


_INDEX: dict[str, str] | None = None
_LOADED: dict[tuple[str, str], AbiFacts | None] = {}


def families() -> dict[str, str]:
    """Framework name -> the family whose facts it shares."""
    global _INDEX
    if _INDEX is None:
        try:
            with open(os.path.join(DATA_DIR, "index.json"), encoding="utf-8") as f:
                _INDEX = dict(json.load(f))
        except OSError:
            _INDEX = {}
    return _INDEX


def facts_for(framework: str, architecture: str) -> AbiFacts | None:
    """The facts of ``framework`` on ``architecture``; None when there are none."""
    family = families().get(framework)
    if family is None:
        return None
    key = (family, architecture)
    if key not in _LOADED:
        path = os.path.join(DATA_DIR, f"{family}_{architecture}.json")
        try:
            with open(path, encoding="utf-8") as f:
                _LOADED[key] = AbiFacts(json.load(f))
        except FileNotFoundError:
            _LOADED[key] = None
    return _LOADED[key]
