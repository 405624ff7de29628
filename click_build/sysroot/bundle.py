"""Which shared libraries of a root an app bundles (``[tool.click-build.sysroot] bundle``,
Clickable's ``install_lib``): those the named packages ship, found in the root.

A package's file list comes from its ``.deb`` in the cache's pool (the root keeps no
package database). Only shared libraries are taken (``libX.so.N...`` in a ``lib``
folder), so a ``-dev`` package named by mistake adds nothing, and a package of the
profile's own (what the framework provides: the phone has it) is left out with a
warning.  The backend packs the result into ``lib/<triplet>/`` (``backend/crossroot.py``).
"""

from __future__ import annotations

import os
import re
from pathlib import Path

from .. import _console
from ..errors import SysrootError
from ..tarread import TarReader
from .extract import _clean, _data_stream
from .store import Stored

__all__ = ["bundled_libraries"]

_SHARED = re.compile(r"(?:^|/)lib/(?:[^/]+/)?lib[^/]+\.so(?:\.\d+)+$")


def _strings(stored: Stored, key: str) -> list[object]:
    value = stored.meta.get(key)
    return list(value) if isinstance(value, list) else []


def bundled_libraries(stored: Stored, names: list[str] | tuple[str, ...],
                      provided: frozenset[str] = frozenset()) -> list[Path]:
    """The root's paths of the shared libraries (files and links) the packages ``names``
    ship, sorted; an error naming a package the root does not hold.  A library one of
    whose names (its file's, its links') is in ``provided`` (the framework's sonames,
    :mod:`click_build.abi_facts`) is left out with a warning: the phone has it."""
    installed = {pair[0]: pair[1] for pair in _strings(stored, "installed")
                 if isinstance(pair, list) and len(pair) == 2}
    framework = set(_strings(stored, "packages")) - set(_strings(stored, "extra_packages"))
    pool = stored.folder.parent / "debs"
    found: set[Path] = set()
    for name in names:
        if name not in installed:
            raise SysrootError(f"bundle: {name} is not in the {stored.get('label')} root; add "
                               "it to the root's packages first")
        if name in framework:
            _console.warn(f"bundle: {name} is part of the framework's root (the phone has "
                          "it); not bundled")
            continue
        version = installed[name].replace(":", "%3a")
        debs = sorted(pool.glob(f"{name}_{version}_*.deb"))
        if not debs:
            raise SysrootError(f"bundle: {name}'s package is no longer in {pool}; run "
                               "click-build sysroot update")
        with open(debs[0], "rb") as f:
            for member in TarReader(_data_stream(f, debs[0]), debs[0].name):
                rel = _clean(member.name, debs[0].name)
                if member.type in (b"0", b"2") and _SHARED.search(rel):
                    found.add(stored.root / rel)
    present = [p for p in found if p.exists() or p.is_symlink()]
    groups: dict[str, list[Path]] = {}
    for path in present:  # a library and its links
        groups.setdefault(os.path.realpath(path), []).append(path)
    out = []
    for group in groups.values():
        named = sorted(p.name for p in group)
        if provided.intersection(named):
            _console.warn(f"bundle: {', '.join(named)}: the framework provides it (the "
                          "phone has it); not bundled")
            continue
        out.extend(group)
    return sorted(out)
