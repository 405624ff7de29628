"""Where roots are kept, how they are named, and the lock that lets builds share one.

``~/.cache/click-build/sysroots/`` (``$XDG_CACHE_HOME``; ``CLICK_BUILD_SYSROOT_CACHE``
names another folder) holds one folder per root, named by its profile, its
architecture and a hash of what decides its contents (the sources with their
mirrors, suites, components and keys, and the packages), and ``debs/``, the
downloaded packages every root shares.

Each root has a lock file beside its folder: builds hold it shared while they use
the root, ``create``, ``update`` and ``remove`` hold it exclusive, so a root never
changes under a build (``flock``: the lock goes with the process, even killed).
"""

from __future__ import annotations

import fcntl
import hashlib
import json
import os
from dataclasses import dataclass
from pathlib import Path
from types import TracebackType

from ..errors import SysrootError
from .keys import KEYS
from .profiles import ARCHIVES, Profile

__all__ = ["META", "RootLock", "Stored", "cache_home", "root_id", "stored_roots"]

#: The file that says a root is complete and what it holds.
META = "sysroot.json"


def cache_home(environ: dict[str, str] | os._Environ[str] = os.environ) -> Path:
    named = environ.get("CLICK_BUILD_SYSROOT_CACHE")
    if named:
        return Path(named).expanduser().absolute()
    base = environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base, "click-build", "sysroots").absolute()


def root_id(profile: Profile, urls: dict[str, str]) -> str:
    identity = {
        "profile": profile.name, "arch": profile.arch,
        "sources": [[urls[s.archive], list(s.suites), list(s.components),
                     list(KEYS[ARCHIVES[s.archive].key].fingerprints)]
                    for s in profile.sources],
        "packages": list(profile.packages),
    }
    digest = hashlib.sha256(json.dumps(identity, sort_keys=True).encode()).hexdigest()
    return f"{profile.name}-{profile.arch}-{digest[:12]}"


class RootLock:
    """``with RootLock(cache, id, exclusive):`` the root's lock, waited for."""

    def __init__(self, cache: Path, ident: str, exclusive: bool) -> None:
        self.path = cache / f"{ident}.lock"
        self.exclusive = exclusive
        self._fd = -1

    def __enter__(self) -> RootLock:
        flags = os.O_RDONLY | os.O_CLOEXEC | os.O_NOFOLLOW
        try:
            if self.exclusive:
                self.path.parent.mkdir(parents=True, exist_ok=True)
                self._fd = os.open(self.path, flags | os.O_CREAT, 0o644)
            else:
                try:
                    self._fd = os.open(self.path, flags)
                except FileNotFoundError:  # a root made before locks, or by hand
                    self._fd = os.open(self.path, flags | os.O_CREAT, 0o644)
        except OSError as e:
            raise SysrootError(f"{self.path}: cannot open the root's lock ({e.strerror})") \
                from None
        try:
            fcntl.flock(self._fd, fcntl.LOCK_EX if self.exclusive else fcntl.LOCK_SH)
        except OSError as e:
            os.close(self._fd)
            raise SysrootError(f"{self.path}: cannot lock ({e.strerror})") from None
        return self

    def __exit__(self, kind: type[BaseException] | None, value: BaseException | None,
                 tb: TracebackType | None) -> None:
        os.close(self._fd)  # closing drops the lock
        self._fd = -1


@dataclass(frozen=True)
class Stored:
    """A complete root in the cache."""

    folder: Path
    meta: dict[str, object]

    @property
    def ident(self) -> str:
        return self.folder.name

    @property
    def root(self) -> Path:
        return self.folder / "root"

    @property
    def toolchain(self) -> Path:
        return self.folder / "toolchain.cmake"

    def get(self, key: str) -> str:
        value = self.meta.get(key, "")
        return value if isinstance(value, str) else ""


def read_stored(folder: Path) -> Stored | None:
    try:
        with open(folder / META, encoding="utf-8") as f:
            meta = json.load(f)
    except (OSError, ValueError):
        return None
    return Stored(folder, meta) if isinstance(meta, dict) else None


def stored_roots(cache: Path) -> list[Stored]:
    if not cache.is_dir():
        return []
    found = []
    for folder in sorted(cache.iterdir()):
        if folder.is_dir() and not folder.is_symlink() and folder.name != "debs" \
                and not folder.name.startswith("."):
            stored = read_stored(folder)
            if stored is not None:
                found.append(stored)
    return found
