"""HTML5 apps without a web runner: serve the installed package on localhost instead.

A fallback, and said to be one: the page runs in the developer's own browser, not in
Ubuntu Touch's webapp-container (no Lomiri look, no content hub).  The whole package
is served, from its root, and the page Exec names is opened inside it, so what the
page loads by relative paths (``../share/locale`` translations, ``../assets``) is
found as on the phone.  Only 127.0.0.1 is served, on a free port, and only files
inside the installed package.

With ``--watch`` (``live``), each HTML page served gets a small script that asks the
server, over one long-lived request (server-sent events), to reload the page once a
new build is installed.
"""

from __future__ import annotations

import io
import os
import threading
from collections.abc import Sequence
from functools import partial
from http import HTTPStatus
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from typing import BinaryIO
from urllib.parse import parse_qs, urlsplit

from .. import _console
from ..errors import RunError

__all__ = ["LIVE_PATH", "PageServer", "find_page", "serve_app"]

#: Where the live reload's events are served (answered before any file of the package).
LIVE_PATH = "/.click-build/events"
_LIVE_SCRIPT = ('<script>new EventSource("' + LIVE_PATH + '?since={generation}").onmessage = '
                'function () {{ location.reload(); }};</script>')
_MAX_PAGE = 16 << 20  # an HTML page read whole to add the script
_KEEP_ALIVE = 15.0


class _Handler(SimpleHTTPRequestHandler):
    server: _Server

    def do_GET(self) -> None:  # noqa: N802 - http.server's name
        if self.server.live and urlsplit(self.path).path == LIVE_PATH:
            self._events()
            return
        super().do_GET()

    def send_head(self) -> BinaryIO | None:
        root = os.path.realpath(self.directory)
        real = os.path.realpath(self.translate_path(self.path))
        if os.path.commonpath([real, root]) != root:  # a symlink out of the package
            self.send_error(HTTPStatus.NOT_FOUND, "File not found")
            return None
        if self.server.live and real.endswith((".html", ".htm")) and os.path.isfile(real):
            return self._page_with_script(real)
        return super().send_head()

    def _page_with_script(self, path: str) -> BinaryIO | None:
        try:
            with open(path, "rb") as f:
                body = f.read(_MAX_PAGE + 1)
        except OSError:
            self.send_error(HTTPStatus.NOT_FOUND, "File not found")
            return None
        if len(body) <= _MAX_PAGE:
            script = _LIVE_SCRIPT.format(generation=self.server.generation).encode()
            end = body.lower().rfind(b"</body>")
            body = body[:end] + script + body[end:] if end >= 0 else body + script
        self.send_response(HTTPStatus.OK)
        self.send_header("Content-Type", "text/html; charset=utf-8")
        self.send_header("Content-Length", str(len(body)))
        self.send_header("Cache-Control", "no-store")
        self.end_headers()
        return io.BytesIO(body)

    def _events(self) -> None:
        """One ``reload`` event once the installed build is newer than the page's."""
        try:
            since = int(parse_qs(urlsplit(self.path).query).get("since", ["0"])[0])
        except ValueError:
            since = 0
        self.send_response(HTTPStatus.OK)
        self.send_header("Content-Type", "text/event-stream")
        self.send_header("Cache-Control", "no-store")
        self.end_headers()
        server = self.server
        while True:
            with server.changed:
                server.changed.wait_for(lambda: server.generation != since or server.closing,
                                        _KEEP_ALIVE)
                news, closing = server.generation != since, server.closing
            if closing:
                return
            try:
                self.wfile.write(b"data: reload\n\n" if news else b": still here\n\n")
                self.wfile.flush()
            except OSError:
                return  # the page went away
            if news:
                return

    def log_message(self, format: str, *args: object) -> None:
        pass  # the app's own output stays readable


