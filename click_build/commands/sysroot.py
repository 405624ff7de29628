"""``sysroot``: make, list and remove the phone's root file systems that cross builds use."""

from __future__ import annotations

import argparse

TYPE_CHECKING = False  # not typing.TYPE_CHECKING: importing typing costs start-up time

if TYPE_CHECKING:
    from ..sysroot import Profile, Stored

__all__ = ["register"]

_DEFAULT_FRAMEWORK = "ubuntu-touch-24.04-1.x"  # framework_table.DEFAULT_FRAMEWORK, unloaded

_EPILOG = """\
A phone runs arm64 (some armhf), so a compiled app (C++, Qt) must be built for it.
A sysroot is a copy of the phone's libraries and headers (Qt, Lomiri, glibc) on
this computer, made from the archives the phone's system comes from, without root,
Docker or changes to this system. Builds use it through a CMake toolchain file, or
python -m build and click-build build with a target's toolchain set to "sysroot".

examples:
  click-build sysroot create --arch arm64                    the default framework's root
  click-build sysroot create --arch arm64 --profile debian-12  Debian 12 in place of 24.04
  cmake -B build-arm64 -DCMAKE_TOOLCHAIN_FILE="$(click-build sysroot toolchain --arch arm64)"
  ctest --test-dir build-arm64                               the tests, run under qemu
  python -m build --wheel -C click-build.architecture=arm64 -C click-build.toolchains.arm64=sysroot
                                                             the same by the build backend
  click-build sysroot list                                   what is made, with sizes

Profiles: ubuntu-24.04 (ubuntu-touch-24.04-1.x, default) and ubuntu-20.04
(ubuntu-sdk-20.04, default) take Ubuntu's ports archive and the UBports
repository, as the phone has them; debian-12 is an approximate stand-in for
24.04 from Debian's archive. Mirrors: --mirror ARCHIVE=URL, or
CLICK_BUILD_MIRROR_DEBIAN, _UBUNTU_PORTS, _UBPORTS. Roots are kept in
~/.cache/click-build/sysroots (CLICK_BUILD_SYSROOT_CACHE names another folder).
[tool.click-build.sysroot] in pyproject.toml: profile, packages (more build
dependencies in the root), bundle (their libraries packed into the app).
The guide: docs/phone.md.
"""

_SUBCOMMANDS = "create, list, path, toolchain, update, remove"


def _which_root() -> argparse.ArgumentParser:
    from ..argparsing import ArgumentParser

    p = ArgumentParser(add_help=False)
    g = p.add_argument_group("which root")
    g.add_argument("--framework", metavar="FW", default=_DEFAULT_FRAMEWORK,
                   help=f"the framework the app is built for (default: {_DEFAULT_FRAMEWORK})")
    g.add_argument("--arch", metavar="ARCH", default="arm64",
                   help="the phone's architecture: arm64 or armhf (default: arm64)")
    g.add_argument("--profile", metavar="NAME",
                   help="ubuntu-24.04, ubuntu-20.04 or debian-12 (default: the framework's "
                        "own: ubuntu-24.04 or ubuntu-20.04)")
    g.add_argument("--package", metavar="PKG", action="append", default=[], dest="packages",
                   help="a further package the app builds against (repeatable); such a root "
                        "is another root")
    g.add_argument("--mirror", metavar="ARCHIVE=URL", action="append", default=[],
                   help="fetch ARCHIVE (debian, ubuntu-ports, ubports) from URL (repeatable)")
    return p


