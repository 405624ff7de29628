"""The changes writers make to ``current``, registrations and hook links, and their finish.

Each change is a short run of steps, every one idempotent: an install flips
``current``, makes the system hooks' links, flips the user's registration and
makes the user's links, then removes the versions nobody uses; a registration,
an unregistration and a removal are the tail of that.  :meth:`Changes.run`
records the change's :class:`~.intents.Intent` in the lock file before its
first step and clears it after the last, and every writer, once it holds the
lock, first finishes a change a killed writer left recorded
(:meth:`Changes.resume`).  So after any kill and the next command, whatever it
is, the hook links match ``current`` and the registrations again.

A hook that fails (its ``Exec``, a user's broken hook folder) does not stop the
change half-way: the other steps are made, then the failure is reported.  Only
the package the change is about is looked at: a change costs the same with one
app installed or a thousand.
"""

from __future__ import annotations

import errno
import os
import stat
from collections.abc import Callable

from .. import _console
from ..errors import ClickError, HookError, InstallError
from .database import Database
from .fs import Dir
from .hooks import package_install_hooks, package_remove_hooks, read_manifest_hooks
from .intents import Intent, decode, encode
from .lock import RETIRED
from .names import check_version, current_version, temp_name
from .users import ALL_USERS, GC_IN_USE, HIDDEN, Registry, user_names

TYPE_CHECKING = False  # not typing.TYPE_CHECKING: importing typing costs start-up time

if TYPE_CHECKING:
    from .lock import DatabaseLock

__all__ = [
    "Changes",
    "complete_versions",
    "each_session_user",
    "is_complete_version",
    "registered_version",
    "valid",
]


class _Recorded:
    """``with changes.recorded(intent) as change: change.apply()`` -- the intent is in
    the lock file meanwhile.

    It stays there when the block is left by anything but its end or a
    :class:`ClickError` (which the command reports): a kill, an interrupt, a
    failing disk.  The next writer then finishes the change.
    """

    def __init__(self, changes: Changes, intent: Intent) -> None:
        self.changes = changes
        self.intent = intent

    def apply(self) -> list[str]:
        return self.changes.apply(self.intent)

    def __enter__(self) -> _Recorded:
        self.changes.lock.record_intent(encode(self.intent))
        return self

    def __exit__(self, kind: type[BaseException] | None, *rest: object) -> None:
        if kind is None or issubclass(kind, ClickError):
            self.changes.lock.clear_intent()


