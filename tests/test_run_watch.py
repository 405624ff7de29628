"""`click-build run --watch`: every saved edit reaches the running app without a new
command, one line per change; a broken edit is shown and the loop goes on; Ctrl-C ends
it all.  The template apps run for real under a private Xvfb, their windows read back
with xwininfo; nothing here sleeps a fixed time: each step waits for the fact itself.
"""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import urllib.request
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest
from conftest import CLICK_BUILD, ROOT, assert_clean_error
from deadlines import seconds, wait_for
from run_support import LineReader, ended
from templates_support import new, project_of
from xdisplay import window_tree

from click_build.errors import RunError
from click_build.run.watch import Poller, describe

#: What a Qt app needs to open a window on the private X server (software GL).
X_ENV = {"LIBGL_ALWAYS_SOFTWARE": "1", "QT_QPA_PLATFORM": "xcb"}


class Watching:
    """``click-build run --watch PROJECT`` on a display: its stdout read line by line,
    its stderr in a file, the windows on the display."""

    def __init__(self, proc: subprocess.Popen[bytes], err: Path, display: str) -> None:
        self.proc = proc
        assert proc.stdout is not None
        self.out = LineReader(proc.stdout)
        self.err = err
        self.display = display
        self.said: list[str] = []
        #: The app's lines read so far and not yet asked for by :meth:`app_line`.
        self.heard: list[str] = []

    def line(self, wanted: Callable[[str], bool], what: str, within: float = 120) -> str:
        """The next line of click-build's own (``click-build: ...``) that ``wanted``
        accepts; every such line before it is kept in ``said``, the app's in ``heard``."""
        def ours(text: str) -> bool:
            if text.startswith("click-build: "):
                self.said.append(text)
                return wanted(text)
            self.heard.append(text)
            return False

        found = self.out.until(ours, within)
        assert found, f"click-build ended before saying {what}; said {self.said}\n{self.errors()}"
        return found

    def app_line(self, text: str, within: float = 120) -> None:
        """The app printed the line ``text``: already, or within the limit.  A restarted
        app may print before click-build says it restarted it (they share the pipe)."""
        if text in self.heard:
            self.heard = self.heard[self.heard.index(text) + 1:]
            return
        self.heard = []
        assert self.out.until(lambda t: t == text, within), \
            f"the app did not print {text!r}; click-build said {self.said}\n{self.errors()}"

    def window(self, title: str, within: float = 60) -> None:
        def shown() -> bool:
            assert self.proc.poll() is None, f"click-build ended: {self.errors()}"
            return f'"{title}": (' in window_tree(self.display)

        try:
            wait_for(shown, f"a window titled {title!r}", within)
        except AssertionError as e:
            raise AssertionError(f"{e}\nwindows:\n{window_tree(self.display)}\nsaid: "
                                 f"{self.said}\n{self.errors()}") from None

    def titles(self) -> str:
        return window_tree(self.display)

    def errors(self) -> str:
        return self.err.read_text(errors="replace")


@contextmanager
def watching(project: Path, display: str, tmp: Path, *args: str,
             env: dict[str, str] | None = None) -> Iterator[Watching]:
    err = tmp / "watch.stderr"
    with err.open("wb") as e, subprocess.Popen(
            [*CLICK_BUILD, "run", "--watch", *args, str(project)],
            env={**os.environ, **X_ENV, "DISPLAY": display, **(env or {})},
            stdout=subprocess.PIPE, stderr=e) as proc:
        try:
            yield Watching(proc, err, display)
        finally:
            if proc.poll() is None:
                proc.send_signal(signal.SIGINT)
            ended(proc)


def retitle(main: Path, title: str) -> None:
    """Save Main.qml with another page title, as an editor does: a new file renamed over
    the old one (vim, most IDEs)."""
    text = re.sub(r'i18n\.tr\("\w+ Timer"\)', f'i18n.tr("{title}")', main.read_text())
    scratch = main.with_name(".Main.qml.swp")
    scratch.write_text(text)
    scratch.rename(main)


