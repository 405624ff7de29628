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
import stat

from ..errors import InstallError
from .database import Database
from .fs import Dir, Tampered, refused
from .names import check_package, check_user, component_problem, version_from_target

TYPE_CHECKING = False  # not typing.TYPE_CHECKING: importing typing costs start-up time

if TYPE_CHECKING:
    from .lock import DatabaseLock

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


def _open_users(db: Database, root: str, user: str | None = None) -> Dir | None:
    """``ROOT/.click/users[/USER]``, open; None if absent; a planted link is refused."""
    top = db.root_dir(root)
    if top is None:
        return None
    parts = (".click", "users") if user is None else (".click", "users", user)
    return top.open(*parts)


def current_user_name() -> str:
    """The caller's account name (as GLib's ``g_get_user_name``)."""
    try:
        return pwd.getpwuid(os.getuid()).pw_name
    except KeyError:
        return os.environ.get("USER") or os.environ.get("LOGNAME") or str(os.getuid())


def user_names(db: Database, existing: bool = True) -> list[str]:
    """Users with a registration directory, bottom database first; gone users skipped.

    A name that could not be a user (``evil\n``) is skipped; a registration
    directory that is a link is refused, naming it.  ``existing=False`` keeps
    the names of gone users too, and asks no user database (a user unknown to
    /etc/passwd costs a search of every NSS source).
    """
    names: list[str] = []
    for root in db.roots:
        top = _open_users(db, root)
        if top is None:
            continue
        with top:
            for entry in top.entries():
                if entry in names or component_problem(entry) is not None:
                    continue
                if existing and not entry.startswith("@"):
                    try:
                        pwd.getpwnam(entry)
                    except KeyError:
                        continue
                st = top.lstat(entry)
                if st is None:
                    continue
                if stat.S_ISLNK(st.st_mode):
                    raise refused(top.join(entry), st.st_mode)
                if stat.S_ISDIR(st.st_mode):
                    names.append(entry)
    return names


