"""``run``: build a project (or take a .click), install it privately and start the app."""

from __future__ import annotations

import argparse

__all__ = ["register"]

_EPILOG = """\
examples:
  click-build run                          build ./, install, start the app
  click-build run --watch                  ... and again at every saved change
  click-build run --lang de --dark-mode    in German, with the dark theme
  click-build run --form-factor phone      a phone's screen and grid unit
  click-build run tea-timer --timeout 5    stop it after 5 s (exit 0 if it ran)
  click-build run dist/app_1.0_all.click   start an app from a package file
  click-build run . --print-env            the command and environment, not run
  click-build run . -- --foo               pass --foo to the app (fills %U/%u)
  click-build run --arch arm64             build for arm64, start it under qemu

ARGS after '--' go to the app: they replace %U/%F (or %u/%f) in Exec, or are
added at its end.

--arch ARCH runs the app as the phone's processor runs it (arm64 or armhf), on
this computer, under qemu-ARCH-static (Debian package qemu-user-static), with the
phone's libraries from a sysroot of the app's framework ('click-build sysroot
create --arch ARCH' makes one; a QML app needs one made with '--package
qmlscene'). A project is built for ARCH first (a compiled app against that
sysroot). It draws with software OpenGL on X11: a desktop, or xvfb-run -a.

The app runs as Ubuntu Touch's launcher starts it: APP_ID=NAME_APP_VERSION,
in its installed folder, with the package's lib/<triplet> folders first on
PATH, LD_LIBRARY_PATH and QML2_IMPORT_PATH and its XDG_*_HOME folders under
the private root. The guide: docs/run.md.
"""


def register(subparsers: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    p = subparsers.add_parser(
        "run", help="build an app, install it privately and start it on this computer",
        usage="%(prog)s [options] [PACKAGE.click|PROJECT-DIR] [-- ARGS...]",
        description=(
            "Build the project in PROJECT-DIR (or take PACKAGE.click), install it into a\n"
            "private database (PROJECT-DIR/build/click-run, or ~/.cache/click-build/run\n"
            "for a package file) and start the app the way the Ubuntu Touch launcher\n"
            "does. The app's output and exit status are passed on."
        ),
        epilog=_EPILOG, formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument("target", metavar="PACKAGE.click|PROJECT-DIR", nargs="?", default=".",
                   help="an app project folder (default: .) or a .click file")
    p.add_argument("--app", metavar="APP", help="which app of the package to start "
                   "(needed when it has several)")
    p.add_argument("--root", metavar="DIR",
                   help="keep the private database and the app's data folders in DIR")
    p.add_argument("--env", metavar="K=V", action="append", default=[],
                   help="set an environment variable for the app (repeatable)")
    p.add_argument("--print-env", action="store_true",
                   help="print the environment and the command as a shell script; do not run")
    p.add_argument("--timeout", metavar="SECONDS", type=_seconds,
                   help="stop the app (its whole process group) after SECONDS")
    p.add_argument("--arch", metavar="ARCH",
                   help="the phone's architecture (arm64, armhf): build for it and start "
                        "the app under qemu with a sysroot of its framework (see below)")
    p.add_argument("--watch", action="store_true",
                   help="keep running: at every saved change of the project, build, install "
                        "and restart the app (HTML pages served in a browser load again); "
                        "one line per change; Ctrl-C stops")
    look = p.add_argument_group("the phone's look")
    look.add_argument("--lang", metavar="LANG", type=_lang,
                      help="the app's language, as on a phone set to it: LANGUAGE=LANG for "
                           "its translations (po/LANG.po), LANG and LC_ALL a UTF-8 locale")
    look.add_argument("--dark-mode", action="store_true",
                      help="the system's dark theme (Lomiri's SuruDark), as the phone's "
                           "settings set it; without it, the default Ambiance")
    look.add_argument("--form-factor", choices=sorted(_form_factors()), metavar="KIND",
                      help="a device's screen and grid unit: " + "; ".join(
                          f"{k}: {v}" for k, v in sorted(_form_factors().items())))
    look.add_argument("--grid-unit", metavar="PX", type=_grid_unit,
                      help="with --form-factor: PX pixels per grid unit instead of the "
                           "device's (the window keeps the device's size in grid units: "
                           "8 fits a phone on most screens)")
    p.set_defaults(func=run_run, app_args=[])
    _arguments_after_dashes(p)


def _arguments_after_dashes(parser: argparse.ArgumentParser) -> None:
    """Everything after ``--`` is for the app, wherever the options are.

    (An argparse positional with ``nargs="*"`` is consumed before later options,
    so ``run DIR --env X -- ARGS`` would leave ARGS unrecognised.)
    """
    parse = parser.parse_known_args

    def parse_known_args(args: list[str] | None = None, namespace: argparse.Namespace | None = None,
                         ) -> tuple[argparse.Namespace, list[str]]:
        words = list(args or [])
        rest: list[str] = []
        if "--" in words:
            cut = words.index("--")
            words, rest = words[:cut], words[cut + 1:]
        known, extras = parse(words, namespace)
        known.app_args = rest
        return known, extras

    setattr(parser, "parse_known_args", parse_known_args)  # noqa: B010


def _seconds(value: str) -> float:
    try:
        seconds = float(value)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{value!r} is not a number of seconds") from None
    if not seconds > 0 or seconds == float("inf"):
        raise argparse.ArgumentTypeError(f"{value!r}: give a positive number of seconds")
    return seconds


def _form_factors() -> dict[str, object]:
    from ..run.look import FORM_FACTORS

    return dict(FORM_FACTORS)


def _lang(value: str) -> str:
    from ..errors import ConfigError
    from ..run.look import parse_lang

    try:
        return parse_lang(value)
    except ConfigError as e:
        raise argparse.ArgumentTypeError(str(e).removeprefix(f"--lang {value!r}: ")) from None


def _grid_unit(value: str) -> float:
    seconds = _seconds(value)  # a positive, finite number
    if seconds > 100:
        raise argparse.ArgumentTypeError(f"{value!r}: give pixels per grid unit, e.g. 8 to 30")
    return seconds


def run_run(args: argparse.Namespace) -> int:
    import sys

    from .. import _console
    from ..errors import ConfigError
    from ..run import Look, parse_env_pairs, prepare, render_shell, start

    env = parse_env_pairs(args.env)
    look = Look(args.lang, args.dark_mode, args.form_factor, args.grid_unit)
    if args.watch:
        if args.print_env:
            raise ConfigError("--watch runs the app again at every change; --print-env prints "
                              "how to start it once: give one of them")
        from ..run.loop import watch

        return watch(args.target, args.root, args.app, args.app_args, env, look, args.timeout,
                     args.arch)
    if args.print_env:
        _console.configure(quiet=True)  # stdout is the script
    prepared = prepare(args.target, args.root, args.app, args.app_args, env, look, args.arch)
    if args.print_env:
        sys.stdout.write(render_shell(prepared.plan))
        return 0
    return start(prepared, args.timeout)
