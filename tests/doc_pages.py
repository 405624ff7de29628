"""The shell blocks of the user documentation, and how a page's blocks are run.

A page is README.md, a docs/*.md page or a template's README (as `click-build new`
renders it). Its runnable blocks are the fenced ```sh (or ```bash, ```shell) blocks,
run as a whole, and the ```console blocks: transcripts whose `$ ` lines (with their
`\\` continuation lines) are run one by one in the same terminal, each checked against the
output shown after it (see `Command`; docs/architecture.md, "Docs are tests", has the
rule for doc writers).

A block may carry one marker, an HTML comment on the line(s) right before its fence,
visible in the page's source and reported by the test:

    <!-- doc-test: skip (needs a phone) -->          not run; the reason is a skip
    <!-- doc-test: stop after 10 s (opens a window) -->
                                                    run on a private X display and stopped
                                                    after 10 s if it is still running (an
                                                    app's window); failing earlier fails

docs/architecture.md ("Docs are tests") tells doc writers when to use them.
"""

from __future__ import annotations

import os
import re
import signal
import subprocess
from dataclasses import dataclass
from pathlib import Path

from conftest import ROOT
from deadlines import seconds

FENCE = re.compile(
    r"(?P<marker>^<!--\s*doc-test:\s*(?P<spec>.*?)\s*-->\n(?:[ \t]*\n)*)?"
    r"^(?P<indent>[ \t]*)```(?P<lang>sh|bash|shell|console)\n(?P<body>.*?)^(?P=indent)```[ \t]*$",
    re.DOTALL | re.MULTILINE)
MARKER = re.compile(r"^<!--\s*doc-test:", re.MULTILINE)
SKIP = re.compile(r"skip \((?P<reason>[^)]+)\)")
STOP = re.compile(r"stop after (?P<seconds>\d+) s \((?P<reason>[^)]+)\)")
#: Longest a block may run (a C++ build, an isolated build installing its requirements).
BLOCK_TIMEOUT = seconds(180)


#: A shown output line that says the command fails: click-build's error line, or a
#: review finding of severity error (the review then exits 1).
ERROR_LINE = re.compile(r"(?:click-build: )?error: ")


@dataclass(frozen=True)
class Command:
    """One `$ ` command of a console block and the output shown after it.

    No output shown: only the exit status is checked. Otherwise what the command
    prints (stdout and stderr, as on a terminal; the home folder written `~`) must be
    the lines shown, where a line `...` stands for any number of lines and `...` within
    a line for any text; trailing blanks do not count. A shown error line (ERROR_LINE)
    means the command must exit non-zero; otherwise it must exit 0."""

    text: str
    output: tuple[str, ...]
    line: int  # of the `$ `, 1-based

    @property
    def fails(self) -> bool:
        return any(ERROR_LINE.match(line) for line in self.output)

    def pattern(self) -> re.Pattern[str]:
        parts = []
        for shown in self.output:
            shown = shown.rstrip()
            if shown == "...":
                parts.append(r"(?:[^\n]*\n)*?")
            else:
                parts.append(".*".join(re.escape(p) for p in shown.split("..."))
                             + r"[ \t]*\n")
        return re.compile("".join(parts))

    def mismatch(self, printed: str, home: str) -> str | None:
        """None when `printed` is what the page shows, else what differs."""
        if not self.output:
            return None
        printed = printed.replace(home, "~")
        if not printed.endswith("\n"):
            printed += "\n"
        if self.pattern().fullmatch(printed):
            return None
        return ("the page shows:\n" + "".join(f"  {s}\n" for s in self.output)
                + "the command printed:\n" + "".join(f"  {s}\n" for s in printed.splitlines()))


@dataclass(frozen=True)
class Block:
    text: str
    line: int  # of the fence, 1-based
    skip: str | None = None  # the reason, when marked skip
    stop_after: int | None = None  # seconds, when marked stop after
    reason: str | None = None
    commands: tuple[Command, ...] | None = None  # a console block's; None for sh


class MarkerError(ValueError):
    pass


def transcript(body: str, first_line: int) -> tuple[Command, ...]:
    """The commands of a console block's body, whose first line is `first_line`."""
    commands: list[Command] = []
    lines = body.splitlines()
    if not lines or not lines[0].startswith("$ "):
        raise MarkerError(f"line {first_line}: a console block starts with a `$ ` command; "
                          "output alone goes in a plain ``` block")
    i = 0
    while i < len(lines):  # at a `$ ` line
        start = i
        text = [lines[i][2:]]
        while text[-1].endswith("\\") and i + 1 < len(lines):
            i += 1
            text.append(lines[i].removeprefix("> "))
        i += 1
        end = i
        while end < len(lines) and not lines[end].startswith("$ "):
            end += 1
        commands.append(Command("\n".join(text) + "\n", tuple(lines[i:end]),
                                first_line + start))
        i = end
    return tuple(commands)


