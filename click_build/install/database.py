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

import errno
import os
import stat
from collections.abc import Iterator

from .. import jsontext
from ..errors import InstallError
from ..manifest import not_text_at
from ..pkgfile import read_regular
from .fs import Dir, Tampered, refused, sorted_names
from .names import (
    check_package,
    check_root,
    check_version,
    component_problem,
    current_version,
    version_from_target,
)

__all__ = [
    "DEFAULT_CONFIG_DIR",
    "DEFAULT_ROOT",
    "MAX_MANIFEST",
    "Database",
    "InstalledPackage",
    "open_database",
    "read_config",
    "read_installed_manifest",
    "read_manifest_at",
    "user_database_root",
]

DEFAULT_CONFIG_DIR = "/etc/click/databases"
DEFAULT_ROOT = "/var/lib/clickpkg"
CONFIG_ENV = "CLICK_DATABASES_DIR"
MAX_MANIFEST = 4 << 20  # an installed manifest larger than this was not written by an installer


class InstalledPackage:
    """One unpacked version (``path``); ``writeable`` if it is in the overlay."""

    __slots__ = ("name", "path", "version", "writeable")

    def __init__(self, name: str, version: str, path: str, writeable: bool = True) -> None:
        self.name, self.version, self.path, self.writeable = name, version, path, writeable


#: A databases configuration file is a few lines; anything bigger is not one.
MAX_CONFIG_FILE = 64 << 10


def read_config(config_dir: str) -> list[str]:
    """The ``root`` of each ``[Click Database]`` in ``*.conf``, in file-name order.

    Like the original (GLib KeyFile), a file that cannot be read or lacks the
    key is skipped.
    """
    roots = []
    try:
        names = sorted_names(os.listdir(config_dir))
    except (FileNotFoundError, NotADirectoryError):
        names = []
    for name in names:
        if not name.endswith(".conf"):
            continue
        try:  # not open(): a FIFO there would hang us, /dev/zero exhaust memory
            _st, raw = read_regular(os.path.join(config_dir, name), MAX_CONFIG_FILE)
            if raw is None or len(raw) > MAX_CONFIG_FILE:
                continue  # not a regular file, or no database configuration's size
            text = raw.decode("utf-8")
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
    """Several database roots; the last one is the overlay that takes writes.

    Each root is opened once (the configured path may be a link); everything
    below it is reached through directory descriptors that refuse links
    (:class:`~.fs.Dir`).
    """

    def __init__(self, roots: list[str]) -> None:
        if not roots:
            raise InstallError("no Click database configured")
        self.roots = roots
        self._dirs: dict[str, Dir] = {}

    @property
    def overlay(self) -> str:
        return self.roots[-1]

    def root_dir(self, root: str) -> Dir | None:
        """The open root directory ``root``; None while it does not exist."""
        found = self._dirs.get(root)
        if found is None or found.fd < 0:
            found = Dir.open_root(root)
            if found is None:
                return None
            self._dirs[root] = found
        return found

    def _version_dir(self, root: str, package: str, version: str) -> Dir | None:
        top = self.root_dir(root)
        return None if top is None else top.open(package, version)

    # -- versions -------------------------------------------------------------

    def find(self, package: str, version: str) -> str | None:
        """Where a version is unpacked: the first database (bottom up) that has it."""
        check_package(package)
        check_version(version)
        for root in self.roots:
            found = self._version_dir(root, package, version)
            if found is not None:
                found.close()
                return os.path.join(root, package, version)
        return None

    def get_path(self, package: str, version: str) -> str:
        path = self.find(package, version)
        if path is None:
            raise InstallError(f"{package} {version} does not exist in any database")
        return path

    def has_package_version(self, package: str, version: str) -> bool:
        return self.find(package, version) is not None

    def packages(self, all_versions: bool = False) -> list[InstalledPackage]:
        """Unpacked packages, overlay first; each name (or name+version) once."""
        found: list[InstalledPackage] = []
        seen: set[str] = set()
        writeable = True
        for root in reversed(self.roots):
            top = self.root_dir(root)
            for pkg in _single_packages(top, all_versions) if top is not None else ():
                key = f"{pkg.name}_{pkg.version}" if all_versions else pkg.name
                if key not in seen:
                    seen.add(key)
                    found.append(InstalledPackage(pkg.name, pkg.version, pkg.path, writeable))
            writeable = False
        return found

    # -- manifests ------------------------------------------------------------

    def get_manifest(self, package: str, version: str) -> dict[str, object]:
        """The installed manifest, without stored ``_`` keys, plus ``_directory``."""
        check_package(package)
        check_version(version)
        for root in self.roots:
            found = self._version_dir(root, package, version)
            if found is not None:
                with found:
                    return read_manifest_at(found, package)
        raise InstallError(f"{package} {version} does not exist in any database")

    def get_manifests(self, all_versions: bool = False) -> list[dict[str, object]]:
        from .. import _console

        out = []
        for inst in self.packages(all_versions):
            try:
                manifest = self.get_manifest(inst.name, inst.version)
            except Tampered:
                raise  # a planted link is an error, not a broken entry
            except InstallError as e:
                _console.warn(str(e))
                continue
            manifest["_removable"] = 1 if inst.writeable else 0
            out.append(manifest)
        return out


