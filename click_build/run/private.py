"""The private Click database ``run`` installs into, and the app's own folders.

Laid out under one state folder (``PROJECT/build/click-run`` by default), which
:mod:`.state` makes, marks and walks without following links::

    .click-run-mark        run made this folder (see .state)
    db/                    the database (the installer's layout, no system layers)
    xdg/{config,data,cache,state,runtime}/   the app's XDG_*_HOME folders

The package is installed with the bundled installer as a developer installs
their own build: unsigned and without the phone's framework files, registered
for the current user, so the registration path the launcher reads exists.  No
hook runs and no other database is read: the installer is given an empty
folder of its own for both, made for each install, never one a project could fill.
"""

from __future__ import annotations

import os
import stat
import tempfile
from dataclasses import dataclass

from .. import _console
from ..errors import RunError
from .state import folder_inside

__all__ = ["InstalledApp", "PrivateRoot", "default_root", "install_private"]

#: The XDG variables the launcher sets, and their folder under ``xdg/``.
HOMES = {"XDG_CONFIG_HOME": "config", "XDG_DATA_HOME": "data", "XDG_CACHE_HOME": "cache",
         "XDG_STATE_HOME": "state"}
_MAX_DESKTOP_FILE = 1 << 20


@dataclass(frozen=True)
class PrivateRoot:
    path: str

    @property
    def db(self) -> str:
        return os.path.join(self.path, "db")

    def folder(self, *parts: str) -> str:
        return os.path.join(self.path, *parts)

    def prepare(self, base_runtime: str | None) -> dict[str, str]:
        """Make (or check) every folder inside: before anything is built or installed.

        Returns the app's ``XDG_*_HOME`` under this root, and ``XDG_RUNTIME_DIR`` only
        where the caller has none."""
        folder_inside(self.path, "db")
        homes = {var: folder_inside(self.path, "xdg", name) for var, name in HOMES.items()}
        if not base_runtime:
            homes["XDG_RUNTIME_DIR"] = folder_inside(self.path, "xdg", "runtime", private=True)
        return homes


def default_root(target: str, is_project: bool) -> str:
    """``PROJECT/build/click-run``; for a package file, ``~/.cache/click-build/run``."""
    if is_project:
        return os.path.join(os.path.abspath(target), "build", "click-run")
    cache = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return os.path.join(cache, "click-build", "run")


@dataclass(frozen=True)
class InstalledApp:
    name: str
    version: str
    app_dir: str  # the user's registration: what the launcher calls APP_DIR
    version_dir: str  # where that registration points
    manifest: dict[str, object]

    def read_desktop(self, relpath: str) -> tuple[str, bytes]:
        """(path, bytes) of a desktop file, which must stay inside the installed version."""
        path = os.path.join(self.app_dir, relpath)
        real = os.path.realpath(path)
        top = os.path.realpath(self.version_dir)
        if os.path.commonpath([real, top]) != top:
            raise RunError(f"{self.name}: desktop file {relpath!r} points outside the package")
        try:
            with open(real, "rb") as f:
                if not stat.S_ISREG(os.fstat(f.fileno()).st_mode):
                    raise RunError(f"{self.name}: desktop file {relpath!r} is not a file")
                data = f.read(_MAX_DESKTOP_FILE + 1)
        except OSError as e:
            raise RunError(f"{self.name}: cannot read desktop file {relpath!r}: "
                           f"{e.strerror}") from None
        if len(data) > _MAX_DESKTOP_FILE:
            raise RunError(f"{self.name}: desktop file {relpath!r} is larger than 1 MiB")
        return path, data


def _check_clickpkg_can_enter(path: str) -> None:
    """As root the installer unpacks as ``clickpkg``: every folder above must let it in."""
    from ..install.fs import clickpkg_ids

    ids = clickpkg_ids()
    if ids is None:
        return
    current = os.path.abspath(path)
    while True:
        try:
            st = os.stat(current)
        except FileNotFoundError:
            st = None
        if st is not None and not (st.st_mode & stat.S_IXOTH or st.st_uid == ids[0]
                                   or (st.st_gid == ids[1] and st.st_mode & stat.S_IXGRP)):
            raise RunError(
                f"running as root, the installer unpacks as the 'clickpkg' user, who cannot "
                f"enter {current}: run click-build as your own user, or give --root a folder "
                "that every user can enter")
        parent = os.path.dirname(current)
        if parent == current:
            return
        current = parent


def install_private(package: str, root: PrivateRoot, arch: str | None = None) -> InstalledApp:
    """Install ``package`` into the private database (:meth:`PrivateRoot.prepare`d) for
    the current user (``arch``: as a phone of that architecture would, for ``run --arch``)."""
    from ..frameworks import frameworks_dir
    from ..install.database import open_database
    from ..install.installer import Installer
    from ..install.users import Registry, current_user_name
    from ..package import open_click

    _check_clickpkg_can_enter(root.db)
    with open_click(package) as pkg:
        name = pkg.name
    user = current_user_name()
    # Unsigned and without the framework's files: run's own choice, not news to warn about.
    with tempfile.TemporaryDirectory(prefix="click-build-run.") as nothing, \
            _console.expecting("unsigned", "missing-framework"):
        # Empty for both: no system or project hook runs, no /etc/click database is read.
        db = open_database(root.db, nothing)
        installer = Installer(db, frameworks_dir(None), hooks_dir=nothing,
                              force_missing_framework=True, allow_unauthenticated=True,
                              architecture=arch)
        installer.install(package, user=user)
    registry = Registry(db, user)
    version = registry.get_version(name)
    app_dir = registry.get_path(name)
    version_dir = db.get_path(name, version)
    manifest = db.get_manifest(name, version)
    return InstalledApp(name, version, app_dir, version_dir, manifest)