class Changes:
    """The change steps on one database, under its lock."""

    def __init__(self, db: Database, lock: DatabaseLock, owner: tuple[int, int] | None,
                 hooks_dir: str | None, frameworks_dir: str | os.PathLike[str] | None,
                 session_users: Callable[[], list[str]]) -> None:
        self.db = db
        self.lock = lock
        self.owner = owner
        self.hooks_dir = hooks_dir
        self.frameworks_dir = frameworks_dir
        #: the logged-in users whose hooks a change for ``@all`` runs
        self.session_users = session_users

    def _root(self) -> Dir:
        if self.lock.root_dir is None:
            raise InstallError(f"the database {self.lock.root} does not exist")
        return self.lock.root_dir

    # -- the record ---------------------------------------------------------------------

    def recorded(self, intent: Intent) -> _Recorded:
        return _Recorded(self, intent)

    def run(self, intent: Intent) -> list[str]:
        """Make the change ``intent`` describes, recorded first; the logged-in users
        whose hooks failed (a change for ``@all``)."""
        with self.recorded(intent) as change:
            return change.apply()

    def resume(self) -> Intent | None:
        """Finish the change a killed writer recorded, if any (it is then cleared);
        that change."""
        raw = self.lock.intent()
        if not raw:
            return None
        try:
            intent = decode(raw)
        except ClickError as e:
            _console.warn(f"{self.lock.root}/.click/lock: {e}; ignored")
            self.lock.clear_intent()
            return None
        if intent is None:  # cut short before its first step: nothing changed
            self.lock.clear_intent()
            return None
        _console.warn(f"finishing {intent.describe()}, which was interrupted")
        try:
            failed = self.apply(intent)
        except ClickError as e:
            _console.warn(f"{intent.describe()} could not be finished: {e}")
        else:
            if failed:
                _console.warn(f"{intent.describe()}: user-level hooks failed for "
                              f"{'; '.join(failed)}")
        self.lock.clear_intent()
        return intent

    def apply(self, intent: Intent) -> list[str]:
        """Every step of ``intent``'s change, whichever were made already."""
        kind = intent.kind
        if kind == "install":
            return self.finish_install(intent.package, intent.version, intent.old or None,
                                       intent.replaced or None, intent.user or None)
        if kind == "register":
            return self.finish_register(intent.package, intent.version,
                                        intent.replaced or None, intent.user)
        if kind == "unregister":
            return self.finish_unregister(intent.package, intent.version,
                                          intent.old == HIDDEN, intent.user)
        if kind == "remove":  # gc's: only what gc removes (the record is the owner's to write)
            if self.current(intent.package) != intent.version:
                self.maybe_remove(intent.package, intent.version)
            return []
        from .hooks import open_hook, run_system_hooks, run_user_hooks

        if kind == "sync-system":
            run_system_hooks(self.db, self.hooks_dir, self.frameworks_dir, self.lock)
        elif kind == "sync-user":
            run_user_hooks(self.db, intent.user, self.hooks_dir, self.frameworks_dir, self.lock)
        else:
            hook = open_hook(self.db, intent.hook, self.hooks_dir, self.frameworks_dir, self.lock)
            if kind == "hook-install":
                hook.install(None)
            else:
                hook.remove(None)
        return []

    # -- install, register, unregister ----------------------------------------------------

    def finish_install(self, package: str, version: str, old: str | None,
                       replaced: str | None, user: str | None) -> list[str]:
        """``current`` to ``version`` (unpacked in the overlay) and its system hooks; the
        registration for ``user`` and its hooks; then the other versions nobody uses."""
        placed = False
        package_dir = self._root().open(package)
        if package_dir is not None:
            with package_dir:
                placed = (is_complete_version(package_dir, package, version)
                          or self._put_back(package_dir, package, version))
                if placed and current_version(package_dir.readlink("current")) != version:
                    # `current` first: no hook link ever points into a version that
                    # the database does not name yet.
                    package_dir.replace_link(version, "current", self.lock.tmp, self.owner)
        if not placed and not self.db.has_package_version(package, version):
            return []  # killed before the version was in place: nothing changed
        errors: list[str] = []
        if placed:
            _attempt(errors, lambda: package_install_hooks(
                self.db, package, old, version, None, self.hooks_dir, self.lock))
        failed: list[str] = []
        if user is not None:
            failed = self._register(Registry(self.db, user), package, version, replaced, errors)
        for gone in self._other_versions(package, version, {old, replaced}):
            try:
                self.maybe_remove(package, gone)
            except ClickError as e:
                errors.append(str(e))
        _raise(errors)
        return failed

    def _put_back(self, package_dir: Dir, package: str, version: str) -> bool:
        """The installed tree a reinstall moved aside (where no rename swaps two trees),
        back in its place if the writer was killed before the new one took it; whether
        ``version`` is then complete."""
        tmp = self.lock.tmp
        st = tmp.lstat(RETIRED) if tmp is not None else None
        if st is None or not stat.S_ISDIR(st.st_mode) or package_dir.lstat(version) is not None:
            return False
        assert tmp is not None
        os.rename(RETIRED, version, src_dir_fd=tmp.fd, dst_dir_fd=package_dir.fd)
        return is_complete_version(package_dir, package, version)

    def finish_register(self, package: str, version: str, replaced: str | None,
                        user: str) -> list[str]:
        if not self.db.has_package_version(package, version):
            return []  # nothing to register (it was refused before any step)
        errors: list[str] = []
        failed = self._register(Registry(self.db, user), package, version, replaced, errors)
        if replaced is not None and replaced != version:
            _attempt(errors, lambda: self.maybe_remove(package, replaced))
        _raise(errors)
        return failed

    def _register(self, registry: Registry, package: str, version: str,
                  replaced: str | None, errors: list[str]) -> list[str]:
        """The registration, then its user-level hooks; the session users whose failed."""
        registry.set_link(package, version, self.lock, self.owner)
        if not registry.is_pseudo_user:
            _attempt(errors, lambda: package_install_hooks(
                self.db, package, replaced, version, registry.name, self.hooks_dir, self.lock))
        elif registry.name == ALL_USERS:
            return each_session_user(self.session_users(), lambda name: package_install_hooks(
                self.db, package, replaced, version, name, self.hooks_dir, self.lock))
        return []

    def finish_unregister(self, package: str, version: str, hide: bool, user: str) -> list[str]:
        """The user's hook links first: they point through the registration, so the
        registration never goes while links through it remain.  Then the registration
        (or, for a lower database's, a link that hides it), then the version if unused."""
        registry = Registry(self.db, user)
        failed: list[str] = []
        errors: list[str] = []
        if not registry.is_pseudo_user:
            _attempt(errors, lambda: package_remove_hooks(
                self.db, package, version, registry.name, self.hooks_dir, self.lock))
        elif registry.name == ALL_USERS:
            failed = each_session_user(self.session_users(), lambda name: package_remove_hooks(
                self.db, package, version, name, self.hooks_dir, self.lock))
        if hide:
            registry.hide_link(package, self.lock, self.owner)
        else:
            registry.drop_own_link(package, self.lock, self.owner)
        _attempt(errors, lambda: self.maybe_remove(package, version))
        _raise(errors)
        return failed

    # -- removal --------------------------------------------------------------------------

    def _other_versions(self, package: str, version: str, also: set[str | None]) -> list[str]:
        """The package's complete versions in the overlay but ``version``, plus ``also``."""
        found = {v for v in also if v is not None}
        package_dir = self._root().open(package)
        if package_dir is not None:
            with package_dir:
                found.update(complete_versions(package_dir, package))
        found.discard(version)
        return sorted(found)

    def current(self, package: str) -> str | None:
        """The version ``current`` names in the overlay (None: none)."""
        package_dir = self._root().open(package)
        if package_dir is None:
            return None
        with package_dir:
            return current_version(package_dir.readlink("current"))

    def maybe_remove(self, package: str, version: str) -> bool:
        """Remove ``version`` unless a user (or ``@all``) still has it registered."""
        for name in user_names(self.db):
            if name == GC_IN_USE:
                continue
            try:
                if Registry(self.db, name).get_version(package) == version:
                    return False
            except ClickError:
                continue
        return self.remove_version(package, version)

    def remove_version(self, package: str, version: str) -> bool:
        """Remove an unpacked version of the overlay: hooks, ``current``, then the tree.

        Only a real directory inside the root is ever removed; it is first
        renamed into the scratch area, so a killed removal leaves either the
        version or nothing of it.
        """
        root = self._root()
        package_dir = root.open(package)
        if package_dir is None:
            return False
        with package_dir:
            found = package_dir.open(version)  # a planted link: refused, naming it
            if found is None:
                _remove_if_empty(root, package)  # a removal killed before its last step
                return False
            found.close()
            if _app_running(self.db, package, version):
                return False
            _console.note(f"Removing {package_dir.join(version)}")
            errors: list[str] = []
            _attempt(errors, lambda: package_remove_hooks(
                self.db, package, version, None, self.hooks_dir, self.lock))
            if current_version(package_dir.readlink("current")) == version:
                package_dir.unlink("current")  # before the tree goes: current never dangles
            trash = temp_name("removed")
            tmp = self.lock.writable_tmp()
            try:
                os.rename(version, trash, src_dir_fd=package_dir.fd, dst_dir_fd=tmp.fd)
            except OSError as e:
                if e.errno != errno.EXDEV:
                    raise
                package_dir.remove(version)  # another file system mounted there
            else:
                tmp.remove(trash)
        _remove_if_empty(root, package)
        _raise(errors)
        return True


