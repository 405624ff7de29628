"""``completion``: the shell completion script for bash or zsh.

The script is generated from the real parser, so it offers exactly the
commands and options this click-build has: commands, each command's options,
``.click`` files (and folders) where a command takes packages, folders where it
takes a directory, and the template kinds after ``new``; the same table
feeds a bash function and a native zsh one.
"""

from __future__ import annotations

import argparse
import shlex
import sys

__all__ = ["register", "script"]

#: What a positional argument's metavar holds, for the shell to complete.
_PACKAGES = ("PACKAGE-FILE", "PACKAGE", "PATH", "NAME|PATH", "PACKAGE-NAME|PATH")
_DIRECTORIES = ("DIRECTORY",)

_BASH = r"""# click-build completion for bash (and zsh through bashcompinit).
_click_build() {
    local cur prev cmd="" i
    cur="${COMP_WORDS[COMP_CWORD]}"
    prev="${COMP_WORDS[COMP_CWORD-1]}"
    for ((i = 1; i < COMP_CWORD; i++)); do
        case "${COMP_WORDS[i]}" in
            -*) ;;
            *) cmd="${COMP_WORDS[i]}"; break ;;
        esac
    done
    local opts="" valued="" kind="files"
    case "$cmd" in
@CASES@
        "") opts="@GLOBAL@"
            if [[ "$cur" != -* ]]; then
                COMPREPLY=($(compgen -W "@COMMANDS@" -- "$cur"))
                return 0
            fi ;;
    esac
    if [[ " $valued " == *" $prev "* ]]; then
        COMPREPLY=($(compgen -f -- "$cur"))
        return 0
    fi
    if [[ "$cur" == -* ]]; then
        COMPREPLY=($(compgen -W "$opts" -- "$cur"))
        return 0
    fi
    case "$kind" in
        packages)
            COMPREPLY=($(compgen -d -- "$cur"; compgen -f -X '!*.click' -- "$cur")) ;;
        directories)
            COMPREPLY=($(compgen -d -- "$cur")) ;;
        kinds)
            COMPREPLY=($(compgen -W "@KINDS@" -- "$cur")) ;;
        none) COMPREPLY=() ;;
        *) COMPREPLY=($(compgen -f -- "$cur")) ;;
    esac
    return 0
}
complete -o filenames -F _click_build click-build
"""

_ZSH = r"""# click-build completion for zsh.
(( $+functions[compdef] )) || { autoload -U compinit && compinit -i }
_click_build() {
    local cmd="" i
    local -a opts valued
    local kind=files
    for (( i = 2; i < CURRENT; i++ )); do
        if [[ $words[i] != -* ]]; then cmd=$words[i]; break; fi
    done
    case $cmd in
@CASES@
        "") if [[ $PREFIX == -* ]]; then compadd -- @GLOBAL@; else compadd -- @COMMANDS@; fi
            return ;;
    esac
    if (( ${valued[(Ie)$words[CURRENT-1]]} )); then _files; return; fi
    if [[ $PREFIX == -* ]]; then compadd -- $opts; return; fi
    case $kind in
        packages) _files -g '*.click' ;;
        directories) _files -/ ;;
        kinds) compadd -- @KINDS@ ;;
        none) ;;
        *) _files ;;
    esac
}
compdef _click_build click-build
"""


def _options(parser: argparse.ArgumentParser) -> tuple[list[str], list[str]]:
    """(every option string, the ones that take a value)."""
    every: list[str] = []
    valued: list[str] = []
    for action in parser._actions:
        every.extend(action.option_strings)
        if action.option_strings and action.nargs != 0:
            valued.extend(action.option_strings)
    return every, valued


def _kind(parser: argparse.ArgumentParser, command: str) -> str:
    if command == "new":
        return "kinds"
    metavars = [a.metavar for a in parser._actions if not a.option_strings]
    if any(m in _PACKAGES for m in metavars):
        return "packages"
    if any(m in _DIRECTORIES for m in metavars):
        return "directories"
    return "files" if metavars else "none"


def script(shell: str) -> str:
    """The completion script for ``shell`` ('bash' or 'zsh')."""
    from ..argparsing import build_parser, public_commands
    from ..new import list_templates

    parser = build_parser()
    subparsers = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    commands = public_commands(parser)
    cases = []
    for command in commands:
        sub = subparsers.choices[command]
        every, valued = _options(sub)
        if shell == "zsh":
            cases.append(f"        {shlex.quote(command)}) opts=({' '.join(every)}); "
                         f"valued=({' '.join(valued)}); kind={_kind(sub, command)} ;;")
        else:
            cases.append(f"        {shlex.quote(command)}) opts={shlex.quote(' '.join(every))}; "
                         f"valued={shlex.quote(' '.join(valued))}; kind={_kind(sub, command)} ;;")
    global_opts, _ = _options(parser)
    return ((_ZSH if shell == "zsh" else _BASH).replace("@CASES@", "\n".join(cases))
            .replace("@GLOBAL@", " ".join(global_opts))
            .replace("@COMMANDS@", " ".join(commands))
            .replace("@KINDS@", " ".join(t.kind for t in list_templates())))


def register(subparsers: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    p = subparsers.add_parser(
        "completion", help="print the shell completion script (bash, zsh)",
        description=(
            "Print the script that lets the shell complete click-build's commands, their "
            "options, and .click files where a command takes packages."
        ),
        epilog=(
            "To enable it in every new shell:\n"
            "  bash: echo 'eval \"$(click-build completion bash)\"' >> ~/.bashrc\n"
            "  zsh:  echo 'eval \"$(click-build completion zsh)\"' >> ~/.zshrc\n"
            "or, for bash, save it where bash-completion looks:\n"
            "  mkdir -p ~/.local/share/bash-completion/completions\n"
            "  click-build completion bash > ~/.local/share/bash-completion/completions/"
            "click-build"
        ),
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument("shell", metavar="SHELL", choices=("bash", "zsh"), help="bash or zsh")
    p.set_defaults(func=run_completion)


def run_completion(args: argparse.Namespace) -> int:
    sys.stdout.write(script(args.shell))
    return 0