@pytest.mark.slow
def test_a_qml_edit_shows_without_a_new_command(public_tmp: Path, display: str) -> None:
    """The edited title shows in the window; a syntax error is shown (Qt's message) and
    the loop goes on, and the fixed edit shows; an edit outside the package restarts
    nothing; Ctrl-C ends it, app and all."""
    new(public_tmp / "src", "qml", {"title": "Tea Timer", "namespace": "jane"})
    project = project_of(public_tmp / "src")
    main = project / "qml" / "Main.qml"
    with watching(project, display, public_tmp) as run:
        run.line(lambda t: t.startswith("click-build: watching "), "that it watches")
        run.window("Tea Timer")
        retitle(main, "Coffee Timer")
        said = run.line(lambda t: "changed" in t, "what changed")
        assert re.fullmatch(r"click-build: qml/Main\.qml changed: restarted "
                            r"tea-timer\.jane_tea-timer_1\.0\.0 \(built and installed in "
                            r"\d+\.\d\d s\)\n", said), said
        run.window("Coffee Timer")
        assert '"Tea Timer": (' not in run.titles()
        (project / "README.md").write_text("Notes of mine.\n")  # left out of the package
        said = run.line(lambda t: "changed" in t, "the README edit")
        assert said == ("click-build: README.md changed: the package is the same: nothing to "
                        "restart\n")

        main.write_text(main.read_text().replace("MainView {", "MainView { oops oops", 1))
        run.line(lambda t: "changed" in t, "the broken edit")
        said = run.line(lambda t: "ended with status" in t, "that the app ended")
        assert said == ("click-build: tea-timer.jane_tea-timer_1.0.0 ended with status 255; "
                        "watching for changes (Ctrl-C stops)\n")
        assert "qml/Main.qml:12 Expected token `:'" in run.errors()

        retitle(main, "Milk Timer")
        main.write_text(main.read_text().replace("MainView { oops oops", "MainView {", 1))
        run.line(lambda t: "restarted" in t, "the fixed edit")
        run.window("Milk Timer")
        run.proc.send_signal(signal.SIGINT)
        assert ended(run.proc) == 130
    wait_for(lambda: '"Milk Timer": (' not in window_tree(display), "the window to close")
    assert run.errors().endswith("click-build: interrupted\n")


@pytest.mark.slow
def test_a_python_edit_restarts_the_app(public_tmp: Path, display: str) -> None:
    new(public_tmp / "src", "python", {"title": "Tea Timer", "namespace": "jane"})
    project = project_of(public_tmp / "src")
    module = next((project / "src").glob("*/__init__.py"))
    with watching(project, display, public_tmp) as run:
        run.window("Tea Timer")
        module.write_text(module.read_text() + '\nprint("python, second build", flush=True)\n')
        said = run.line(lambda t: "changed" in t, "what changed")
        assert said.startswith(f"click-build: {module.relative_to(project)} changed: restarted "
                               "tea-timer.jane_tea-timer_1.0.0"), said
        run.app_line("python, second build\n")  # the new Python ran
        run.window("Tea Timer")


@pytest.mark.slow
def test_a_cpp_edit_rebuilds_and_restarts_and_a_compile_error_keeps_the_app(
        public_tmp: Path, display: str) -> None:
    new(public_tmp / "src", "cpp", {"title": "Tea Timer", "namespace": "jane"})
    project = project_of(public_tmp / "src")
    main = project / "src" / "main.cpp"
    source = main.read_text()
    with watching(project, display, public_tmp) as run:
        run.window("Tea Timer", within=300)
        main.write_text(source.replace("int main(int argc, char *argv[])\n{",
                                       "int main(int argc, char *argv[])\n{\n    broken here;"))
        said = run.line(lambda t: "changed" in t, "the broken edit", within=300)
        assert said == ("click-build: src/main.cpp changed: the build failed (above); "
                        "tea-timer.jane_tea-timer_1.0.0 keeps running the last build\n"), said
        assert "broken" in run.errors() and "error" in run.errors()  # the compiler's message
        assert '"Tea Timer": (' in run.titles()  # the last build still runs
        main.write_text("#include <cstdio>\n" + source.replace(
            "int main(int argc, char *argv[])\n{",
            'int main(int argc, char *argv[])\n{\n    std::puts("C++, second build");\n'
            "    std::fflush(stdout);"))
        said = run.line(lambda t: "changed" in t, "the fixed edit", within=300)
        assert "src/main.cpp changed: restarted tea-timer.jane_tea-timer_1.0.0" in said, said
        run.app_line("C++, second build\n")
        run.window("Tea Timer")


