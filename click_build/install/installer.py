"""Install, register, unregister, gc: the original's operations, atomic and locked.

One writer at a time holds the database lock (:mod:`.lock`).  An install
copies the package once into a private, nameless snapshot in the database's
scratch area (:func:`~click_build.pkgfile.private_copy`), so the signature
check, the audit and the unpack all read the same bytes whatever happens to
the file meanwhile.  It checks every name it will create, audits the package
while streaming it into a scratch directory (as the ``clickpkg`` user when
root, so apps never own their code), renames the finished tree into place,
flips ``current``, runs the system hooks, flips the user's registration
(then the user's hooks) with one rename each, and removes the version it
replaced if nobody uses it any more.  ``current`` flips before any hook link
points into the new version, so a killed install never leaves a link into a
version the database does not name.  The placement of the tree and the steps
after it are one recorded change (:mod:`.changes`): a writer killed among them
leaves its intent in the lock file, and the next writer finishes it before
anything else (a reinstall swaps the tree ``current`` names, so the links
follow it even then).
A refused package leaves nothing behind; a killed unpack leaves only scratch
files, which the next writer removes.  Every directory of the database is
reached through descriptors that refuse symbolic links (:class:`~.fs.Dir`).  No step looks at other installed
apps, so an install costs the same with one app or a thousand.
"""

from __future__ import annotations

import fcntl
import os
import stat
import sys
from collections.abc import Sequence

from .. import _console
from ..errors import ClickError, HookError, InstallError
from ..hostarch import host_architecture
from .changes import Changes, complete_versions, is_complete_version, registered_version, valid
from .database import Database
from .fs import Dir, Tampered, chown_to, clickpkg_ids, exchange, refused, sorted_names
from .hooks import check_install_links
from .intents import Intent
from .lock import DatabaseLock
from .names import (
    check_package,
    check_user,
    check_version,
    component_problem,
    current_version,
    temp_name,
)
from .users import ALL_USERS, GC_IN_USE, HIDDEN, Registry, user_names

TYPE_CHECKING = False  # not typing.TYPE_CHECKING: importing typing costs start-up time

if TYPE_CHECKING:
    from typing import TextIO

    from ..manifest import Manifest
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


#: What the unpacking child sends, alone, when the tree is complete.
_UNPACKED = b"\0unpacked\n"


