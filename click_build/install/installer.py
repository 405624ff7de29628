"""Install, register, unregister, gc: the original's operations, atomic and locked.

One writer at a time holds the database lock (:mod:`.lock`).  An install
audits the package while streaming it into a scratch directory (as the
``clickpkg`` user when root, so apps never own their code), renames the
finished tree into place, runs the system hooks, flips ``current`` and the
user's registration with one rename each, and removes the version it
replaced if nobody uses it any more.  A refused package leaves nothing
behind; a killed installer leaves only scratch files, which the next writer
removes.  No step looks at other installed apps, so an install costs the
same with one app or a thousand.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Sequence

from .. import _console
from ..errors import ClickError, InstallError, PackageError
from .database import Database
from .fs import (
    atomic_symlink,
    chown_to,
    clickpkg_ids,
    exchange,
    open_dir,
    read_link,
    remove_tree,
    sorted_entries,
)
from .hooks import package_install_hooks, package_remove_hooks, run_system_hooks
from .lock import DatabaseLock
from .users import ALL_USERS, GC_IN_USE, Registry, user_names

TYPE_CHECKING = False  # not typing.TYPE_CHECKING: importing typing costs start-up time

if TYPE_CHECKING:
    from typing import TextIO

    from ..package import ClickPackage

__all__ = ["Installer", "dpkg_architecture", "logged_in_users"]

FREE_SPACE_MARGIN = 1 << 20
_MACHINE_ARCH = {
    "x86_64": ("amd64", "i386"), "amd64": ("amd64", "i386"),
    "aarch64": ("arm64", "armhf"), "arm64": ("arm64", "armhf"),
    "ppc64le": ("ppc64el", "powerpc"), "s390x": ("s390x", "s390"),
    "riscv64": ("riscv64", "riscv32"), "i386": ("i386", "i386"),
    "i486": ("i386", "i386"), "i586": ("i386", "i386"), "i686": ("i386", "i386"),
}


def dpkg_architecture() -> str:
    """This machine's dpkg architecture, from the running interpreter (no dpkg needed).

    A 32-bit userland on a 64-bit kernel (armhf on aarch64, as on many
    phones) is told apart by the interpreter's pointer size.  Unknown machines
    fall back to ``dpkg --print-architecture``.
    """
    machine = os.uname().machine
    if machine.startswith("armv") or machine == "arm":
        return "armhf"
    pair = _MACHINE_ARCH.get(machine)
    if pair is not None:
        return pair[0] if sys.maxsize > 2**32 else pair[1]
    import subprocess

    try:
        return subprocess.run(["dpkg", "--print-architecture"], capture_output=True, text=True,
                              check=True).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        raise InstallError(f"cannot tell the dpkg architecture of machine {machine!r}") from None


def logged_in_users() -> list[str]:
    """Ordinary users with a session (logind's state files; [] without logind)."""
    import pwd

    names = []
    for entry in sorted_entries("/run/systemd/users"):
        if entry.isdigit() and 1000 <= int(entry) < 60000:
            try:
                names.append(pwd.getpwuid(int(entry)).pw_name)
            except KeyError:
                continue
    return names


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
                 keyrings: Sequence[str | os.PathLike[str]] = ()) -> None:
        self.db = db
        self.frameworks_dir = frameworks_dir
        self.hooks_dir = hooks_dir
        self.force_missing_framework = force_missing_framework
        self.allow_unauthenticated = allow_unauthenticated
        self.keyrings = keyrings
        self._owner = clickpkg_ids()  # unpack as clickpkg when root and it exists

    def _lock(self) -> DatabaseLock:
        return DatabaseLock(self.db.overlay, self._owner)

    # -- install ---------------------------------------------------------------------

    def install(self, path: str, user: str | None = None, all_users: bool = False) -> str | None:
        """Install a .click; returns the version it replaced as ``current`` (or None)."""
        from ..package import open_click
        from ..sign import check_file_signature

        registry = None
        if user is not None or all_users:
            registry = Registry.for_all_users(self.db) if all_users else Registry(self.db, user)
            registry.check_user()
        try:
            f = open(path, "rb")
        except OSError as e:
            raise PackageError(f"{path}: cannot open: {e.strerror}") from None
        # One open file: the bytes whose signature is checked are the bytes unpacked,
        # and the signature is checked before any parser looks at them.
        with f:
            check_file_signature(f, self.keyrings, self.allow_unauthenticated)
            pkg = open_click(f)
            with self._lock() as lock:
                old = self._unpack_and_flip(pkg, lock)
                name, version = pkg.name, pkg.version  # audited by now
                if registry is not None:
                    self._register(registry, name, version, lock)
                else:
                    _console.info(
                        f"{name} {version} has not been registered for any users.\n"
                        "It may be garbage-collected the next time the system starts.\n"
                        f'To avoid this, run "click-build register {name} {version}" (with '
                        'the --root you installed into), or install with --user USER or '
                        '--all-users.\n')
                if old is not None and old != version:
                    self._maybe_remove(name, old, lock)
        return old

    def _unpack_and_flip(self, pkg: ClickPackage, lock: DatabaseLock) -> str | None:
        """Audit + unpack, rename into place, system hooks, flip ``current``."""
        self._check_free_space(pkg)
        scratch = lock.scratch_dir("unpack")
        try:
            chown_to(scratch, self._owner)
            scratch_fd = open_dir(scratch)
            try:
                if self._owner is not None:
                    self._unpack_as_clickpkg(pkg, scratch_fd)
                else:
                    self._unpack(pkg, scratch_fd)
            finally:
                os.close(scratch_fd)
            name, version = pkg.name, pkg.version
            package_dir = os.path.join(self.db.overlay, name)
            target = os.path.join(package_dir, version)
            if self.db.has_package_version(name, version) and not os.path.exists(target):
                return None  # unpacked in an underlay already: only register it
            if os.path.islink(package_dir):
                raise InstallError(f"{package_dir} is a symbolic link; refusing to write "
                                   "through it")
            if not os.path.isdir(package_dir):
                os.mkdir(package_dir, 0o755)
                chown_to(package_dir, self._owner)
            if os.path.lexists(target):  # reinstall: swap trees in one step
                if not exchange(scratch, target):
                    os.rename(target, scratch + ".old")
                    os.rename(scratch, target)
            else:
                os.rename(scratch, target)
        finally:
            remove_tree(scratch)
            remove_tree(scratch + ".old")
        current = os.path.join(package_dir, "current")
        old = read_link(current)
        if old is not None and "/" in old:
            old = None
        _console.debug(f"installed {name} {version} in {target}")
        package_install_hooks(self.db, name, old, version, None, self.hooks_dir)
        atomic_symlink(version, current, lock.tmp, self._owner)
        self._log(lock, "install", pkg, old)
        return old

    def _check_free_space(self, pkg: ClickPackage) -> None:
        size = pkg.field("Installed-Size") or ""
        kib = int(size) if size.isdigit() and size.isascii() else 0  # the audit refuses junk
        try:
            st = os.statvfs(self.db.overlay)
        except OSError:
            return
        free = st.f_bavail * st.f_frsize
        if kib * 1024 + FREE_SPACE_MARGIN > free:
            raise InstallError(
                f"not enough free space in {self.db.overlay}: {pkg.name} needs {kib} KiB, "
                f"{free // 1024} KiB are free"
            )

    def _unpack(self, pkg: ClickPackage, root_fd: int, frameworks_checked: bool = False,
                progress_stream: TextIO | None = None) -> None:
        """Audit while streaming into the directory ``root_fd``; raises on any refusal.

        ``frameworks_checked``: the caller already ran the control audit with the
        frameworks directory (which clickpkg may not be able to read).
        """
        from ..manifest import dump_manifest
        from ..package import audit
        from .unpack import Unpacker, write_admin_dir

        mask = os.umask(0o022)
        files = pkg.md5sums_raw.count(b"\n")
        with _console.Progress(f"unpacking {pkg.name}", files, progress_stream) as progress:
            unpacker = Unpacker(root_fd, progress.advance)
            try:
                audit(pkg, self.frameworks_dir,
                      self.force_missing_framework or frameworks_checked,
                      architecture=dpkg_architecture(), sink=unpacker)
                write_admin_dir(root_fd, pkg, dump_manifest(pkg.manifest_data).encode("utf-8"),
                                unpacker.listing)
                unpacker.finish()
            finally:
                unpacker.close()
                os.umask(mask)
        _console.debug(f"unpacked {pkg.name} {pkg.version}: {len(unpacker.listing)} entries")

    def _unpack_as_clickpkg(self, pkg: ClickPackage, root_fd: int) -> None:
        """Run :meth:`_unpack` in a child that has become ``clickpkg``.

        A fork, not an exec: the child inherits the open package, the scratch
        directory's fd and the database lock, parses the untrusted archive
        without root, and every file it creates is clickpkg's from the start
        (no chown pass afterwards, no path it would need permission to walk).
        """
        assert self._owner is not None
        from ..package import audit_control

        audit_control(pkg, self.frameworks_dir, self.force_missing_framework,
                      dpkg_architecture())
        uid, gid = self._owner
        # Everything the child runs is imported now: clickpkg may not be able to
        # read this interpreter's library (a venv under /root, say).
        from .. import manifest, package  # noqa: F401
        from . import unpack  # noqa: F401

        read_fd, write_fd = os.pipe()
        sys.stdout.flush()
        sys.stderr.flush()
        pid = os.fork()
        if pid == 0:  # child
            code, report = 1, b""
            try:
                os.close(read_fd)
                terminal = os.fdopen(os.dup(2), "w")  # for progress only
                null = os.open(os.devnull, os.O_WRONLY)
                os.dup2(null, 2)  # its warnings repeat the parent's; errors go up the pipe
                os.setgroups([])
                os.setresgid(gid, gid, gid)
                os.setresuid(uid, uid, uid)
                self._unpack(pkg, root_fd, frameworks_checked=True, progress_stream=terminal)
                code = 0
            except ClickError as e:
                report = "\n".join(e.lines()).encode("utf-8", "replace")
            except BaseException as e:  # a bug: say what, never hang the parent
                report = f"unpacking failed: {type(e).__name__}: {e}".encode("utf-8", "replace")
            finally:
                try:
                    view = memoryview(report)
                    while view:
                        view = view[os.write(write_fd, view):]
                finally:
                    os._exit(code)
        os.close(write_fd)
        chunks = []
        with os.fdopen(read_fd, "rb") as pipe:
            chunks.append(pipe.read())
        _, status = os.waitpid(pid, 0)
        if os.WIFSIGNALED(status):
            raise InstallError(f"the unpacking process was killed by signal {os.WTERMSIG(status)}")
        if os.WEXITSTATUS(status) != 0:
            text = b"".join(chunks).decode("utf-8", "replace")
            raise _Relayed(text.splitlines() or ["unpacking failed"])

    def _log(self, lock: DatabaseLock, action: str, pkg: ClickPackage, old: str | None) -> None:
        from .unpack import log_line

        path = os.path.join(lock.admin, "log")
        try:
            fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT | os.O_NOFOLLOW
                         | os.O_CLOEXEC, 0o644)
        except OSError:
            return
        try:
            os.write(fd, log_line(action, pkg, old).encode("utf-8", "replace"))
        finally:
            os.close(fd)
        chown_to(path, self._owner)

    # -- registrations -------------------------------------------------------------------

    def _register(self, registry: Registry, package: str, version: str,
                  lock: DatabaseLock) -> str | None:
        try:
            old: str | None = registry.get_version(package)
        except ClickError:
            old = None
        registry.set_link(package, version, lock.tmp or registry.overlay_dir, self._owner)
        if not registry.is_pseudo_user:
            package_install_hooks(self.db, package, old, version, registry.name, self.hooks_dir)
        elif registry.name == ALL_USERS:
            for name in logged_in_users():
                package_install_hooks(self.db, package, old, version, name, self.hooks_dir)
        return old

    def register(self, package: str, version: str, user: str | None = None,
                 all_users: bool = False) -> None:
        registry = Registry.for_all_users(self.db) if all_users else Registry(self.db, user)
        registry.check_user()
        with self._lock() as lock:
            self.db.get_path(package, version)  # must be unpacked
            old = self._register(registry, package, version, lock)
            if old is not None and old != version:
                self._maybe_remove(package, old, lock)

    def unregister(self, package: str, version: str | None = None, user: str | None = None,
                   all_users: bool = False) -> None:
        registry = Registry.for_all_users(self.db) if all_users else Registry(self.db, user)
        with self._lock() as lock:
            old = registry.get_version(package)
            if version is not None and old != version:
                raise InstallError(f"Not removing {package} {old}; expected version {version}")
            registry.remove_link(package, lock.tmp or registry.overlay_dir, self._owner)
            if not registry.is_pseudo_user:
                package_remove_hooks(self.db, package, old, registry.name, self.hooks_dir)
            elif registry.name == ALL_USERS:
                for name in logged_in_users():
                    package_remove_hooks(self.db, package, old, name, self.hooks_dir)
            self._maybe_remove(package, old, lock)

    # -- removal ----------------------------------------------------------------------

    def _maybe_remove(self, package: str, version: str, lock: DatabaseLock) -> bool:
        """Remove ``version`` unless a user (or ``@all``) still has it registered."""
        for name in user_names(self.db):
            if name == GC_IN_USE:
                continue
            try:
                if Registry(self.db, name).get_version(package) == version:
                    return False
            except ClickError:
                continue
        return self._remove_unless_running(package, version, lock)

    def _remove_unless_running(self, package: str, version: str, lock: DatabaseLock) -> bool:
        package_dir = os.path.join(self.db.overlay, package)
        path = os.path.join(package_dir, version)
        if not os.path.lexists(path) or _app_running(path, package, version):
            return False
        _console.info(f"Removing {path}")
        package_remove_hooks(self.db, package, version, None, self.hooks_dir)
        current = os.path.join(package_dir, "current")
        if read_link(current) == version:
            os.unlink(current)  # before the tree goes: current never dangles
        if lock.tmp is not None:
            trash = os.path.join(lock.tmp, f"{package}_{version}.removed")
            os.rename(path, trash)
            path = trash
        remove_tree(path)
        try:
            os.rmdir(package_dir)
        except OSError:
            pass
        return True

    def gc(self) -> list[str]:
        """Remove overlay versions that no user has registered and that are not current.

        ``@gcinuse`` registrations (a legacy pseudo-user) do not count and are
        dropped on the way, as in the original.
        """
        removed = []
        with self._lock() as lock:
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
            gc_dir = os.path.join(self.db.overlay, ".click", "users", GC_IN_USE)
            for package in sorted_entries(self.db.overlay):
                package_dir = os.path.join(self.db.overlay, package)
                if package == ".click" or not os.path.isdir(package_dir):
                    continue
                current = read_link(os.path.join(package_dir, "current"))
                for version in sorted_entries(package_dir):
                    if version in ("current", current) or version in registered.get(package, ()):
                        continue
                    stale = os.path.join(gc_dir, package)
                    if os.path.islink(stale):
                        os.unlink(stale)
                    if self._remove_unless_running(package, version, lock):
                        removed.append(f"{package} {version}")
        return removed

    def ensure_ownership(self) -> None:
        """Give the overlay back to ``clickpkg`` if its ids changed (system-image updates)."""
        if self._owner is None:
            return
        uid, gid = self._owner
        root = self.db.overlay
        try:
            st = os.stat(root)
        except OSError:
            return
        if (st.st_uid, st.st_gid) == (uid, gid):
            return
        paths = [root] + [os.path.join(root, ".click", p) for p in ("", "log", "users")]
        for path in paths:
            if os.path.lexists(path):
                os.chown(path, uid, gid, follow_symlinks=False)
        for package in sorted_entries(root):
            if package == ".click":
                continue
            for top, dirs, files in os.walk(os.path.join(root, package)):
                for entry in [top] + [os.path.join(top, n) for n in dirs + files]:
                    os.chown(entry, uid, gid, follow_symlinks=False)

    def run_system(self) -> None:
        """``click hook run-system``: gc, ownership, then every system hook in sync."""
        self.gc()
        self.ensure_ownership()
        run_system_hooks(self.db, self.hooks_dir, self.frameworks_dir)


def _app_running(path: str, package: str, version: str) -> bool:
    """Whether an app of this version runs (only where the session tools exist)."""
    import shutil

    tool = next((t for t in ("lomiri-app-pid", "ubuntu-app-pid", "upstart-app-pid")
                 if shutil.which(t)), None)
    if tool is None:
        return False
    from .database import read_installed_manifest

    try:
        hooks = read_installed_manifest(path, package).get("hooks") or {}
    except ClickError:
        return False
    import subprocess

    for app in hooks if isinstance(hooks, dict) else ():
        result = subprocess.run([tool, f"{package}_{app}_{version}"],
                                stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        if result.returncode == 0:
            return True
    return False
