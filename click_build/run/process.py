"""Start an app in its own process group, pass its output and status on, stop it on time.

The app gets its own session (as the launcher gives each app its own unit), so
stopping it -- on ``--timeout``, Ctrl-C or SIGTERM to click-build -- reaches every
process it started that stays in its group (the launcher's unit, a cgroup, would also
hold one that called ``setsid``): SIGTERM to the group, then SIGKILL after a grace
period.

click-build killed outright (SIGKILL: an IDE's stop button, a test harness) cannot stop
anything, yet the app must not stay running (an app under qemu spins a CPU) with nobody
to stop it.  Two ties see to that: on Linux the app's first process gets SIGKILL when
click-build dies (``PR_SET_PDEATHSIG``), and a *keeper*, a tiny process of its own session
started before the app, reads a pipe only click-build holds: the app's group, then a
word when click-build lets the group go.  The pipe closing without that word (click-build
died) makes the keeper kill the app's whole group: the helpers the app started too.
"""

from __future__ import annotations

import ctypes
import os
import signal
import subprocess
import sys
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass

from .. import _console
from ..errors import RunError

__all__ = ["GRACE_SECONDS", "SignalGuard", "ask_to_stop", "end_group", "exit_status", "run_app",
           "start_app", "stop_group", "terminated_by_signals"]

GRACE_SECONDS = 3.0


class _Terminated(Exception):
    """click-build itself was asked to stop (SIGTERM, SIGHUP)."""


class SignalGuard:
    """Turns SIGINT/SIGTERM/SIGHUP into exceptions -- once armed.

    Before :meth:`arm` a signal is only noted: a stop asked for while the app is
    being started (inside ``Popen``) must not leave it running with nobody to stop
    it; :meth:`arm`, called once the process is known, raises it then.
    """

    def __init__(self, armed: bool) -> None:
        self.armed = armed
        self.pending: int | None = None

    def handler(self, signum: int, frame: object) -> None:
        if self.armed:
            self._raise(signum)
        self.pending = signum

    def arm(self) -> None:
        self.armed = True
        if self.pending is not None:
            self._raise(self.pending)

    @staticmethod
    def _raise(signum: int) -> None:
        if signum == signal.SIGINT:
            raise KeyboardInterrupt
        raise _Terminated(signum)


@contextmanager
def terminated_by_signals(armed: bool = True) -> Iterator[SignalGuard]:
    """Signals that ask click-build to stop become exceptions, so cleanup code runs."""
    guard = SignalGuard(armed)
    stops = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)
    previous = {s: signal.signal(s, guard.handler) for s in stops}
    try:
        yield guard
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


def ask_to_stop(proc: subprocess.Popen[bytes]) -> None:
    """SIGTERM to the app's process group, as the phone closes an app; see stop_group."""
    _killpg(proc.pid, signal.SIGTERM)


def stop_group(proc: subprocess.Popen[bytes], asked: bool = False) -> None:
    """SIGTERM the app's process group (unless ``asked`` already); SIGKILL whatever is
    left after the grace period."""
    if not asked:
        _killpg(proc.pid, signal.SIGTERM)
    try:
        proc.wait(GRACE_SECONDS)
    except subprocess.TimeoutExpired:
        pass
    _killpg(proc.pid, signal.SIGKILL)
    proc.wait()
    _let_go(proc.pid)


def exit_status(returncode: int) -> int:
    """The shell's convention: 128 + N for a process killed by signal N."""
    return 128 - returncode if returncode < 0 else returncode


#: The keeper's program.  Its pipe brings the app's group (the app writes it before it
#: runs), then a word when click-build lets the group go; the pipe's end without that word
#: means click-build died, and the group goes too.
_KEEPER = ("import os, signal, sys\n"
           "said = b''\n"
           "while not said.endswith(b'.'):\n"
           "    more = os.read(0, 64)\n"
           "    if not more:\n"
           "        group = said.split(b'\\n')[0]\n"
           "        if group.isdigit():\n"
           "            try:\n"
           "                os.killpg(int(group), signal.SIGKILL)\n"
           "            except OSError:\n"
           "                pass\n"
           "        break\n"
           "    said += more\n")