class _Relayed(ClickError):
    """An error raised in the unpacking child, carried to the parent."""

    def __init__(self, lines: list[str]) -> None:
        super().__init__("; ".join(lines))
        self._lines = lines

    def lines(self) -> list[str]:
        return self._lines


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
                with _Unpacked(self, pkg, manifest, lock) as scratch:
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
        retired = temp_name("replaced")
        try:
            with root.ensure(name, self._owner) as package_dir:
                if in_overlay is not None:  # reinstall: swap trees in one step
                    if not exchange(tmp, scratch, package_dir, version):
                        os.rename(version, retired, src_dir_fd=package_dir.fd,
                                  dst_dir_fd=tmp.fd)
                        os.rename(scratch, version, src_dir_fd=tmp.fd,
                                  dst_dir_fd=package_dir.fd)
                else:
                    os.rename(scratch, version, src_dir_fd=tmp.fd, dst_dir_fd=package_dir.fd)
        finally:
            tmp.remove(retired)
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

    def _unpack(self, pkg: ClickPackage, manifest: Manifest, root_fd: int,
                progress_stream: TextIO | None = None) -> None:
        """Audit while streaming into the directory ``root_fd``; raises on any refusal.

        The control data was audited already, frameworks included (clickpkg
        may not be able to read the frameworks directory): ``manifest`` is
        what that audit returned.
        """
        from ..manifest import dump_manifest
        from ..package import audit_data
        from .unpack import Unpacker, write_admin_dir

        mask = os.umask(0o022)
        def files() -> int:  # one md5sums line per file: read again only for a terminal
            return sum(chunk.count(b"\n") for chunk in pkg.md5sums_chunks())

        with _console.Progress(f"unpacking {pkg.name}", files, progress_stream) as progress:
            try:
                unpacker = Unpacker(root_fd, pkg.name, progress.advance)
                try:
                    audit_data(pkg, manifest, sink=unpacker)
                    write_admin_dir(root_fd, pkg,
                                    dump_manifest(pkg.manifest_data).encode("utf-8"))
                    unpacker.finish()
                finally:
                    unpacker.close()
            finally:
                os.umask(mask)
        _console.debug(f"unpacked {pkg.name} {pkg.version}: {unpacker.entries} entries")

    def _unpack_as_clickpkg(self, pkg: ClickPackage, manifest: Manifest, root_fd: int) -> int:
        """Run :meth:`_unpack` in a child that has become ``clickpkg``; return the
        child's pid, for the caller to reap (it may still be ending).

        A fork, not an exec: the child inherits the package snapshot and the
        scratch directory's fd, parses the untrusted archive without root, and
        every file it creates is clickpkg's from the start (no chown pass
        afterwards, no path it would need permission to walk).  It locks the
        scratch directory (flock on its descriptor) for as long as it lives: if the
        parent is killed, the next writer's clean-up waits for that lock, so it never
        clears the scratch area under a child still writing there.  Every other
        descriptor (the database lock, which it could release, the database's
        directories) is closed in it.
        """
        assert self._owner is not None
        uid, gid = self._owner
        # Everything the child runs is imported now: clickpkg may not be able to
        # read this interpreter's library (a venv under /root, say).
        from .. import manifest as _manifest  # noqa: F401
        from .. import package as _package  # noqa: F401
        from ..tarread import load_decompressor
        from . import unpack  # noqa: F401

        load_decompressor(pkg.data_member.name)  # lzma, bz2: never on a gzip package's path

        read_fd, write_fd = os.pipe()
        sys.stdout.flush()
        sys.stderr.flush()
        pid = os.fork()
        if pid == 0:  # child
            code, report = 1, b""
            try:
                os.close(read_fd)
                # progress only, and only a terminal shows it
                terminal = os.fdopen(os.dup(2), "w") if os.isatty(2) else None
                null = os.open(os.devnull, os.O_WRONLY)
                os.dup2(null, 2)  # its warnings repeat the parent's; errors go up the pipe
                kept = {0, 1, 2, pkg.file.fileno(), root_fd, write_fd}
                _close_all_but(kept | ({terminal.fileno()} if terminal is not None else set()))
                os.setgroups([])
                os.setresgid(gid, gid, gid)
                os.setresuid(uid, uid, uid)
                fcntl.flock(root_fd, fcntl.LOCK_EX)  # held until this process ends
                self._unpack(pkg, manifest, root_fd, progress_stream=terminal)
                code = 0
            except ClickError as e:
                report = "\n".join(e.lines()).encode("utf-8", "replace")
            except BaseException as e:  # a bug: say what, never hang the parent
                report = f"unpacking failed: {type(e).__name__}: {e}".encode("utf-8", "replace")
            finally:
                try:
                    view = memoryview((_UNPACKED if code == 0 else b"") + report)
                    while view:
                        view = view[os.write(write_fd, view):]
                    # The parent goes on at this end of file, not after this process's
                    # teardown (unmapping every page it shares: about a millisecond).
                    os.close(write_fd)
                finally:
                    os._exit(code)
        os.close(write_fd)
        with os.fdopen(read_fd, "rb") as pipe:
            said = pipe.read()
        if said == _UNPACKED:
            return pid
        _, status = os.waitpid(pid, 0)
        if os.WIFSIGNALED(status):
            raise InstallError(f"the unpacking process was killed by signal {os.WTERMSIG(status)}")
        text = said.decode("utf-8", "replace")  # the child's error (it says _UNPACKED only alone)
        raise _Relayed(text.splitlines() or ["unpacking failed"])

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
        """Remove overlay versions that no user has registered and that are not current.

        ``@gcinuse`` registrations (a legacy pseudo-user) do not count and are
        dropped on the way, as in the original.  Only real directories that
        are complete versions (they hold their ``.click/info/NAME.manifest``)
        are ever removed, so a ``--root`` that names the wrong folder loses
        nothing.
        """
        removed: list[str] = []
        if not self._overlay_exists():
            return removed
        with self._lock() as lock:
            root = self._root(lock)
            changes = self._changes(lock)
            registered: dict[str, set[str]] = {}
            for name in user_names(self.db):
                if name == GC_IN_USE:
                    continue
                registry = Registry(self.db, name)
                for package in registry.package_names():
                    try:
                        registered.setdefault(package, set()).add(registry.get_version(package))
                    except ClickError:
                        continue
            for package in root.entries():
                if package == ".click" or not valid(check_package, package):
                    continue
                st = root.lstat(package)
                if st is None or not (stat.S_ISDIR(st.st_mode) or stat.S_ISLNK(st.st_mode)):
                    continue
                package_dir = root.open(package)  # a planted link: refused, naming it
                if package_dir is None:
                    continue  # removed since it was listed (not every writer takes our lock)
                with package_dir:
                    current = current_version(package_dir.readlink("current"))
                    doomed = [v for v in package_dir.entries()
                              if v not in ("current", current)
                              and v not in registered.get(package, ())
                              and valid(check_version, v)
                              and is_complete_version(package_dir, package, v)]
                for version in doomed:
                    self._drop_gc_in_use(root, package)
                    with changes.recorded(Intent("remove", package, version)):
                        gone = changes.remove_version(package, version)
                    if gone:
                        removed.append(f"{package} {version}")
        return removed

    @staticmethod
    def _drop_gc_in_use(root: Dir, package: str) -> None:
        gc_users = root.open(".click", "users", GC_IN_USE)
        if gc_users is not None:
            with gc_users:
                if gc_users.readlink(package) is not None:
                    gc_users.unlink(package)

    def ensure_ownership(self) -> None:
        """Give the overlay back to ``clickpkg`` if its ids changed (system-image updates)."""
        if self._owner is None:
            return
        with self._lock(create=False) as lock:
            if lock.root_dir is not None:
                self._ensure_ownership(lock.root_dir)

    def _ensure_ownership(self, root: Dir) -> None:
        assert self._owner is not None
        uid, gid = self._owner
        st = os.fstat(root.fd)
        if (st.st_uid, st.st_gid) == (uid, gid):
            return
        # Only what the old owner owned moves: a hard link someone planted to a file
        # outside the database (root's, say) keeps its owner.
        old_uid = st.st_uid

        def give(name: str, dir_fd: int) -> None:
            found = os.stat(name, dir_fd=dir_fd, follow_symlinks=False)
            if found.st_uid == old_uid:
                os.chown(name, uid, gid, dir_fd=dir_fd, follow_symlinks=False)

        # Only what the installer made: complete versions (and their package folder and
        # ``current``), the log and the registrations.  ``run-system --root`` pointed at
        # the wrong folder (/srv, say) must not give its files to clickpkg, the account
        # that unpacks untrusted packages, as gc there deletes nothing.
        packages = _installed_versions(root)
        admin = root.open(".click")
        try:
            kept = [n for n in ("log", "users")
                    if admin is not None and admin.lstat(n) is not None]
            if not packages and not kept:
                return  # nothing of the installer's here: leave the folder as it is
            os.fchown(root.fd, uid, gid)
            if admin is not None:
                if os.fstat(admin.fd).st_uid == old_uid:
                    os.fchown(admin.fd, uid, gid)
                for name in kept:
                    give(name, admin.fd)
        finally:
            if admin is not None:
                admin.close()
        for package, versions in packages.items():
            give(package, root.fd)
            package_dir = root.open(package)
            if package_dir is None:
                continue  # removed meanwhile
            with package_dir:
                if package_dir.lstat("current") is not None:
                    give("current", package_dir.fd)
                for version in versions:
                    give(version, package_dir.fd)
                    # fwalk: every entry by descriptor, never through a link (one
                    # swapped in for a directory meanwhile is not entered).
                    for _, dirs, files, dir_fd in os.fwalk(version, dir_fd=package_dir.fd):
                        for entry in dirs + files:
                            give(entry, dir_fd)

    # -- hooks --------------------------------------------------------------------------

    def run_system(self) -> None:
        """``click hook run-system``: gc, ownership, then every system hook in sync."""
        self.gc()
        with self._lock(create=self._overlay_exists()) as lock:
            if self._owner is not None and lock.root_dir is not None:
                self._ensure_ownership(lock.root_dir)
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


