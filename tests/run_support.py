"""Waiting in the tests of ``run`` and ``device``: for a fact, with a deadline a loaded
machine meets, never a fixed sleep; processes opened with ``with`` and ended for sure.

Also the private X server those tests watch windows on (``display``, a fixture: a test
module that needs it imports it).
"""

from __future__ import annotations

import os
import re
import select
import subprocess
import time
from collections.abc import Callable, Iterator
from typing import IO, TypeVar

import pytest
from conftest import need

__all__ = ["DEADLINE", "LineReader", "display", "ended", "wait_for", "windows"]

#: Seconds to wait for something that takes well under one on an idle machine: only a
#: test that is failing anyway ever waits this long.
DEADLINE = 600.0

T = TypeVar("T")


def wait_for(fact: Callable[[], T], what: str, timeout: float = DEADLINE) -> T:
    """``fact()`` once it is true (polled), or AssertionError after ``timeout`` seconds."""
    deadline = time.monotonic() + timeout
    pause = 0.01
    while True:
        value = fact()
        if value:
            return value
        if time.monotonic() > deadline:
            raise AssertionError(f"waited {timeout:g} s for {what}")
        time.sleep(pause)
        pause = min(pause * 2, 0.25)


def ended(proc: subprocess.Popen[str] | subprocess.Popen[bytes],
          timeout: float = DEADLINE) -> int:
    """Wait for ``proc`` to end on its own; kill it if it has not by then."""
    try:
        return proc.wait(timeout)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()
        raise AssertionError(f"{proc.args!r} did not end within {timeout:g} s") from None


class LineReader:
    """The lines of a child's pipe, each read with a deadline (``readline()`` alone waits
    forever when the line never comes)."""

    def __init__(self, stream: IO[str] | IO[bytes]) -> None:
        self.fd = stream.fileno()
        self.buffer = b""
        self.eof = False

    def line(self, timeout: float = DEADLINE) -> str:
        """The next line with its newline; what is left (maybe "") at end of file."""
        deadline = time.monotonic() + timeout
        while b"\n" not in self.buffer and not self.eof:
            left = deadline - time.monotonic()
            ready, _, _ = select.select([self.fd], [], [], max(left, 0))
            if not ready:
                raise AssertionError(f"no line within {timeout:g} s; so far: {self.buffer!r}")
            chunk = os.read(self.fd, 65536)
            self.buffer += chunk
            self.eof = not chunk
        head, newline, self.buffer = self.buffer.partition(b"\n")
        return (head + newline).decode("utf-8", "replace")

    def until(self, wanted: Callable[[str], bool], timeout: float = DEADLINE) -> str:
        """The first line ``wanted`` accepts ("" if the pipe ends first)."""
        deadline = time.monotonic() + timeout
        while True:
            text = self.line(max(deadline - time.monotonic(), 0))
            if not text or wanted(text):
                return text


@pytest.fixture
def display() -> Iterator[str]:
    """A private Xvfb; it picks a free display number and says which (-displayfd)."""
    xvfb = need("Xvfb")
    need("xwininfo")
    read, write = os.pipe()
    try:
        # -noreset: by default an X server resets when its last client leaves, and the
        # app connecting just as the tests' xwininfo leaves could find it resetting.
        with subprocess.Popen([xvfb, "-displayfd", str(write), "-screen", "0", "1024x768x24",
                               "-nolisten", "tcp", "-noreset"], pass_fds=[write],
                              stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL) as proc:
            os.close(write)
            write = -1
            try:
                ready, _, _ = select.select([read], [], [], DEADLINE)
                number = os.read(read, 32).decode().strip() if ready else ""
                assert number.isdigit(), "Xvfb did not start"
                yield f":{number}"
            finally:
                proc.terminate()
                ended(proc)
    finally:
        os.close(read)
        if write != -1:
            os.close(write)


_WINDOW = re.compile(r'^\s*0x[0-9a-f]+ "(.*)": \((.*)\)\s+\d+x\d+', re.M)


def windows(display: str) -> set[tuple[str, str]]:
    """(title, WM_CLASS) of the windows on ``display``."""
    out = subprocess.run(["xwininfo", "-root", "-tree"], env={**os.environ, "DISPLAY": display},
                         capture_output=True, text=True, timeout=DEADLINE).stdout
    return {(m.group(1), m.group(2)) for m in _WINDOW.finditer(out)}
