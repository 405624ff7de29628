"""Kinds ``qml`` and ``html5``: the project's tree (minus ignores) is the package.

Dotfiles such as ``.htaccess`` and exec bits are kept; VCS folders, editor
backups, build products of the backend itself and the project files
(pyproject.toml, the manifest) are left out.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Sequence
from pathlib import Path

from ..build import DEFAULT_IGNORES, Entry, package_timestamp, stage_tree
from ..errors import BuildError

__all__ = ["BACKEND_IGNORES", "PROJECT_FILES", "prefixed", "stage_files", "stage_with_includes"]

#: What no app package or source package wants, whatever the kind.
BACKEND_IGNORES: tuple[str, ...] = (
    "__pycache__", "*.pyc", ".venv", ".tox", ".nox", ".mypy_cache", ".pytest_cache",
    ".ruff_cache", "*.egg-info", "/dist",
)
#: Files that describe the project rather than belong to the app.
PROJECT_FILES: tuple[str, ...] = (
    "/pyproject.toml", "/PKG-INFO", "/manifest.json", "/manifest.json.in",
    "/setup.py", "/setup.cfg", "/MANIFEST.in",
)


def stage_with_includes(
    root: Path,
    ignores: Sequence[str],
    includes: Sequence[str] = (),
    exclude: Iterable[str | Path] = (),
    default_ignores: Sequence[str] = DEFAULT_IGNORES,
) -> list[Entry]:
    """``stage_tree`` where ``includes`` win: an include equal to an ignore pattern
    disables it, and an include that is a path (``/dist``) is staged explicitly."""
    wanted = set(includes)
    defaults = [p for p in default_ignores if p not in wanted]
    patterns = [p for p in ignores if p not in wanted]
    entries = stage_tree(root, patterns, exclude=exclude, default_ignores=defaults)
    have = {e.arcname for e in entries}
    for pattern in includes:
        rel = pattern.strip("/")
        if "/" not in pattern or rel in have or any(c in rel for c in "*?["):
            continue
        path = root / rel
        if not path.exists():
            raise BuildError(f"pyproject.toml: tool.click-build.include: {pattern!r} does not exist")
        if path.is_dir():
            sub = stage_tree(path, patterns, exclude=exclude, default_ignores=defaults)
            entries.append(Entry(rel, "dir", 0o755, 0, package_timestamp()))
            entries.extend(prefixed(e, rel) for e in sub)
        else:
            st = path.stat()
            entries.append(Entry(rel, "file", 0o755 if st.st_mode & 0o111 else 0o644,
                                 st.st_size, package_timestamp(), os.fspath(path)))
    return entries


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
