"""Frameworks: the base systems apps declare, described by ``*.framework`` files.

Shared by ``verify`` and the installer, so it lives in the core.
"""

from __future__ import annotations

import os

from . import _console
from ._record import Record
from .deb822 import parse_simple
from .errors import FrameworkError
from .manifest import FRAMEWORK_RULE

TYPE_CHECKING = False  # not typing.TYPE_CHECKING: importing typing costs start-up time


__all__ = [
    "DEFAULT_FRAMEWORKS_DIR",
    "Framework",
    "frameworks_dir",
    "list_frameworks",
    "read_framework",
    "validate_framework",
]

DEFAULT_FRAMEWORKS_DIR = "/usr/share/click/frameworks"


class Framework(Record):
    name: str
    fields: dict[str, str]

    @property
    def base_name(self) -> str | None:
        return self.fields.get("base-name")

    @property
    def base_version(self) -> str | None:
        return self.fields.get("base-version")


def frameworks_dir(override: str | os.PathLike[str] | None = None) -> str:
    """The option, else ``$CLICK_FRAMEWORKS_DIR``, else the system directory."""
    return os.fspath(override or os.environ.get("CLICK_FRAMEWORKS_DIR") or DEFAULT_FRAMEWORKS_DIR)


#: A framework file is a few lines; anything bigger is not one.
MAX_FRAMEWORK_FILE = 64 << 10


def read_framework(name: str, directory: str | os.PathLike[str]) -> Framework | None:
    if not FRAMEWORK_RULE.fullmatch(name):
        return None
    from .pkgfile import read_regular

    try:  # not open(): a FIFO there would hang us, /dev/zero exhaust memory
        _st, raw = read_regular(os.path.join(directory, f"{name}.framework"), MAX_FRAMEWORK_FILE)
    except OSError:
        return None
    if raw is None or len(raw) > MAX_FRAMEWORK_FILE:  # not a regular file, or no framework's
        return None
    return Framework(name, parse_simple(raw.decode("utf-8", "replace")))


def list_frameworks(directory: str | os.PathLike[str]) -> list[Framework]:
    try:
        names = sorted(n[: -len(".framework")] for n in os.listdir(directory)
                       if n.endswith(".framework"))
    except OSError:
        return []
    found = (read_framework(n, directory) for n in names)
    return [f for f in found if f is not None]


def validate_framework(value: str, directory: str | os.PathLike[str],
                       force_missing: bool = False) -> None:
    """The original's rules: plain names, all present (unless forced), one base version."""
    names = []
    for part in value.split(","):
        name = part.strip()
        if not name:
            if value.strip():
                raise FrameworkError(f'Could not parse framework "{value}"')
            continue
        if "|" in name:
            raise FrameworkError(
                f'Alternative dependencies in framework "{value}" not yet allowed'
            )
        if "(" in name or " " in name:
            raise FrameworkError(f'Version relationship in framework "{value}" not yet allowed')
        if not FRAMEWORK_RULE.fullmatch(name):
            raise FrameworkError(f'Could not parse framework "{value}"')
        names.append(name)
    missing = []
    base_versions: dict[str | None, str | None] = {}
    for name in names:
        fw = read_framework(name, directory)
        if fw is None:
            missing.append(name)
            continue
        previous = base_versions.get(fw.base_name)
        if previous and previous != fw.base_version:
            raise FrameworkError(
                "Multiple frameworks with different base versions are not allowed. "
                f"Found: {fw.base_name} ({fw.base_version} != {previous})"
            )
        base_versions[fw.base_name] = fw.base_version
    if not missing:
        return
    quoted = ", ".join(f'"{m}"' for m in missing)
    if force_missing:
        _console.warn(f"ignoring missing framework{'s' if len(missing) > 1 else ''} {quoted}",
                      topic="missing-framework")
        return
    what = f"Frameworks {quoted}" if len(missing) > 1 else f"Framework {quoted}"
    raise FrameworkError(
        f"{what} not present on system (use --force-missing-framework option to override)"
    )
