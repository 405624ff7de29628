"""``completion``: the shell completion script for bash or zsh.

The script is generated from the real parser, so it offers exactly the commands,
sub-commands (``device run``, ``i18n init``, ...) and options this click-build has, and
cannot drift from them. What an argument's value is comes from the word the parser
shows for it (its metavar, e.g. ``DIR``, ``PACKAGE-FILE``) or its choices: folders,
files, ``.click`` files and folders, user names, the framework names of the framework
table, the template kinds, the review modes, ``new --set`` questions. One table in the
script describes every command; a small bash function and a native zsh one read it.
"""

from __future__ import annotations

import argparse
import shlex
import sys
from collections.abc import Iterator

__all__ = ["register", "script", "spec", "unclassified"]

#: What a positional argument holds, by its metavar: what the shell completes.
_POSITIONAL_KINDS = {
    "DIRECTORY": "dirs", "PROJECT-DIR": "dirs",
    "PACKAGE-FILE": "packages", "PACKAGE": "packages", "PATH": "packages",
    "NAME|PATH": "packages", "PACKAGE-NAME|PATH": "packages", "PACKAGE.click": "packages",
    "PACKAGE.click|PROJECT-DIR": "packages",
    "FILE": "files", "KIND": "kinds", "FRAMEWORK": "frameworks",
    # free text: nothing to offer
    "PACKAGE-NAME": "none", "VERSION": "none", "HOOK": "none", "FIELD": "none",
    "APP_ID": "none", "LANG": "none",
}
#: What an option's value is, by its metavar.
_OPTION_KINDS = {
    "DIR": "dirs", "FILE": "files", "POT": "files", "PATH": "files", "USER": "users",
    "FRAMEWORK": "frameworks", "FW": "frameworks", "KEY=VALUE": "answers",
    "PATTERN": "none", "N": "none", "KEYID": "none", "SECONDS": "none", "K=V": "none",
    "APP": "none", "SERIAL": "none", "USER@HOST[:PORT]": "none", "NAME": "none",
    "MODE": "none", "ARCH": "none", "PKG": "none", "ARCHIVE=URL": "none", "LANG": "none",
    "PX": "none",
}
#: Options whose metavar says less than their name: ``install --root PATH`` is a folder.
_BY_OPTION = {"--root": "dirs"}

_BASH = r"""# click-build completion for bash (and zsh through bashcompinit).
@TABLE@
_click_build() {
    local -a w=()
    local i x
    for ((i = 1; i <= COMP_CWORD; i++)); do  # bash split KEY=VALUE at '=': join it again
        x=${COMP_WORDS[i]}
        if ((${#w[@]})) && [[ $x == "=" || ${COMP_WORDS[i-1]} == "=" ]]; then
            w[${#w[@]}-1]+=$x
        else
            w+=("$x")
        fi
    done
    local last=$((${#w[@]} - 1)) node="" word kind="" pre="" n=0 dashdash=0
    local cur=${w[last]}
    for ((i = 0; i < last; i++)); do
        word=${w[i]}
        if ((!dashdash)) && [[ $word == -* ]]; then
            if [[ $word == -- ]]; then
                dashdash=1
            elif [[ $word != *=* && -n ${_click_build_spec["$node|$word"]} ]]; then
                ((i + 1 == last)) && kind=${_click_build_spec["$node|$word"]}
                i=$((i + 1))
            fi
        elif ((!dashdash)) && [[ " ${_click_build_spec["$node|subs"]} " == *" $word "* ]]; then
            node=${node:+$node }$word
            n=0
        else
            n=$((n + 1))
        fi
    done
    if [[ -z $kind && $cur == -*=* ]] && ((!dashdash)); then
        kind=${_click_build_spec["$node|${cur%%=*}"]:-none}
        pre=${cur%%=*}=
        cur=${cur#*=}
    fi
    if [[ -z $kind ]]; then
        if ((!dashdash)) && [[ $cur == -* ]]; then
            kind=opts
        elif [[ -n ${_click_build_spec["$node|subs"]} ]]; then
            kind=subs
        else
            local -a pos=(${_click_build_spec["$node|pos"]})
            kind=none
            if ((n < ${#pos[@]})); then
                kind=${pos[n]}
            elif ((${#pos[@]})) && [[ ${pos[${#pos[@]}-1]} == *'*' ]]; then
                kind=${pos[${#pos[@]}-1]}
            fi
            kind=${kind%'*'}
        fi
    fi
    _click_build_values "$kind" "$cur" "$pre" "$node"
    return 0
}
_click_build_values() {
    local kind=$1 cur=$2 pre=$3 node=$4 key
    COMPREPLY=()
    case $kind in  # words are not file names: no quoting of their '='
        files|dirs|packages) ;;
        *) compopt +o filenames 2>/dev/null ;;
    esac
    case $kind in
        opts|subs) mapfile -t COMPREPLY < <(compgen -W "${_click_build_spec["$node|$kind"]}" -- "$cur") ;;
        files) mapfile -t COMPREPLY < <(compgen -f -- "$cur") ;;
        dirs) mapfile -t COMPREPLY < <(compgen -d -- "$cur") ;;
        packages) mapfile -t COMPREPLY < <(compgen -d -- "$cur"; compgen -f -X '!*.click' -- "$cur") ;;
        users) mapfile -t COMPREPLY < <(compgen -u -- "$cur") ;;
        answers)
            if [[ $cur == *=* ]]; then
                key=${cur%%=*}
                _click_build_values "${_click_build_spec["answer|$key"]:-none}" "${cur#*=}" "$pre$key=" "$node"
                return
            fi
            mapfile -t COMPREPLY < <(compgen -S = -W "${_click_build_spec["answer|keys"]}" -- "$cur")
            compopt -o nospace 2>/dev/null ;;
        w:*) key=${kind#w:}
             mapfile -t COMPREPLY < <(compgen -W "${key//,/ }" -- "$cur") ;;
    esac
    # With '=' in COMP_WORDBREAKS (the default) bash replaces only what follows it.
    if [[ -n $pre && $COMP_WORDBREAKS != *=* ]]; then
        COMPREPLY=("${COMPREPLY[@]/#/$pre}")
    fi
}
complete -o filenames -F _click_build click-build
"""

