"""A private X server (Xvfb) for the apps the tests start, and the windows they show.

An app's window is waited for, not given a fixed time to appear: on a busy machine
QML can take many seconds to load (the limits are scaled, see deadlines.py)."""

from __future__ import annotations

import os
import re
import select
import signal
import subprocess
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path

from conftest import need
from deadlines import seconds, wait_for


@contextmanager
def private_display() -> Iterator[str]:
    """A new Xvfb on a free display number (it says which: -displayfd); ``:N``."""
    read_end, write_end = os.pipe()
    try:
        # -noreset: an X server resets when its last client leaves, and refuses whoever
        # connects meanwhile: an app starting as a poll's xwininfo leaves found no display.
        # --pdeathsig: a test process killed outright (no teardown) takes its X server.
        server = subprocess.Popen([need("setpriv"), "--pdeathsig", "TERM", "--",
                                   need("Xvfb"), "-displayfd", str(write_end), "-nolisten", "tcp",
                                   "-noreset", "-screen", "0", "1024x768x24"],
                                  pass_fds=(write_end,),
                                  stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    except BaseException:
        os.close(read_end)
        raise
    finally:
        os.close(write_end)
    with server, os.fdopen(read_end) as said:
        try:
            ready, _, _ = select.select([said], [], [], seconds(30))
            number = said.readline().strip() if ready else ""
            assert number.isdigit(), "Xvfb did not start"
            yield f":{number}"
        finally:
            server.terminate()
            try:
                server.wait(seconds(10))
            except subprocess.TimeoutExpired:
                server.kill()


_WINDOW = re.compile(r'^\s*0x[0-9a-f]+ "(.*)": \((.*)\)\s+\d+x\d+', re.M)


def window_tree(display: str) -> str:
    """``xwininfo -root -tree`` on ``display``."""
    return subprocess.run([need("xwininfo"), "-root", "-tree"], capture_output=True,
                          text=True, env={**os.environ, "DISPLAY": display},
                          timeout=seconds(30)).stdout


def windows(display: str) -> set[tuple[str, str]]:
    """(title, WM_CLASS) of the windows on ``display``."""
    return {(m.group(1), m.group(2)) for m in _WINDOW.finditer(window_tree(display))}


@contextmanager
def showing(argv: Sequence[str], title: str, env: dict[str, str], log: Path,
            cwd: Path | None = None, within: float = 60
            ) -> Iterator[tuple[subprocess.Popen[bytes], str]]:
    """``argv`` started on a private display (``env`` added to this environment, its
    output in ``log``), once it shows a window titled ``title``: (the app, the display).
    Stopped (with what it started) on leaving. An AssertionError with the window tree and the log when the
    window has not come within ``seconds(within)`` or the app ended first."""
    with private_display() as display, log.open("wb") as out, subprocess.Popen(
            argv, cwd=cwd, env={**os.environ, **env, "DISPLAY": display},
            stdin=subprocess.DEVNULL, stdout=out, stderr=subprocess.STDOUT,
            start_new_session=True) as app:
        try:
            def shown() -> bool:
                if app.poll() is not None:
                    raise AssertionError(f"{argv[0]} ended ({app.returncode}) before "
                                         f"showing {title!r}:\n{log.read_text(errors='replace')}")
                return f'"{title}": (' in window_tree(display)
            try:
                wait_for(shown, f"a window titled {title!r}", within)
            except AssertionError as e:
                raise AssertionError(f"{e}\nwindows:\n{window_tree(display)}\n"
                                     f"{log.name}:\n{log.read_text(errors='replace')}") from None
            yield app, display
        finally:
            try:
                os.killpg(app.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
