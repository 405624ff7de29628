"""Docs are tests: every page's shell blocks, pasted in order as a new user would.

Each page runs in its own empty home folder (the working folder too), in one
"terminal" (doc_pages.Session), with click-build as a user has it: a wheel of the
checkout installed with `[templates]` and `build` into a virtual environment that
is first on PATH, the wheel in `~/wheels` and PIP_FIND_LINKS=~/wheels (the state
docs/templates.md's step 1 leaves), and `~/click-build` a clean copy of the source
(for pages that build the wheel themselves or use its examples/).
A template's README is run in the project `click-build new KIND` makes, as rendered.
Blocks marked `skip (...)` are reported as skips with their reason.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from conftest import ROOT
from doc_pages import Block, MarkerError, Session, page_blocks, pages, template_kind
from templates_support import section
from user_env import UserEnv, shell_blocks
from xdisplay import private_display

PAGES = pages()
#: Outcomes beyond "exit 0": per page, a command of one of its blocks and what that
#: block's output must hold (the pages' own comments promise it).
PROMISES: dict[str, dict[str, str]] = {
    "README.md": {"click-build list --root ~/clicks": "tea-timer.yourname\t1.0.0\n"},
    "docs/templates.md": {"click-build list --root ~/click-test": "tea-timer.jane\t1.0.0\n"},
    "docs/install.md": {"click-build list --root ~/clickdb": "tea-timer.jane\t1.0.0\n",
                        "ls ~/launcher": "tea-timer.jane_tea-timer_1.0.0.desktop\n"},
    "docs/building.md": {"click-build contents": "./qml/Main.qml\n",
                         "click-build buildsource": "tea-timer.jane_1.0.0.tar.gz"},
    "docs/translations.md": {"grep '^Name'": "Name=Tea Timer\n"},
}


def run_page_outcomes(session: Session, text: str, stdout: str, stderr: str) -> None:
    """docs/run.md: each window it opens stops after its 10 s, and what each run shows."""
    home = Path(session.env["HOME"])
    phone = [line for block in page_blocks(text) if block.skip == "needs a phone"
             for line in block.text.splitlines() if "needs a phone" in line]
    assert len(phone) >= 5 and all(line.startswith("click-build device ") for line in phone)
    stopped = re.findall(r"stopped (?:serving )?(\S+) after 10 s", stdout)
    assert stopped == [*["tea-timer.jane_tea-timer_1.0.0"] * 4, "notes.jane_notes_1.0.0"], \
        stdout  # run, run of the package, run --watch, run --lang ..., the HTML5 app
    assert "click-build: watching " in stdout
    launch = (home / "tea-timer" / "launch.sh").read_text()
    assert launch.startswith("cd ") and launch.endswith("exec qmlscene qml/Main.qml\n")
    assert ("click-build: webapp-container is not installed: serving notes.jane_notes_1.0.0 "
            "(its package root) at http://127.0.0.1:") in stdout
    theme = home / "tea-timer" / "build" / "click-run" / "xdg" / "config"
    assert "SuruDark" in (theme / "lomiri-ui-toolkit" / "theme.ini").read_text()  # --dark-mode
    # run warns of nothing it chose (a machine out of inotify instances is worth one)
    assert not [line for line in stderr.splitlines()
                if "click-build: warning" in line and "inotify" not in line], stderr


def template_readme_outcomes(session: Session, text: str, stdout: str, stderr: str) -> None:
    """A new project's README (issue 13): it installs what its build needs and builds in
    isolation too; its review finds nothing, its install is what `list` shows; and its
    commands still work with a second version beside the first in dist/ (review takes
    both, install names one)."""
    blocks = shell_blocks(section(text, "Build the package"))
    pip, local = blocks[0].splitlines()[:2]
    assert pip.startswith("pip install build"), "the README installs what it needs"
    assert local.startswith("python -m build --wheel --no-isolation")
    project = Path(session.env["HOME"]) / "tea-timer"
    if (project / "CMakeLists.txt").is_file():
        manifest = project / "manifest.json.in"
    else:  # cpp's isolated build would download CMake; the others name it
        assert "PIP_FIND_LINKS=~/wheels python -m build --wheel" in blocks[-1]
        manifest = project / "manifest.json"
    assert stdout.count(": no problems found") >= 1 and "tea-timer.yourname\t1.0.0" in stdout
    pyproject = project / "pyproject.toml"
    if '"version"' in manifest.read_text():
        manifest.write_text(manifest.read_text().replace('"1.0.0"', '"1.0.1"'))
    else:  # python: the version is the project's
        pyproject.write_text(pyproject.read_text().replace('version = "1.0.0"',
                                                           'version = "1.0.1"'))
    again = session.run(Block(f"cd ~/tea-timer\n{local}\n", 0))
    assert again.returncode == 0, again.stdout + again.stderr
    assert len(list((project / "dist").glob("*.click"))) == 2
    check = session.run(Block(shell_blocks(section(text, "Check and install it"))[0], 0))
    assert check.returncode == 0, check.stdout + check.stderr
    assert check.stdout.count(": no problems found") == 2, check.stdout
    assert "tea-timer.yourname\t1.0.0" in check.stdout, check.stdout  # the version it names


#: Outcomes too many for PROMISES: per page, a check of the whole run, given the
#: terminal it ran in (to run more), the page's text (a template's README as rendered)
#: and everything its blocks printed on stdout and on stderr.
OUTCOMES: dict[str, Callable[[Session, str, str, str], None]] = {
    "docs/run.md": run_page_outcomes,
    **{page: template_readme_outcomes for page in PAGES if template_kind(page)},
}


def read(page: str) -> str:
    return (ROOT / page).read_text(encoding="utf-8")


MARKED = [pytest.param(page, i, block.reason, id=f"{page}:{block.line}")
          for page in PAGES for i, block in enumerate(page_blocks(read(page)))
          if block.skip is not None]


@pytest.fixture(scope="session")
def docs_env(user_env: UserEnv) -> UserEnv:
    """The wheel venv, with `build` beside click-build[templates] (docs/templates.md,
    step 1: what every other page starts from)."""
    user_env.sh("pip install -q build", user_env.venv.parent, PIP_CACHE_DIR=PIP_CACHE)
    return user_env


PIP_CACHE = os.path.expanduser("~/.cache/pip")  # the real one: no need to download twice


@pytest.fixture
def display() -> Iterator[str]:
    """A private X display (Xvfb) for the blocks that open windows."""
    with private_display() as number:
        yield number


def test_every_page_is_collected() -> None:
    """The harness finds the pages and their blocks (a renamed fence would hide them)."""
    assert "README.md" in PAGES and "docs/templates.md" in PAGES
    assert {template_kind(p) for p in PAGES} >= {"qml", "html5", "python", "cpp"}
    assert sum(len(page_blocks(read(p))) for p in PAGES) > 50


def test_markers_are_parsed_and_checked() -> None:
    page = ("<!-- doc-test: skip (needs a phone) -->\n```sh\nadb devices\n```\n\n"
            "<!-- doc-test: stop after 5 s (opens a window) -->\n\n"
            "  ```sh\n  qmlscene qml/Main.qml\n  ```\n```sh\nls\n```\n")
    phone, window, plain = page_blocks(page)
    assert (phone.skip, phone.text, phone.line) == ("needs a phone", "adb devices\n", 2)
    assert (window.stop_after, window.reason, window.text) == (5, "opens a window",
                                                               "qmlscene qml/Main.qml\n")
    assert (plain.skip, plain.stop_after, plain.text) == (None, None, "ls\n")
    with pytest.raises(MarkerError, match="unknown doc-test marker"):
        page_blocks("<!-- doc-test: skip -->\n```sh\nls\n```\n")
    with pytest.raises(MarkerError, match="not right before"):
        page_blocks("<!-- doc-test: skip (x) -->\n\ntext\n```sh\nls\n```\n")


def test_console_blocks_are_transcripts() -> None:
    """A console block's `$ ` lines are its commands (continuations joined), the lines
    after each its output; `...` stands for lines or text, an error line for failing."""
    page = ("<!-- doc-test: skip (needs a phone) -->\n```console\n$ adb devices\n```\n"
            "```console\n$ click-build new qml \\\n    --no-input\n...\n"
            "Created the qml app in '...'. Next:\n"
            "$ click-build nope\nclick-build: error: argument ...\n$ cd x\n```\n")
    phone, block = page_blocks(page)
    assert phone.skip == "needs a phone" and phone.commands is not None
    assert block.commands is not None
    new, nope, cd = block.commands
    assert (new.text, new.line, new.fails) == ("click-build new qml \\\n    --no-input\n",
                                               6, False)
    assert block.text == new.text + nope.text + cd.text
    assert new.mismatch("[1/8] ...\nCreated the qml app in '/h/tea'. Next:\n", "/h") is None
    assert new.mismatch("Created the qml app in 'tea'. Next:  ", "/h") is None
    assert new.mismatch("Created the qml app in 'tea'.\n", "/h") is not None
    assert new.mismatch("Created the qml app in 'tea'. Next:\nmore\n", "/h") is not None
    assert nope.fails and nope.mismatch("click-build: error: argument x\n", "/h") is None
    assert cd.output == () and cd.mismatch("anything", "/h") is None
    with pytest.raises(MarkerError, match="starts with a `\\$ ` command"):
        page_blocks("```console\nclick-build: warning: x\n```\n")


def test_template_readmes_run_on_any_architecture() -> None:
    """A new project's README is pasted on whatever machine its developer has: the
    commands it runs name no package file of one architecture (`..._amd64.click` is
    missing on an arm64 laptop); only blocks skipped here (for a phone) may."""
    for page in (p for p in PAGES if template_kind(p)):
        for block in page_blocks(read(page)):
            if block.skip is None:
                named = re.findall(r"_(?:amd64|arm64|armhf|i386)\.click\b", block.text)
                assert not named, f"{page}:{block.line} names {named}: use _*.click"


@pytest.mark.parametrize(("page", "index", "reason"), MARKED)
def test_marked_block(page: str, index: int, reason: str) -> None:
    """One skip per block a page marks, so that the summary lists them with the reason."""
    pytest.skip(f"{page}: {reason}")


def home_for(docs_env: UserEnv, scratch: Path, state: Path,
             display: str) -> Session:
    """A new user's terminal in an empty home under ``scratch`` (a folder every user can
    enter: run as root, the installer unpacks as clickpkg)."""
    home = scratch / "home"
    home.mkdir()
    shutil.copytree(docs_env.venv.parent / "src", home / "click-build")
    shutil.copytree(ROOT / "examples", home / "click-build" / "examples",  # as in a clone
                    ignore=shutil.ignore_patterns("__pycache__", "*.pyc", "build", "dist"))
    (home / "wheels").mkdir()
    shutil.copy(docs_env.wheel, home / "wheels")
    env = docs_env.env(HOME=str(home), PIP_FIND_LINKS=str(home / "wheels"),
                       PIP_CACHE_DIR=PIP_CACHE, DISPLAY=display, LIBGL_ALWAYS_SOFTWARE="1",
                       QT_QPA_PLATFORM="xcb", USER=os.environ.get("USER", "root"))
    for name in ("XDG_DATA_HOME", "XDG_CONFIG_HOME", "XDG_CACHE_HOME", "GNUPGHOME",
                 "CLICK_BUILD_PYTHON_CACHE"):  # the suite's own, per test (conftest)
        env.pop(name, None)
    return Session(env, home, state)


#: Pages that make sysroots: they run one after another with the sysroot tests, whose
#: roots (made once per machine) they use (test_sysroot_build.py).
SYSROOT_PAGES = {"docs/phone.md"}


@pytest.mark.slow
@pytest.mark.parametrize("page", [
    pytest.param(p, marks=pytest.mark.xdist_group("sysroot")) if p in SYSROOT_PAGES else p
    for p in PAGES])
def test_page_runs_as_pasted(page: str, docs_env: UserEnv, tmp_path: Path,
                             public_tmp: Path, display: str) -> None:
    session = home_for(docs_env, public_tmp, tmp_path / "state", display)
    if page in SYSROOT_PAGES:
        # The roots the sysroot tests keep (made once per machine, not per run).
        from sysroot_support import test_cache, unreachable_without_roots

        reason = unreachable_without_roots()
        if reason:
            pytest.skip(reason)
        session.env["CLICK_BUILD_SYSROOT_CACHE"] = str(test_cache())
    text = read(page)
    kind = template_kind(page)
    if kind is not None:  # the README as the user gets it, in the new project
        made = session.run(Block(f"click-build new {kind} --no-input --set title='Tea Timer'"
                                 "\ncd tea-timer\n", 0))
        assert made.returncode == 0, made.stderr
        readme = Path(session.env["HOME"]) / "tea-timer" / "README.md"
        rendered = readme.read_text(encoding="utf-8")
        assert [b.reason for b in page_blocks(rendered)] \
            == [b.reason for b in page_blocks(text)]
        text = rendered
    blocks = page_blocks(text)
    promises = dict(PROMISES.get(page, {}))
    log, printed, complained = [], [], []
    for block in blocks:
        if block.skip is not None:
            log.append(f"line {block.line}: skipped ({block.skip})")
            continue
        started = time.monotonic()
        result = (session.run(block) if block.commands is None
                  else run_transcript(session, page, block))
        took = time.monotonic() - started
        log.append(f"line {block.line}: exit {result.returncode} in {took:.1f} s")
        printed.append(result.stdout)
        complained.append(result.stderr)
        assert result.returncode == 0, (
            f"{page}, block at line {block.line} failed ({result.returncode}):\n"
            f"{block.text}\n--- stdout\n{result.stdout[-4000:]}\n"
            f"--- stderr\n{result.stderr[-4000:]}")
        for command, output in list(promises.items()):
            if command in block.text:
                assert output in result.stdout, (page, block.line, output, result.stdout)
                del promises[command]
    assert not promises, f"{page}: no block runs {list(promises)}"
    if page in OUTCOMES:
        OUTCOMES[page](session, text, "".join(printed), "".join(complained))
    print(f"{page}:", *log, sep="\n  ")


def run_transcript(session: Session, page: str,
                   block: Block) -> subprocess.CompletedProcess[str]:
    """A console block's commands, one by one, each checked against its shown output
    and expected exit status (doc_pages.Command); the block's result is its printout."""
    printed = []
    assert block.commands is not None
    for command in block.commands:
        result = session.run(Block(command.text, command.line, stop_after=block.stop_after),
                             merge=True)
        printed.append(result.stdout)
        where = f"{page}, line {command.line}: $ {command.text}"
        if command.fails:
            assert result.returncode != 0, f"{where}the page shows an error; it exited 0"
        else:
            assert result.returncode == 0, (
                f"{where}exited {result.returncode}:\n{result.stdout[-4000:]}")
        differs = command.mismatch(result.stdout, session.env["HOME"])
        assert differs is None, f"{where}{differs}"
    return subprocess.CompletedProcess(block.text, 0, "".join(printed), "")
