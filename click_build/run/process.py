"""Start an app in its own process group, pass its output and status on, stop it on time.

The app gets its own session (as the launcher gives each app its own unit), so
stopping it -- on ``--timeout``, Ctrl-C or SIGTERM to click-build -- reaches every
process it started: SIGTERM to the group, then SIGKILL after a grace period.
"""

from __future__ import annotations

import os
import signal
import subprocess
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager

from .. import _console
from ..errors import RunError

__all__ = ["GRACE_SECONDS", "exit_status", "run_app", "stop_group", "terminated_by_signals"]

GRACE_SECONDS = 3.0


class _Terminated(Exception):
    """click-build itself was asked to stop (SIGTERM, SIGHUP)."""


def _raise_terminated(signum: int, frame: object) -> None:
    raise _Terminated(signum)


@contextmanager
def terminated_by_signals() -> Iterator[None]:
    """Turn SIGTERM/SIGHUP into an exception, so cleanup code runs before exiting."""
    previous = {s: signal.signal(s, _raise_terminated) for s in (signal.SIGTERM, signal.SIGHUP)}
    try:
        yield
    except _Terminated:
        raise KeyboardInterrupt from None
    finally:
        for s, handler in previous.items():
            signal.signal(s, handler)


def _killpg(pgid: int, sig: int) -> None:
    try:
        os.killpg(pgid, sig)
    except (ProcessLookupError, PermissionError):
        pass


def stop_group(proc: subprocess.Popen[bytes]) -> None:
    """SIGTERM the app's process group; SIGKILL whatever is left after the grace period."""
    _killpg(proc.pid, signal.SIGTERM)
    try:
        proc.wait(GRACE_SECONDS)
    except subprocess.TimeoutExpired:
        pass
    _killpg(proc.pid, signal.SIGKILL)
    proc.wait()


def exit_status(returncode: int) -> int:
    """The shell's convention: 128 + N for a process killed by signal N."""
    return 128 - returncode if returncode < 0 else returncode


def run_app(argv: Sequence[str], cwd: str, env: Mapping[str, str], timeout: float | None,
            label: str) -> int:
    """Run the app with the caller's stdout/stderr; return its exit status.

    With ``timeout``, the app is stopped after that many seconds and the
    status is 0: it ran that long without failing.
    """
    try:
        proc = subprocess.Popen(list(argv), cwd=cwd, env=dict(env), stdin=subprocess.DEVNULL,
                                start_new_session=True)
    except OSError as e:
        raise RunError(f"cannot start {argv[0]!r} for {label}: {e.strerror}") from None
    with terminated_by_signals():
        try:
            returncode = proc.wait(timeout)
        except subprocess.TimeoutExpired:
            stop_group(proc)
            _console.info(f"click-build: stopped {label} after {timeout:g} s (--timeout)")
            return 0
        except BaseException:
            stop_group(proc)
            raise
    _killpg(proc.pid, signal.SIGTERM)  # helpers it left behind go with it, as with the launcher
    return exit_status(returncode)
