"""The process entry point: ``click-build`` (its console script calls :func:`main`)
and ``python -m click_build``."""

from __future__ import annotations

import sys

TYPE_CHECKING = False  # not typing.TYPE_CHECKING: importing typing costs start-up time

if TYPE_CHECKING:
    from typing import NoReturn


def _untranslated(message: str) -> str:
    return message


def _untranslated_plural(singular: str, plural: str, n: int) -> str:
    return singular if n == 1 else plural


def untranslated_argparse() -> None:
    """Load argparse with its few fixed strings ("usage: ", "options") in English.

    argparse passes them through gettext, which imports ``locale`` and searches the
    locale folders for a catalogue on every call, and importing gettext at all
    compiles its plural-forms regex: together 2.5 ms of a trivial install, for words
    no Debian or Ubuntu package translates.  Our messages are English, so argparse's
    stay English too.  Only this process's own entry point does this: importers of
    the library keep theirs, and a later ``import gettext`` loads the real module.
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


def main() -> NoReturn:
    untranslated_argparse()
    from .cli import run

    run()


if __name__ == "__main__":
    main()
