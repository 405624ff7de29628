"""A command on a pseudo-terminal, as at a user's keyboard: read what it shows until a
fact holds, type, read to the end, wait for its exit, each within a limit scaled for a
busy machine. Whatever happens, the terminal's descriptor is closed and the process
reaped (killed first if it is still running)."""

from __future__ import annotations

import os
import select
import subprocess
import time
from collections.abc import Callable, Mapping, Sequence
from types import TracebackType

from deadlines import seconds


class Terminal:
    """``argv`` running with its standard input, output and error on one terminal."""

    def __init__(self, argv: Sequence[str], env: Mapping[str, str] | None = None) -> None:
        self.fd, other_side = os.openpty()
        try:
            self.proc = subprocess.Popen(argv, env=env, stdin=other_side, stdout=other_side,
                                         stderr=other_side, start_new_session=True)
        except BaseException:
            os.close(self.fd)
            raise
        finally:
            os.close(other_side)  # the child holds it now: its exit ends our reading

    def __enter__(self) -> Terminal:
        return self

    def __exit__(self, kind: type[BaseException] | None, value: BaseException | None,
                 tb: TracebackType | None) -> None:
        self.close()

    def close(self) -> None:
        with self.proc:  # reaps it
            if self.proc.poll() is None:
                self.proc.kill()
            self.proc.wait()
        if self.fd >= 0:
            os.close(self.fd)
            self.fd = -1

    def read_until(self, done: Callable[[bytes], bool], within: float = 30) -> bytes:
        """What the terminal shows from now until ``done(shown)`` holds or the command's
        output ends; an AssertionError with what was shown when neither comes within
        ``seconds(within)``."""
        limit = seconds(within)
        deadline = time.monotonic() + limit
        shown = b""
        while not done(shown):
            left = deadline - time.monotonic()
            if left <= 0:
                raise AssertionError(f"waited {limit:.0f} s on the terminal of "
                                     f"{self.proc.args}; it showed {shown!r}")
            ready, _, _ = select.select([self.fd], [], [], left)
            if not ready:
                continue
            try:
                chunk = os.read(self.fd, 4096)
            except OSError:  # EIO: every descriptor of the other side is closed
                chunk = b""
            if not chunk:
                break
            shown += chunk
        return shown

    def read_to_end(self, within: float = 60) -> bytes:
        """Everything the command shows until its output ends."""
        return self.read_until(lambda _: False, within)

    def type(self, keys: bytes) -> None:
        os.write(self.fd, keys)

    def wait(self, within: float = 60) -> int:
        """The command's exit status."""
        return self.proc.wait(timeout=seconds(within))
