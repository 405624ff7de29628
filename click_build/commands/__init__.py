"""One module per group of commands; each has ``register(subparsers)``.

Modules import their heavy dependencies inside their run functions, so
starting the CLI costs only argparse.
"""

from __future__ import annotations

import argparse
import importlib

__all__ = ["MODULES", "register_all"]

#: Order here is the order of ``click-build --help``.
MODULES = ("build", "inspect", "install", "new", "sign", "review", "cmake_helper", "merge")


def register_all(subparsers: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    for name in MODULES:
        importlib.import_module(f"{__name__}.{name}").register(subparsers)
