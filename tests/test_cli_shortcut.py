"""The install shortcut (commands/shortcut.py) reads a line as argparse does, or not at all.

A plain ``install`` line is read without loading argparse (issue 15). These tests hold
the shortcut to argparse: on thousands of lines, made of the words scripts type and the
ones that trip parsers, every line it reads gives argparse's namespace, and every line
argparse refuses it leaves to argparse; its option table is what ``install``
registers; and the real command installs by both ways.
"""

from __future__ import annotations

import argparse
import contextlib
import io
import random
import subprocess
import sys
from collections.abc import Sequence
from pathlib import Path

from install_support import REPO, current_user, make_click, make_env

from click_build.argparsing import build_parser
from click_build.commands.shortcut import FLAG, LIST, OPTIONS, VALUE, parse_plain


def argparse_reads(argv: Sequence[str]) -> dict[str, object] | None:
    """What argparse makes of ``argv`` (as the CLI builds it), or None if it refuses
    the line or stops at --help."""
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            return vars(build_parser(argv).parse_args(argv))
        except SystemExit:
            return None


def install_parser() -> argparse.ArgumentParser:
    parser = build_parser(["install"])
    (subparsers,) = (a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    found = subparsers.choices["install"]
    assert isinstance(found, argparse.ArgumentParser)
    return found


def test_the_table_is_what_install_registers() -> None:
    kinds = {argparse._StoreTrueAction: (FLAG, False), argparse._StoreAction: (VALUE, None),
             argparse._AppendAction: (LIST, [])}
    registered, positionals = {}, []
    for action in install_parser()._actions:
        if isinstance(action, argparse._HelpAction):
            continue
        if not action.option_strings:
            positionals.append((action.dest, action.nargs))
            continue
        kind, default = kinds[type(action)]
        assert action.default == default, action
        assert action.nargs == (0 if kind == FLAG else None), action  # none, or one value
        assert action.dest == action.option_strings[0][2:].replace("-", "_")
        for name in action.option_strings:
            registered[name] = kind
    assert registered == OPTIONS
    assert positionals == [("package", "+")]


# Words of install lines: whole options with good and awkward values, and what the
# shortcut must leave to argparse (abbreviations, -q, --, -h, values that start with
# "-", a flag given a value, unknown options, a lone "-").
_OPTION_WORDS = [
    *(f"{name}=v" for name, kind in OPTIONS.items() if kind != FLAG),
    *(name for name, kind in OPTIONS.items() if kind == FLAG),
    "--root=", "--user=a b", "--keyring=k=1", "--root=-x", "--verbose=1", "--all",
    "--allow-unauth", "--roo=x", "--user", "--root", "--keyring", "-q", "--quiet", "--",
    "-", "-h", "--help", "--bogus", "--bogus=1", "-1", "--ROOT=x", "--Root",
]
_VALUE_WORDS = ["v", "", "a b", "-v", "--root", "x=y", "-1", "é"]
_FILE_WORDS = ["app.click", "b.click", "a b.click", "é.click", "x=y"]


def _random_line(rng: random.Random) -> list[str]:
    words = ["install"]
    for _ in range(rng.randrange(7)):
        pick = rng.random()
        if pick < 0.5:
            words.append(rng.choice(_OPTION_WORDS))
        elif pick < 0.7:
            words.append(rng.choice(_VALUE_WORDS))
        else:
            words.append(rng.choice(_FILE_WORDS))
    return words


def test_every_line_it_reads_argparse_reads_the_same() -> None:
    rng = random.Random(15)
    read = left_to_argparse = 0
    for _ in range(4000):
        argv = _random_line(rng)
        shortcut = parse_plain(argv)
        expected = argparse_reads(argv)
        if shortcut is None:
            left_to_argparse += expected is not None
            continue
        assert expected is not None, f"argparse refuses {argv}, the shortcut read it"
        assert vars(shortcut) == expected, argv
        read += 1
    # the corpus exercises both ways: lines read here, and lines argparse alone accepts
    assert read > 400, read
    assert left_to_argparse > 100, left_to_argparse


def test_the_lines_scripts_type_take_the_shortcut() -> None:
    lines = [
        ["install", "app.click"],
        ["install", "--root=/r", "--user=phablet", "--allow-unauthenticated", "app.click"],
        ["install", "--root", "/r", "--user", "phablet", "app.click", "--all-users"],
        ["install", "--force-missing-framework", "--keyring=/k1", "--keyring", "/k2",
         "--hooks-dir=/h", "--frameworks-dir=/f", "--databases-dir=/d", "--verbose", "app.click"],
        ["install", "a.click", "b.click"],  # two files: refused by the command, as with argparse
    ]
    for argv in lines:
        shortcut = parse_plain(argv)
        assert shortcut is not None, argv
        assert vars(shortcut) == argparse_reads(argv), argv
    assert parse_plain(["install", "--allow-unauth", "app.click"]) is None
    assert argparse_reads(["install", "--allow-unauth", "app.click"]) is not None


def test_install_by_the_shortcut_and_by_argparse(tmp_path: Path) -> None:
    """The real command: a plain line installs without loading argparse; the same line
    with abbreviated options installs through argparse; errors are the same either way."""
    env = make_env(tmp_path / "env")
    package = make_click(tmp_path / "pkgs", hooks={}, files={"main.qml": "Item {}\n"})
    probe = ("import runpy, sys\n"
             "import click_build.cli\n"
             "def end(status):\n"
             "    print('argparse' in sys.modules)\n"
             "    sys.stdout.flush()\n"
             "    raise SystemExit(status)\n"
             "click_build.cli.end_process = end\n"
             "sys.argv = ['click-build', *sys.argv[1:]]\n"
             "runpy.run_module('click_build', run_name='__main__')\n")

    def install(*words: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run([sys.executable, "-c", probe, "install", *words],
                              capture_output=True, text=True, cwd=REPO,
                              env={**env.vars(), "PATH": "/usr/bin:/bin"}, check=False)

    for root, options in ((tmp_path / "plain", ["--allow-unauthenticated", "--user"]),
                          (tmp_path / "abbreviated", ["--allow-unauth", "--us"])):
        root.mkdir()
        done = install(f"--root={root}", *options, current_user(), str(package))
        assert done.returncode == 0, done.stderr
        assert done.stdout.strip() == ("False" if root.name == "plain" else "True")
        assert (root / "com.example.app" / "current").is_symlink()
    errors = []
    for options in (["--allow-unauthenticated"], ["--allow-unauth"]):
        refused = install(*options, "--user=no such user", f"--root={tmp_path / 'plain'}",
                          str(package))
        assert refused.returncode == 1
        assert refused.stderr.startswith("click-build: error: "), refused.stderr
        assert "no such user" in refused.stderr
        errors.append(refused.stderr)
    assert errors[0] == errors[1]  # the same line, whichever way the line was read
