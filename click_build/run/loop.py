"""``run --watch``: build, install and start the app again whenever a file is saved.

Every kind of edit takes the one path the first start took: the project is built
again (a C++ project's CMake build folder is kept, so only what changed compiles),
installed into the private database, and the app restarted.  A restart, not a
reload of the QML inside a running app: a reloaded root component loses its
properties all the same, while the engine would keep what the edit may have changed
(imported modules, singletons, a Python interpreter, C++ plugins) -- a restart shows
exactly the package, as the phone would start it, and keeps what the app saved in its
folders (settings, databases) as the phone keeps them.  It costs little: a QML app's
build and install take a tenth of a second, and qmlscene shows a Lomiri window in
well under a second (benchmarks/bench_run_watch.py measures edit to window).

Builds are reproducible, so a rebuild that gives the very same package (a README
edit, a file the build leaves out) leaves the app running.  A failed build, or an
app that fails to start or ends, is reported and the loop goes on: the next save
tries again.  An HTML5 app served in the browser (no webapp-container) is not
restarted: its pages are told to load again.
"""

from __future__ import annotations

import hashlib
import os
import select
import subprocess
import time
from collections.abc import Mapping, Sequence

from .. import _console
from ..errors import ClickError, RunError
from . import Look, Prepared, Session, build, install_and_plan, open_session

TYPE_CHECKING = False  # not typing.TYPE_CHECKING: importing typing costs start-up time
if TYPE_CHECKING:
    from .webserve import PageServer

__all__ = ["watch"]

#: How often an app's end is looked for where the kernel cannot say it (no pidfd).
_POLL_SECONDS = 0.5


def _digest(path: str) -> bytes:
    """The package's hash, read in pieces (a C++ app's package may be large)."""
    h = hashlib.sha256()
    with open(path, "rb") as f:
        while chunk := f.read(1 << 20):
            h.update(chunk)
    return h.digest()


def _print_error(e: ClickError | OSError) -> None:
    """The error as the command line prints it; the loop goes on."""
    if isinstance(e, OSError):
        _console.print_os_error(e)
    else:
        _console.print_error(e)


class _App:
    """The app as the loop holds it: a process, or the pages served in its place."""

    def __init__(self, prepared: Prepared) -> None:
        from .process import start_app

        self.prepared = prepared
        self.label = prepared.app_id
        self.proc: subprocess.Popen[bytes] | None = None
        self.pages: PageServer | None = None
        self.pidfd: int | None = None
        self.asked = False  # SIGTERM sent
        if prepared.serves_pages():
            from .webserve import PageServer

            plan = prepared.plan
            self.pages = PageServer(plan.argv[0], prepared.exec_args, plan.cwd, self.label,
                                    live=True)
            return
        from . import checked_environment

        self.env = checked_environment(prepared)
        self.proc = start_app(prepared.plan.argv, prepared.plan.cwd, self.env, self.label)
        try:
            self.pidfd = os.pidfd_open(self.proc.pid)
        except (AttributeError, OSError):
            self.pidfd = None  # an older kernel: looked for every _POLL_SECONDS

    def same_pages(self, prepared: Prepared) -> bool:
        """Served pages that a new build reaches by a reload, not a restart."""
        old = self.prepared
        return (self.pages is not None and prepared.serves_pages()
                and (prepared.plan.cwd, prepared.exec_args) == (old.plan.cwd, old.exec_args))

    def ended(self) -> int | None:
        """The exit status, once the app has ended by itself."""
        if self.proc is None or self.proc.poll() is None:
            return None
        from .process import end_group

        status = end_group(self.proc)
        self._forget()
        return status

    def ask_to_stop(self) -> None:
        """SIGTERM now, so the app ends while the new build is installed; :meth:`stop`
        then waits for it."""
        if self.proc is not None and not self.asked:
            from .process import ask_to_stop

            ask_to_stop(self.proc)
            self.asked = True

    def stop(self) -> None:
        if self.pages is not None:
            self.pages.close()
            self.pages = None
        if self.proc is not None:
            from .process import stop_group

            stop_group(self.proc, self.asked)
            self._forget()

    def _forget(self) -> None:
        self.proc = None
        if self.pidfd is not None:
            os.close(self.pidfd)
            self.pidfd = None


