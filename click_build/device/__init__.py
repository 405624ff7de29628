"""``click-build device``: a phone reached over ssh or adb.

A :class:`Device` runs POSIX shell scripts on the phone (captured, with a
timeout, or streamed for ``logs``), copies files to it and opens a shell.
:mod:`.ssh` and :mod:`.adb` are the two transports, :mod:`.choose` picks one
from the options, ``$CLICK_BUILD_DEVICE`` or the one attached adb device, and
:mod:`.remote` holds what runs on the phone (install, list, launch, logs).
"""

from __future__ import annotations

import shlex
import subprocess
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from typing import BinaryIO

from ..errors import DeviceError

__all__ = ["DEFAULT_TIMEOUT", "Device", "Result", "remote_command"]

#: Seconds a captured command may take before click-build gives up on the phone.
DEFAULT_TIMEOUT = 60.0
_MAX_LINE = 300


@dataclass(frozen=True)
class Result:
    returncode: int
    stdout: str
    stderr: str

    def last_line(self) -> str:
        """The phone's last word, made fit for one line of ours (printable, bounded)."""
        lines = [line.strip() for line in (self.stderr + "\n" + self.stdout).splitlines()]
        lines = [line for line in lines if line and not line.startswith("click-build-")]
        if not lines:
            return f"exit status {self.returncode}"
        text = "".join(ch if ch.isprintable() else "?" for ch in lines[-1])
        return text if len(text) <= _MAX_LINE else text[:_MAX_LINE] + "..."


def remote_command(script: str, args: Sequence[str]) -> str:
    """``sh -c SCRIPT sh ARGS...`` as one string for the phone's login shell."""
    return " ".join(["sh", "-c", shlex.quote(script), "sh", *(shlex.quote(a) for a in args)])


class Device:
    """One phone. Subclasses build the transport's command lines."""

    label = "the device"
    #: Whether the far side sees our stdin (then a followed log stops when we stop).
    forwards_stdin = False

    def run(self, script: str, args: Sequence[str] = (), timeout: float = DEFAULT_TIMEOUT,
            what: str = "") -> Result:
        """Run ``script`` with ``args`` ($1...) and capture its output."""
        raise NotImplementedError

    def stream(self, script: str, args: Sequence[str] = (), follow: bool = False) -> int:
        """Run ``script`` with its output on ours; ``follow``: until Ctrl-C."""
        raise NotImplementedError

    def push(self, local: str, remote: str, timeout: float = 600.0) -> None:
        raise NotImplementedError

    def shell(self) -> int:
        raise NotImplementedError

    def _capture(self, argv: list[str], timeout: float, what: str,
                 stdin: BinaryIO | None = None) -> Result:
        try:
            done = subprocess.run(argv, stdin=stdin or subprocess.DEVNULL, capture_output=True,
                                  timeout=timeout, check=False)
        except subprocess.TimeoutExpired:
            raise DeviceError(f"{self.label} did not finish {what or 'the command'} within "
                              f"{timeout:g} s: check that it is on and reachable") from None
        except OSError as e:
            raise DeviceError(f"cannot run {argv[0]}: {e.strerror}") from None
        return Result(done.returncode, done.stdout.decode("utf-8", "replace"),
                      done.stderr.decode("utf-8", "replace"))

    def _stream(self, argv: list[str], stdin: str = "null") -> int:
        """Output passed through.  ``stdin``: "null", "inherit" (a shell), or "pipe":
        a pipe we never write, so the far side sees EOF (and stops following) as
        soon as click-build stops."""
        choice = {"null": subprocess.DEVNULL, "inherit": None, "pipe": subprocess.PIPE}[stdin]
        try:
            proc = subprocess.Popen(argv, stdin=choice)
        except OSError as e:
            raise DeviceError(f"cannot run {argv[0]}: {e.strerror}") from None
        try:
            return proc.wait()
        except BaseException:
            if proc.stdin is not None:
                proc.stdin.close()
            try:
                proc.wait(5)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()
            raise
        finally:
            sys.stdout.flush()