class _Unpacked:
    """``with _Unpacked(installer, pkg, manifest, lock) as scratch:`` -- the package
    audited and unpacked into a scratch directory, named ``scratch`` in the scratch area.

    Whatever is left of it is removed at the end, and the unpacking child reaped
    then: its teardown overlaps the parent's work.  A class, not ``contextlib``:
    importing it costs start-up time on every install.
    """

    def __init__(self, installer: Installer, pkg: ClickPackage, manifest: Manifest,
                 lock: DatabaseLock) -> None:
        self.installer, self.pkg, self.manifest, self.lock = installer, pkg, manifest, lock
        self.tmp = lock.writable_tmp()
        self.scratch = ""
        self.child: int | None = None  # the unpacking process, once it said it was done

    def __enter__(self) -> str:
        owner = self.installer._owner
        self.scratch = self.lock.scratch_dir("unpack")
        try:
            chown_to(self.scratch, owner, self.tmp.fd)
            scratch_dir = self.tmp.open(self.scratch)
            assert scratch_dir is not None
            with scratch_dir:
                if owner is not None:
                    self.child = self.installer._unpack_as_clickpkg(
                        self.pkg, self.manifest, scratch_dir.fd)
                else:
                    self.installer._unpack(self.pkg, self.manifest, scratch_dir.fd)
        except BaseException:
            self.__exit__()
            raise
        return self.scratch

    def __exit__(self, *exc: object) -> None:
        self.tmp.remove(self.scratch)
        if self.child is not None:
            os.waitpid(self.child, 0)  # reaped: it has ended by now
            self.child = None


def _raise_for_session_users(failed: list[str], done: str) -> None:
    if failed:
        raise HookError(f"user-level hooks failed for {len(failed)} logged-in user(s) "
                        f"({'; '.join(failed)}); {done}")


def _installed_versions(root: Dir) -> dict[str, list[str]]:
    """Package folder -> its complete versions, for every package that has one.

    A link in place of a package folder or a version is refused, naming it.
    """
    found: dict[str, list[str]] = {}
    for package in root.entries():
        if package == ".click":
            continue
        st = root.lstat(package)
        if st is None:
            continue
        if stat.S_ISLNK(st.st_mode):
            raise refused(root.join(package), st.st_mode)
        if not stat.S_ISDIR(st.st_mode) or not valid(check_package, package):
            continue
        package_dir = root.open(package)
        if package_dir is None:
            continue
        with package_dir:
            versions = complete_versions(package_dir, package)
        if versions:
            found[package] = versions
    return found


def _close_all_but(keep: set[int]) -> None:
    """Close every descriptor not in ``keep`` (the unpacking child needs only a few)."""
    low = 0
    for fd in sorted(keep):
        if fd > low:
            os.closerange(low, fd)
        low = fd + 1
    os.closerange(low, os.sysconf("SC_OPEN_MAX"))
