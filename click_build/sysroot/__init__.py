"""Target roots: the phone's libraries and headers on the build machine, to cross-build
against without Docker or root.

A root is made once per profile (framework x architecture, :mod:`.profiles`),
sources and packages, kept in the cache (:mod:`.store`) and shared by every build
that needs it.  It is made by a private apt where the host has one
(:mod:`.aptroot`), else by click-build's own index reader, resolver and unpacker
(:mod:`.builtin`); either way the archive's signature is checked with pinned keys
(:mod:`.keys`) and the tree gets the same finishing (:mod:`.tree`).  Each root has
a CMake toolchain file (:mod:`.toolchain`).

For build routes: ``with shared(framework, arch, ...) as stored:`` gives a complete
root (made when missing), held so that no ``update`` or ``remove`` changes it until
the block ends; ``stored.toolchain`` is its toolchain file.  ``packages`` are a
project's build dependencies (``[tool.click-build.sysroot] packages``): a root with
them is another root.
"""

from __future__ import annotations

import json
import os
import shutil
import time
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path

from .. import _console
from ..atomicfile import write_file
from ..errors import SysrootError
from .keys import KEYS, pinned_keyring
from .profiles import ARCHIVES, Profile, mirror_url, profile_for
from .store import META, RootLock, Stored, cache_home, read_stored, root_id, stored_roots
from .tree import finish_tree, tree_size

__all__ = ["METHODS", "Profile", "Stored", "cache_home", "create", "find", "hold",
           "profile_for", "remove", "shared", "stored_roots", "toolchain_for"]

#: How a root is made: apt where the host has it, else click-build's own way.
METHODS = ("auto", "apt", "builtin")


def _urls(profile: Profile, mirrors: Mapping[str, str] | None) -> dict[str, str]:
    return {s.archive: mirror_url(ARCHIVES[s.archive], mirrors) for s in profile.sources}


def find(profile: Profile, mirrors: Mapping[str, str] | None = None,
         cache: Path | None = None) -> Stored | None:
    """The complete root of ``profile`` from these mirrors, if it was made."""
    cache = cache or cache_home()
    return read_stored(cache / root_id(profile, _urls(profile, mirrors)))


def _method(method: str) -> str:
    if method not in METHODS:
        raise SysrootError(f"unknown method {method!r}: {', '.join(METHODS)}")
    from .aptroot import apt_available

    if method == "auto":
        return "apt" if apt_available() else "builtin"
    if method == "apt" and not apt_available():
        raise SysrootError("--method apt needs apt-get, dpkg-deb and gpgv on this machine")
    return method


def _build(profile: Profile, urls: dict[str, str], cache: Path, ident: str,
           method: str) -> Stored:
    keyrings = {ARCHIVES[s.archive].key: pinned_keyring(KEYS[ARCHIVES[s.archive].key])
                for s in profile.sources}
    final = cache / ident
    for stale in cache.glob(f".*-{ident}-*"):  # left by a run that was killed
        shutil.rmtree(stale, ignore_errors=True)
    new = cache / f".new-{ident}-{os.getpid()}"
    root = new / "root"
    pool = cache / "debs"
    started = time.monotonic()
    _console.note(f"Making the {profile.label} root in {final} (once; builds share it)")
    try:
        root.mkdir(parents=True)
        if method == "apt":
            from .aptroot import make_root_apt

            installed = make_root_apt(profile, urls, keyrings, pool, new / "apt", root)
            shutil.rmtree(new / "apt")
        else:
            from .builtin import make_root_builtin

            installed = [(c.name, c.version)
                         for c in make_root_builtin(profile, urls, keyrings, pool, root)]
        finish_tree(root)
        if final.exists():  # update: the old root goes once the new one is complete
            old = cache / f".old-{ident}-{os.getpid()}"
            os.rename(final, old)
            os.rename(new, final)
            shutil.rmtree(old, ignore_errors=True)
        else:
            os.rename(new, final)
    finally:
        shutil.rmtree(new, ignore_errors=True)
    size = tree_size(final / "root")
    meta = {
        "profile": profile.name, "framework": profile.framework, "arch": profile.arch,
        "label": profile.label, "approximate": profile.approximate,
        "packages": list(profile.packages), "extra_packages": list(profile.extra_packages),
        "installed": [[n, v] for n, v in sorted(installed)],
        "sources": [{"url": urls[s.archive], "suites": list(s.suites),
                     "components": list(s.components)} for s in profile.sources],
        "method": method, "size": size, "created": int(time.time()),
        "seconds": round(time.monotonic() - started, 1),
    }
    stored = Stored(final, meta)
    toolchain_for(stored)
    # the root is complete from here on
    write_file(final / META, (json.dumps(meta, indent=1) + "\n").encode("utf-8"))
    _console.note(f"Made {profile.label}: {len(installed)} packages, {size / 1e6:.0f} MB, "
                  f"{meta['seconds']} s")
    return stored


