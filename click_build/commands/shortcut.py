"""The install shortcut: a plain ``install`` command line, read without argparse.

Loading argparse and building its parsers is start-up time a trivial install
need not spend (issue 15: it is mostly start-up).  Scripts and app stores spell their install lines
out in full (``install --user=phablet --allow-unauthenticated FILE``), and
such a line means one thing whatever parser reads it.  So this reads only lines
made of ``install``, then whole option names from :data:`OPTIONS` (with their
values, after ``=`` or as the next word) and one run of package files; it gives
up (returns None) on anything else, and argparse reads that line as always:
abbreviations, ``-q``, ``--``, ``--help``, a value that starts with ``-``, an
unknown option and every error are argparse's.

``tests/test_cli_shortcut.py`` checks that every line read here gives what
argparse gives for it, and that :data:`OPTIONS` is what ``install`` registers.
"""

from __future__ import annotations

from collections.abc import Sequence
from types import SimpleNamespace

__all__ = ["FLAG", "LIST", "OPTIONS", "VALUE", "parse_plain"]

FLAG, VALUE, LIST = "flag", "value", "list"  # store_true, store (one value), append

#: ``install``'s options, by kind: the ones its argparse parser registers
#: (``commands/install.py``).
OPTIONS = {
    "--root": VALUE, "--databases-dir": VALUE, "--user": VALUE, "--hooks-dir": VALUE,
    "--frameworks-dir": VALUE, "--keyring": LIST, "--all-users": FLAG,
    "--force-missing-framework": FLAG, "--allow-unauthenticated": FLAG, "--verbose": FLAG,
}

#: What argparse's top-level parser sets on every line (``argparsing.build_parser``).
_TOP_LEVEL = {"quiet": False, "cmake_dir": False, "templates_dir": False}


def parse_plain(argv: Sequence[str]) -> SimpleNamespace | None:
    """``argv`` as argparse would read it, if it is a plain ``install`` line; else None."""
    if not argv or argv[0] != "install":
        return None
    found: dict[str, object] = {}
    packages: list[str] = []
    wanted: str | None = None  # an option waiting for its value
    run_ended = False  # argparse takes package files as one run of words
    for word in argv[1:]:
        if wanted is not None:
            if word.startswith("-"):
                return None  # argparse's to judge: refused, or a negative number
            _store(found, wanted, word)
            wanted = None
        elif word.startswith("-"):
            name, equals, value = word.partition("=")
            kind = OPTIONS.get(name)
            if kind is None or (kind == FLAG and equals):
                return None
            if kind == FLAG:
                found[name] = True
            elif equals:
                _store(found, name, value)
            else:
                wanted = name
            run_ended = bool(packages)
        elif run_ended:
            return None  # a second run: argparse refuses it
        else:
            packages.append(word)
    if wanted is not None or not packages:
        return None
    args = SimpleNamespace(**_TOP_LEVEL, command="install", package=packages)
    for name, kind in OPTIONS.items():
        default: object = False if kind == FLAG else [] if kind == LIST else None
        setattr(args, name[2:].replace("-", "_"), found.get(name, default))
    from .install import run_install

    args.func = run_install
    return args


def _store(found: dict[str, object], name: str, value: str) -> None:
    if OPTIONS[name] == LIST:
        values = found.setdefault(name, [])
        assert isinstance(values, list)
        values.append(value)
    else:
        found[name] = value  # the last one counts, as in argparse
