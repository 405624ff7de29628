"""Hooks: how apps attach to the system without maintainer scripts.

A system package ships ``/usr/share/click/hooks/NAME.hook`` (one deb822
paragraph: ``Pattern``, ``Exec``, ``User``, ``User-Level``, ``Single-Version``,
``Hook-Name``, ``Trigger``; read by :mod:`click_build.hookfiles`).  For every
app whose manifest names the hook, a symlink at ``Pattern`` (with ``${id}``,
``${short-id}``, ``${user}``, ``${home}``) points at the app's file, then ``Exec``
runs so the system can catch up.  This mirrors the original's ``hooks.vala`` step for step; links in a
user's home are made with that user's privileges, and every link is flipped
with one rename.
"""

from __future__ import annotations

import os
import pwd
import re
from collections.abc import Iterator

from ..errors import ClickError, FrameworkError, HookError
from ..hookfiles import hook_files, hooks_dir
from .database import Database
from .fs import makedirs, sorted_names
from .identity import as_user
from .links import place_link
from .names import app_id, check_app, check_link_path, check_user, component_problem
from .users import Registry, user_names, users_dir

TYPE_CHECKING = False  # not typing.TYPE_CHECKING: importing typing costs start-up time

if TYPE_CHECKING:
    from .lock import DatabaseLock

__all__ = [
    "Hook",
    "as_user",
    "check_install_links",
    "open_all",
    "open_hook",
    "package_install_hooks",
    "package_remove_hooks",
    "pattern_format",
    "pattern_possible_expansion",
    "run_system_hooks",
    "run_user_hooks",
]

_EXPANSION = r"\$(?:\$|\{(.*?)\})"  # compiled on first use (re's cache), where a hook runs


def _segments(fmt: str) -> Iterator[tuple[bool, str]]:
    last = 0
    for m in re.finditer(_EXPANSION, fmt):
        start = m.start()
        key = m.group(1)
        if key is None:  # "$$" -> "$"
            start += 1
        if last < start:
            yield False, fmt[last:start]
        if key is not None:
            yield True, key
        last = m.end()
    if last < len(fmt):
        yield False, fmt[last:]


def pattern_format(fmt: str, args: dict[str, str | None]) -> str:
    """``${key}`` -> value (unknown keys vanish), ``$$`` -> ``$``."""
    return "".join((args.get(text) or "") if is_key else text for is_key, text in _segments(fmt))


def pattern_possible_expansion(s: str, fmt: str, args: dict[str, str | None]) -> dict[str, str] | None:
    """The values of the unbound keys if ``s`` can be an expansion of ``fmt``."""
    pieces, groups = [], []
    for is_key, text in _segments(fmt):
        if is_key and text in args:
            pieces.append(re.escape(args[text] or ""))
        elif is_key:
            pieces.append("(.*)")
            groups.append(text)
        else:
            pieces.append(re.escape(text))
    m = re.fullmatch("".join(pieces), s, re.S)
    if m is None:
        return None
    return dict(zip(groups, m.groups()))


def _home(user: str | None) -> str | None:
    """``${home}``: the account's home from the password file (never ``$HOME``)."""
    if user is None:
        return None
    try:
        home = pwd.getpwnam(check_user(user)).pw_dir
    except KeyError:
        return None
    return check_link_path(home, f"home directory of {user}")


def _read_link(path: str) -> str | None:
    try:
        return os.readlink(path)
    except OSError:
        return None


def _entries(directory: str) -> list[str]:
    try:
        return sorted_names(os.listdir(directory))
    except (FileNotFoundError, NotADirectoryError):
        return []


def _unlink_force(path: str) -> None:
    try:
        os.unlink(path)
    except FileNotFoundError:
        pass
    except IsADirectoryError:
        raise HookError(f"cannot remove hook link {path}: it is a directory") from None


