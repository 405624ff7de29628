"""Installed packages: ``install``, ``list``, ``pkgdir``, ``register``,
``unregister``, ``gc``, ``hook`` and ``framework`` -- the original's commands,
flags and output, on the bundled installer (:mod:`click_build.install`)."""

from __future__ import annotations

import os
import sys

TYPE_CHECKING = False  # not typing.TYPE_CHECKING: importing typing costs start-up time

if TYPE_CHECKING:
    import argparse
    from typing import Any


__all__ = ["add_database_options", "dump_json", "find_package_directory", "open_db", "register"]

_HOOK_SUBCOMMANDS = {
    "install": "link every installed app that uses HOOK (after installing NAME.hook)",
    "remove": "remove the links of every app that uses HOOK",
    "run-system": "gc, then bring every system-level hook up to date (at boot)",
    "run-user": "bring every user-level hook up to date for USER (at login)",
}


def add_database_options(p: argparse.ArgumentParser, user_help: str | None = None,
                         default: Any = None) -> None:
    p.add_argument("--root", metavar="PATH", default=default,
                   help="add the database at PATH on top of the configured ones; "
                        "every change goes there")
    p.add_argument("--databases-dir", metavar="DIR", default=default,
                   help="read the database list from DIR/*.conf (default: "
                        "$CLICK_DATABASES_DIR or /etc/click/databases)")
    if user_help:
        p.add_argument("--user", metavar="USER", help=user_help, default=default)


def _add_hook_dirs(p: argparse.ArgumentParser, default: Any = None) -> None:
    p.add_argument("--hooks-dir", metavar="DIR", default=default,
                   help="read *.hook files from DIR (default: $CLICK_HOOKS_DIR or "
                        "/usr/share/click/hooks)")
    p.add_argument("--frameworks-dir", metavar="DIR", default=default,
                   help="read *.framework files from DIR (default: $CLICK_FRAMEWORKS_DIR "
                        "or /usr/share/click/frameworks)")


def open_db(args: argparse.Namespace) -> Any:
    """The databases a command works on; ``--user`` is checked here, for every command."""
    from ..install.database import open_database

    if getattr(args, "user", None) is not None:
        from ..install.names import check_user

        check_user(args.user)
    return open_database(args.root, args.databases_dir)


def _installer(args: argparse.Namespace, **kwargs: Any) -> Any:
    from ..frameworks import frameworks_dir
    from ..install.installer import Installer

    return Installer(open_db(args), frameworks_dir(getattr(args, "frameworks_dir", None)),
                     hooks_dir=getattr(args, "hooks_dir", None), **kwargs)


