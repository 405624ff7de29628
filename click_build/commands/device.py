"""``device``: install, list, launch, follow logs and open a shell on a phone (ssh or adb)."""

from __future__ import annotations

import argparse

TYPE_CHECKING = False  # not typing.TYPE_CHECKING: importing typing costs start-up time

if TYPE_CHECKING:
    from ..device import Device
    from ..device.remote import AppRef

__all__ = ["register"]

_EPILOG = """\
examples (need a phone):
  click-build device install --ssh phablet@192.168.1.20 dist/app_1.0_all.click
  click-build device list --adb
  click-build device launch tea-timer.jane
  click-build device logs tea-timer.jane_tea-timer_1.0.0
  click-build device run                   build for the phone, install, start, follow the log

The phone: --ssh USER@HOST[:PORT] (your ssh keys and ~/.ssh/config), --adb [SERIAL]
(USB, Developer mode on), else $CLICK_BUILD_DEVICE (ssh:USER@HOST[:PORT], adb or
adb:SERIAL), else the one phone adb sees. The guide: docs/run.md.
"""

_SUBCOMMANDS = "install, list, launch, logs, shell, run"


def _device_options() -> argparse.ArgumentParser:
    from ..argparsing import ArgumentParser

    p = ArgumentParser(add_help=False)
    g = p.add_argument_group("which phone")
    g.add_argument("--ssh", metavar="USER@HOST[:PORT]",
                   help="reach the phone over ssh with your keys and ssh config")
    g.add_argument("--adb", metavar="SERIAL", nargs="?", const="",
                   help="reach the phone over adb (USB); SERIAL when several are attached")
    g.add_argument("--ssh-config", metavar="FILE",
                   help="read FILE instead of ~/.ssh/config (ssh -F)")
    g.add_argument("--connect-timeout", metavar="SECONDS", type=float, default=10.0,
                   help="give up connecting after SECONDS (default: 10)")
    return p