def read_manifest_hooks(db: Database, package: str, version: str | None) -> dict[str, dict[str, str]]:
    """The ``hooks`` of an installed version; {} if it cannot be read (as the original).

    Apps whose names could not be part of a file name are left out.
    """
    if version is None:
        return {}
    try:
        hooks = db.get_manifest(package, version).get("hooks", {})
    except ClickError:
        return {}
    if not isinstance(hooks, dict):
        return {}
    return {app: {h: t for h, t in v.items() if isinstance(t, str)}
            for app, v in hooks.items()
            if isinstance(v, dict) and isinstance(app, str) and _app_ok(app)}


def _app_ok(app: str) -> bool:
    try:
        check_app(app)
    except ClickError:
        return False
    return True


class Hook:
    """One ``*.hook`` file, bound to a database."""

    def __init__(self, db: Database, name: str, fields: dict[str, str],
                 frameworks_dir: str | os.PathLike[str] | None = None,
                 lock: DatabaseLock | None = None) -> None:
        self.db = db
        self.name = name
        self.fields = fields
        self.frameworks_dir = frameworks_dir
        self.lock = lock  # the database's, held by the caller: its scratch area and journal
        self._registries: dict[str, Registry] = {}

    @property
    def is_user_level(self) -> bool:
        return self.fields.get("user-level") == "yes"

    @property
    def is_single_version(self) -> bool:
        return self.is_user_level or self.fields.get("single-version") == "yes"

    @property
    def hook_name(self) -> str:
        return self.fields.get("hook-name", self.name)

    def get_field(self, key: str) -> str:
        value = self.fields.get(key.lower())
        if value is None:
            raise HookError(f"Hook '{self.name}' has no field named '{key}'")
        return value

    @staticmethod
    def short_app_id(package: str, app: str) -> str:
        return f"{package}_{check_app(app)}"

    def _expand(self, app_id_: str, short_id: str, user: str | None) -> str:
        args: dict[str, str | None] = {"id": app_id_, "user": user, "home": _home(user)}
        if self.is_single_version:
            args["short-id"] = short_id
        return pattern_format(self.get_field("pattern"), args).rstrip("/")

    def pattern(self, package: str, version: str, app: str, user: str | None = None) -> str:
        """The link path for one app, checked: absolute, clean, every part a file name."""
        if user is not None:
            check_user(user)
        path = self._expand(app_id(package, app, version), self.short_app_id(package, app),
                            user)
        if any(part in (".", "..") for part in path.split("/")[1:]):
            raise HookError(f"hook {self.name}: link path {path!r} is not clean")
        return check_link_path(path, f"hook {self.name}: link path")

    def link_dir(self, user: str | None = None) -> str:
        """The directory this hook's links go to (the pattern's, as the original reads it)."""
        return os.path.dirname(self._expand("__", "_", user))  # the ids of empty names

    def _registry(self, user: str) -> Registry:
        if user not in self._registries:
            self._registries[user] = Registry(self.db, user)
        return self._registries[user]

    # -- Exec --------------------------------------------------------------------

    def run_commands(self, user: str | None = None) -> None:
        command = self.fields.get("exec")
        if command is not None:
            target = user if self.is_user_level else self.get_field("user")
            if target is None:
                raise HookError(f"Hook '{self.name}' is user-level: it needs a user to run as")
            _run_as(command, target)
        if self.fields.get("trigger") == "yes":
            raise HookError("'Trigger: yes' not yet implemented")

    # -- links -------------------------------------------------------------------

    def previous_entries(self, user: str | None = None) -> list[tuple[str, str, str, str]]:
        """(path, package, version, app) of every link this hook made earlier."""
        link_dir = self.link_dir(user)
        bound: dict[str, str | None] = {"user": user, "home": _home(user)}
        found = []
        for entry in _entries(link_dir):
            path = os.path.join(link_dir, entry)
            exp = pattern_possible_expansion(path, self.fields["pattern"], bound)
            app_id = exp.get("id") if exp else None
            if not app_id:
                continue
            tokens = app_id.split("_", 2)
            if len(tokens) == 3 and not any(component_problem(t) for t in tokens):
                found.append((path, tokens[0], tokens[2], tokens[1]))
        return found

    def _install_link(self, package: str, version: str, app: str, relpath: str,
                      user: str | None) -> None:
        if self.is_user_level:
            assert user is not None
            base = self._registry(user).get_path(package)
        else:
            base = self.db.get_path(package, version)
        target = check_link_path(os.path.join(base, relpath), f"hook {self.name}: target")
        link = self.pattern(package, version, app, user)
        if _read_link(link) == target:
            return
        makedirs(os.path.dirname(link))
        place_link(target, link, self.lock, user if self.is_user_level else None)

    def install_package(self, package: str, version: str, app: str, relpath: str,
                        user: str | None = None) -> None:
        try:
            with as_user(user if self.is_user_level else None):
                # The new link first, then the other versions' go: the app is never
                # left without one, even if we are killed in between.
                self._install_link(package, version, app, relpath, user)
                if self.is_single_version:
                    for path, p, v, a in self.previous_entries(user):
                        if p == package and a == app and v != version:
                            _unlink_force(path)
        except OSError as e:
            raise self._link_failed(e, user) from None
        self.run_commands(user)

    def remove_package(self, package: str, version: str, app: str,
                       user: str | None = None) -> None:
        link = self.pattern(package, version, app, user)
        if self._owned_by_other_version(link, package, version):
            pass  # a version-independent link now serving the new version: keep it
        else:
            try:
                with as_user(user if self.is_user_level else None):
                    _unlink_force(link)
            except OSError as e:
                raise self._link_failed(e, user) from None
        self.run_commands(user)

    def _link_failed(self, e: OSError, user: str | None) -> HookError:
        """A link the hook could not make or remove (a home that does not exist, a
        folder the user may not write), named with the hook and the user."""
        who = f" for user {user}" if self.is_user_level and user else ""
        where = f"{e.filename}: " if e.filename else ""
        return HookError(f"hook {self.hook_name}{who}: {where}{e.strerror or e}")

    def _owned_by_other_version(self, link: str, package: str, version: str) -> bool:
        """A single-version system link (``${short-id}``) that points at another version.

        The original unlinks it when the old version goes, after the upgrade
        made it point at the new one, leaving the app without its link.
        """
        if self.is_user_level or not self.is_single_version:
            return False
        target = _read_link(link)
        try:
            base = self.db.get_path(package, version)
        except ClickError:
            return False
        return target is not None and not target.startswith(base + "/")

    # -- whole-hook operations -----------------------------------------------------

    def _packages(self, user: str | None) -> list[tuple[str, str, str | None]]:
        if not self.is_user_level:
            return [(p.name, p.version, None) for p in self.db.packages()]
        users = [check_user(user)] if user is not None else [
            u for u in user_names(self.db) if not u.startswith("@")]
        out: list[tuple[str, str, str | None]] = []
        for name in users:
            registry = self._registry(name)
            for package in registry.package_names():
                try:
                    out.append((package, registry.get_version(package), name))
                except ClickError:
                    continue
        return out

    def relevant_apps(self, user: str | None = None) -> list[tuple[str, str, str, str | None, str]]:
        """(package, version, app, user, relpath) for every app attached to this hook."""
        out = []
        for package, version, owner in self._packages(user):
            if not self._framework_ok(package, version):
                continue
            for app, hooks in read_manifest_hooks(self.db, package, version).items():
                if self.hook_name in hooks:
                    out.append((package, version, app, owner, hooks[self.hook_name]))
        return out

    def _framework_ok(self, package: str, version: str) -> bool:
        """Apps whose framework is missing are left out of whole-hook runs (as 0.5)."""
        from ..frameworks import frameworks_dir, validate_framework

        try:
            manifest = self.db.get_manifest(package, version)
            validate_framework(str(manifest.get("framework", "")),
                               self.frameworks_dir or frameworks_dir())
        except (FrameworkError, ClickError):
            return False
        return True

    def install(self, user: str | None = None) -> None:
        failed = []
        for package, version, app, owner, relpath in self.relevant_apps(user):
            try:
                self.install_package(package, version, app, relpath, owner)
            except ClickError as e:  # one bad app (say, installed by another tool) is
                failed.append(f"{package} {version}: {e}")  # no reason to skip the rest
        self._raise_for(failed)

    def _raise_for(self, failed: list[str]) -> None:
        if failed:
            raise HookError(f"hook {self.hook_name}: failed for {len(failed)} app(s) "
                            f"({'; '.join(failed)}); the other apps are done")

    def remove(self, user: str | None = None) -> None:
        for package, version, app, owner, _ in self.relevant_apps(user):
            self.remove_package(package, version, app, owner)

    def sync(self, user: str | None = None) -> None:
        """Link every relevant app, drop links nobody needs, run Exec once."""
        seen = set()
        failed = []
        apps = self.relevant_apps(user)  # read with our privileges, written with theirs
        with as_user(user if self.is_user_level else None):
            for package, version, app, owner, relpath in apps:
                try:
                    self._install_link(package, version, app, relpath, owner)
                except (OSError, ClickError) as e:
                    why = self._link_failed(e, user) if isinstance(e, OSError) else e
                    failed.append(f"{package} {version}: {why}")
                    continue
                seen.add(f"{package}_{app}_{version}")
            for path, package, version, app in self.previous_entries(user):
                if f"{package}_{app}_{version}" not in seen:
                    _unlink_force(path)
        self.run_commands(user)
        self._raise_for(failed)