def _remove_if_empty(root: Dir, package: str) -> None:
    try:
        os.rmdir(package, dir_fd=root.fd)
    except OSError:
        pass  # not empty (another version, current), or gone


def _attempt(errors: list[str], step: Callable[[], object]) -> None:
    """A step that runs hooks: its failure is noted and the change goes on."""
    try:
        step()
    except ClickError as e:
        errors.append(str(e))


def _raise(errors: list[str]) -> None:
    if errors:
        raise HookError("; ".join(errors))


def registered_version(registry: Registry, package: str) -> str | None:
    """The version ``registry`` has of ``package``, or None (a planted link is refused)."""
    from .fs import Tampered

    try:
        return registry.get_version(package)
    except Tampered:
        raise
    except ClickError:
        return None


def each_session_user(users: list[str], run: Callable[[str], None]) -> list[str]:
    """``run`` for each logged-in user's hooks (``@all`` changed); the failures.

    A user can break their own hook folder (a directory where a link goes): that
    must not keep a change for all users from being made, so the others go on and
    the failures are reported once the change is done.
    """
    failed = []
    for name in users:
        try:
            run(name)
        except ClickError as e:
            failed.append(f"{name}: {e}")
    return failed


def valid(check: object, name: str) -> bool:
    try:
        check(name)  # type: ignore[operator]
    except ClickError:
        return False
    return True


def complete_versions(package_dir: Dir, package: str) -> list[str]:
    """The versions in ``package_dir`` that an install completed (``current`` aside)."""
    return [v for v in package_dir.entries()
            if v != "current" and valid(check_version, v)
            and is_complete_version(package_dir, package, v)]


def is_complete_version(package_dir: Dir, package: str, version: str) -> bool:
    """A real directory holding ``.click/info/NAME.manifest`` (what an install leaves).

    A link planted in its place is refused, naming it.
    """
    st = package_dir.lstat(version)
    if st is None or not (stat.S_ISDIR(st.st_mode) or stat.S_ISLNK(st.st_mode)):
        return False
    found = package_dir.open(version)
    if found is None:
        return False  # removed since it was listed
    with found:
        info = found.open(".click", "info") if found.is_dir(".click") else None
        if info is None:
            return False
        with info:
            manifest = info.lstat(f"{package}.manifest")
    return manifest is not None and stat.S_ISREG(manifest.st_mode)


def _app_running(db: Database, package: str, version: str) -> bool:
    """Whether an app of this version runs (only where the session tools exist)."""
    import shutil

    tool = next((t for t in ("lomiri-app-pid", "ubuntu-app-pid", "upstart-app-pid")
                 if shutil.which(t)), None)
    if tool is None:
        return False
    import subprocess

    # App names come from the installed manifest: only valid ones (read_manifest_hooks
    # drops the rest) make an app id, passed as one argument, never through a shell.
    for app in read_manifest_hooks(db, package, version):
        result = subprocess.run([tool, f"{package}_{app}_{version}"],
                                stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        if result.returncode == 0:
            return True
    return False


