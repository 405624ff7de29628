"""Kinds ``qml`` and ``html5``: the project's tree (minus ignores) is the package.

Dotfiles such as ``.htaccess`` and exec bits are kept; VCS folders, editor
backups, build products of the backend itself and the project files
(pyproject.toml, the manifest) are left out.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Iterable, Sequence
from pathlib import Path

from ..build import DEFAULT_IGNORES, Entry, package_timestamp, stage_tree
from ..datatree import shown
from ..errors import BuildError
from ..staging import changed, normalise_mode

__all__ = ["BACKEND_IGNORES", "PROJECT_FILES", "prefixed", "stage_files", "stage_with_includes"]

#: What no app package or source package wants, whatever the kind.
BACKEND_IGNORES: tuple[str, ...] = (
    "__pycache__", "*.pyc", ".venv", ".tox", ".nox", ".mypy_cache", ".pytest_cache",
    ".ruff_cache", "*.egg-info", "/dist",
)
#: Files that describe the project rather than belong to the app (Clickable's config and
#: its folder of state too, which its own pure builder leaves out).
PROJECT_FILES: tuple[str, ...] = (
    "/pyproject.toml", "/PKG-INFO", "/manifest.json", "/manifest.json.in",
    "/setup.py", "/setup.cfg", "/MANIFEST.in",
    "/clickable.yaml", "/clickable.yml", "/clickable.json", "/.clickable",
)


def stage_with_includes(
    root: Path,
    ignores: Sequence[str],
    includes: Sequence[str] = (),
    exclude: Iterable[str | Path] = (),
    default_ignores: Sequence[str] = DEFAULT_IGNORES,
) -> list[Entry]:
    """``stage_tree`` where ``includes`` win: an include equal to an ignore pattern
    disables it, and an include that is a path (``/dist``) is staged explicitly.

    An include the walk left out is found by :func:`_find` (no link followed by the
    kernel): one that names a link, or passes through one, gets what the link leads to
    inside the project, packed under the include's name (``/vendor/libfoo.so`` ->
    ``libfoo.so.1`` is the library); a link leading out of the project is refused.
    """
    wanted = set(includes)
    defaults = [p for p in default_ignores if p not in wanted]
    patterns = [p for p in ignores if p not in wanted]
    entries = stage_tree(root, patterns, exclude=exclude, default_ignores=defaults)
    have = {e.arcname for e in entries}
    for pattern in includes:
        rel = pattern.strip("/")
        if "/" not in pattern or rel in have or any(c in rel for c in "*?["):
            continue
        found = _find(root, rel, pattern)
        if found is None:
            continue  # the source folder itself: walked already
        path, st = found
        if stat.S_ISDIR(st.st_mode):
            sub = stage_tree(path, patterns, exclude=exclude, default_ignores=defaults,
                             identity=(st.st_dev, st.st_ino))
            entries.append(Entry(rel, "dir", 0o755, 0, package_timestamp()))
            entries.extend(prefixed(e, rel) for e in sub)
        elif stat.S_ISREG(st.st_mode):
            entries.append(Entry(rel, "file", normalise_mode(path, st.st_mode), st.st_size,
                                 package_timestamp(), path, dev=st.st_dev, ino=st.st_ino))
        else:
            raise BuildError(f"{_WHERE}: {pattern!r}: {path} is a device, fifo or socket; only "
                             "files, directories and symbolic links can go into a package")
    return entries


_WHERE = "pyproject.toml: tool.click-build.include"
_FOLDER = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC
#: Links followed in one include before it counts as a loop (the kernel's limit).
_MAX_LINKS = 40


def _find(root: Path, rel: str, pattern: str) -> tuple[str, os.stat_result] | None:
    """The file or folder the include ``rel`` names inside ``root``: its path (through
    no link) and status; None for ``root`` itself.

    Found from ``root``'s descriptor, folder by folder, without the kernel following a
    link: a link on the way is read and followed here, its target taken relative to its
    folder (an absolute one must name a place in the project), never above ``root``.
    The project may be someone else's: what is returned is what was there, and a file
    or folder swapped after is refused when opened (its device and inode).
    """
    tops = {os.path.realpath(root), os.path.abspath(root)}
    fds = [os.open(root, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)]
    where: list[str] = []
    pending = rel.split("/")[::-1]
    link: tuple[str, str] | None = None  # the last link followed and its target
    hops = 0

    def leaves() -> BuildError:
        how = f" through the link {shown(link[0])} -> {link[1]!r}" if link else ""
        return BuildError(f"{_WHERE}: {pattern!r} leaves the source folder{how}; includes "
                          "name files inside it, such as '/dist'")

    try:
        while pending:
            part = pending.pop()
            if part in ("", "."):
                continue
            if part == "..":
                if not where:
                    raise leaves()
                where.pop()
                os.close(fds.pop())
                continue
            here = "/".join([*where, part])
            try:
                st = os.stat(part, dir_fd=fds[-1], follow_symlinks=False)
            except (FileNotFoundError, NotADirectoryError):
                how = f" (the link {shown(link[0])} leads to {link[1]!r})" if link else ""
                raise BuildError(f"{_WHERE}: {pattern!r} does not exist{how}") from None
            if stat.S_ISLNK(st.st_mode):
                hops += 1
                try:
                    target = os.readlink(part, dir_fd=fds[-1])
                except OSError:
                    raise changed(os.path.join(root, here)) from None
                link = (here, target)
                if hops > _MAX_LINKS:
                    raise BuildError(f"{_WHERE}: {pattern!r}: too many levels of symbolic "
                                     f"links (a loop through {shown(here)})")
                if target.startswith("/"):
                    top = next((t for t in tops if target == t or target.startswith(
                        t.rstrip("/") + "/")), None)
                    if top is None:
                        raise leaves()
                    while len(fds) > 1:
                        os.close(fds.pop())
                    where.clear()
                    target = target[len(top):]
                pending.extend(target.split("/")[::-1])
                continue
            if not any(p not in ("", ".") for p in pending):
                where.append(part)
                return os.path.join(root, *where), st
            if not stat.S_ISDIR(st.st_mode):
                raise BuildError(f"{_WHERE}: {pattern!r} does not exist ({shown(here)} is "
                                 "not a folder)")
            try:
                fd = os.open(part, _FOLDER, dir_fd=fds[-1])
            except OSError:
                raise changed(os.path.join(root, here)) from None
            fds.append(fd)
            opened = os.fstat(fd)
            if (opened.st_dev, opened.st_ino) != (st.st_dev, st.st_ino):
                raise changed(os.path.join(root, here))
            where.append(part)
        return None
    finally:
        for fd in fds:
            os.close(fd)


def prefixed(e: Entry, prefix: str) -> Entry:
    """The same entry one folder deeper, under ``prefix``."""
    return e._replace(arcname=f"{prefix}/{e.arcname}")  # the walk's identity of the file too


def stage_files(
    root: Path, extra_ignores: Sequence[str], includes: Sequence[str],
    exclude: Iterable[str | Path] = (),
) -> list[Entry]:
    """The app tree of a ``qml``/``html5`` project (or the data of a ``python`` one)."""
    if not root.is_dir():
        raise BuildError(f"pyproject.toml: tool.click-build.source-dir: {root} is not a folder")
    ignores = [*BACKEND_IGNORES, *PROJECT_FILES, *extra_ignores]
    return stage_with_includes(root, ignores, includes, exclude)