def _run_as(command: str, user: str) -> None:
    """``/bin/sh -c COMMAND`` as ``user`` (dropping privileges when root)."""
    import subprocess

    kwargs: dict[str, object] = {}
    env = dict(os.environ)
    if os.geteuid() == 0:
        try:
            pw = pwd.getpwnam(user)
        except KeyError:
            raise HookError(f"Cannot get password file entry for user '{user}'") from None
        import grp

        mask = os.umask(0)
        os.umask(mask)
        kwargs = {
            "user": pw.pw_uid, "group": pw.pw_gid, "umask": mask | 0o002,
            "extra_groups": [g.gr_gid for g in grp.getgrall() if user in g.gr_mem],
        }
        env["HOME"] = pw.pw_dir
    try:
        result = subprocess.run(["/bin/sh", "-c", command], env=env, check=False,
                                **kwargs)  # type: ignore[call-overload]
    except OSError as e:
        raise HookError(f"Hook command '{command}' failed: {e.strerror}") from None
    if result.returncode != 0:
        how = (f"killed by signal {-result.returncode}" if result.returncode < 0
               else f"Child process exited with code {result.returncode}")
        raise HookError(f"Hook command '{command}' failed: {how}")


def open_all(db: Database, hook_name: str | None = None, directory: str | None = None,
             frameworks_dir: str | os.PathLike[str] | None = None,
             lock: DatabaseLock | None = None) -> list[Hook]:
    """Every hook file (whose ``Hook-Name`` is ``hook_name``, if given)."""
    hooks = [Hook(db, name, fields, frameworks_dir, lock)
             for name, fields in hook_files(hooks_dir(directory))]
    return [h for h in hooks if hook_name is None or h.hook_name == hook_name]


