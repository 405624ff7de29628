"""Shell completion, through an interactive bash and zsh on a terminal (tests/
shell_completion.py): every command and sub-command and every option of the real
parser, and each option's value as what it is (folders, files, packages, users,
frameworks, review modes, template kinds, `new --set` questions)."""

from __future__ import annotations

import argparse
import json
import pwd
from collections.abc import Iterator
from pathlib import Path

import pytest
from conftest import ROOT, Cli, need
from shell_completion import Shell

from click_build.argparsing import build_parser
from click_build.commands.completion import spec, unclassified
from click_build.framework_table import FRAMEWORKS as TABLE

SHELLS = ["bash", "zsh"]
AVAILABLE = sorted(name for name, state in TABLE.items() if state == "available")
#: What the work folder offers for each kind of value.
OFFERED = {"dirs": ["dist"], "files": ["app_2.0_all.click", "dist", "notes.txt"],
           "packages": ["app_2.0_all.click", "dist"], "none": []}


@pytest.fixture
def work(tmp_path: Path) -> Path:
    """A folder, a package in it, a package and a text file beside it."""
    folder = tmp_path / "work"
    (folder / "dist").mkdir(parents=True)
    for name in ("dist/app_1.0_all.click", "app_2.0_all.click", "notes.txt"):
        (folder / name).write_text("")
    return folder


def shell_for(cli: Cli, shell: str, work: Path, tmp_path: Path) -> Shell:
    need(shell)
    return Shell(shell, cli("completion", shell).stdout, work, tmp_path / shell)


def commands(parser: argparse.ArgumentParser,
             path: tuple[str, ...] = ()) -> Iterator[tuple[str, argparse.ArgumentParser]]:
    """Every command line a user may start, from the parser itself: ('', top level),
    ('device', ...), ('device run', ...), ...; hidden commands left out."""
    yield " ".join(path), parser
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, sub in action.choices.items():
                if not name.startswith("_"):
                    yield from commands(sub, (*path, name))


def subcommands(parser: argparse.ArgumentParser) -> list[str]:
    return sorted(name for a in parser._actions if isinstance(a, argparse._SubParsersAction)
                  for name in a.choices if not name.startswith("_"))


def line(command: str, *rest: str) -> str:
    return " ".join(["click-build", *filter(None, [command]), *rest])


def expected(kind: str, shell: str) -> list[str]:
    if kind.startswith("w:"):
        return sorted(kind[2:].split(","))
    if kind == "answers":
        return sorted(key + ("=" if shell == "bash" else "") for key in questions())
    return OFFERED[kind]


def questions() -> list[str]:
    """The templates' questions, from their cookiecutter.json files."""
    keys: set[str] = set()
    for config in (ROOT / "templates").glob("*/cookiecutter.json"):
        keys |= {k for k in json.loads(config.read_text()) if not k.startswith("_")}
    return sorted(keys)


def test_every_option_value_is_classified() -> None:
    """A new option whose value the completion does not know fails here: add its metavar
    to the tables of commands/completion.py."""
    assert unclassified(build_parser()) == []


@pytest.mark.parametrize("shell", SHELLS)
def test_every_command_sub_command_and_option(cli: Cli, shell: str, work: Path,
                                              tmp_path: Path) -> None:
    with shell_for(cli, shell, work, tmp_path) as sh:
        for command, parser in commands(build_parser()):
            subs = subcommands(parser)
            if subs:
                assert sh.complete(line(command, "")) == subs, command
            options = sorted(o for a in parser._actions for o in a.option_strings
                             if o.startswith("--"))
            assert sh.complete(line(command, "--")) == options, command