_ZSH = r"""# click-build completion for zsh.
(( $+functions[compdef] )) || { autoload -U compinit && compinit -i }
@TABLE@
_click_build() {
    local node="" word kind="" i n=0 dashdash=0
    for (( i = 2; i < CURRENT; i++ )); do
        word=$words[i]
        if (( ! dashdash )) && [[ $word == -* ]]; then
            if [[ $word == -- ]]; then
                dashdash=1
            elif [[ $word != *=* && -n ${_click_build_spec[$node|$word]} ]]; then
                (( i + 1 == CURRENT )) && kind=${_click_build_spec[$node|$word]}
                i=$(( i + 1 ))
            fi
        elif (( ! dashdash )) && [[ " ${_click_build_spec[$node|subs]} " == *" $word "* ]]; then
            node=${node:+$node }$word
            n=0
        else
            n=$(( n + 1 ))
        fi
    done
    if [[ -z $kind && $PREFIX == -*=* ]] && (( ! dashdash )); then
        kind=${_click_build_spec[$node|${PREFIX%%=*}]:-none}
        compset -P '*='
    fi
    if [[ -z $kind ]]; then
        if (( ! dashdash )) && [[ $PREFIX == -* ]]; then
            compadd -- ${=_click_build_spec[$node|opts]}
            return
        elif [[ -n ${_click_build_spec[$node|subs]} ]]; then
            compadd -- ${=_click_build_spec[$node|subs]}
            return
        fi
        local -a pos
        pos=(${=_click_build_spec[$node|pos]})
        kind=none
        if (( n < $#pos )); then
            kind=$pos[n+1]
        elif (( $#pos )) && [[ $pos[-1] == *'*' ]]; then
            kind=$pos[-1]
        fi
        kind=${kind%'*'}
    fi
    _click_build_values $kind
}
_click_build_values() {
    case $1 in
        files) _files ;;
        dirs) _files -/ ;;
        packages) _files -g '*.click' ;;
        users) _users ;;
        answers)
            if [[ $PREFIX == *=* ]]; then
                local key=${PREFIX%%=*}
                compset -P '*='
                _click_build_values ${_click_build_spec[answer|$key]:-none}
            else
                compadd -S = -- ${=_click_build_spec[answer|keys]}
            fi ;;
        w:*) compadd -- ${(s:,:)${1#w:}} ;;
        *) return 1 ;;
    esac
}
compdef _click_build click-build
"""


def _nodes(parser: argparse.ArgumentParser,
           path: tuple[str, ...] = ()) -> Iterator[tuple[tuple[str, ...], argparse.ArgumentParser]]:
    """Every command a user may type, as (words, parser): the top level, each command,
    each sub-command; the hidden ones (``_cmake``) left out."""
    yield path, parser
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, sub in action.choices.items():
                if not name.startswith("_"):
                    yield from _nodes(sub, (*path, name))