def test_watch_needs_a_project_and_no_print_env(public_tmp: Path) -> None:
    package = public_tmp / "app.click"
    package.write_bytes(b"!<arch>\n")
    result = subprocess.run([*CLICK_BUILD, "run", "--watch", str(package)], capture_output=True,
                            text=True, timeout=seconds(60))
    assert_clean_error(result, "--watch needs a project folder (a package file does not change)")
    result = subprocess.run([*CLICK_BUILD, "run", "--watch", "--print-env", str(public_tmp)],
                            capture_output=True, text=True, timeout=seconds(60))
    assert_clean_error(result, "--watch runs the app again at every change; --print-env "
                               "prints how to start it once: give one of them")


# --- what is watched ---------------------------------------------------------------------

#: The watch in a process of its own, as run --watch holds it: one JSON line when it is
#: ready, then one per answer of changes() that is not empty.
WATCH_CHILD = """
import json, select, sys, time
from click_build.run import watch as w
kind, root, limit = sys.argv[1], sys.argv[2], int(sys.argv[3])
if limit:
    w.MAX_FOLDERS = limit
try:
    tree = (w.Watcher if kind == "inotify" else w.Poller)(root, w.skipped_folders(root))
except (w.NoInotify, w.RunError) as e:
    print(json.dumps({"error": type(e).__name__ + ": " + str(e)}), flush=True)
    sys.exit(0)
print(json.dumps({"ready": tree.fd is not None}), flush=True)
while True:
    if tree.fd is not None:
        select.select([tree.fd], [], [])
    else:
        time.sleep(tree.interval)
    found = tree.changes()
    if found:
        print(json.dumps({"changes": found}), flush=True)
"""


@contextmanager
def watch_child(kind: str, root: Path, limit: int = 0) -> Iterator[Callable[[], dict[str, Any]]]:
    """The watch of ``root`` in a child process; yields "the child's next message".

    As root, the child runs as an unprivileged user id: inotify instances are counted
    per user, and root's may all be held by long-lived daemons of other programs (gpg
    agents); another user's are the child's own, and it can read ``root`` (public_tmp).
    """
    user = ["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups", "--"] \
        if os.geteuid() == 0 else []
    with subprocess.Popen([*user, "/usr/bin/python3", "-P", "-c", WATCH_CHILD, kind, str(root),
                           str(limit)], env={"PYTHONPATH": str(ROOT), "PATH": os.defpath},
                          stdout=subprocess.PIPE, stderr=subprocess.PIPE) as proc:
        assert proc.stdout is not None
        reader = LineReader(proc.stdout)

        def message() -> dict[str, Any]:
            line = reader.line(60)
            assert line, proc.stderr.read().decode() if proc.stderr else "no message"
            return json.loads(line)  # type: ignore[no-any-return]

        try:
            yield message
        finally:
            proc.kill()


@pytest.mark.parametrize("kind", ["inotify", "poll"])
def test_the_watch_sees_saves_and_ignores_what_is_not_the_apps(public_tmp: Path,
                                                              kind: str) -> None:
    project = public_tmp / "app"
    for folder in ("qml", "build/click-run", "dist", ".git", "src/__pycache__", "out/x86_64",
                   "node_modules/lib"):
        (project / folder).mkdir(parents=True)
    (project / "pyproject.toml").write_text('[tool.click-build]\nkind = "qml"\n'
                                            'build-dir = "out/{arch}"\n')
    outside = public_tmp / "outside"
    outside.mkdir()
    (project / "qml" / "elsewhere").symlink_to(outside)  # never followed
    with watch_child(kind, project) as message:
        assert message() == {"ready": kind == "inotify"}
        for ignored in ("build/click-run/x.click", "dist/app.click", ".git/index",
                        "src/__pycache__/a.pyc", "out/x86_64/CMakeCache.txt",
                        "node_modules/lib/x.js", "qml/.Main.qml.swp", "qml/Main.qml~",
                        "qml/#Main.qml#", "qml/4913", "qml/elsewhere/Other.qml"):
            (project / ignored).write_text("x")
        (project / "qml" / "Main.qml").write_text("Item {}\n")
        assert message() == {"changes": ["qml/Main.qml"]}
        (project / "qml" / "sedAb12Cd").write_text("Item { }\n")  # as sed -i saves
        (project / "qml" / "sedAb12Cd").rename(project / "qml" / "Main.qml")
        assert message() == {"changes": ["qml/Main.qml"]}
        (project / "qml" / "pages").mkdir()
        (project / "qml" / "pages" / "Page.qml").write_text("Item {}\n")
        seen = set(message()["changes"])
        assert seen & {"qml/pages/Page.qml", "qml/pages/"}, seen
        (project / "qml" / "pages" / "Page.qml").write_text("Item { }\n")  # watched now
        assert message() == {"changes": ["qml/pages/Page.qml"]}
        (project / "qml" / "pages").rename(project / "qml" / "moved")
        seen = set(message()["changes"])
        assert seen & {"qml/moved/", "qml/moved/Page.qml"}, seen
        (project / "qml" / "moved" / "Page.qml").write_text("Item {  }\n")
        assert message() == {"changes": ["qml/moved/Page.qml"]}