def register(subparsers: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    p = subparsers.add_parser(
        "sysroot", help="make the phone's libraries available for cross builds (arm64, armhf)",
        description="Make, list and remove sysroots: the phone's libraries and headers for "
                    "one framework and architecture, which cross builds compile and link "
                    "against, and a CMake toolchain file for each.",
        epilog=_EPILOG, formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    sub = p.add_subparsers(dest="sysroot_command", metavar="SUBCOMMAND")
    which = [_which_root()]
    s = sub.add_parser(
        "create", parents=which, help="download and unpack a root (once; later calls reuse it)",
        description="Make the root of FRAMEWORK on ARCH: read the archives' signed indexes, "
                    "download the packages a build needs (Qt, Lomiri, the C and C++ "
                    "libraries: a few hundred MB, about a minute) and unpack them into "
                    "~/.cache/click-build/sysroots. Prints the root's folder. A root that "
                    "exists is reused as it is (see 'update').")
    s.add_argument("--method", choices=("auto", "apt", "builtin"), default="auto",
                   help="apt: this system's apt-get resolves and downloads (it changes "
                        "nothing here); builtin: click-build does it itself; auto: apt where "
                        "there is one")
    s.set_defaults(func=run_sysroot)
    s = sub.add_parser("list", help="list the roots made, with their sizes",
                       description="One line per root: profile, framework, architecture, "
                                   "size on disk, packages and folder.")
    s.set_defaults(func=run_sysroot)
    s = sub.add_parser("path", parents=which, help="print a root's folder",
                       description="Print the folder of the root of FRAMEWORK on ARCH "
                                   "(made with 'create'), for tools that take a sysroot.")
    s.set_defaults(func=run_sysroot)
    s = sub.add_parser(
        "toolchain", parents=which, help="print the path of a root's CMake toolchain file",
        description="Write the CMake toolchain file of the root of FRAMEWORK on ARCH and "
                    "print its path: cmake -B build -DCMAKE_TOOLCHAIN_FILE=PATH builds "
                    "against the root with the cross compiler, the phone's Qt and "
                    "pkg-config, and runs tests under qemu (ctest).")
    s.add_argument("--compiler", choices=("auto", "gcc", "clang"), default="auto",
                   help="gcc: the cross gcc; clang: clang and lld; auto: gcc when its C "
                        "library is the root's release, else clang")
    s.set_defaults(func=run_sysroot)
    s = sub.add_parser("update", parents=which,
                       help="make a root again from the archives' current packages",
                       description="Make the root of FRAMEWORK on ARCH again with the "
                                   "current packages; builds using the old one finish first.")
    s.add_argument("--method", choices=("auto", "apt", "builtin"), default="auto",
                   help="as for create")
    s.set_defaults(func=run_sysroot)
    s = sub.add_parser("remove", parents=which, help="delete a root",
                       description="Delete the root of FRAMEWORK on ARCH (after the builds "
                                   "using it finish). The downloaded packages stay in "
                                   "~/.cache/click-build/sysroots/debs; --all removes every "
                                   "root and them.")
    s.add_argument("--all", action="store_true", help="remove every root and the downloads")
    s.set_defaults(func=run_sysroot)
    p.set_defaults(func=run_sysroot)


def _mirrors(pairs: list[str]) -> dict[str, str]:
    from ..errors import ConfigError
    from ..sysroot.profiles import ARCHIVES

    mirrors = {}
    for pair in pairs:
        name, eq, url = pair.partition("=")
        if not eq or name not in ARCHIVES:
            raise ConfigError(f"--mirror {pair!r}: give ARCHIVE=URL, ARCHIVE one of "
                              f"{', '.join(ARCHIVES)}")
        mirrors[name] = url
    return mirrors


def _profile(args: argparse.Namespace) -> Profile:
    from ..sysroot import profile_for

    return profile_for(args.framework, args.arch, args.profile, tuple(args.packages))


def _stored(args: argparse.Namespace) -> Stored:
    from ..errors import SysrootError
    from ..sysroot import find

    profile = _profile(args)
    stored = find(profile, _mirrors(args.mirror))
    if stored is None:
        flags = f"--framework {args.framework} --arch {args.arch}"
        if args.profile:
            flags += f" --profile {args.profile}"
        flags += "".join(f" --package {p}" for p in args.packages)
        flags += "".join(f" --mirror {m}" for m in args.mirror)
        raise SysrootError(f"there is no {profile.label} root yet; make it with: "
                           f"click-build sysroot create {flags}")
    return stored


def _list() -> int:
    from ..sysroot import cache_home, stored_roots

    roots = stored_roots(cache_home())
    if not roots:
        print(f"no sysroots in {cache_home()} (make one: click-build sysroot create --arch arm64)")
        return 0
    rows = [("PROFILE", "FRAMEWORK", "ARCH", "SIZE", "PACKAGES", "FOLDER")]
    for s in roots:
        size = s.meta.get("size")
        installed = s.meta.get("installed")
        rows.append((s.get("profile") + ("*" if s.get("approximate") else ""),
                     s.get("framework"), s.get("arch"),
                     f"{size / 1e6:.0f} MB" if isinstance(size, int) else "?",
                     str(len(installed)) if isinstance(installed, list) else "?",
                     str(s.root)))
    widths = [13, 23, 6, 8, 9]  # fixed, so the header reads the same every time
    for row in rows:
        print("  ".join(c.ljust(w) for c, w in zip(row, widths)) + "  " + row[-1])
    if any(s.get("approximate") for s in roots):
        print("* approximate: a stand-in for the phone's system (see 'click-build sysroot "
              "--help')")
    return 0


def _remove(args: argparse.Namespace) -> int:
    import shutil

    from .. import _console
    from ..sysroot import cache_home, remove, stored_roots

    if not args.all:
        stored = _stored(args)
        remove(stored)
        _console.note(f"Removed {stored.get('label')}: {stored.folder}")
        return 0
    cache = cache_home()
    for stored in stored_roots(cache):
        remove(stored, cache)
        _console.note(f"Removed {stored.get('label')}: {stored.folder}")
    shutil.rmtree(cache / "debs", ignore_errors=True)
    return 0


def run_sysroot(args: argparse.Namespace) -> int:
    from ..errors import ConfigError

    command = getattr(args, "sysroot_command", None)
    if command is None:
        raise ConfigError(f"sysroot: need a subcommand ({_SUBCOMMANDS}); see "
                          "'click-build sysroot --help'")
    if command == "list":
        return _list()
    if command == "remove":
        return _remove(args)
    from ..sysroot import create, toolchain_for

    if command in ("create", "update"):
        stored = create(_profile(args), _mirrors(args.mirror), method=args.method,
                        update=command == "update")
        print(stored.root)
    elif command == "path":
        print(_stored(args).root)
    else:
        print(toolchain_for(_stored(args), args.compiler))
    return 0
