"""One module per group of commands; each has ``register(subparsers)``.

Modules import their heavy dependencies inside their run functions, and the
CLI imports only the module of the command being run (``COMMANDS`` says which),
so starting a command costs argparse and that module alone.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

TYPE_CHECKING = False  # not typing.TYPE_CHECKING: importing typing costs start-up time

if TYPE_CHECKING:
    import argparse
    from typing import Any


__all__ = ["COMMANDS", "MODULES", "register_all", "register_for"]

#: Order here is the order of ``click-build --help``.
MODULES = ("build", "inspect", "install", "new", "import_clickable", "run", "device", "sysroot",
           "sign", "review", "cmake_helper", "merge", "completion", "i18n")

#: Command name -> the module that registers it.
COMMANDS = {
    "build": "build", "buildsource": "build",
    "info": "inspect", "contents": "inspect", "verify": "inspect",
    "install": "install", "list": "install", "pkgdir": "install", "register": "install",
    "unregister": "install", "gc": "install", "hook": "install", "framework": "install",
    "new": "new", "sign": "sign", "review": "review", "_cmake": "cmake_helper",
    "merge": "merge", "completion": "completion", "run": "run", "device": "device",
    "i18n": "i18n", "sysroot": "sysroot", "import-clickable": "import_clickable",
}


def _register(module: str, subparsers: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    # __import__ returns the module itself when given a fromlist; importlib would be
    # one more module on every command's start-up
    __import__(f"{__name__}.{module}", fromlist=["register"]).register(subparsers)


def register_all(subparsers: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    for name in MODULES:
        _register(name, subparsers)


class _Discarded:
    """Accepts any parser-building call and keeps nothing."""

    def __getattr__(self, name: str) -> Callable[..., _Discarded]:
        return lambda *args, **kwargs: self


class _OneCommand:
    """The subparsers action as a module sees it when one of its commands runs.

    Only that command gets a real parser: argparse parsers cost a few hundred
    microseconds each (gettext lookups included), which adds up in start-up.
    """

    def __init__(self, subparsers: argparse._SubParsersAction, command: str) -> None:  # type: ignore[type-arg]
        self._subparsers = subparsers
        self._command = command

    def add_parser(self, name: str, **kwargs: Any) -> Any:
        if name == self._command:
            return self._subparsers.add_parser(name, **kwargs)
        return _Discarded()


def register_for(argv: Sequence[str], subparsers: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    """Register only the command named in ``argv``.

    Without a known command (``--help``, a typo) every module registers, so
    help and "invalid choice" messages are complete.
    """
    command = next((a for a in argv if not a.startswith("-")), None)
    if command in COMMANDS:
        _register(COMMANDS[command], _OneCommand(subparsers, command))  # type: ignore[arg-type]
    else:
        register_all(subparsers)
