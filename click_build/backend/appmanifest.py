"""Where the app's manifest comes from.

A manifest is a ``manifest.json``, a ``manifest.json.in`` template, a
``[tool.click-build.manifest]`` table, or (for CMake projects) the file CMake
installs.  ``[project].version`` is the single source of the version: a
manifest may leave it out, but may not contradict it (the finishing stage,
:mod:`click_build.finish`, checks that).
"""

from __future__ import annotations

from ..errors import ConfigError, ManifestError
from ..placeholders import ManifestSource, read_manifest_file
from .context import INSTALLING_KINDS
from .settings import Project

__all__ = ["find_manifest"]


def find_manifest(project: Project, kind: str) -> ManifestSource | None:
    """The manifest the settings name, or the first of manifest.json and manifest.json.in.

    None only for the kinds whose install step may provide it (``cmake``, ``qmake``,
    ``custom``).
    """
    setting = project.settings.manifest
    where = "pyproject.toml: tool.click-build.manifest"
    if isinstance(setting, dict):
        return ManifestSource(where, None, None, dict(setting))
    root = project.root
    if setting:
        path = root / setting
        if not path.is_file():
            raise ConfigError(f"{where}: {setting!r} does not exist in {root}")
        return read_manifest_file(path, setting)
    folders = [root / project.settings.source_dir, root]
    for folder in dict.fromkeys(folders):
        for name in ("manifest.json", "manifest.json.in"):
            if (folder / name).is_file():
                return read_manifest_file(folder / name, str((folder / name).relative_to(root)))
    if kind in INSTALLING_KINDS:
        return None
    raise ManifestError(
        ["not found: an app needs a manifest.json (or manifest.json.in, or a "
         "[tool.click-build.manifest] table in pyproject.toml)"], "manifest.json")