@dataclass
class _Keeper:
    """A running keeper (see the module's docstring) and the pipe's end it reads from."""

    proc: subprocess.Popen[bytes]
    pipe: int

    @classmethod
    def start(cls) -> _Keeper | None:
        """None if no process could be started: the app's first process is still tied."""
        read, write = os.pipe()  # not inherited by what click-build starts (PEP 446)
        try:
            # click-build's number is there for ps to show whose keeper it is
            proc = subprocess.Popen([sys.executable, "-I", "-S", "-c", _KEEPER, str(os.getpid())],
                                    stdin=read,
                                    stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                                    start_new_session=True)
        except OSError:
            os.close(write)
            return None
        finally:
            os.close(read)
        return cls(proc, write)

    def let_go(self) -> None:
        """The group has ended: the keeper ends without a kill (its number may be reused)."""
        try:
            os.write(self.pipe, b".")
        except OSError:  # the keeper is gone already
            pass
        os.close(self.pipe)
        self.proc.wait()


#: The keeper of each running app, by the app's group.
_keepers: dict[int, _Keeper] = {}

_PR_SET_PDEATHSIG = 1


def _tied_to_us(keeper: _Keeper | None) -> Callable[[], None] | None:
    """What the child runs before the app: on Linux, SIGKILL when click-build's thread
    that started it ends; an end at once if click-build ended while it forked; its group
    told to the keeper before the app runs, so that no moment is left uncovered."""
    prctl = None
    if sys.platform.startswith("linux"):
        try:
            prctl = ctypes.CDLL(None, use_errno=True).prctl  # looked up before the fork
        except (OSError, AttributeError):
            pass
    if prctl is None and keeper is None:
        return None
    parent = os.getpid()
    pipe = None if keeper is None else keeper.pipe

    def tie() -> None:
        if prctl is not None:
            prctl(_PR_SET_PDEATHSIG, signal.SIGKILL)
        if os.getppid() != parent:
            os._exit(1)
        if pipe is not None:  # the app's own session: its group is its process number
            try:
                os.write(pipe, b"%d\n" % os.getpid())
            except OSError:  # the keeper is gone (killed): the first process is still tied
                pass

    return tie


def start_app(argv: Sequence[str], cwd: str, env: Mapping[str, str], label: str
              ) -> subprocess.Popen[bytes]:
    """The app started in a session of its own, with the caller's stdout and stderr; it
    never outlives click-build (see the module's docstring).  :func:`stop_group` or
    :func:`end_group` ends it."""
    keeper = _Keeper.start()
    try:
        proc = _popen(argv, cwd, env, label, _tied_to_us(keeper))
    except BaseException:
        if keeper is not None:
            keeper.let_go()
        raise
    if keeper is not None:
        _keepers[proc.pid] = keeper
    return proc


def _popen(argv: Sequence[str], cwd: str, env: Mapping[str, str], label: str,
           tie: Callable[[], None] | None) -> subprocess.Popen[bytes]:
    try:
        return subprocess.Popen(list(argv), cwd=cwd, env=dict(env), stdin=subprocess.DEVNULL,
                                start_new_session=True, preexec_fn=tie)
    except OSError as e:
        raise RunError(f"cannot start {argv[0]!r} for {label}: {e.strerror}") from None
    except ValueError:  # a NUL: the launch's fields are checked before, this is the net
        raise RunError(f"cannot start {argv[0]!r} for {label}: its command or "
                       "environment holds a NUL character") from None


def _let_go(group: int) -> None:
    keeper = _keepers.pop(group, None)
    if keeper is not None:
        keeper.let_go()


def end_group(proc: subprocess.Popen[bytes]) -> int:
    """The exit status of an app that ended; helpers it left behind go with it, as with
    the launcher."""
    _killpg(proc.pid, signal.SIGTERM)
    status = exit_status(proc.wait())
    _let_go(proc.pid)
    return status


def run_app(argv: Sequence[str], cwd: str, env: Mapping[str, str], timeout: float | None,
            label: str) -> int:
    """Run the app with the caller's stdout/stderr; return its exit status.

    With ``timeout``, the app is stopped after that many seconds and the
    status is 0: it ran that long without failing.
    """
    with terminated_by_signals(armed=False) as guard:
        proc = start_app(argv, cwd, env, label)
        try:
            guard.arm()  # a stop asked for while starting it is acted on now
            proc.wait(timeout)
        except subprocess.TimeoutExpired:
            stop_group(proc)
            _console.info(f"click-build: stopped {label} after {timeout:g} s (--timeout)")
            return 0
        except BaseException:
            stop_group(proc)
            raise
    return end_group(proc)