def page_blocks(markdown: str) -> list[Block]:
    """The runnable blocks of a page, in order, with their markers."""
    blocks = []
    for m in FENCE.finditer(markdown):
        indent = m.group("indent")
        body = "".join(line.removeprefix(indent)
                       for line in m.group("body").splitlines(keepends=True))
        line = markdown.count("\n", 0, m.start("indent")) + 1
        commands = None
        if m.group("lang") == "console":
            commands = transcript(body, line + 1)
            body = "".join(c.text for c in commands)
        spec = m.group("spec")
        if spec is None:
            blocks.append(Block(body, line, commands=commands))
        elif skip := SKIP.fullmatch(spec):
            blocks.append(Block(body, line, skip=skip.group("reason"),
                                reason=skip.group("reason"), commands=commands))
        elif stop := STOP.fullmatch(spec):
            blocks.append(Block(body, line, stop_after=int(stop.group("seconds")),
                                reason=stop.group("reason"), commands=commands))
        else:
            raise MarkerError(f"line {line}: unknown doc-test marker {spec!r}: "
                              "write 'skip (WHY)' or 'stop after N s (WHY)'")
    stray = len(MARKER.findall(markdown)) - sum(b.reason is not None for b in blocks)
    if stray:
        raise MarkerError(f"{stray} doc-test marker(s) not right before a ```sh or ```console block")
    return blocks


def pages() -> list[str]:
    """Every page a user reads, relative to the checkout."""
    found = ["README.md", *sorted(f"docs/{p.name}" for p in (ROOT / "docs").glob("*.md"))]
    found += sorted(str(p.relative_to(ROOT)) for p in (ROOT / "templates").glob("*/*/README*"))
    return found


def template_kind(page: str) -> str | None:
    """``qml`` for templates/qml/{{cookiecutter.app_name}}/README.md, else None."""
    parts = Path(page).parts
    return parts[1] if parts[0] == "templates" else None


@dataclass
class Session:
    """One user's terminal: blocks run one after the other, each in a new bash
    (-e, pipefail) that starts where the previous one ended (folder, exported
    variables: a `cd` or an activated venv carries on, as when pasting)."""

    env: dict[str, str]
    cwd: Path
    state: Path

    def __post_init__(self) -> None:
        self.state.mkdir(parents=True, exist_ok=True)
        (self.state / "cwd").write_text(str(self.cwd))
        (self.state / "env").write_text("")

    def run(self, block: Block, merge: bool = False) -> subprocess.CompletedProcess[str]:
        """Run `block`'s text; `merge` puts stderr into stdout, as a terminal shows them."""
        state = self.state
        script = (f"trap 'pwd > {state}/cwd; export -p > {state}/env' EXIT\n"
                  f'cd "$(cat {state}/cwd)"\n. {state}/env\n{block.text}')
        timeout = block.stop_after or BLOCK_TIMEOUT
        with subprocess.Popen(["bash", "-e", "-o", "pipefail", "-c", script],
                              cwd=self.cwd, env=self.env, stdin=subprocess.DEVNULL,
                              stdout=subprocess.PIPE, text=True,
                              stderr=subprocess.STDOUT if merge else subprocess.PIPE,
                              start_new_session=True) as proc:
            try:
                out, err = proc.communicate(timeout=timeout)
                stopped = False
            except subprocess.TimeoutExpired:
                stopped = True
                stop_group(proc.pid, signal.SIGTERM)
                try:
                    out, err = proc.communicate(timeout=seconds(10))
                except subprocess.TimeoutExpired:
                    stop_group(proc.pid, signal.SIGKILL)
                    out, err = proc.communicate()
            finally:
                stop_group(proc.pid, signal.SIGKILL)  # whatever the block left in the background
        err = err or ""
        code = proc.returncode
        if stopped:
            code = 0 if block.stop_after else 124
            err += f"\n[doc-test: stopped after {timeout:g} s]"
        return subprocess.CompletedProcess(proc.args, code, out, err)


def stop_group(pgid: int, sig: signal.Signals) -> None:
    try:
        os.killpg(pgid, sig)
    except ProcessLookupError:
        pass