class _Loop:
    def __init__(self, session: Session, app: str | None, args: Sequence[str],
                 env: Mapping[str, str], look: Look) -> None:
        self.session = session
        self.choice = (app, list(args), dict(env), look)
        self.app: _App | None = None
        self.digest: bytes | None = None
        self.label = ""

    def cycle(self, changed: str | None) -> None:
        """Build; if the package is new, install it and start the app again."""
        began = time.monotonic()
        try:
            if changed is None:
                package = build(self.session)
            else:
                with _console.quieted():
                    package = build(self.session)
            digest = _digest(package)
        except (ClickError, OSError) as e:
            _print_error(e)
            self._say(changed, "the build failed (above)" + self._keeps())
            return
        if digest == self.digest and self.app is not None:
            self._say(changed, "the package is the same: nothing to restart")
            return
        app, args, env, look = self.choice
        try:
            if self.app is not None:
                # It ends while the new build is installed (its files are replaced by a
                # rename: what it has open stays readable); the new one starts once it
                # has ended.  Served pages keep being served: they load again.
                self.app.ask_to_stop()
            prepared = install_and_plan(self.session, package, app, args, env, look)
            self.digest = digest
            self.label = prepared.app_id
            seconds = time.monotonic() - began
            if self.app is not None and self.app.same_pages(prepared):
                assert self.app.pages is not None
                self.app.pages.reload()
                self._say(changed, f"the pages of {self.label} load again (built and "
                                   f"installed in {seconds:.2f} s)")
                return
            if self.app is not None:
                self.app.stop()
                self.app = None
            self.app = _App(prepared)
        except ClickError as e:
            if self.app is not None and self.app.asked:
                self.app.stop()
                self.app = None
            _print_error(e)
            self._say(changed, "not started (above); save a fix to try again")
            return
        if changed is not None and self.app.proc is not None:
            self._say(changed, f"restarted {self.label} (built and installed in "
                               f"{seconds:.2f} s)")

    def _keeps(self) -> str:
        if self.app is None:
            return "; save a fix to try again"
        return f"; {self.label} keeps running the last build"

    @staticmethod
    def _say(changed: str | None, what: str) -> None:
        _console.info(f"click-build: {changed + ': ' if changed else ''}{what}")

    def check_ended(self) -> None:
        if self.app is None:
            return
        status = self.app.ended()
        if status is not None:
            from . import hint_display

            if status != 0:
                hint_display(self.app.prepared, self.app.env, status)
            self.app = None
            _console.info(f"click-build: {self.label} ended with status {status}; watching "
                          "for changes (Ctrl-C stops)")

    def wait_handles(self) -> list[int]:
        return [self.app.pidfd] if self.app is not None and self.app.pidfd is not None else []

    def polls(self) -> bool:
        return self.app is not None and self.app.proc is not None and self.app.pidfd is None

    def stop(self) -> None:
        if self.app is not None:
            self.app.stop()
            self.app = None


def watch(target: str, root: str | None, app: str | None, args: Sequence[str],
          env: Mapping[str, str], look: Look, timeout: float | None,
          arch: str | None = None) -> int:
    """Run the project's app, and again after every saved change, until Ctrl-C or
    ``timeout`` (then 0)."""
    from .process import terminated_by_signals
    from .watch import describe, skipped_folders, watcher_for

    if not os.path.isdir(target):
        raise RunError(f"{target}: --watch needs a project folder (a package file does not "
                       "change)")
    session = open_session(target, root, arch)
    deadline = None if timeout is None else time.monotonic() + timeout
    # Watching starts before the first build: a file saved meanwhile is not missed.
    with watcher_for(target, skipped_folders(target)) as watcher, terminated_by_signals():
        loop = _Loop(session, app, args, env, look)
        try:
            loop.cycle(None)
            _console.info(f"click-build: watching {os.path.abspath(target)} for changes "
                          "(Ctrl-C stops)")
            while True:
                left = None if deadline is None else deadline - time.monotonic()
                if left is not None and left <= 0:
                    break
                for interval in (watcher.interval, _POLL_SECONDS if loop.polls() else None):
                    if interval is not None:
                        left = interval if left is None else min(left, interval)
                handles = [h for h in (watcher.fd, *loop.wait_handles()) if h is not None]
                ready, _, _ = select.select(handles, [], [], left)
                loop.check_ended()
                if watcher.fd is None or watcher.fd in ready:
                    changed = watcher.changes()
                    if changed:
                        loop.cycle(describe(changed) + " changed")
        finally:
            loop.stop()
    _console.info(f"click-build: stopped {loop.label or 'watching'} after {timeout:g} s "
                  "(--timeout)")
    return 0
