"""The ``click-build`` command line: the only place errors become exit codes.

Commands mirror the original ``click`` tool's names, arguments and output so
scripts written for it keep working; each lives in :mod:`click_build.commands`.
argparse reads every command line (:mod:`click_build.argparsing`) but the plain
ones of ``install``, which :mod:`click_build.commands.shortcut` reads without
loading it.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Sequence

from . import _console
from .errors import ClickError

TYPE_CHECKING = False  # not typing.TYPE_CHECKING: importing typing costs start-up time

if TYPE_CHECKING:
    from argparse import Namespace
    from types import SimpleNamespace
    from typing import NoReturn

__all__ = ["end_process", "main", "run", "untranslated_argparse"]


def _die_of_sigpipe() -> NoReturn:
    """End as a Unix tool ends when its reader goes away (``contents | head``):
    quietly, killed by SIGPIPE (status 141 in a shell), with nothing left to flush."""
    import signal

    try:
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
    except OSError:
        pass
    signal.signal(signal.SIGPIPE, signal.SIG_DFL)
    os.kill(os.getpid(), signal.SIGPIPE)
    raise SystemExit(128 + signal.SIGPIPE)  # pragma: no cover - not reached


def _print_dir(which: str) -> int:
    """Print where the data package ``click_build.<which>`` lives."""
    from .resources import data_dir

    location = data_dir(which)
    if location is not None:
        print(location)
        return 0
    _console.error(f"click_build.{which} is missing from this installation; reinstall "
                   "click-build")
    return 1


def _untranslated(message: str) -> str:
    return message


def _untranslated_plural(singular: str, plural: str, n: int) -> str:
    return singular if n == 1 else plural


def untranslated_argparse() -> None:
    """Load argparse with its few fixed strings ("usage: ", "options") in English.

    argparse passes them through gettext, which imports ``locale`` and searches the
    locale folders for a catalogue on every call, and importing gettext at all
    compiles its plural-forms regex: together 2.5 ms of a trivial command, for words
    no Debian or Ubuntu package translates.  Our messages are English, so argparse's
    stay English too.  Only this process's own entry point does this (:func:`run`):
    importers of the library keep theirs, and a later ``import gettext`` loads the
    real module.
    """
    if "argparse" not in sys.modules and "gettext" not in sys.modules:
        stand_in = type(sys)("gettext")
        stand_in.gettext = _untranslated  # type: ignore[attr-defined]
        stand_in.ngettext = _untranslated_plural  # type: ignore[attr-defined]
        sys.modules["gettext"] = stand_in  # argparse does `from gettext import ...`
        try:
            import argparse  # noqa: F401
        finally:
            del sys.modules["gettext"]
    import argparse

    argparse._ = _untranslated  # type: ignore[attr-defined]
    argparse.ngettext = _untranslated_plural  # type: ignore[attr-defined]


def parse(argv: Sequence[str], entry_point: bool = False) -> Namespace | SimpleNamespace:
    """The command line as the command's function takes it.

    A plain ``install`` line is read by the shortcut; every other line by
    argparse, which the process's entry point loads untranslated.
    """
    if argv and argv[0] == "install":  # the one command with a shortcut
        from .commands.shortcut import parse_plain

        args = parse_plain(argv)
        if args is not None:
            return args
    if entry_point:
        untranslated_argparse()
    from .argparsing import build_parser

    parser = build_parser(argv)
    parsed = parser.parse_args(argv)
    if not parsed.command:  # nothing to run (``click-build -q``): the help, and status 2

        def print_help(_args: object) -> int:
            parser.print_help()
            return 2

        parsed.func = print_help
    return parsed


def main(argv: Sequence[str] | None = None, entry_point: bool = False) -> int:
    if argv is None:
        argv = sys.argv[1:]
    args = parse(argv, entry_point)
    verbose = bool(getattr(args, "verbose", False))
    _console.configure(quiet=args.quiet, verbose=verbose)
    if verbose:
        _console.setup_logging(verbose=True)
    if args.cmake_dir:
        return _print_dir("cmake")
    if args.templates_dir:
        return _print_dir("templates")
    try:
        status = int(args.func(args) or 0)
        sys.stdout.flush()  # here, so a reader that went away is seen now, not at exit
        return status
    except ClickError as e:
        _console.print_error(e)
        return 1
    except BrokenPipeError:
        _die_of_sigpipe()
    except OSError as e:
        _console.print_os_error(e)
        return 1
    except KeyboardInterrupt:
        sys.stderr.write(f"{_console.PROG}: interrupted\n")
        return 130


def end_process(status: int) -> NoReturn:
    """End the process with ``status`` once its output is flushed, skipping the
    interpreter's teardown: freeing every object of a short-lived command costs
    several milliseconds (a sixth of a trivial install).  Every file the command
    opened is closed by then and no thread it started still works; nothing is
    registered with :mod:`atexit`."""
    try:
        sys.stdout.flush()
    except BrokenPipeError:
        _die_of_sigpipe()
    except (OSError, ValueError):
        status = status or 1  # standard output is broken or closed: say so in the status
    try:
        sys.stderr.flush()
    except (OSError, ValueError):
        pass
    os._exit(status)


def run() -> NoReturn:
    """Run the command line on ``sys.argv`` and end the process (see :func:`end_process`):
    the process's entry point (``click_build.__main__.main`` calls it)."""
    for name in ("stdout", "stderr"):
        if getattr(sys, name) is None:  # started with the descriptor closed (cmd >&-)
            setattr(sys, name, open(os.devnull, "w", encoding="utf-8"))  # noqa: SIM115
    try:
        status = main(entry_point=True)
    except SystemExit as e:  # argparse's --help, --version and usage errors
        if e.code is None or isinstance(e.code, int):
            status = e.code or 0
        else:  # a message: printed as Python prints it
            sys.stderr.write(f"{e.code}\n")
            status = 1
    end_process(status)


if __name__ == "__main__":  # pragma: no cover
    run()