def _subcommands(parser: argparse.ArgumentParser) -> list[str]:
    return [name for action in parser._actions
            if isinstance(action, argparse._SubParsersAction)
            for name in action.choices if not name.startswith("_")]


def _metavar(action: argparse.Action) -> str:
    metavar = action.metavar
    if isinstance(metavar, tuple):
        metavar = " ".join(metavar)
    return metavar or action.dest.upper()


def _kind(action: argparse.Action, words: dict[str, str]) -> str | None:
    """What the shell completes for the value of ``action``; None when its metavar is
    not in the tables (:func:`unclassified` lists those)."""
    if action.choices is not None:
        return "w:" + ",".join(map(str, action.choices))
    table = _OPTION_KINDS if action.option_strings else _POSITIONAL_KINDS
    kind = next((_BY_OPTION[o] for o in action.option_strings if o in _BY_OPTION),
                table.get(_metavar(action)))
    return words.get(kind, kind) if kind is not None else None


def _answers() -> dict[str, str]:
    """``new --set``: the questions of every template (``KEY=``), and the choices a
    question with choices takes (``framework``: every available framework)."""
    from ..new import accepted_answers, list_templates

    keys: list[str] = []
    out = {}
    for template in list_templates():
        for key in template.questions:
            if key not in keys:
                keys.append(key)
            choices = template.defaults[key]
            if isinstance(choices, list):
                out[f"answer|{key}"] = "w:" + ",".join(accepted_answers(key, choices))
    out["answer|keys"] = " ".join(keys)
    return out


def spec(parser: argparse.ArgumentParser) -> dict[str, str]:
    """The table the shell functions read: for each command (its words joined by spaces,
    '' at the top), ``CMD|subs``, ``CMD|opts``, ``CMD|pos`` (the positionals' kinds,
    ``*`` on one that repeats), and ``CMD|OPTION`` -> the kind of an option's value."""
    from ..new import FRAMEWORKS, list_templates

    words = {"kinds": "w:" + ",".join(t.kind for t in list_templates()),
             "frameworks": "w:" + ",".join(FRAMEWORKS)}
    table = _answers()
    for path, parser_ in _nodes(parser):
        node = " ".join(path)
        subs = _subcommands(parser_)
        options: list[str] = []
        positionals: list[str] = []
        for action in parser_._actions:
            if isinstance(action, argparse._SubParsersAction):
                continue
            options.extend(action.option_strings)
            kind = _kind(action, words) or "none"
            if not action.option_strings:
                positionals.append(kind + ("*" if action.nargs in ("+", "*") else ""))
            elif action.nargs != 0:
                for option in action.option_strings:
                    table[f"{node}|{option}"] = kind
        table[f"{node}|opts"] = " ".join(options)
        if subs:
            table[f"{node}|subs"] = " ".join(subs)
        if positionals:
            table[f"{node}|pos"] = " ".join(positionals)
    return table


def unclassified(parser: argparse.ArgumentParser) -> list[str]:
    """Arguments whose metavar the tables above do not know (a new option's, say):
    the shell would complete nothing for them. The test suite keeps this empty."""
    out = []
    for path, parser_ in _nodes(parser):
        for action in parser_._actions:
            if isinstance(action, argparse._SubParsersAction) or action.nargs == 0:
                continue
            if _kind(action, {}) is None:
                out.append(f"{' '.join(path)} {'/'.join(action.option_strings)} "
                           f"{_metavar(action)}".strip())
    return out


def script(shell: str) -> str:
    """The completion script for ``shell`` ('bash' or 'zsh')."""
    from ..argparsing import build_parser

    table = sorted(spec(build_parser()).items())
    if shell == "zsh":
        body = "".join(f"\n    {shlex.quote(k)} {shlex.quote(v)}" for k, v in table)
        declared = f"typeset -gA _click_build_spec\n_click_build_spec=({body}\n)"
    else:
        body = "".join(f"\n    [{shlex.quote(k)}]={shlex.quote(v)}" for k, v in table)
        declared = f"declare -gA _click_build_spec=({body}\n)"
    return (_ZSH if shell == "zsh" else _BASH).replace("@TABLE@", declared)


def register(subparsers: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    p = subparsers.add_parser(
        "completion", help="print the shell completion script (bash, zsh)",
        description=(
            "Print the script that lets the shell complete click-build's commands and "
            "sub-commands, their options, and the options' values: .click files where a "
            "command takes packages, folders and files where it takes them, framework "
            "names, review modes, template kinds and 'new --set' questions."
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
