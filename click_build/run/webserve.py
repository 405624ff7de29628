"""HTML5 apps without a web runner: serve the app's pages on localhost instead.

A fallback, and said to be one: the page runs in the developer's own browser,
not in Ubuntu Touch's webapp-container (no Lomiri look, no content hub). Only
127.0.0.1 is served, on a free port, and only files inside the served folder.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Sequence
from functools import partial
from http import HTTPStatus
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from typing import BinaryIO

from .. import _console
from ..errors import RunError

__all__ = ["find_page", "serve_app"]


class _Handler(SimpleHTTPRequestHandler):
    def send_head(self) -> BinaryIO | None:
        root = os.path.realpath(self.directory)
        real = os.path.realpath(self.translate_path(self.path))
        if os.path.commonpath([real, root]) != root:  # a symlink out of the folder
            self.send_error(HTTPStatus.NOT_FOUND, "File not found")
            return None
        return super().send_head()

    def log_message(self, format: str, *args: object) -> None:
        pass  # the app's own output stays readable


class _Server(ThreadingHTTPServer):
    daemon_threads = True

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


def serve_app(runner: str, args: Sequence[str], app_dir: str, timeout: float | None,
              label: str) -> int:
    """Serve the app's page folder until ``timeout`` or Ctrl-C; 0 when stopped that way."""
    from .launcher import RUNNER_PACKAGES

    page = find_page(args, app_dir)
    package = RUNNER_PACKAGES.get(runner)
    missing = f"{runner} is not installed" + (f" (Debian package '{package}')" if package else "")
    if page.startswith(("http://", "https://")):
        _console.warn(f"{missing}: {label} opens {page}; fallback: open that address in a "
                      "web browser")
        return 0
    top = os.path.realpath(app_dir)
    real_page = os.path.realpath(os.path.join(app_dir, page))
    if os.path.commonpath([real_page, top]) != top or not os.path.isfile(real_page):
        raise RunError(f"{label}: the page {page!r} its Exec line opens is not in the package")
    folder = os.path.dirname(real_page)
    server = _Server(("127.0.0.1", 0), partial(_Handler, directory=folder))
    port = server.server_address[1]
    shown = os.path.relpath(folder, top)
    shown = "the package root" if shown == "." else f"{shown}/"
    url = f"http://127.0.0.1:{port}/{os.path.basename(real_page)}"
    thread = threading.Thread(target=server.serve_forever, name="click-build-serve", daemon=True)
    thread.start()
    from .process import terminated_by_signals

    try:
        _console.warn(f"{missing}; fallback: serving {shown} of {label} at {url} -- open it in "
                      "a web browser (Ctrl-C stops)")
        with terminated_by_signals():
            threading.Event().wait(timeout)
        if timeout is not None:
            _console.info(f"click-build: stopped serving {label} after {timeout:g} s (--timeout)")
        return 0
    finally:
        server.shutdown()
        server.server_close()
        thread.join()
