"""User-facing output: progress on a terminal, plain lines otherwise, silence with -q.

Warnings, progress and error lines go through here; :mod:`logging` is only for debug
detail under ``--verbose`` (it is not imported otherwise, to keep start-up fast).
Every route (the command line, the PEP 517 hooks, the setuptools command) prints its
errors with :func:`error`, :func:`print_error` or :func:`print_os_error`, so each is one
line with its control characters escaped, whoever prints it.
"""

from __future__ import annotations

import os
import sys
import time

TYPE_CHECKING = False  # not typing.TYPE_CHECKING: importing typing costs start-up time

if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import TextIO

    from .errors import ClickError


__all__ = ["PROG", "Progress", "StdoutFd", "configure", "debug", "error", "error_line",
           "expecting", "info", "is_quiet", "note", "one_line", "print_error", "print_os_error",
           "quieted", "setup_logging", "warn"]

#: The program's name, as every message and usage line starts.
PROG = "click-build"

_quiet = False
_verbose = False
#: Topics of warnings the running command asked for (see :class:`expecting`).
_expected: set[str] = set()


def configure(quiet: bool = False, verbose: bool = False) -> None:
    global _quiet, _verbose
    _quiet = quiet
    _verbose = verbose and not quiet


def debug(message: str) -> None:
    """Detail for ``--verbose`` runs, on stderr."""
    if _verbose:
        print(f"click-build: {message}", file=sys.stderr, flush=True)


def is_quiet() -> bool:
    return _quiet


class StdoutFd:
    """``with StdoutFd(fd):`` file descriptor 1, where the programs a build starts write,
    points at ``fd`` for the block, then back.  ``saved`` is a descriptor of the stdout
    it replaced while the block runs (None when the process has no stdout: then nothing
    is redirected)."""

    def __init__(self, target: int) -> None:
        self.target = target
        self.saved: int | None = None

    def __enter__(self) -> StdoutFd:
        sys.stdout.flush()
        try:
            self.saved = os.dup(1)
        except OSError:
            return self
        os.dup2(self.target, 1)
        return self

    def __exit__(self, *exc: object) -> None:
        if self.saved is not None:
            sys.stdout.flush()
            os.dup2(self.saved, 1)
            os.close(self.saved)
            self.saved = None


def _colour(stream: TextIO) -> bool:
    if os.environ.get("NO_COLOR"):
        return False
    if os.environ.get("FORCE_COLOR"):
        return True
    return stream.isatty()


def info(message: str) -> None:
    """A line for the user on stdout, unless quiet."""
    if not _quiet:
        print(message, flush=True)


def note(message: str) -> None:
    """A line about what a command did on stderr, unless quiet: stdout stays for what
    scripts read (the original's installer logs these through GLib, on stderr)."""
    if not _quiet:
        print(message, file=sys.stderr, flush=True)


def warn(message: str, topic: str = "") -> None:
    """A warning on stderr; shown even when quiet, as warnings need action -- unless it
    is on a ``topic`` the command chose itself (:class:`expecting`): then only under
    ``--verbose``."""
    if topic and topic in _expected:
        debug(message)
        return
    prefix = "click-build: warning: "
    if _colour(sys.stderr):
        prefix = f"\033[33m{prefix}\033[0m"
    print(prefix + message, file=sys.stderr, flush=True)


def one_line(text: str) -> str:
    """An error stays one line whatever names it quotes: control characters escaped."""
    controls = [*range(0x20), *range(0x7F, 0xA0)]
    return text.translate({c: repr(chr(c))[1:-1] for c in controls})


def error_line(message: str) -> str:
    """``click-build: error: MESSAGE`` as one line, without its newline."""
    return f"{PROG}: error: {one_line(message)}"


def error(message: str) -> None:
    """One error line on stderr (shown even when quiet)."""
    sys.stderr.write(error_line(message) + "\n")
    sys.stderr.flush()


def print_error(e: ClickError, where: str = "") -> None:
    """``e`` as error lines, each naming ``where`` (a package file, when a command works
    through several) unless the line already does."""
    for line in e.lines():
        error(f"{where}: {line}" if where and not line.startswith(where) else line)


def print_os_error(e: OSError, where: str = "") -> None:
    """An operating system's error as one line naming its file (else ``where``)."""
    name = e.filename or where
    error(f"{name}: {e.strerror or e}" if name else str(e.strerror or e))


class expecting:  # noqa: N801 - used as a context manager, like contextlib's
    """``with expecting("unsigned", ...):`` warnings on these topics are not shown in the
    block: the command decided what they warn about (``run`` installs the developer's
    unsigned build without the phone's framework on purpose), so they would only be
    noise.  Topics: ``unsigned`` (no signature, accepted), ``missing-framework``."""

    def __init__(self, *topics: str) -> None:
        self.topics = set(topics) - _expected

    def __enter__(self) -> None:
        _expected.update(self.topics)

    def __exit__(self, *exc: object) -> None:
        _expected.difference_update(self.topics)


class quieted:  # noqa: N801 - used as a context manager, like contextlib's
    """``with quieted():`` the block runs as under ``-q`` (progress and info lines held
    back; warnings and errors shown): ``run --watch`` rebuilds with one line of its own."""

    def __enter__(self) -> None:
        global _quiet
        self.was = _quiet
        _quiet = True

    def __exit__(self, *exc: object) -> None:
        global _quiet
        _quiet = self.was


def setup_logging(verbose: bool = False) -> None:
    """Route ``logging`` records of click_build to stderr with our prefixes.

    Called by the CLI only when a command asks for ``--verbose``: importing
    logging costs start-up time, and user-facing messages use :func:`warn`.
    """
    import logging

    class _Handler(logging.Handler):
        def emit(self, record: logging.LogRecord) -> None:
            if record.levelno >= logging.WARNING:
                warn(record.getMessage())
            else:
                print(f"click-build: {record.getMessage()}", file=sys.stderr, flush=True)

    root = logging.getLogger("click_build")
    root.handlers[:] = [_Handler()]
    root.setLevel(logging.DEBUG if verbose else logging.WARNING)
    root.propagate = False


class Progress:
    """``[i/N] label`` redrawn in place on a terminal; nothing otherwise.

    Redraws are rate-limited so progress never costs measurable time.
    """

    def __init__(self, label: str, total: int | Callable[[], int],
                 stream: TextIO | None = None) -> None:
        """``total`` may be a function: it is called only when the progress is shown
        (counting can mean reading, which a run without a terminal need not pay for)."""
        self.label = label
        self.stream = stream or sys.stderr
        shown = not _quiet and self.stream.isatty()
        if callable(total):
            total = total() if shown else 0
        self.total = total
        self.enabled = shown and total > 0
        self._last = 0.0
        self._count = 0

    def advance(self, n: int = 1) -> None:
        self._count += n
        if not self.enabled:
            return
        now = time.monotonic()
        if now - self._last >= 0.1 or self._count >= self.total:
            self._last = now
            self.stream.write(f"\r[{self._count}/{self.total}] {self.label}")
            self.stream.flush()

    def done(self) -> None:
        if self.enabled:
            self.stream.write("\r\033[K")
            self.stream.flush()

    def __enter__(self) -> Progress:
        return self

    def __exit__(self, *exc: object) -> None:
        self.done()