class _Server(ThreadingHTTPServer):
    daemon_threads = True

    def __init__(self, folder: str, live: bool) -> None:
        super().__init__(("127.0.0.1", 0), partial(_Handler, directory=folder))
        self.live = live
        self.generation = 0
        self.closing = False
        self.changed = threading.Condition()

    def handle_error(self, request: object, client_address: object) -> None:
        pass  # a browser that hangs up mid-request is not the developer's problem


def find_page(args: Sequence[str], app_dir: str) -> str:
    """The page a web runner's arguments open: a URL, or a path inside ``app_dir``.

    ``--www=DIR`` (or ``--www DIR``) names the folder holding index.html; else
    the first argument that is not an option; else www/index.html or index.html.
    """
    page: str | None = None
    i = 0
    while i < len(args):
        arg = args[i]
        if arg.startswith("--www="):
            page = os.path.join(arg[len("--www="):], "index.html")
        elif arg == "--www" and i + 1 < len(args):
            page = os.path.join(args[i + 1], "index.html")
            i += 1
        elif not arg.startswith("-") and page is None:
            page = arg
        i += 1
    if page is None:
        page = next((p for p in ("www/index.html", "index.html")
                     if os.path.isfile(os.path.join(app_dir, p))), "www/index.html")
    if page.startswith(("http://", "https://")):
        return page
    return page.removeprefix("file://")


def _missing(runner: str) -> str:
    from .launcher import RUNNER_PACKAGES

    package = RUNNER_PACKAGES.get(runner)
    return f"{runner} is not installed" + (f" (Debian package '{package}')" if package else "")


class PageServer:
    """The installed package ``app_dir`` served on 127.0.0.1 until :meth:`close`."""

    def __init__(self, runner: str, args: Sequence[str], app_dir: str, label: str,
                 live: bool = False) -> None:
        self.label = label
        page = find_page(args, app_dir)
        top = os.path.realpath(app_dir)
        real_page = os.path.realpath(os.path.join(app_dir, page))
        if os.path.commonpath([real_page, top]) != top or not os.path.isfile(real_page):
            raise RunError(f"{label}: the page {page!r} its Exec line opens is not in the "
                           "package")
        # The registration (app_dir), not the version it points at now: a reinstall
        # (run --watch) is served at once.
        self._server = _Server(app_dir, live)
        port = self._server.server_address[1]
        relpage = os.path.relpath(real_page, top).replace(os.sep, "/")
        self.url = f"http://127.0.0.1:{port}/{relpage}"
        self._thread = threading.Thread(target=self._server.serve_forever,
                                        name="click-build-serve", daemon=True)
        self._thread.start()
        # Not a warning: it is the address to open, so it is shown even with -q.
        print(f"click-build: {_missing(runner)}: serving {label} (its package root) at "
              f"{self.url} -- open it in a web browser (Ctrl-C stops)", flush=True)

    def reload(self) -> None:
        """Pages open in a browser load again (a new build is installed)."""
        with self._server.changed:
            self._server.generation += 1
            self._server.changed.notify_all()

    def close(self) -> None:
        with self._server.changed:
            self._server.closing = True
            self._server.changed.notify_all()
        self._server.shutdown()
        self._server.server_close()
        self._thread.join()


def serve_app(runner: str, args: Sequence[str], app_dir: str, timeout: float | None,
              label: str) -> int:
    """Serve the app's package until ``timeout`` or Ctrl-C; 0 when stopped that way."""
    from .process import terminated_by_signals

    page = find_page(args, app_dir)
    if page.startswith(("http://", "https://")):
        print(f"click-build: {_missing(runner)}: {label} opens {page}: open that address "
              "in a web browser", flush=True)
        return 0
    server = PageServer(runner, args, app_dir, label)
    try:
        with terminated_by_signals():
            threading.Event().wait(timeout)
        _console.info(f"click-build: stopped serving {label} after {timeout:g} s (--timeout)")
        return 0
    finally:
        server.close()
