"""Which deflate implementation compresses a package's data: zlib-ng or Python's zlib.

Both write the same format at the same level; they differ in speed and in the
exact bytes.  zlib-ng (the ``zlib-ng`` package, a dependency of click-build on
x86-64 and ARM64 CPython) deflates at level 9 about twice as fast as zlib, and
its output is as small (measured on the benchmark trees: within 0.05%).  The
standard library's zlib stays the engine wherever zlib-ng is not installed,
so building needs nothing but Python.

``CLICK_BUILD_DEFLATE`` chooses: ``zlib`` (Python's zlib, for the same bytes
as a machine without zlib-ng) or ``zlib-ng`` (fail if it is missing); unset,
zlib-ng when it can be imported.  The choice is made once per package, so its
bytes depend only on the tree, the level and the engine, never on timing or
on the number of cores.
"""

from __future__ import annotations

import os
import zlib

from .errors import ConfigError

TYPE_CHECKING = False  # not typing.TYPE_CHECKING: importing typing costs start-up time

if TYPE_CHECKING:
    from types import ModuleType

__all__ = ["ENV", "ENGINES", "chosen", "describe", "load"]

ENV = "CLICK_BUILD_DEFLATE"
ENGINES = ("zlib", "zlib-ng")


def chosen() -> str | None:
    """The engine the environment asks for, or None to take zlib-ng when installed."""
    value = os.environ.get(ENV, "").strip()
    if not value:
        return None
    if value not in ENGINES:
        raise ConfigError(f"environment: {ENV}={value!r} is not an engine: give 'zlib' (Python's "
                          f"zlib) or 'zlib-ng', or unset it to use zlib-ng when it is installed")
    return value


def load(name: str | None) -> ModuleType:
    """The module for engine ``name`` (see :func:`chosen`); both offer zlib's API.

    Called only once a package's data goes past 256 KiB: zlib-ng costs about
    3 ms to import (it loads :mod:`gzip`), more than deflating a small app
    takes, so the first 256 KiB are always deflated by zlib.
    """
    if name == "zlib":
        return zlib
    try:
        from zlib_ng import zlib_ng
    except ImportError as exc:
        if name is None:
            return zlib
        raise ConfigError(f"environment: {ENV}=zlib-ng, but zlib-ng cannot be imported ({exc}); "
                          f"install it (pip install zlib-ng) or unset {ENV}") from None
    return zlib_ng


def describe() -> str:
    """The engine that deflates data past 256 KiB here, with its version."""
    engine = load(chosen())
    if engine is zlib:
        return f"zlib {zlib.ZLIB_RUNTIME_VERSION}"
    return f"zlib-ng {engine.ZLIBNG_VERSION}"