def create(profile: Profile, mirrors: Mapping[str, str] | None = None,
           cache: Path | None = None, method: str = "auto", update: bool = False) -> Stored:
    """The root of ``profile``: the stored one, or made now (``update``: made again)."""
    cache = cache or cache_home()
    how = _method(method)
    urls = _urls(profile, mirrors)
    ident = root_id(profile, urls)
    with RootLock(cache, ident, exclusive=True):
        stored = read_stored(cache / ident)
        if stored is not None and not update:
            return stored
        if stored is None and (cache / ident).exists():  # a root that never completed
            shutil.rmtree(cache / ident)
        return _build(profile, urls, cache, ident, how)


@contextmanager
def shared(framework: str, arch: str, profile: str | None = None,
           packages: tuple[str, ...] = (), mirrors: Mapping[str, str] | None = None,
           cache: Path | None = None) -> Iterator[Stored]:
    """The root for a build: made when missing, and held (shared) while the block runs."""
    with hold(profile_for(framework, arch, profile, packages), mirrors, cache) as stored:
        yield stored


@contextmanager
def hold(profile: Profile, mirrors: Mapping[str, str] | None = None,
         cache: Path | None = None, stored: Stored | None = None) -> Iterator[Stored]:
    """``profile``'s root (``stored`` when given and still there, else the one from these
    mirrors, made when missing), held shared while the block runs."""
    cache = cache or cache_home()
    while True:
        if stored is None:
            stored = create(profile, mirrors, cache)
        with RootLock(cache, stored.ident, exclusive=False):
            again = read_stored(stored.folder)
            if again is None:
                stored = None
                continue  # removed between the two locks: made again
            yield again
            return


def remove(stored: Stored, cache: Path | None = None) -> None:
    cache = cache or stored.folder.parent
    with RootLock(cache, stored.ident, exclusive=True):
        trash = cache / f".old-{stored.ident}-{os.getpid()}"
        os.rename(stored.folder, trash)
        shutil.rmtree(trash)


def toolchain_for(stored: Stored, compiler: str = "auto", qt_tools: str = "auto") -> Path:
    """Write the root's CMake toolchain file again (the host's compilers and Qt may
    have changed since) and return it: in the root's folder, or, when that is not
    yours (a root another user made), in your own cache."""
    from .profiles import ARCHES, processor_for, qemu_for
    from .toolchain import write_toolchain

    arch = stored.get("arch")
    if arch not in ARCHES:
        raise SysrootError(f"{stored.folder}: {META} names no architecture of the phone")
    name = "toolchain.cmake" if compiler == "auto" else f"toolchain-{compiler}.cmake"
    if qt_tools != "auto":
        name = name.replace(".cmake", f"-{qt_tools}-qt.cmake")
    folder = stored.folder
    if not os.access(folder, os.W_OK):  # your own cache, even when the roots are shared
        own = {k: v for k, v in os.environ.items() if k != "CLICK_BUILD_SYSROOT_CACHE"}
        folder = cache_home(own) / ".toolchains" / stored.ident
        folder.mkdir(parents=True, exist_ok=True)
    path, choices = write_toolchain(folder, stored.root, arch, processor_for(arch),
                                    qemu_for(arch), stored.get("label"), compiler, name, qt_tools)
    if choices.qemu is None:
        _console.warn(f"{qemu_for(arch)} is not installed: ctest cannot run the root's programs "
                      "(install qemu-user-static)")
    return path
