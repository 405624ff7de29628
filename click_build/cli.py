"""The ``click-build`` command line: the only place errors become exit codes.

Commands mirror the original ``click`` tool's names, arguments and output so
scripts written for it keep working; each lives in :mod:`click_build.commands`.
"""

from __future__ import annotations

import argparse
import functools
import os
import sys
from collections.abc import Sequence

from . import __version__, _console
from .errors import ClickError

TYPE_CHECKING = False  # not typing.TYPE_CHECKING: importing typing costs start-up time

if TYPE_CHECKING:
    from typing import Any, NoReturn

__all__ = ["ArgumentParser", "build_parser", "end_process", "main", "print_error", "public_commands",
           "run"]

PROG = "click-build"


class _HelpFormatter(argparse.HelpFormatter):
    """argparse's formatter, minus its ``import shutil`` on every add_argument()."""

    def __init__(self, prog: str, indent_increment: int = 2, max_help_position: int = 24,
                 width: int | None = None) -> None:
        super().__init__(prog, indent_increment, max_help_position, width or _terminal_width())


@functools.cache  # measured once per process
def _terminal_width() -> int:
    from .deb822 import whole_number  # str.isdigit() takes '²', which int() refuses

    columns = whole_number(os.environ.get("COLUMNS", ""))
    if columns is not None:
        return columns - 2
    try:
        return os.get_terminal_size(sys.stdout.fileno()).columns - 2
    except (OSError, ValueError):
        return 78


class ArgumentParser(argparse.ArgumentParser):
    """argparse with our one-line error format instead of usage + message."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        kwargs.setdefault("formatter_class", _HelpFormatter)
        super().__init__(*args, **kwargs)

    def parse_args(self, args: Sequence[str] | None = None,  # type: ignore[override]
                   namespace: argparse.Namespace | None = None) -> argparse.Namespace:
        """argparse's, but an unknown option is reported by its command's parser, with a
        guess (only the top-level parser is called this way: commands parse "known" args)."""
        parsed, extras = self.parse_known_args(args, namespace)
        if extras:
            self._unrecognized(parsed, extras)
        return parsed

    def _unrecognized(self, parsed: argparse.Namespace, extras: list[str]) -> NoReturn:
        import difflib

        target: argparse.ArgumentParser = self
        words = []  # the command (and sub-command) as typed
        while True:
            chosen = None
            for action in target._actions:
                if isinstance(action, argparse._SubParsersAction) and action.dest:
                    word = getattr(parsed, action.dest, None)
                    if isinstance(word, str) and word in action.choices:
                        chosen = action.choices[word]
                        words.append(word)
            if not isinstance(chosen, argparse.ArgumentParser):
                break
            target = chosen
        command = " ".join(words)
        own = {s for a in self._actions for s in a.option_strings}
        known = [s for a in target._actions for s in a.option_strings]
        options = [a.split("=", 1)[0] for a in extras if a.startswith("-") and a != "-"]
        notes = []
        for name in options:
            which = f"{name}: " if len(options) > 1 else ""
            if target is not self and name in own:
                notes.append(f"{which}an option of {PROG} itself goes before the command: "
                             f"{PROG} {name} {command} ...")
            else:
                close = difflib.get_close_matches(name, known, n=1, cutoff=0.75)
                if close:
                    notes.append(f"{which}did you mean {close[0]}?")
        target.error("; ".join([f"unrecognized arguments: {' '.join(extras)}", *notes]))

    def error(self, message: str) -> NoReturn:
        command = self.prog.removeprefix(PROG).strip()
        if not command:
            message = _unknown_command(self, message)
        hint = f" (see '{self.prog} --help')"
        where = f"{command}: " if command else ""
        sys.stderr.write(f"{PROG}: error: {where}{message}{hint}\n")
        raise SystemExit(2)


def public_commands(parser: argparse.ArgumentParser) -> list[str]:
    """The commands a user may type: the hidden ones (``_cmake``) left out."""
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            return [name for name in action.choices if not name.startswith("_")]
    return []


def _unknown_command(parser: argparse.ArgumentParser, message: str) -> str:
    """argparse's "invalid choice" line, minus the hidden commands, plus a guess."""
    import re

    m = re.match(r"argument COMMAND: invalid choice: (['\"]?)(.*?)\1 \(choose from", message)
    if m is None:
        return message
    typed, commands = m.group(2), public_commands(parser)
    import difflib

    close = difflib.get_close_matches(typed, commands, n=1)
    guess = f" (did you mean {close[0]!r}?)" if close else ""
    return f"unknown command {typed!r}{guess}; the commands are: {', '.join(commands)}"


