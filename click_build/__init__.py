"""click-build: the SDK for Click packages, the app packages of Ubuntu Touch.

The core (manifest, archive, build, package, install, sign) needs only the
Python standard library.  Heavy modules load on first use, so ``import
click_build`` stays cheap for the CLI and for PEP 517 frontends.
"""

from __future__ import annotations

TYPE_CHECKING = False

__version__ = "0.1.0"

__all__ = ["ClickError", "Manifest", "__version__", "build_click", "load_manifest", "open_click"]

_LAZY = {
    "ClickError": "errors",
    "Manifest": "manifest",
    "load_manifest": "manifest",
    "build_click": "build",
    "open_click": "package",
}

if TYPE_CHECKING:
    from .build import build_click
    from .errors import ClickError
    from .manifest import Manifest, load_manifest
    from .package import open_click


def __getattr__(name: str) -> object:
    if name in _LAZY:
        import importlib

        return getattr(importlib.import_module(f".{_LAZY[name]}", __name__), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
