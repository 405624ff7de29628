"""Install, register, unregister, gc, hook runs: the original's operations, atomic and locked.

One writer at a time holds the database lock (:mod:`.lock`), and first
finishes any change a killed writer left recorded there (:mod:`.changes`).
An install copies the package once into a private, nameless snapshot in the
database's scratch area (:func:`~click_build.pkgfile.private_copy`), so the
signature check, the audit and the unpack all read the same bytes whatever
happens to the file meanwhile.  It checks every name it will create, has the
package audited while it streams into a scratch directory
(:mod:`.unpack_child`: as the ``clickpkg`` user when root, so apps never own
their code), renames the finished tree into place, flips ``current``, runs
the system hooks, flips the user's registration (then the user's hooks) with
one rename each, and removes the version it replaced if nobody uses it any
more.  ``current`` flips before any hook link points into the new version, so
a killed install never leaves a link into a version the database does not
name.  The placement of the tree and the steps after it are one recorded
change: a writer killed among them leaves its intent in the lock file, and the
next writer finishes it before anything else (a reinstall swaps the tree
``current`` names, so the links follow it even then).  A refused package
leaves nothing behind; a killed unpack leaves only scratch files, which the
next writer removes.  gc is :mod:`.garbage`; giving the overlay back to
``clickpkg`` is :mod:`.ownership`.  Every directory of the database is reached
through descriptors that refuse symbolic links (:class:`~.fs.Dir`).  No step
looks at other installed apps, so an install costs the same with one app or a
thousand.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Sequence

from .. import _console
from ..errors import HookError, InstallError
from ..hostarch import host_architecture
from .changes import Changes, registered_version
from .database import Database
from .fs import Dir, Tampered, clickpkg_ids, exchange, refused, sorted_names
from .hooks import check_install_links
from .intents import Intent
from .lock import RETIRED, DatabaseLock
from .names import (
    check_package,
    check_user,
    check_version,
    component_problem,
    current_version,
)
from .unpack_child import Unpacked
from .users import ALL_USERS, HIDDEN, Registry, user_names

TYPE_CHECKING = False  # not typing.TYPE_CHECKING: importing typing costs start-up time

if TYPE_CHECKING:
    from ..package import ClickPackage

__all__ = ["Installer", "logged_in_users"]

FREE_SPACE_MARGIN = 1 << 20
def logged_in_users() -> list[str]:
    """Ordinary users with a session (logind's state files; [] without logind)."""
    import pwd

    names = []
    try:
        entries = sorted_names(os.listdir("/run/systemd/users"))
    except OSError:
        entries = []
    for entry in entries:
        if entry.isascii() and entry.isdigit() and 1000 <= int(entry) < 60000:
            try:
                name = pwd.getpwuid(int(entry)).pw_name
            except KeyError:
                continue
            if component_problem(name) is None and not name.startswith("@"):
                names.append(name)
    return names


class Installer:
    """The operations of ``click install/register/unregister/gc`` on one layered database."""

    def __init__(self, db: Database, frameworks_dir: str | os.PathLike[str], hooks_dir: str | None = None,
                 force_missing_framework: bool = False, allow_unauthenticated: bool = False,
                 keyrings: Sequence[str | os.PathLike[str]] = (),
                 architecture: str | None = None) -> None:
        """``architecture``: the system's, which a package must be built for (or ``all``);
        this machine's unless given (``run --arch`` installs for the emulated phone's)."""
        self.db = db
        self.frameworks_dir = frameworks_dir
        self.hooks_dir = hooks_dir
        self.force_missing_framework = force_missing_framework
        self.allow_unauthenticated = allow_unauthenticated
        self.keyrings = keyrings
        self.architecture = architecture
        self._owner = clickpkg_ids()  # unpack as clickpkg when root and it exists

    def _lock(self, create: bool = True) -> DatabaseLock:
        """The database's lock; once it is held, a change a killed writer left is finished."""
        return DatabaseLock(self.db.overlay, self._owner, create,
                            on_locked=lambda lock: self._changes(lock).resume())

    def _changes(self, lock: DatabaseLock) -> Changes:
        return Changes(self.db, lock, self._owner, self.hooks_dir, self.frameworks_dir,
                       lambda: logged_in_users())  # looked up when used (tests replace it)

    def _overlay_exists(self) -> bool:
        """Whether the writable database is there.  Where it is not (a mistyped
        ``--root``), a command that will be refused, or that has nothing to do, must
        not leave a new database and its parent folders behind (the original does not)."""
        return self.db.root_dir(self.db.overlay) is not None

    @staticmethod
    def _root(lock: DatabaseLock) -> Dir:
        if lock.root_dir is None:
            raise InstallError(f"the database {lock.root} does not exist")
        return lock.root_dir

    # -- install ---------------------------------------------------------------------

    def install(self, path: str, user: str | None = None, all_users: bool = False) -> str | None:
        """Install a .click; returns the version it replaced as ``current`` (or None)."""
        from ..package import audit_control, open_click
        from ..pkgfile import private_copy
        from ..sign import check_file_signature

        registry = None
        if user is not None or all_users:
            registry = Registry.for_all_users(self.db) if all_users else Registry(self.db, user)
            registry.check_user()
        with self._lock() as lock:
            # One private snapshot, in the database's own scratch area: the bytes whose
            # signature is checked are the bytes audited and unpacked, and the
            # signature is checked before any parser looks at them.
            with private_copy(path, lock.writable_tmp().fd) as f:
                check_file_signature(f, self.keyrings, self.allow_unauthenticated)
                pkg = open_click(f)
                manifest = audit_control(pkg, self.frameworks_dir,
                                         self.force_missing_framework,
                                         self.architecture or host_architecture())
                name, version = check_package(manifest.name), check_version(manifest.version)
                self._check_before_writing(lock, name, version, pkg, registry)
                replaced = registered_version(registry, name) if registry is not None else None
                user = registry.name if registry is not None else ""
                self._check_free_space(pkg, self._root(lock))
                with Unpacked(pkg, manifest, lock, self._owner) as scratch:
                    changes = self._changes(lock)
                    old = changes.current(name)
                    # From here on one change, recorded before the tree is placed (a
                    # reinstall swaps the tree `current` names): killed anywhere in it,
                    # the next writer finishes it (current, hooks, registration, removals).
                    with changes.recorded(Intent(
                            "install", name, version, old or "", replaced or "", user)) as change:
                        placed = self._place(scratch, name, version, lock)
                        if placed:
                            self._log(lock, "install", pkg, old)
                        failed = change.apply()
                if registry is None:
                    _console.info(
                        f"{name} {version} has not been registered for any users.\n"
                        "It may be garbage-collected the next time the system starts.\n"
                        f'To avoid this, run "click-build register {name} {version}" (with '
                        'the --root you installed into), or install with --user USER or '
                        '--all-users.\n')
        _raise_for_session_users(failed, f"{name} {version} is installed for all users")
        return old if placed else None

    def _check_before_writing(self, lock: DatabaseLock, name: str, version: str,
                              pkg: ClickPackage, registry: Registry | None) -> None:
        """Everything that would make the install fail half-way, refused now.

        The names it will create (hook links included), and anything planted
        where it will write: a link in place of the package or version
        directory, ``current``, or a registration directory.
        """
        hooks = pkg.manifest_data.get("hooks") or {}
        assert isinstance(hooks, dict)  # the control audit checked the manifest
        users: list[str] = []
        if registry is not None:
            users = logged_in_users() if registry.name == ALL_USERS else (
                [] if registry.is_pseudo_user else [registry.name])
        check_install_links(self.db, name, version, hooks, users, self.hooks_dir)
        user_names(self.db, existing=False)  # a registration directory that is a link is refused
        touched = {version}
        if registry is not None:
            try:
                touched.add(registry.get_version(name))  # it may be removed at the end
            except Tampered:
                raise
            except InstallError:
                pass
        root = self._root(lock)
        package_dir = root.open(name)
        if package_dir is not None:
            with package_dir:
                st = package_dir.lstat("current")
                if st is not None and not stat.S_ISLNK(st.st_mode):
                    raise refused(package_dir.join("current"), st.st_mode, "a symbolic link")
                current = current_version(package_dir.readlink("current"))
                for each in sorted(touched | {current} - {None}, key=str):
                    assert each is not None
                    found = package_dir.open(each)  # refuses a planted link, naming it
                    if found is not None:
                        found.close()

    def _place(self, scratch: str, name: str, version: str, lock: DatabaseLock) -> bool:
        """Rename the unpacked tree into place; whether it went into the overlay (not:
        the version is unpacked in an underlay already, only to be registered).
        Nothing a reader follows points at it yet, unless it replaces a tree of the
        same version."""
        root = self._root(lock)
        tmp = lock.writable_tmp()
        in_overlay = root.open(name, version) if root.is_dir(name) else None
        if in_overlay is not None:
            in_overlay.close()
        elif self.db.has_package_version(name, version):
            return False
        with root.ensure(name, self._owner) as package_dir:
            if in_overlay is None:
                os.rename(scratch, version, src_dir_fd=tmp.fd, dst_dir_fd=package_dir.fd)
            elif not exchange(tmp, scratch, package_dir, version):  # reinstall: one step
                _swap_in_two_steps(tmp, scratch, package_dir, version)
        _console.debug(f"unpacked {name} {version} in {root.join(name, version)}")
        return True

    def _check_free_space(self, pkg: ClickPackage, root: Dir) -> None:
        size = pkg.field("Installed-Size") or ""
        kib = int(size) if size.isdigit() and size.isascii() else 0  # the audit refuses junk
        try:
            st = os.fstatvfs(root.fd)
        except OSError:
            return
        free = st.f_bavail * st.f_frsize
        if kib * 1024 + FREE_SPACE_MARGIN > free:
            raise InstallError(
                f"not enough free space in {self.db.overlay}: {pkg.name} needs {kib} KiB, "
                f"{free // 1024} KiB are free"
            )

    def _log(self, lock: DatabaseLock, action: str, pkg: ClickPackage, old: str | None) -> None:
        from .unpack import log_line

        if lock.admin is None:
            return
        try:
            fd = os.open("log", os.O_WRONLY | os.O_APPEND | os.O_CREAT | os.O_NOFOLLOW
                         | os.O_NONBLOCK | os.O_CLOEXEC, 0o644, dir_fd=lock.admin.fd)
        except OSError:
            return
        try:
            st = os.fstat(fd)
            if stat.S_ISREG(st.st_mode) and st.st_nlink == 1:  # never a file linked in
                os.write(fd, log_line(action, pkg, old).encode("utf-8", "replace"))
                if self._owner is not None:
                    os.fchown(fd, *self._owner)
        finally:
            os.close(fd)

    # -- registrations -------------------------------------------------------------------

    def register(self, package: str, version: str, user: str | None = None,
                 all_users: bool = False) -> None:
        check_package(package)
        check_version(version)
        registry = Registry.for_all_users(self.db) if all_users else Registry(self.db, user)
        registry.check_user()
        if not self._overlay_exists():
            self.db.get_path(package, version)  # in a lower database, or refused now
        with self._lock() as lock:
            self.db.get_path(package, version)  # must be unpacked
            replaced = registered_version(registry, package)
            failed = self._changes(lock).run(
                Intent("register", package, version, "", replaced or "", registry.name))
        _raise_for_session_users(failed, f"{package} {version} is registered for all users")

    def unregister(self, package: str, version: str | None = None, user: str | None = None,
                   all_users: bool = False) -> None:
        check_package(package)
        if version is not None:
            check_version(version)
        registry = Registry.for_all_users(self.db) if all_users else Registry(self.db, user)
        if not self._overlay_exists():
            registry.get_version(package)  # in a lower database (to hide), or refused now
        with self._lock() as lock:
            done = lock.resumed
            if (isinstance(done, Intent) and done.kind == "unregister"
                    and (done.package, done.user) == (package, registry.name)
                    and version in (None, done.version)):
                return  # this very unregistration, killed before: finished just now
            old = registry.get_version(package)
            if version is not None and old != version:
                raise InstallError(f"Not removing {package} {old}; expected version {version}")
            self.db.find(package, old)  # a planted link in its place: refused before any change
            own = registry.own_link(package)
            hide = own is None or own.startswith("@")  # a lower database's: hidden, not removed
            failed = self._changes(lock).run(
                Intent("unregister", package, old, HIDDEN if hide else "", "", registry.name))
        _raise_for_session_users(failed, f"{package} is unregistered for all users")

    # -- removal ----------------------------------------------------------------------

    def gc(self) -> list[str]:
        """Remove overlay versions that no user has registered and that are not current
        (:mod:`.garbage`); what went."""
        from .garbage import collect_garbage

        if not self._overlay_exists():
            return []
        with self._lock() as lock:
            return collect_garbage(self.db, self._root(lock), self._changes(lock))

    def ensure_ownership(self) -> None:
        """Give the overlay back to ``clickpkg`` if its ids changed (system-image updates)."""
        if self._owner is None:
            return
        from .ownership import give_back

        with self._lock(create=False) as lock:
            if lock.root_dir is not None:
                give_back(lock.root_dir, self._owner)

    # -- hooks --------------------------------------------------------------------------

    def run_system(self) -> None:
        """``click hook run-system``: gc, ownership, then every system hook in sync."""
        from .ownership import give_back

        self.gc()
        with self._lock(create=self._overlay_exists()) as lock:
            if self._owner is not None and lock.root_dir is not None:
                give_back(lock.root_dir, self._owner)
            self._changes(lock).run(Intent("sync-system"))

    def run_user(self, user: str) -> None:
        """``click hook run-user``: every user-level hook of ``user`` in sync."""
        check_user(user)
        with self._lock(create=False) as lock:
            self._changes(lock).run(Intent("sync-user", user=user))

    def run_hook(self, name: str, action: str) -> None:
        """``click hook install|remove NAME``: one hook, for every app that uses it."""
        from .hooks import open_hook

        with self._lock(create=False) as lock:
            open_hook(self.db, name, self.hooks_dir, self.frameworks_dir, lock)  # or refused
            self._changes(lock).run(Intent(f"hook-{action}", hook=name))


def _raise_for_session_users(failed: list[str], done: str) -> None:
    if failed:
        raise HookError(f"user-level hooks failed for {len(failed)} logged-in user(s) "
                        f"({'; '.join(failed)}); {done}")


def _swap_in_two_steps(tmp: Dir, scratch: str, package_dir: Dir, version: str) -> None:
    """Replace tree ``version`` with ``scratch`` where no rename swaps them: the
    installed tree aside, the new one in.  A writer killed between the two leaves the
    installed tree in ``tmp`` (:data:`~.lock.RETIRED`) for the next to put back."""
    os.rename(version, RETIRED, src_dir_fd=package_dir.fd, dst_dir_fd=tmp.fd)
    try:
        os.rename(scratch, version, src_dir_fd=tmp.fd, dst_dir_fd=package_dir.fd)
    except BaseException:
        os.rename(RETIRED, version, src_dir_fd=tmp.fd, dst_dir_fd=package_dir.fd)
        raise
    tmp.remove(RETIRED)
