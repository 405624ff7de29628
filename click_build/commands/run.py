"""``run``: build a project (or take a .click), install it privately and start the app."""

from __future__ import annotations

import argparse

__all__ = ["register"]

_EPILOG = """\
examples:
  click-build run                          build ./, install, start the app
  click-build run tea-timer --timeout 5    stop it after 5 s (exit 0 if it ran)
  click-build run dist/app_1.0_all.click   start an app from a package file
  click-build run . --print-env            the command and environment, not run
  click-build run . -- --foo               pass --foo to the app (fills %U/%u)

ARGS after '--' go to the app: they replace %U/%F (or %u/%f) in Exec, or are
added at its end.

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


def run_run(args: argparse.Namespace) -> int:
    import sys

    from .. import _console
    from ..run import parse_env_pairs, prepare, render_shell, start

    env = parse_env_pairs(args.env)
    if args.print_env:
        _console.configure(quiet=True)  # stdout is the script
    prepared = prepare(args.target, args.root, args.app, args.app_args, env)
    if args.print_env:
        sys.stdout.write(render_shell(prepared.plan))
        return 0
    return start(prepared, args.timeout)