def print_error(error: ClickError, where: str = "") -> None:
    """``error`` as ``click-build: error:`` lines, each naming ``where`` (a package
    file, when a command works through several) unless the line already does."""
    for line in error.lines():
        if where and not line.startswith(where):
            line = f"{where}: {line}"
        sys.stderr.write(f"{PROG}: error: {_one_line(line)}\n")


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


def build_parser(argv: Sequence[str] | None = None) -> ArgumentParser:
    """The parser; given ``argv``, only the command being run is fully registered."""
    from .commands import register_all, register_for

    parser = ArgumentParser(
        prog=PROG,
        description=(
            "Build, inspect, sign and install Click packages (.click), the app "
            "packages of Ubuntu Touch. Commands and options mirror the original "
            "'click' tool."
        ),
        epilog=f"Run '{PROG} COMMAND --help' for the options of one command.",
    )
    parser.add_argument("--version", action="version", version=f"{PROG} {__version__}")
    parser.add_argument(
        "-q", "--quiet", action="store_true", help="print nothing but errors and warnings"
    )
    parser.add_argument(
        "--cmake-dir", action="store_true",
        help="print the directory holding ClickBuildConfig.cmake and exit",
    )
    parser.add_argument(
        "--templates-dir", action="store_true",
        help="print the directory holding the app templates and exit",
    )
    subparsers = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=ArgumentParser)
    if argv is None:
        register_all(subparsers)
    else:
        register_for(argv, subparsers)
    return parser


def _print_dir(which: str) -> int:
    """Print where the data package ``click_build.<which>`` lives.

    Asked of the import system rather than derived from ``__file__``: a wheel
    holds ``click_build/cmake``, an editable install maps the package to the
    source tree's top-level ``cmake/`` (and ``templates/``).
    """
    from importlib.util import find_spec

    spec = find_spec(f"click_build.{which}")
    locations = list(spec.submodule_search_locations or []) if spec else []
    checkout = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    if os.path.isfile(os.path.join(checkout, "pyproject.toml")):
        locations.append(os.path.join(checkout, which))  # run from a source checkout
    for location in locations:
        if os.path.isdir(location):
            print(location)
            return 0
    sys.stderr.write(
        f"{PROG}: error: click_build.{which} is missing from this installation; "
        "reinstall click-build\n"
    )
    return 1


def _one_line(text: str) -> str:
    """An error stays one line whatever names it quotes: control characters escaped."""
    controls = [*range(0x20), *range(0x7F, 0xA0)]
    return text.translate({c: repr(chr(c))[1:-1] for c in controls})


def main(argv: Sequence[str] | None = None) -> int:
    if argv is None:
        argv = sys.argv[1:]
    parser = build_parser(argv)
    args = parser.parse_args(argv)
    verbose = bool(getattr(args, "verbose", False))
    _console.configure(quiet=args.quiet, verbose=verbose)
    if verbose:
        _console.setup_logging(verbose=True)
    if args.cmake_dir:
        return _print_dir("cmake")
    if args.templates_dir:
        return _print_dir("templates")
    if not args.command:
        parser.print_help()
        return 2
    try:
        status = int(args.func(args) or 0)
        sys.stdout.flush()  # here, so a reader that went away is seen now, not at exit
        return status
    except ClickError as e:
        print_error(e)
        return 1
    except BrokenPipeError:
        _die_of_sigpipe()
    except OSError as e:
        where = f"{e.filename}: " if e.filename else ""
        sys.stderr.write(f"{PROG}: error: {_one_line(f'{where}{e.strerror or e}')}\n")
        return 1
    except KeyboardInterrupt:
        sys.stderr.write(f"{PROG}: interrupted\n")
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
    """Run the command line on ``sys.argv`` and end the process (see :func:`end_process`);
    ``click_build.__main__.main`` calls it, after loading argparse untranslated."""
    for name in ("stdout", "stderr"):
        if getattr(sys, name) is None:  # started with the descriptor closed (cmd >&-)
            setattr(sys, name, open(os.devnull, "w", encoding="utf-8"))  # noqa: SIM115
    try:
        status = main()
    except SystemExit as e:  # argparse's --help, --version and usage errors
        if e.code is None or isinstance(e.code, int):
            status = e.code or 0
        else:  # a message: printed as Python prints it
            sys.stderr.write(f"{e.code}\n")
            status = 1
    end_process(status)


if __name__ == "__main__":  # pragma: no cover
    run()
