"""The system's hook files: ``/usr/share/click/hooks/NAME.hook``, read as the original reads them.

Each is one deb822 paragraph (``Pattern``, ``Exec``, ``User``, ``User-Level``,
``Single-Version``, ``Hook-Name``, ``Trigger``) that a system package ships to say
how apps attach to it.  The installer runs them (:mod:`click_build.install.hooks`); the
review only asks which hooks this system knows.  Reading them is the core's, so the
review never loads the installer.
"""

from __future__ import annotations

import os

from .deb822 import parse_simple
from .pkgfile import read_regular

__all__ = ["DEFAULT_HOOKS_DIR", "MAX_HOOK_FILE", "hook_files", "hooks_dir"]

DEFAULT_HOOKS_DIR = "/usr/share/click/hooks"
#: A hook file is a few short fields; anything larger is not one.
MAX_HOOK_FILE = 64 << 10

_CACHE: dict[str, list[tuple[str, dict[str, str]]]] = {}


def hooks_dir(override: str | None = None) -> str:
    """The option, else ``$CLICK_HOOKS_DIR``, else the system directory."""
    return override or os.environ.get("CLICK_HOOKS_DIR") or DEFAULT_HOOKS_DIR


def hook_files(directory: str) -> list[tuple[str, dict[str, str]]]:
    """(name, fields) of every ``*.hook`` file in ``directory``, in byte order (as the
    original's ``Click.Dir``), read once per process; none when there is no such folder."""
    if directory not in _CACHE:
        try:
            names = sorted(os.listdir(directory), key=os.fsencode)
        except (FileNotFoundError, NotADirectoryError):
            names = []
        files = []
        for entry in names:
            if not entry.endswith(".hook"):
                continue
            text = _read_hook_file(os.path.join(directory, entry))
            if text is not None:
                files.append((entry[:-5], parse_simple(text)))
        _CACHE[directory] = files
    return _CACHE[directory]


def _read_hook_file(path: str) -> str | None:
    """A hook file's text; None for what cannot be one (a FIFO, a device such as
    /dev/zero, a file past MAX_HOOK_FILE): skipped, as an unreadable one always was,
    and never waited on or read without end."""
    try:
        _st, raw = read_regular(path, MAX_HOOK_FILE)
    except OSError:
        return None
    return None if raw is None or len(raw) > MAX_HOOK_FILE else raw.decode("utf-8", "replace")
