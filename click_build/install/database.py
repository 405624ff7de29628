"""Layered Click databases, laid out and read exactly as the original tool does.

A database is a directory: ``ROOT/NAME/VERSION/`` holds an unpacked version
with its control data in ``.click/info/``, ``ROOT/NAME/current`` is a relative
link to the last unpacked version, and ``ROOT/.click/users/`` holds the
registrations (see :mod:`.users`).  Several databases are layered from
``/etc/click/databases/*.conf``; the last one (the *overlay*) takes every write.
Nothing here scans more than the directories a question is about, so the cost
of a lookup does not grow with the number of installed apps.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterator

from ..errors import InstallError
from .fs import is_symlink, read_link, sorted_entries

__all__ = [
    "DEFAULT_CONFIG_DIR",
    "DEFAULT_ROOT",
    "Database",
    "InstalledPackage",
    "open_database",
    "read_config",
    "user_database_root",
]

DEFAULT_CONFIG_DIR = "/etc/click/databases"
DEFAULT_ROOT = "/var/lib/clickpkg"
CONFIG_ENV = "CLICK_DATABASES_DIR"


class InstalledPackage:
    """One unpacked version (``path``); ``writeable`` if it is in the overlay."""

    __slots__ = ("name", "version", "path", "writeable")

    def __init__(self, name: str, version: str, path: str, writeable: bool = True) -> None:
        self.name, self.version, self.path, self.writeable = name, version, path, writeable


def read_config(config_dir: str) -> list[str]:
    """The ``root`` of each ``[Click Database]`` in ``*.conf``, in file-name order.

    Like the original (GLib KeyFile), a file that cannot be read or lacks the
    key is skipped.
    """
    roots = []
    for name in sorted_entries(config_dir):
        if not name.endswith(".conf"):
            continue
        try:
            with open(os.path.join(config_dir, name), encoding="utf-8") as f:
                text = f.read()
        except (OSError, UnicodeDecodeError):
            continue
        section = None
        for line in text.splitlines():
            line = line.strip()
            if not line or line.startswith("#"):
                continue
            if line.startswith("[") and line.endswith("]"):
                section = line[1:-1]
            elif section == "Click Database" and "=" in line:
                key, value = line.split("=", 1)
                if key.strip() == "root" and value.strip():
                    roots.append(value.strip())
                    break
    return roots


def user_database_root() -> str:
    """An ordinary user's own database when the machine has no Click configuration."""
    base = os.environ.get("XDG_DATA_HOME") or os.path.join(os.path.expanduser("~"), ".local",
                                                           "share")
    return os.path.join(base, "click-build", "database")


class Database:
    """Several database roots; the last one is the overlay that takes writes."""

    def __init__(self, roots: list[str]) -> None:
        if not roots:
            raise InstallError("no Click database configured")
        self.roots = roots

    @property
    def overlay(self) -> str:
        return self.roots[-1]

    # -- versions -------------------------------------------------------------

    def get_path(self, package: str, version: str) -> str:
        """Where a version is unpacked; the first database (bottom up) that has it."""
        for root in self.roots:
            path = os.path.join(root, package, version)
            if os.path.exists(path):
                return path
        raise InstallError(f"{package} {version} does not exist in any database")

    def has_package_version(self, package: str, version: str) -> bool:
        return any(os.path.exists(os.path.join(r, package, version)) for r in self.roots)

    def packages(self, all_versions: bool = False) -> list[InstalledPackage]:
        """Unpacked packages, overlay first; each name (or name+version) once."""
        found: list[InstalledPackage] = []
        seen: set[str] = set()
        writeable = True
        for root in reversed(self.roots):
            for pkg in _single_packages(root, all_versions):
                key = f"{pkg.name}_{pkg.version}" if all_versions else pkg.name
                if key not in seen:
                    seen.add(key)
                    found.append(InstalledPackage(pkg.name, pkg.version, pkg.path, writeable))
            writeable = False
        return found

    # -- manifests ------------------------------------------------------------

    def get_manifest(self, package: str, version: str) -> dict[str, object]:
        """The installed manifest, without stored ``_`` keys, plus ``_directory``."""
        for root in self.roots:
            path = os.path.join(root, package, version)
            if os.path.exists(path):
                return read_installed_manifest(path, package)
        raise InstallError(f"{package} {version} does not exist in any database")

    def get_manifests(self, all_versions: bool = False) -> list[dict[str, object]]:
        from .. import _console

        out = []
        for inst in self.packages(all_versions):
            try:
                manifest = self.get_manifest(inst.name, inst.version)
            except InstallError as e:
                _console.warn(str(e))
                continue
            manifest["_removable"] = 1 if inst.writeable else 0
            out.append(manifest)
        return out


def read_installed_manifest(path: str, package: str) -> dict[str, object]:
    manifest_path = os.path.join(path, ".click", "info", f"{package}.manifest")
    try:
        with open(manifest_path, "rb") as f:
            data = json.loads(f.read())
    except (OSError, ValueError, RecursionError) as e:
        raise InstallError(f"Failed to parse manifest in {manifest_path}: {e}") from None
    if not isinstance(data, dict):
        raise InstallError(f"Manifest in {manifest_path} is not a JSON object")
    for key in [k for k in data if k.startswith("_")]:
        del data[key]
    data["_directory"] = path
    return data


def _single_packages(root: str, all_versions: bool) -> Iterator[InstalledPackage]:
    for name in sorted_entries(root):
        if name == ".click":
            continue
        package_path = os.path.join(root, name)
        if all_versions:
            if not os.path.isdir(package_path):
                continue
            for version in sorted_entries(package_path):
                version_path = os.path.join(package_path, version)
                if is_symlink(version_path) or not os.path.isdir(version_path):
                    continue
                yield InstalledPackage(name, version, version_path)
        else:
            current = os.path.join(package_path, "current")
            target = read_link(current)
            if target is not None and "/" not in target:
                yield InstalledPackage(name, target, current)


def open_database(root: str | None = None, config_dir: str | None = None) -> Database:
    """The databases the original would use, plus ``--root``; usable on any machine.

    ``config_dir`` (or ``$CLICK_DATABASES_DIR``) replaces ``/etc/click/databases``.
    Without any configuration, root uses ``/var/lib/clickpkg`` and an ordinary
    user a database of their own under ``$XDG_DATA_HOME``.
    """
    roots = read_config(config_dir or os.environ.get(CONFIG_ENV) or DEFAULT_CONFIG_DIR)
    if root is not None:
        roots.append(os.path.abspath(root))
    elif not roots:
        roots.append(DEFAULT_ROOT if os.geteuid() == 0 else user_database_root())
    return Database(roots)