def test_a_project_too_large_to_watch_is_one_line(public_tmp: Path,
                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    from click_build.run import watch as watch_module

    monkeypatch.setattr(watch_module, "MAX_FILES", 3)
    for n in range(5):
        (public_tmp / f"d{n}").mkdir()
        (public_tmp / f"f{n}").write_text("x")
    with pytest.raises(RunError, match="holds more than 3 files to look at"):
        Poller(str(public_tmp))
    with watch_child("inotify", public_tmp, limit=3) as message:
        assert message() == {"error": f"RunError: {public_tmp} holds more than 3 folders to "
                                      "watch (build/, dist/ and hidden folders left out): "
                                      "watch the app's own folder"}


def test_what_changed_in_one_line() -> None:
    assert describe(["qml/Main.qml"]) == "qml/Main.qml"
    assert describe(["a", "b"]) == "a and b"
    assert describe(["a", "b", "c"]) == "a and 2 more"
    assert describe(["*"]) == "many files"


@pytest.mark.slow
def test_served_html_pages_load_again_after_an_edit(public_tmp: Path) -> None:
    """No webapp-container: the pages run in a browser, which is told (server-sent events)
    to load them again once the edit is built and installed; the server keeps its address."""
    new(public_tmp / "src", "html5", {"title": "Tea Timer", "namespace": "jane"})
    project = project_of(public_tmp / "src")
    tools = public_tmp / "bin"
    tools.mkdir()  # no webapp-container on PATH, whatever this machine has
    err = public_tmp / "stderr"
    with err.open("wb") as e, subprocess.Popen(
            [*CLICK_BUILD, "run", "--watch", str(project)], env={**os.environ,
                                                                 "PATH": str(tools)},
            stdout=subprocess.PIPE, stderr=e) as proc:
        try:
            assert proc.stdout is not None
            out = LineReader(proc.stdout)
            line = out.until(lambda t: "serving" in t)
            url = re.search(r"http://127\.0\.0\.1:\d+/www/index\.html", line)
            assert url, line + err.read_text()
            with urllib.request.urlopen(url.group(0), timeout=seconds(10)) as response:
                page = response.read().decode()
            assert "<title>Tea Timer</title>" in page
            live = re.search(r'new EventSource\("(/\.click-build/events\?since=\d+)"\)', page)
            assert live, page
            events = urllib.request.urlopen(url.group(0).split("/www/")[0] + live.group(1),
                                            timeout=seconds(60))
            index = project / "www" / "index.html"
            index.write_text(index.read_text().replace("<title>Tea Timer", "<title>Milk Timer"))
            said = out.until(lambda t: "changed" in t)
            assert said == ("click-build: www/index.html changed: the pages of "
                            "tea-timer.jane_tea-timer_1.0.0 load again (built and installed in "
                            f"{said.rsplit('in ', 1)[1].split(' s)')[0]} s)\n"), said
            with events:
                assert events.readline() == b"data: reload\n"
            with urllib.request.urlopen(url.group(0), timeout=seconds(10)) as response:
                assert "<title>Milk Timer</title>" in response.read().decode()
        finally:
            proc.send_signal(signal.SIGINT)
            ended(proc)
    assert proc.returncode == 130


@pytest.mark.slow
def test_the_benchmark_runs(public_tmp: Path) -> None:
    """benchmarks/bench_run_watch.py in its quick mode (figures not judged): it still
    drives run --watch and a new command to a shown window, and says how it measured."""
    proc = subprocess.run([sys.executable, str(ROOT / "benchmarks" / "bench_run_watch.py"),
                           "--quick", "--keep", str(public_tmp)], capture_output=True, text=True,
                          timeout=seconds(600))
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "How it was measured:" in proc.stdout
    assert re.search(r"run --watch \(save -> new title shown\) +median +\d+\.\d+ s", proc.stdout)
    assert re.search(r"a new `click-build run` after the save +median", proc.stdout)
    assert re.search(r"run --watch / new command: \d+\.\d\dx", proc.stdout)
