"""The argparse half of the command line: our parser class, its one-line errors and
the parser of every command.

Kept out of :mod:`click_build.cli` so a command line that the install shortcut
reads (:mod:`click_build.commands.shortcut`) never loads argparse at all.
"""

from __future__ import annotations

import argparse
import functools
import os
import sys
from collections.abc import Sequence

from . import __version__
from ._console import PROG, error_line

TYPE_CHECKING = False  # not typing.TYPE_CHECKING: importing typing costs start-up time

if TYPE_CHECKING:
    from typing import Any, NoReturn

__all__ = ["ArgumentParser", "build_parser", "public_commands"]


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
        sys.stderr.write(error_line(f"{where}{message}{hint}") + "\n")
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