def register(subparsers: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    from argparse import SUPPRESS

    p = subparsers.add_parser(
        "install", help="install a package into a Click database",
        description=(
            "Audit PACKAGE-FILE and unpack it into the database (ROOT/NAME/VERSION), then "
            "run the system hooks, point ROOT/NAME/current at it and register it for USER. "
            "A refused package leaves nothing behind; an interrupted install leaves the "
            "previous version in place. Run as root it unpacks as the 'clickpkg' user."
        ),
    )
    # nargs="+": a shell pattern matching two versions gets one clear error, not argparse's
    p.add_argument("package", metavar="PACKAGE-FILE", nargs="+", help="a .click file (one)")
    add_database_options(p, "register the package for USER")
    p.add_argument("--all-users", action="store_true", help="register the package for all users")
    p.add_argument("--force-missing-framework", action="store_true",
                   help="install even if the package's framework is not on this system")
    p.add_argument("--allow-unauthenticated", action="store_true",
                   help="install a package that carries no trusted signature")
    p.add_argument("--keyring", metavar="FILE", action="append", default=[],
                   help="trust signatures made by keys in FILE (repeatable)")
    p.add_argument("--verbose", action="store_true", help="be more verbose on install")
    _add_hook_dirs(p)
    p.set_defaults(func=run_install)

    p = subparsers.add_parser(
        "list", help="list installed packages",
        description="Print 'NAME<TAB>VERSION' for each package registered for the user "
                    "(or every unpacked version with --all).",
    )
    add_database_options(p, "list the packages registered for USER (default: you)")
    p.add_argument("--all", action="store_true", help="list every unpacked version")
    p.add_argument("--manifest", action="store_true",
                   help="print a JSON array of manifests (with _directory and _removable)")
    p.set_defaults(func=run_list)

    p = subparsers.add_parser(
        "pkgdir", help="print the directory of an installed package",
        description="Print where PACKAGE-NAME is registered for the user, or the top "
                    "directory of the installed package that contains PATH.",
    )
    p.add_argument("name", metavar="PACKAGE-NAME|PATH")
    add_database_options(p, "look PACKAGE-NAME up for USER (default: you)")
    p.set_defaults(func=run_pkgdir)

    p = subparsers.add_parser(
        "register", help="register an installed package for a user",
        description="Make VERSION of PACKAGE-NAME (already unpacked) the one USER runs; "
                    "the version it replaces is removed if nobody else uses it.",
    )
    p.add_argument("package", metavar="PACKAGE-NAME")
    p.add_argument("version", metavar="VERSION")
    add_database_options(p, "register for USER (default: you)")
    p.add_argument("--all-users", action="store_true", help="register for all users")
    _add_hook_dirs(p)
    p.set_defaults(func=run_register)

    p = subparsers.add_parser(
        "unregister", help="unregister a package for a user",
        description="Drop USER's registration of PACKAGE-NAME (if VERSION is given it must "
                    "be the registered one); the version is removed if nobody uses it.",
    )
    p.add_argument("package", metavar="PACKAGE-NAME")
    p.add_argument("version", metavar="VERSION", nargs="?")
    add_database_options(p, "unregister for USER (default: $SUDO_USER, else you)")
    p.add_argument("--all-users", action="store_true",
                   help="drop the registration made for all users")
    _add_hook_dirs(p)
    p.set_defaults(func=run_unregister)

    p = subparsers.add_parser(
        "gc", help="remove package versions nobody uses",
        description="Remove every version in the writable database that no user has "
                    "registered and that is not its package's current version.",
    )
    add_database_options(p)
    _add_hook_dirs(p)
    p.set_defaults(func=run_gc)

    p = subparsers.add_parser(
        "hook", help="install, remove or run system and user hooks",
        description="install HOOK / remove HOOK: link (or unlink) every app that uses HOOK. "
                    "run-system: gc, then bring every system-level hook up to date. "
                    "run-user: bring every user-level hook up to date for USER.",
    )
    user_help = "run user-level hooks for USER (run-user; default: you)"
    add_database_options(p, user_help)
    _add_hook_dirs(p)
    p.set_defaults(func=run_hook, hook=None)
    actions = p.add_subparsers(dest="subcommand", metavar="SUBCOMMAND", required=True)
    for name, help_text in _HOOK_SUBCOMMANDS.items():
        a = actions.add_parser(name, help=help_text, description=help_text)
        if name in ("install", "remove"):
            a.add_argument("hook", metavar="HOOK", help="the hook's name (its NAME.hook file)")
        # The options also after the action (as the original takes them); SUPPRESS keeps
        # a value given before the action from being reset to the default.
        add_database_options(a, user_help if name == "run-user" else None, SUPPRESS)
        _add_hook_dirs(a, SUPPRESS)

    p = subparsers.add_parser(
        "framework", help="list the frameworks of this system and their fields",
        description="Frameworks are the base systems apps declare in 'framework'; "
                    "each is a *.framework file.",
    )
    p.add_argument("--frameworks-dir", metavar="DIR",
                   help="read *.framework files from DIR (default: $CLICK_FRAMEWORKS_DIR "
                        "or /usr/share/click/frameworks)")
    sub = p.add_subparsers(dest="framework_command", metavar="SUBCOMMAND")
    s = sub.add_parser("list", help="list available frameworks")
    s.set_defaults(func=run_framework)
    s = sub.add_parser("info", help="show the fields of a framework")
    s.add_argument("framework_name", metavar="FRAMEWORK")
    s.set_defaults(func=run_framework)
    s = sub.add_parser("get-field", help="print one field of a framework")
    s.add_argument("framework_name", metavar="FRAMEWORK")
    s.add_argument("field_name", metavar="FIELD", help="the field name (e.g. base-version)")
    s.set_defaults(func=run_framework)
    p.set_defaults(func=run_framework)


def run_install(args: argparse.Namespace) -> int:
    if len(args.package) > 1:
        from ..errors import ConfigError

        raise ConfigError(
            f"install takes one package file, not {len(args.package)} "
            f"({', '.join(args.package)}): name the one to install, e.g. the newest version")
    (args.package,) = args.package
    installer = _installer(
        args, force_missing_framework=args.force_missing_framework,
        allow_unauthenticated=args.allow_unauthenticated, keyrings=list(args.keyring))
    installer.install(args.package, user=args.user, all_users=args.all_users)
    return 0


def dump_json(data: object) -> None:
    import json

    sys.stdout.write(json.dumps(data, ensure_ascii=False, sort_keys=True, indent=4,
                                separators=(",", ": ")) + "\n")


def run_list(args: argparse.Namespace) -> int:
    db = open_db(args)
    if args.all:
        manifests = db.get_manifests(all_versions=True)
    else:
        from ..install.users import Registry

        registry = Registry(db, args.user)
        if args.user is not None:
            # As the original's `list --user`: a user who does not exist is an error,
            # not an empty list (a mistyped name must not look like "nothing installed").
            registry.check_user()
        manifests = registry.get_manifests()
    if args.manifest:
        dump_json(manifests)
    else:
        sys.stdout.write("".join(f"{m.get('name')}\t{m.get('version')}\n" for m in manifests))
    return 0


def find_package_directory(path: str) -> str:
    """The top of the installed package holding ``path`` (has ``.click/info``)."""
    from ..errors import InstallError

    try:
        directory = os.path.realpath(path, strict=True)
    except OSError as e:
        raise InstallError(f"Failed to canonicalize {path}: {e.strerror}") from None
    while True:
        if os.path.isdir(os.path.join(directory, ".click", "info")):
            return directory
        parent = os.path.dirname(directory)
        if parent == directory:
            raise InstallError(f"No package directory found for {path}")
        directory = parent


def run_pkgdir(args: argparse.Namespace) -> int:
    if "/" in args.name:
        print(find_package_directory(args.name))
    else:
        from ..install.names import check_package
        from ..install.users import Registry

        db = open_db(args)
        print(Registry(db, args.user).get_path(check_package(args.name)))
    return 0


def run_register(args: argparse.Namespace) -> int:
    _installer(args).register(args.package, args.version, user=args.user,
                              all_users=args.all_users)
    return 0


def run_unregister(args: argparse.Namespace) -> int:
    user = args.user if args.user is not None else os.environ.get("SUDO_USER") or None
    _installer(args).unregister(args.package, args.version, user=user,
                                all_users=args.all_users)
    return 0


def run_gc(args: argparse.Namespace) -> int:
    _installer(args).gc()
    return 0


def run_hook(args: argparse.Namespace) -> int:
    installer = _installer(args)
    if args.subcommand in ("install", "remove"):
        installer.run_hook(args.hook, args.subcommand)
    elif args.subcommand == "run-system":
        installer.run_system()
    else:
        from ..install.users import current_user_name

        installer.run_user(args.user or current_user_name())
    return 0


def run_framework(args: argparse.Namespace) -> int:
    from ..errors import FrameworkError
    from ..frameworks import frameworks_dir, list_frameworks, read_framework

    directory = frameworks_dir(args.frameworks_dir)
    command = getattr(args, "framework_command", None)
    if command is None:
        raise FrameworkError("framework: need a subcommand (list, info, get-field)")
    if command == "list":
        for framework in list_frameworks(directory):
            print(framework.name)
        return 0
    found = read_framework(args.framework_name, directory)
    if found is None:
        raise FrameworkError(f"No click framework '{args.framework_name}' installed")
    if command == "info":
        for key in sorted(found.fields):
            print(f"{key}: {found.fields[key]}")
    else:
        value = found.fields.get(args.field_name.lower())
        if value is None:
            raise FrameworkError(
                f"Framework '{args.framework_name}' has no field named '{args.field_name}'")
        print(value)
    return 0
