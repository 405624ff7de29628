"""Where the app's manifest comes from, and how its version agrees with pyproject.

A manifest is a ``manifest.json``, a ``manifest.json.in`` template, a
``[tool.click-build.manifest]`` table, or (for CMake projects) the file CMake
installs.  ``[project].version`` is the single source of the version: a
manifest may leave it out, but may not contradict it.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from .. import _console
from ..errors import ConfigError, ManifestError
from ..manifest import parse_json_object
from ..placeholders import substitute
from .settings import Project

__all__ = ["ManifestSource", "find_manifest", "read_manifest_file", "reconcile_version"]

_ANY_PLACEHOLDER = re.compile(r"@[A-Za-z_][A-Za-z0-9_]*@|\$ENV\{[A-Za-z_][A-Za-z0-9_]*\}")


@dataclass(frozen=True)
class ManifestSource:
    """The manifest before placeholders are filled."""

    label: str  # how errors name it
    path: Path | None  # the file, left out of the package's data
    text: str | None  # file contents; None for a table
    table: dict[str, object] | None = None

    @property
    def template(self) -> bool:
        return self.path is not None and self.path.name.endswith(".in")

    def peek(self) -> dict[str, object]:
        """The fields as written, placeholders blanked: for choices made before building."""
        if self.table is not None:
            return dict(self.table)
        assert self.text is not None
        try:
            return parse_json_object(_ANY_PLACEHOLDER.sub("", self.text), self.label)
        except ManifestError:
            if self.template:
                return {}
            raise

    def render(self, values: Mapping[str, str]) -> dict[str, object]:
        """The manifest with ``@VAR@``/``$ENV{}`` in a template substituted."""
        if self.table is not None:
            copy: dict[str, object] = json.loads(json.dumps(self.table))  # deep, JSON-clean
            return copy
        assert self.text is not None
        text = substitute(self.text, values, self.label) if self.template else self.text
        return parse_json_object(text, self.label)


def read_manifest_file(path: Path, label: str) -> ManifestSource:
    try:
        return ManifestSource(label, path, path.read_text(encoding="utf-8"))
    except UnicodeDecodeError:
        raise ManifestError(["is not valid UTF-8"], label) from None
    except OSError as e:
        raise ManifestError([f"cannot be read: {e.strerror}"], label) from None


def find_manifest(project: Project, kind: str) -> ManifestSource | None:
    """The manifest the settings name, or the first of manifest.json and manifest.json.in.

    None only for ``cmake``, whose install step may provide it.
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
    if kind == "cmake":
        return None
    raise ManifestError(
        ["not found: an app needs a manifest.json (or manifest.json.in, or a "
         "[tool.click-build.manifest] table in pyproject.toml)"], "manifest.json")


def reconcile_version(data: dict[str, object], project: Project, label: str) -> dict[str, object]:
    """Take ``[project].version`` when the manifest has none; refuse a contradiction."""
    out = dict(data)
    manifest_version = out.get("version")
    project_version = project.version
    if manifest_version in (None, ""):
        if project_version is None:
            raise ManifestError(
                ["version: is missing; set it here or as [project].version in pyproject.toml"],
                label)
        out["version"] = project_version
    elif project_version is not None and manifest_version != project_version:
        raise ConfigError(
            f"{label}: version {manifest_version!r} differs from pyproject.toml: "
            f"project.version {project_version!r}; keep the version in one place "
            f"(remove 'version' from {label} to take it from pyproject.toml)")
    version = out["version"]
    if isinstance(version, str) and version.endswith("."):
        _console.warn(f"{label}: version {version!r} ends with '.'; it works, but looks unfinished")
    return out
