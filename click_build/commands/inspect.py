"""``info``, ``contents`` and ``verify``: read a package without installing it."""

from __future__ import annotations

import argparse
import os
import sys

TYPE_CHECKING = False  # not typing.TYPE_CHECKING: importing typing costs start-up time

if TYPE_CHECKING:
    from collections.abc import Callable, Sequence

__all__ = ["add_framework_options", "each_package", "register"]

_SEVERAL = ("With several, each is handled in turn; the exit status is non-zero if any "
            "of them fails.")


def each_package(paths: Sequence[str], run_one: Callable[[str], int],
                 heading: bool = False) -> int:
    """``run_one(path)`` for every package in turn: an error in one is reported,
    naming it, and the others still run.  1 if any failed, else 0.  With
    ``heading`` and several packages, each output starts with ``==> PATH <==``
    (as ``head`` and ``tail`` do)."""
    from .._console import print_error, print_os_error
    from ..errors import ClickError

    failed = False
    for index, path in enumerate(paths):
        if heading and len(paths) > 1:
            sys.stdout.write(f"{chr(10) if index else ''}==> {path} <==\n")
        try:
            status = run_one(path)
        except ClickError as e:
            print_error(e, path)
            status = 1
        except BrokenPipeError:
            raise
        except OSError as e:
            sys.stdout.flush()
            print_os_error(e, path)
            status = 1
        failed = failed or status != 0
    return 1 if failed else 0


def add_framework_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--force-missing-framework", action="store_true",
        help="accept a package whose framework is not installed on this system",
    )
    parser.add_argument(
        "--frameworks-dir", metavar="DIR",
        help="read *.framework files from DIR (default: $CLICK_FRAMEWORKS_DIR or "
             "/usr/share/click/frameworks)",
    )


def register(subparsers: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    p = subparsers.add_parser(
        "info", help="show the manifest of a package",
        description="Print a manifest as JSON: of the package NAME registered for the user "
                    "(with its _directory and _removable), of the .click file PATH, or of "
                    "the installed package that contains PATH. " + _SEVERAL + " Each "
                    "manifest then follows a line '==> NAME|PATH <=='.",
    )
    p.add_argument("paths", metavar="NAME|PATH", nargs="+", help="an installed package "
                   "name, a .click file, or a file inside an installed package")
    from .install import add_database_options

    add_database_options(p, "look NAME up for USER (default: you)")
    p.set_defaults(func=run_info)

    p = subparsers.add_parser(
        "contents", help="list the files in a package",
        description="List the files of the .click file PATH, as 'dpkg-deb -c' does. "
                    + _SEVERAL + " Each listing then follows a line '==> PATH <=='.",
    )
    p.add_argument("paths", metavar="PATH", nargs="+", help="a .click file")
    p.set_defaults(func=run_contents)

    p = subparsers.add_parser(
        "verify", help="check that a package is well formed and safe to install",
        description=(
            "Run every check the installer runs on PACKAGE-FILE: the _gpgorigin signature "
            "against the trusted keyrings (see --keyring), container and control "
            "data, forbidden fields and scripts, manifest, framework, paths, file types "
            "and md5 sums. Prints nothing and exits 0 when the package is good. "
            + _SEVERAL
        ),
    )
    p.add_argument("paths", metavar="PACKAGE-FILE", nargs="+", help="a .click file")
    add_framework_options(p)
    p.add_argument(
        "--allow-unauthenticated", action="store_true",
        help="accept a package that carries no trusted signature",
    )
    p.add_argument(
        "--keyring", metavar="FILE", action="append", default=[],
        help="trust the keys in this keyring (repeatable; default: $CLICK_KEYRINGS, else "
             "/etc/click/keyrings/ and debsig-verify's policies; see docs/signing.md)",
    )
    p.set_defaults(func=run_verify)


def run_info(args: argparse.Namespace) -> int:
    return each_package(args.paths, lambda path: _info(args, path), heading=True)


def _info(args: argparse.Namespace, path: str) -> int:
    """As the original: a registered name first, then a .click file, then a path
    inside an installed package."""
    from ..errors import ClickError
    from ..install.names import component_problem
    from ..package import open_click
    from .install import dump_json, open_db

    db = open_db(args)  # checks --user
    if "/" not in path and component_problem(path) is None:
        from ..install.users import Registry

        registry = Registry(db, args.user)
        if registry.has_package_name(path):
            dump_json(registry.get_manifest(path))
            return 0
    try:
        with open_click(path) as pkg:
            sys.stdout.write(pkg.info_json())
        return 0
    except ClickError as error:
        from ..install.database import read_installed_manifest
        from .install import find_package_directory

        try:
            directory = find_package_directory(path)
        except ClickError:
            raise error from None
        import glob

        found = glob.glob(os.path.join(glob.escape(directory), ".click", "info", "*.manifest"))
        if len(found) != 1:
            raise ClickError(
                f"{len(found)} manifest files found in {directory}/.click/info") from None
        name = os.path.basename(found[0])[: -len(".manifest")]
        manifest = read_installed_manifest(directory, name)
        del manifest["_directory"]
        dump_json(manifest)
        return 0


def run_contents(args: argparse.Namespace) -> int:
    return each_package(args.paths, _contents, heading=True)


def _contents(path: str) -> int:
    from ..listing import write_contents
    from ..package import open_click

    with open_click(path) as pkg:
        write_contents(pkg, sys.stdout)
    return 0


def run_verify(args: argparse.Namespace) -> int:
    return each_package(args.paths, lambda path: _verify(args, path))


def _verify(args: argparse.Namespace, path: str) -> int:
    from ..frameworks import frameworks_dir
    from ..package import audit, open_click
    from ..pkgfile import private_copy
    from ..sign import check_file_signature

    # One private snapshot: the bytes whose signature is checked are the bytes audited,
    # whatever happens to the file meanwhile.
    with private_copy(path) as f:
        check_file_signature(f, args.keyring, args.allow_unauthenticated)
        with open_click(f) as pkg:
            audit(pkg, frameworks_dir(args.frameworks_dir), args.force_missing_framework)
    return 0