def open_hook(db: Database, name: str, directory: str | None = None,
              frameworks_dir: str | os.PathLike[str] | None = None,
              lock: DatabaseLock | None = None) -> Hook:
    for hook in open_all(db, None, directory, frameworks_dir, lock):
        if hook.name == name:
            return hook
    raise HookError(f"No click hook '{name}' installed")


def _app_hooks(hooks: dict[str, dict[str, str]]) -> list[tuple[str, str]]:
    return sorted((app, hook) for app, names in hooks.items() for hook in names)


def check_install_links(db: Database, package: str, version: str,
                        hooks: dict[str, dict[str, str]], users: list[str],
                        directory: str | None = None) -> None:
    """Refuse, before anything is written, a link an install would fail to make.

    Every app id must fit in a file name, and every link path (system hooks,
    and user-level hooks for ``users``) and target must be a clean absolute
    path whose parts fit in file names.
    """
    for app, names in hooks.items():
        app_id(package, app, version)  # ${id} fits in a name, whatever hook comes later
        for hook_name, relpath in names.items():
            # whatever hooks this machine has now: one added later must find a clean path
            check_link_path(os.path.join("/", relpath), f"hook {hook_name} of app {app}: file")
            for hook in open_all(db, hook_name, directory):
                owners = users if hook.is_user_level else [None]
                for user in owners:
                    hook.pattern(package, version, app, user)
                    base = (os.path.join(users_dir(db.overlay, user), package) if user
                            else os.path.join(db.overlay, package, version))
                    check_link_path(os.path.join(base, relpath), f"hook {hook.name}: target")


