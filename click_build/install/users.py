"""User registrations: which version of an app each user has.

The original's "simplest database imaginable": ``ROOT/.click/users/USER/NAME``
is an absolute symlink to ``ROOT/NAME/VERSION``.  ``@all`` holds registrations
for every user, a link to ``@hidden`` hides an app registered in a lower
database, and ``@gcinuse`` is a legacy pseudo-user that gc clears.  Lookups go
from the overlay down; in each database the user's own link wins over
``@all``'s.  Every lookup reads one or two links, never a whole directory.
"""

from __future__ import annotations

import os
import pwd

from ..errors import InstallError
from .database import Database
from .fs import atomic_symlink, chown_to, is_symlink, makedirs, read_link, sorted_entries

__all__ = [
    "ALL_USERS",
    "GC_IN_USE",
    "HIDDEN",
    "Registry",
    "current_user_name",
    "user_names",
    "users_dir",
]

ALL_USERS = "@all"
GC_IN_USE = "@gcinuse"
HIDDEN = "@hidden"


def users_dir(root: str, user: str | None = None) -> str:
    top = os.path.join(root, ".click", "users")
    return top if user is None else os.path.join(top, user)


def current_user_name() -> str:
    """The caller's account name (as GLib's ``g_get_user_name``)."""
    try:
        return pwd.getpwuid(os.getuid()).pw_name
    except KeyError:
        return os.environ.get("USER") or os.environ.get("LOGNAME") or str(os.getuid())


def user_names(db: Database) -> list[str]:
    """Users with a registration directory, bottom database first; gone users skipped."""
    names: list[str] = []
    for root in db.roots:
        top = users_dir(root)
        for entry in sorted_entries(top):
            if entry in names:
                continue
            if not entry.startswith("@"):
                try:
                    pwd.getpwnam(entry)
                except KeyError:
                    continue
            if os.path.isdir(os.path.join(top, entry)):
                names.append(entry)
    return names


def _valid_link(path: str) -> str | None:
    """The target of a registration link, or None if absent or a pseudo-version."""
    target = read_link(path)
    if target is None or target.startswith("@"):
        return None
    return target


class Registry:
    """One user's (or ``@all``'s) registrations across the layered databases."""

    def __init__(self, db: Database, name: str | None = None) -> None:
        self.db = db
        self.name = name if name is not None else current_user_name()

    @classmethod
    def for_all_users(cls, db: Database) -> Registry:
        return cls(db, ALL_USERS)

    @property
    def is_pseudo_user(self) -> bool:
        return self.name.startswith("@")

    @property
    def overlay_dir(self) -> str:
        return users_dir(self.db.overlay, self.name)

    def _lookup(self, package: str, ignore: str | None = None) -> tuple[str, str]:
        """(link path, target) of the registration that applies, or an error.

        ``ignore``: a link path to treat as absent.
        """
        for root in reversed(self.db.roots):
            candidates = [(self.name, "user " + self.name)]
            if self.name != ALL_USERS:
                candidates.append((ALL_USERS, "all users"))
            for owner, who in candidates:
                path = os.path.join(users_dir(root, owner), package)
                if path == ignore:
                    continue
                target = _valid_link(path)
                if target is not None:
                    return path, target
                if is_symlink(path):
                    raise InstallError(f"{package} is hidden for {who}")
        raise InstallError(f"{package} does not exist in any database for user {self.name}")

    def get_version(self, package: str) -> str:
        return os.path.basename(self._lookup(package)[1])

    def get_path(self, package: str) -> str:
        return self._lookup(package)[0]

    def has_package_name(self, package: str) -> bool:
        try:
            self._lookup(package)
        except InstallError:
            return False
        return True

    def package_names(self) -> list[str]:
        """Registered names: overlay first, the user's own before ``@all``'s."""
        names: list[str] = []
        seen: set[str] = set()
        hidden: set[str] = set()
        for root in reversed(self.db.roots):
            owners = [self.name] if self.name == ALL_USERS else [self.name, ALL_USERS]
            for owner in owners:
                directory = users_dir(root, owner)
                for entry in sorted_entries(directory):
                    if entry in seen or entry in hidden:
                        continue
                    path = os.path.join(directory, entry)
                    if _valid_link(path) is not None:
                        seen.add(entry)
                        names.append(entry)
                    elif is_symlink(path):
                        hidden.add(entry)
        return names

    def is_removable(self, package: str) -> bool:
        path = os.path.join(self.overlay_dir, package)
        if os.path.exists(path):
            return True
        if is_symlink(path):
            return False
        path = os.path.join(users_dir(self.db.overlay, ALL_USERS), package)
        if _valid_link(path) is not None:
            return True
        if is_symlink(path):
            return False
        return self.has_package_name(package)

    def get_manifest(self, package: str) -> dict[str, object]:
        path, target = self._lookup(package)
        manifest = self.db.get_manifest(package, os.path.basename(target))
        manifest["_directory"] = path
        manifest["_removable"] = 1 if self.is_removable(package) else 0
        return manifest

    def get_manifests(self) -> list[dict[str, object]]:
        from .. import _console

        out = []
        for package in self.package_names():
            try:
                out.append(self.get_manifest(package))
            except InstallError as e:
                _console.warn(str(e))
        return out

    # -- writes (caller holds the database lock) -------------------------------

    def _ensure_dir(self, owners: tuple[int, int] | None) -> str:
        """Create ``users/NAME`` in the overlay, owned as the original does."""
        directory = self.overlay_dir
        if not os.path.isdir(directory):
            makedirs(os.path.dirname(directory), owners)
            os.mkdir(directory, 0o755)
        ids = self._ids()
        if ids is not None and os.stat(directory).st_uid != ids[0]:
            chown_to(directory, ids)  # also repairs one a killed run left to root
        return directory

    def _ids(self) -> tuple[int, int] | None:
        if os.geteuid() != 0 or self.is_pseudo_user:
            return None
        try:
            pw = pwd.getpwnam(self.name)
        except KeyError:
            raise InstallError(f"Cannot get password file entry for {self.name}") from None
        return pw.pw_uid, pw.pw_gid

    def check_user(self) -> None:
        """Refuse an unknown account before anything is written."""
        if not self.is_pseudo_user:
            try:
                pwd.getpwnam(self.name)
            except KeyError:
                raise InstallError(f"user {self.name!r} does not exist") from None

    def set_link(self, package: str, version: str, tmp_dir: str,
                 owners: tuple[int, int] | None) -> None:
        """Register ``version`` (it must be unpacked); no hooks run here."""
        target = self.db.get_path(package, version)
        directory = self._ensure_dir(owners)
        path = os.path.join(directory, package)
        if _valid_link(path) is not None:
            # As the original: our own link goes if a lower layer already says the
            # same; unlike it, the link is never missing in between.
            try:
                beneath = os.path.basename(self._lookup(package, ignore=path)[1])
            except InstallError:
                beneath = None
            if beneath == version:
                os.unlink(path)
                return
        atomic_symlink(target, path, tmp_dir, self._ids())

    def remove_link(self, package: str, tmp_dir: str,
                    owners: tuple[int, int] | None) -> str:
        """Drop the registration (or hide a lower layer's); returns the old version."""
        path = os.path.join(self.overlay_dir, package)
        target = _valid_link(path)
        if target is not None:
            os.unlink(path)
            return os.path.basename(target)
        old = self.get_version(package)
        self._ensure_dir(owners)
        atomic_symlink(HIDDEN, path, tmp_dir, self._ids())
        return old