class Registry:
    """One user's (or ``@all``'s) registrations across the layered databases."""

    def __init__(self, db: Database, name: str | None = None) -> None:
        self.db = db
        self.name = check_user(name if name is not None else current_user_name())
        #: (root, owner) -> that registration folder's links, read once, while
        #: :meth:`get_manifests` runs (None otherwise: every lookup reads afresh).
        self._links: dict[tuple[str, str], dict[str, str] | None] | None = None

    def _target(self, root: str, owner: str, package: str) -> str | None:
        """Where ``root``'s registration of ``package`` for ``owner`` points, or None."""
        if self._links is None:
            directory = _open_users(self.db, root, owner)
            if directory is None:
                return None
            with directory:
                return directory.readlink(package)
        links = self._links_of(root, owner)
        return None if links is None else links.get(package)

    def _links_of(self, root: str, owner: str) -> dict[str, str] | None:
        """Every registration in ``root`` for ``owner`` (name -> target, in folder order);
        None without the folder.  Read once while :meth:`get_manifests` runs."""
        if self._links is None:
            return self._read_links(root, owner)
        key = (root, owner)
        if key not in self._links:
            self._links[key] = self._read_links(root, owner)
        return self._links[key]

    def _read_links(self, root: str, owner: str) -> dict[str, str] | None:
        directory = _open_users(self.db, root, owner)
        if directory is None:
            return None
        links = {}
        with directory:
            for entry in directory.entries():
                if component_problem(entry) is None:
                    target = directory.readlink(entry)
                    if target is not None:
                        links[entry] = target
        return links

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
        """(link path, version) of the registration that applies, or an error.

        ``ignore``: a link path to treat as absent.
        """
        check_package(package)
        for root in reversed(self.db.roots):
            candidates = [(self.name, "user " + self.name)]
            if self.name != ALL_USERS:
                candidates.append((ALL_USERS, "all users"))
            for owner, who in candidates:
                path = os.path.join(users_dir(root, owner), package)
                if path == ignore:
                    continue
                target = self._target(root, owner, package)
                if target is None:
                    continue
                if target.startswith("@"):
                    raise InstallError(f"{package} is hidden for {who}")
                version = version_from_target(target)
                if version is None:
                    raise InstallError(f"{path} -> {target} does not name a version")
                return path, version
        raise InstallError(f"{package} does not exist in any database for user {self.name}")

    def get_version(self, package: str) -> str:
        return self._lookup(package)[1]

    def get_path(self, package: str) -> str:
        return self._lookup(package)[0]

    def has_package_name(self, package: str) -> bool:
        try:
            self._lookup(package)
        except Tampered:
            raise
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
                for entry, target in (self._links_of(root, owner) or {}).items():
                    if entry in seen or entry in hidden:
                        continue
                    if target.startswith("@"):
                        hidden.add(entry)
                    else:
                        seen.add(entry)
                        names.append(entry)
        return names

    def _overlay_target(self, owner: str, package: str) -> str | None:
        return self._target(self.db.overlay, owner, package)

    def is_removable(self, package: str) -> bool:
        for owner in (self.name, ALL_USERS):
            target = self._overlay_target(owner, package)
            if target is not None:
                version = version_from_target(target)
                return version is not None and self.db.has_package_version(package, version)
        return self.has_package_name(package)

    def get_manifest(self, package: str) -> dict[str, object]:
        path, version = self._lookup(package)
        manifest = self.db.get_manifest(package, version)
        manifest["_directory"] = path
        manifest["_removable"] = 1 if self.is_removable(package) else 0
        return manifest

    def get_manifests(self) -> list[dict[str, object]]:
        """Every registered package's manifest.  Each registration folder is read once
        for the whole listing, not once per package and lookup (a read-only listing:
        what it shows is what the folders held when it read them)."""
        from .. import _console

        out = []
        self._links = {}
        try:
            for package in self.package_names():
                try:
                    out.append(self.get_manifest(package))
                except Tampered:
                    raise  # a planted link is an error, not a broken entry
                except InstallError as e:
                    _console.warn(str(e))
        finally:
            self._links = None
        return out

    # -- writes (caller holds the database lock) -------------------------------

    def _ensure_dir(self, lock: DatabaseLock, owners: tuple[int, int] | None) -> Dir:
        """``users/NAME`` in the overlay, created and owned as the original does."""
        if lock.admin is None:
            raise InstallError(f"cannot write to the database {self.db.overlay}")
        with lock.admin.ensure("users", owners) as top:
            directory = top.ensure(self.name)
        ids = self._ids()
        if ids is not None and os.fstat(directory.fd).st_uid != ids[0]:
            os.fchown(directory.fd, ids[0], ids[1])  # also repairs one a killed run left to root
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

    def set_link(self, package: str, version: str, lock: DatabaseLock,
                 owners: tuple[int, int] | None) -> None:
        """Register ``version`` (it must be unpacked); no hooks run here."""
        target = self.db.get_path(package, version)
        with self._ensure_dir(lock, owners) as directory:
            path = directory.join(package)
            current = directory.readlink(package)
            if current is not None and not current.startswith("@"):
                # As the original: our own link goes if a lower layer already says the
                # same; unlike it, the link is never missing in between.
                try:
                    beneath: str | None = self._lookup(package, ignore=path)[1]
                except InstallError:
                    beneath = None
                if beneath == version:
                    directory.unlink(package)
                    return
            directory.replace_link(target, package, lock.tmp, self._ids())

    def own_link(self, package: str) -> str | None:
        """The target of this registry's own link for ``package`` in the overlay."""
        return self._overlay_target(self.name, check_package(package))

    def drop_own_link(self, package: str, lock: DatabaseLock,
                      owners: tuple[int, int] | None) -> None:
        """Remove the overlay's registration link, if it is still there."""
        target = self.own_link(package)
        if target is not None and not target.startswith("@"):
            with self._ensure_dir(lock, owners) as directory:
                directory.unlink(package)

    def hide_link(self, package: str, lock: DatabaseLock,
                  owners: tuple[int, int] | None) -> None:
        """Hide a lower database's registration of ``package`` with a ``@hidden`` link."""
        check_package(package)
        with self._ensure_dir(lock, owners) as directory:
            directory.replace_link(HIDDEN, package, lock.tmp, self._ids())