def register(subparsers: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    p = subparsers.add_parser(
        "device", help="install, start and watch an app on a phone (ssh or adb)",
        description="Work with an Ubuntu Touch phone reached over ssh or adb: install a "
                    "package, list what is installed, start an app, follow its log, open a "
                    "shell, or all of it at once for a project (device run).",
        epilog=_EPILOG, formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    sub = p.add_subparsers(dest="device_command", metavar="SUBCOMMAND")
    common = [_device_options()]
    s = sub.add_parser("install", parents=common, help="copy a .click to the phone and install it",
                       description="Copy PACKAGE.click to the phone and install it for the "
                       "account you log in with: 'pkcon install-local --allow-untrusted' where "
                       "PackageKit has its click plugin, else 'click install --user=USER "
                       "--allow-unauthenticated'.")
    s.add_argument("package", metavar="PACKAGE.click", nargs="?")
    s.add_argument("--root", metavar="DIR",
                   help="on the phone, install into the Click database DIR (click install --root)")
    s.set_defaults(func=run_device)
    s = sub.add_parser("list", parents=common, help="list the packages installed on the phone",
                       description="Print 'NAME<TAB>VERSION' for each package registered for "
                       "the account on the phone ('click list').")
    s.add_argument("--root", metavar="DIR", help="also list the Click database DIR on the phone")
    s.set_defaults(func=run_device)
    s = sub.add_parser("launch", parents=common, help="start an installed app on the phone",
                       description="Start APP_ID with lomiri-app-launch or ubuntu-app-launch. "
                       "APP_ID is NAME_APP_VERSION, NAME_APP or NAME (with one app).")
    s.add_argument("app_id", metavar="APP_ID", nargs="?")
    _root_lookup(s)
    s.set_defaults(func=run_device)
    s = sub.add_parser("logs", parents=common, help="follow an app's log on the phone",
                       description="Print the last lines of APP_ID's log and follow it until "
                       "Ctrl-C: the launcher's log file, else the user journal.")
    s.add_argument("app_id", metavar="APP_ID", nargs="?")
    s.add_argument("--no-follow", action="store_true", help="print the log and stop")
    _root_lookup(s)
    s.set_defaults(func=run_device)
    s = sub.add_parser("shell", parents=common, help="open a shell on the phone",
                       description="An interactive shell on the phone (ssh or adb shell).")
    s.set_defaults(func=run_device)
    s = sub.add_parser("run", parents=common,
                       help="build for the phone, install, start and follow the log",
                       description="Ask the phone for its architecture and frameworks (dpkg "
                       "--print-architecture, click framework list), build PROJECT-DIR for "
                       "them (a compiled app against the sysroot of its framework on that "
                       "architecture, made once when missing), install the package, "
                       "start the app and follow its log until Ctrl-C. A project for a "
                       "framework the phone lacks is refused before anything is built.")
    s.add_argument("project", metavar="PROJECT-DIR", nargs="?", default=".")
    s.add_argument("--app", metavar="APP", help="which app of the package to start")
    s.add_argument("--no-follow", action="store_true", help="do not follow the log")
    s.add_argument("--root", metavar="DIR",
                   help="on the phone, install into the Click database DIR (click install --root)")
    s.set_defaults(func=run_device)
    p.set_defaults(func=run_device)


def _root_lookup(p: argparse.ArgumentParser) -> None:
    p.add_argument("--root", metavar="DIR",
                   help="also look APP_ID up in the Click database DIR on the phone")


def run_device(args: argparse.Namespace) -> int:
    from ..device.choose import choose_device
    from ..errors import ConfigError

    command = getattr(args, "device_command", None)
    if command is None:
        raise ConfigError(f"device: need a subcommand ({_SUBCOMMANDS})")
    if not args.connect_timeout > 0:
        raise ConfigError("device: --connect-timeout must be a positive number of seconds")
    _after_bare_adb(args)
    device = choose_device(args.ssh, args.adb, args.ssh_config, args.connect_timeout)
    return int(_ACTIONS[command](device, args))


#: The argument each subcommand needs, for the message when it is missing.
_NEEDS = {"install": ("package", "PACKAGE.click"), "launch": ("app_id", "APP_ID"),
          "logs": ("app_id", "APP_ID")}


def _after_bare_adb(args: argparse.Namespace) -> None:
    """``--adb`` takes an optional SERIAL, so in ``device logs --adb APP_ID`` argparse
    takes APP_ID for the serial: give it back to the subcommand."""
    from ..errors import ConfigError
    from ..run.project import is_project

    command = args.device_command
    if command in _NEEDS:
        dest, metavar = _NEEDS[command]
        if getattr(args, dest) is None:
            if not args.adb:
                raise ConfigError(f"device {command}: need {metavar} "
                                  f"(see 'click-build device {command} --help')")
            setattr(args, dest, args.adb)
            args.adb = ""
    elif command == "run" and args.adb and args.project == "." and is_project(args.adb):
        args.project, args.adb = args.adb, ""


def _install(device: Device, args: argparse.Namespace) -> int:
    import os

    from .. import _console
    from ..device import remote
    from ..errors import DeviceError
    from ..package import open_click

    if not os.path.isfile(args.package):
        raise DeviceError(f"{args.package}: no such package file")
    with open_click(args.package) as pkg:
        name, version = pkg.name, pkg.version
    route = remote.install(device, args.package, args.root)
    _console.info(f"Installed {name} {version} on {device.label} ({route})")
    return 0


def _list(device: Device, args: argparse.Namespace) -> int:
    import sys

    from ..device import remote

    sys.stdout.write(remote.list_packages(device, args.root))
    return 0


def _launch(device: Device, args: argparse.Namespace) -> int:
    from .. import _console
    from ..device import remote

    app = remote.resolve_app(device, args.app_id, args.root)
    launcher = remote.launch(device, app)
    _console.info(f"Started {app} on {device.label} ({launcher})")
    return 0


def _follow(device: Device, app: AppRef, follow: bool) -> int:
    from ..device import remote

    return remote.logs(device, app, follow)


def _logs(device: Device, args: argparse.Namespace) -> int:
    from ..device import remote

    return _follow(device, remote.resolve_app(device, args.app_id, args.root), not args.no_follow)


def _shell(device: Device, args: argparse.Namespace) -> int:
    return device.shell()


def _run(device: Device, args: argparse.Namespace) -> int:
    import os

    from .. import _console
    from ..device import remote
    from ..device.fit import build_settings
    from ..errors import DeviceError, SysrootError
    from ..package import open_click
    from ..run.apps import choose_app, desktop_apps
    from ..run.project import build_for_arch, is_project, plan_project
    from ..run.state import walk_folders

    if not is_project(args.project):
        raise DeviceError(f"{args.project}: not an app project (no pyproject.toml or "
                          "manifest.json)")
    # build/ may be the project's (a clone): no link there is followed (run/state.py)
    outdir = walk_folders(os.path.abspath(args.project), ("build", "click-device"))
    phone = remote.phone_facts(device)
    _console.info(f"* {device.label} is {phone.arch}"
                  + (f" with {', '.join(phone.frameworks)}" if phone.frameworks else ""))
    config = build_settings(plan_project(args.project), phone, device.label)
    try:
        package = os.fspath(build_for_arch(args.project, outdir, phone.arch, config))
    except SysrootError as e:  # before anything is compiled: no root for the phone
        raise DeviceError(f"cannot build for {device.label}: {e}") from None
    with open_click(package) as pkg:
        name, version, manifest = pkg.name, pkg.version, pkg.manifest_data
    route = remote.install(device, package, args.root)
    _console.info(f"* Installed {name} {version} on {device.label} ({route})")
    app = remote.AppRef(name, choose_app(desktop_apps(manifest), name, args.app, DeviceError),
                        version)
    launcher = remote.launch(device, app)
    _console.info(f"* Started {app} ({launcher})")
    if args.no_follow:
        return 0
    _console.info(f"* Log of {app} (Ctrl-C stops):")
    return _follow(device, app, True)


_ACTIONS = {"install": _install, "list": _list, "launch": _launch, "logs": _logs,
            "shell": _shell, "run": _run}