def package_install_hooks(db: Database, package: str, old: str | None, new: str,
                          user: str | None = None, directory: str | None = None,
                          lock: DatabaseLock | None = None) -> None:
    """After an install (system hooks) or a registration (``user``'s hooks).

    Every hook is run; one that fails does not keep the others from their links,
    and the failures are raised together at the end.
    """
    old_hooks = read_manifest_hooks(db, package, old)
    new_hooks = read_manifest_hooks(db, package, new)
    gone = set(_app_hooks(old_hooks)) - set(_app_hooks(new_hooks))
    failures: list[str] = []
    for app, hook_name in sorted(gone):
        for hook in open_all(db, hook_name, directory, lock=lock):
            if hook.is_user_level == (user is not None) and hook.is_single_version:
                assert old is not None
                try:
                    hook.remove_package(package, old, app, user)
                except ClickError as e:
                    failures.append(str(e))
    for app, hook_name in _app_hooks(new_hooks):
        for hook in open_all(db, hook_name, directory, lock=lock):
            if hook.is_user_level == (user is not None):
                try:
                    hook.install_package(package, new, app, new_hooks[app][hook_name], user)
                except ClickError as e:
                    failures.append(str(e))
    if failures:
        raise HookError("; ".join(failures))


def package_remove_hooks(db: Database, package: str, old: str, user: str | None = None,
                         directory: str | None = None, lock: DatabaseLock | None = None) -> None:
    """Before a version goes (system hooks) or a registration goes (``user``'s).

    As :func:`package_install_hooks`, every hook is run and the failures raised together.
    """
    failures: list[str] = []
    for app, hook_name in _app_hooks(read_manifest_hooks(db, package, old)):
        for hook in open_all(db, hook_name, directory, lock=lock):
            if hook.is_user_level == (user is not None):
                try:
                    hook.remove_package(package, old, app, user)
                except ClickError as e:
                    failures.append(str(e))
    if failures:
        raise HookError("; ".join(failures))


def _run_all(hooks: list[Hook], user: str | None, level: str) -> None:
    failures = []
    for hook in hooks:
        try:
            hook.sync(user)
        except ClickError as e:
            failures.append(f"{hook.name}: {e}")
    if failures:
        raise HookError(f"Some {level}-level hooks failed: {'; '.join(failures)}")


def run_system_hooks(db: Database, directory: str | None = None,
                     frameworks_dir: str | os.PathLike[str] | None = None,
                     lock: DatabaseLock | None = None) -> None:
    _run_all([h for h in open_all(db, None, directory, frameworks_dir, lock)
              if not h.is_user_level], None, "system")


def run_user_hooks(db: Database, user: str, directory: str | None = None,
                   frameworks_dir: str | os.PathLike[str] | None = None,
                   lock: DatabaseLock | None = None) -> None:
    if check_user(user).startswith("@"):
        raise HookError(f"'{user}' is not a real user; user-level hooks run for real users only")
    _run_all([h for h in open_all(db, None, directory, frameworks_dir, lock)
              if h.is_user_level], user, "user")