def _manifest_from_bytes(raw: bytes, where: str, directory: str) -> dict[str, object]:
    try:
        data = jsontext.loads(raw)
    except (ValueError, RecursionError) as e:
        raise InstallError(f"Failed to parse manifest in {where}: {e}") from None
    if not isinstance(data, dict):
        raise InstallError(f"Manifest in {where} is not a JSON object")
    bad = not_text_at(data)
    if bad is not None:  # a lone surrogate ("\ud800"): it could not be printed
        raise InstallError(f"Failed to parse manifest in {where}: {bad} holds a lone "
                           "surrogate escape, which is not text")
    for key in [k for k in data if k.startswith("_")]:
        del data[key]
    data["_directory"] = directory
    return data


def read_manifest_at(version_dir: Dir, package: str) -> dict[str, object]:
    """``VERSION/.click/info/NAME.manifest`` of an open version directory."""
    name = f"{package}.manifest"
    where = version_dir.join(".click", "info", name)
    info = version_dir.open(".click", "info")
    if info is None:
        raise InstallError(f"Failed to parse manifest in {where}: no such file")
    with info:
        try:
            raw = info.read(name, MAX_MANIFEST)
        except OSError as e:
            raise InstallError(f"Failed to parse manifest in {where}: {e.strerror}") from None
    return _manifest_from_bytes(raw, where, version_dir.path)


def read_installed_manifest(path: str, package: str) -> dict[str, object]:
    """The manifest of the installed package at ``path``, a directory the user named.

    ``path`` may be reached through links (the user chose it); below it, as everywhere
    in a database, a link at ``.click``, ``info`` or the manifest is refused: run as
    root, ``info FILE`` would otherwise print whatever file of root's it leads to.
    """
    name = f"{package}.manifest"
    manifest_path = os.path.join(path, ".click", "info", name)
    try:
        top = Dir.open_root(path)
        info = top.open(".click", "info") if top is not None else None
        if top is not None:
            top.close()
        if info is None:
            raise FileNotFoundError(errno.ENOENT, os.strerror(errno.ENOENT), manifest_path)
        with info:
            st = info.lstat(name)
            if st is not None and stat.S_ISLNK(st.st_mode):
                raise refused(manifest_path, st.st_mode, "a file")
            # not open(): a FIFO there cannot hang us
            st, raw = read_regular(name, MAX_MANIFEST, dir_fd=info.fd, follow=False)
    except OSError as e:
        raise InstallError(f"Failed to parse manifest in {manifest_path}: {e}") from None
    if not stat.S_ISREG(st.st_mode):
        raise InstallError(f"Failed to parse manifest in {manifest_path}: not a regular file")
    if raw is None or len(raw) > MAX_MANIFEST:
        raise InstallError(f"Failed to parse manifest in {manifest_path}: larger than "
                           f"{MAX_MANIFEST} bytes")
    return _manifest_from_bytes(raw, manifest_path, path)


def _open_real_dir(parent: Dir, name: str) -> Dir | None:
    """``name`` if it is a directory; None if absent or a file; a link is refused."""
    st = parent.lstat(name)
    if st is None or not (stat.S_ISDIR(st.st_mode) or stat.S_ISLNK(st.st_mode)):
        return None
    return parent.open(name)


def _single_packages(top: Dir, all_versions: bool) -> Iterator[InstalledPackage]:
    for name in top.entries():
        if name == ".click" or component_problem(name) is not None:
            continue
        try:
            check_package(name)
        except InstallError:
            continue  # not a package: a stray file, or something the original left
        package = _open_real_dir(top, name)
        if package is None:
            continue
        with package:
            if not all_versions:
                version = current_version(package.readlink("current"))
                if version is not None:
                    yield InstalledPackage(name, version, top.join(name, "current"))
                continue
            for version in package.entries():
                if version == "current" or version_from_target(version) != version:
                    continue
                found = _open_real_dir(package, version)
                if found is not None:
                    found.close()
                    yield InstalledPackage(name, version, package.join(version))


def open_database(root: str | None = None, config_dir: str | None = None) -> Database:
    """The databases the original would use, plus ``--root``; usable on any machine.

    ``config_dir`` (or ``$CLICK_DATABASES_DIR``) replaces ``/etc/click/databases``.
    Without any configuration, root uses ``/var/lib/clickpkg`` and an ordinary
    user a database of their own under ``$XDG_DATA_HOME``.
    """
    roots = read_config(config_dir or os.environ.get(CONFIG_ENV) or DEFAULT_CONFIG_DIR)
    if root is not None:
        roots.append(os.path.abspath(check_root(root)))
    elif not roots:
        roots.append(DEFAULT_ROOT if os.geteuid() == 0 else user_database_root())
    return Database([check_root(r) for r in roots])