@pytest.mark.parametrize("shell", SHELLS)
def test_every_option_value_and_positional_as_what_it_is(cli: Cli, shell: str, work: Path,
                                                         tmp_path: Path) -> None:
    table = spec(build_parser())
    users = sorted(p.pw_name for p in pwd.getpwall())
    with shell_for(cli, shell, work, tmp_path) as sh:
        for command, parser in commands(build_parser()):
            for action in parser._actions:
                if not action.option_strings or action.nargs == 0:
                    continue
                option = max(action.option_strings, key=len)
                kind = table[f"{command}|{option}"]
                offered = sh.complete(line(command, option, ""))
                if kind == "users":
                    assert set(offered) <= set(users) and "root" in offered, option
                else:
                    assert offered == expected(kind, shell), (command, option, kind)
            positionals = table.get(f"{command}|pos", "").split()
            if positionals and not subcommands(parser):
                assert sh.complete(line(command, "")) \
                    == expected(positionals[0].rstrip("*"), shell), command
                if positionals[-1].endswith("*"):  # one more of the same
                    assert sh.complete(line(command, *["x"] * len(positionals), "")) \
                        == expected(positionals[-1].rstrip("*"), shell), command


@pytest.mark.parametrize("shell", SHELLS)
def test_what_each_value_is(cli: Cli, shell: str, work: Path, tmp_path: Path) -> None:
    """The classification itself, for the arguments people type most."""
    files, dirs, packages = OFFERED["files"], OFFERED["dirs"], OFFERED["packages"]
    with shell_for(cli, shell, work, tmp_path) as sh:
        assert sh.registration() == ("complete -o filenames -F _click_build click-build"
                                     if shell == "bash" else "_click_build")
        assert sh.complete("click-build de") == ["device"]
        assert sh.complete("click-build _") == []  # the hidden _cmake
        assert sh.complete("click-build device run --ssh-config ") == files
        assert sh.complete("click-build device run ") == dirs  # PROJECT-DIR
        assert sh.complete("click-build i18n extract -o ") == files
        assert sh.complete("click-build i18n init --project ") == dirs
        assert sh.complete("click-build install --root ") == dirs  # a database folder
        assert sh.complete("click-build install ") == packages
        assert sh.complete("click-build verify --keyring ") == files
        assert sh.complete("click-build build -m ") == files
        assert sh.complete("click-build build ") == dirs
        assert sh.complete("click-build run ") == packages  # a package or a project folder
        assert sh.complete("click-build review dist/") == (
            ["dist/app_1.0_all.click"] if shell == "bash" else ["app_1.0_all.click"])
        assert sh.complete("click-build build --review ") == ["errors", "off", "report", "strict"]
        assert sh.complete("click-build build --review=s") == ["strict"]
        assert sh.complete("click-build build --framework ") == AVAILABLE
        assert sh.complete("click-build build --framework ubuntu-touch-24.04-2") == [
            "ubuntu-touch-24.04-2.x", "ubuntu-touch-24.04-2.x-papi", "ubuntu-touch-24.04-2.x-qml"]
        assert sh.complete("click-build new ") == sorted(
            p.parent.name for p in (ROOT / "templates").glob("*/cookiecutter.json"))
        assert sh.complete("click-build new --set ") == expected("answers", shell)
        assert sh.complete("click-build new qml --set framework=") == AVAILABLE
        assert sh.complete("click-build new --set title=") == []
        assert sh.complete("click-build -q install --r") == ["--root"]
        assert sh.complete("click-build hook --root /x ins") == ["install"]
        assert sh.complete("click-build review -- --") == []  # after '--': files only
        # what the line becomes: no space after KEY=, nothing quoted, the value after '='
        assert sh.completed("click-build new --set fram") == "click-build new --set framework="
        assert sh.completed("click-build new --set framework=ubuntu-sdk-20.04.1-q") \
            == "click-build new --set framework=ubuntu-sdk-20.04.1-qml "
        assert sh.completed("click-build build --review=st") \
            == "click-build build --review=strict "
        assert sh.completed("click-build review di") == "click-build review dist/"


def test_completion_help_says_how_to_enable_it(cli: Cli) -> None:
    text = cli("completion", "--help").stdout
    assert 'eval "$(click-build completion bash)"' in text
    assert 'eval "$(click-build completion zsh)"' in text
