"""What the tests of ``run`` and ``device`` share: a child's output read line by line
within a limit, a child ended for sure, and a private X server as a fixture (a test
module that needs it imports ``display``).  Limits are what an idle machine needs,
scaled by deadlines.seconds for a busy one."""

from __future__ import annotations

import os
import select
import subprocess
import time
from collections.abc import Callable, Iterator
from typing import IO

import pytest
from deadlines import seconds
from xdisplay import private_display

__all__ = ["LineReader", "display", "ended"]


def ended(proc: subprocess.Popen[str] | subprocess.Popen[bytes], within: float = 60) -> int:
    """Wait for ``proc`` to end on its own; kill it (and fail) if it has not by then."""
    try:
        return proc.wait(seconds(within))
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()
        raise AssertionError(f"{proc.args!r} did not end within {seconds(within):.0f} s") \
            from None


class LineReader:
    """The lines of a child's pipe, each read within a limit (``readline()`` alone waits
    forever for a line that never comes)."""

    def __init__(self, stream: IO[str] | IO[bytes]) -> None:
        self.fd = stream.fileno()
        self.buffer = b""
        self.eof = False

    def line(self, within: float = 60) -> str:
        """The next line with its newline; what is left (maybe "") at end of file."""
        deadline = time.monotonic() + seconds(within)
        while b"\n" not in self.buffer and not self.eof:
            ready, _, _ = select.select([self.fd], [], [], max(deadline - time.monotonic(), 0))
            if not ready:
                raise AssertionError(f"no line within {seconds(within):.0f} s; so far: "
                                     f"{self.buffer!r}")
            chunk = os.read(self.fd, 65536)
            self.buffer += chunk
            self.eof = not chunk
        head, newline, self.buffer = self.buffer.partition(b"\n")
        return (head + newline).decode("utf-8", "replace")

    def until(self, wanted: Callable[[str], bool], within: float = 60) -> str:
        """The first line ``wanted`` accepts ("" if the pipe ends first)."""
        deadline = time.monotonic() + seconds(within)
        while True:
            text = self.line(max(deadline - time.monotonic(), 0) / seconds(1))
            if not text or wanted(text):
                return text


@pytest.fixture
def display() -> Iterator[str]:
    """A private Xvfb's display (xdisplay.private_display)."""
    with private_display() as number:
        yield number
