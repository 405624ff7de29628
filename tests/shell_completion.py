"""Completion as a user gets it: an interactive bash or zsh on a terminal, the script
``click-build completion SHELL`` printed, a line typed and Tab pressed. The shell's own
line editor splits the words and calls the completion, and its own ``compgen``,
``_files``, ``_users`` do the work; a small probe records what they offered: for bash
the function's COMPREPLY, for zsh every match handed to ``compadd`` (after the shell's
own matching against what was typed)."""

from __future__ import annotations

import os
import select
import shutil
from pathlib import Path
from types import TracebackType

from deadlines import wait_for
from terminal import Terminal

END = "<<end of completion>>"

_BASH_PROBE = """\
source {script}
complete -p click-build > {registered}
_probe() {{ _click_build "$@"; {{ printf '%s\\n' "${{COMPREPLY[@]}}"; echo '{end}'; }} >> {out}; }}
complete -o filenames -F _probe click-build
bind -x '"\\C-x\\C-p": printf "%s\\n" "$READLINE_LINE" >> {lines}'
"""

_ZSH_PROBE = """\
autoload -U compinit && compinit -u -D
source {script}
print -r -- "$_comps[click-build]" > {registered}
LISTMAX=100000
compadd() {{
    if [[ ${{@[1,(i)(-|--)]}} == *-(O|A|D)\\ * ]]; then builtin compadd "$@"; return; fi
    local -a _probe_matches
    builtin compadd -O _probe_matches "$@"
    (( $#_probe_matches )) && print -rl -- $_probe_matches >> {out}
    builtin compadd "$@"
}}
_probe() {{ _main_complete; print -r -- '{end}' >> {out}; }}
zle -C probe-complete complete-word _probe
bindkey '^I' probe-complete
_probe_line() {{ print -r -- "$BUFFER" >> {lines}; }}
zle -N _probe_line
bindkey '^X^P' _probe_line
"""


class Shell:
    """``with Shell("bash", script, work, scratch) as sh: sh.complete("click-build re")``."""

    def __init__(self, shell: str, script: str, cwd: Path, scratch: Path) -> None:
        scratch.mkdir(parents=True, exist_ok=True)
        self.out = scratch / f"{shell}.out"
        self.registered = scratch / f"{shell}.registered"
        self.lines = scratch / f"{shell}.lines"
        (scratch / f"click-build.{shell}").write_text(script)
        probe = _BASH_PROBE if shell == "bash" else _ZSH_PROBE
        setup = scratch / f"probe.{shell}"
        setup.write_text(probe.format(script=scratch / f"click-build.{shell}", out=self.out,
                                      registered=self.registered, end=END,
                                      lines=self.lines))
        argv = ([shutil.which("bash") or "bash", "--norc", "--noprofile", "-i"]
                if shell == "bash" else [shutil.which("zsh") or "zsh", "-f", "-i"])
        env = {"HOME": str(scratch), "PATH": os.environ["PATH"], "TERM": "dumb",
               "LINES": "100", "COLUMNS": "250"}
        self.terminal = Terminal(argv, env=env)
        self.done = 0
        self.terminal.type(f"cd {cwd} && source {setup}\n".encode())
        wait_for(lambda: self._written(self.registered, "\n", 1),
                 f"{shell} to load the completion script")

    def __enter__(self) -> Shell:
        return self

    def __exit__(self, kind: type[BaseException] | None, value: BaseException | None,
                 tb: TracebackType | None) -> None:
        self.terminal.close()

    def registration(self) -> str:
        return self.registered.read_text().strip()

    def _drain(self) -> None:
        """Read what the shell showed (listings of matches): a full terminal buffer
        would block the shell."""
        while select.select([self.terminal.fd], [], [], 0)[0]:
            try:
                if not os.read(self.terminal.fd, 65536):
                    return
            except OSError:
                return

    def _written(self, path: Path, count: str, at_least: int) -> str:
        self._drain()
        text = path.read_text() if path.exists() else ""
        return text if text.count(count) >= at_least else ""

    def _tab(self, line: str) -> str:
        self.terminal.type(line.encode() + b"\t")
        self.done += 1
        text = wait_for(lambda: self._written(self.out, END, self.done),
                        f"the completion of {line!r}")
        return text.split(f"{END}\n")[self.done - 1]

    def complete(self, line: str) -> list[str]:
        """What the shell offers for ``line`` (the cursor at its end), sorted, without
        repeats; then the line is cleared for the next."""
        offered = self._tab(line)
        self.terminal.type(b"\x15")  # Ctrl-U: the line is empty again
        return sorted({entry for entry in offered.splitlines() if entry})

    def completed(self, line: str) -> str:
        """The line as the shell left it after Tab (one match: completed in place)."""
        self._tab(line)
        before = self.lines.read_text().count("\n") if self.lines.exists() else 0
        self.terminal.type(b"\x18\x10")  # Ctrl-X Ctrl-P: the probe writes the line
        text = wait_for(lambda: self._written(self.lines, "\n", before + 1),
                        f"the line after {line!r}")
        self.terminal.type(b"\x15")
        return text.splitlines()[before]
