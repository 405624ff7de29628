"""The Python side of the app: functions the QML front end calls through PyOtherSide.

PyOtherSide converts the arguments and results between QML and Python: str,
int, float, bool, lists and dicts cross as they are.  Keep this code working
on the oldest Python your framework ships (3.8 on ubuntu-sdk-20.04).
"""

from __future__ import annotations

import platform

__all__ = ["describe", "python_version"]


def python_version() -> str:
    """The version of the Python running the app, such as '3.12.3'."""
    return platform.python_version()


def describe(text: str) -> dict:
    """How many words and characters ``text`` has (what the page shows as you type)."""
    return {"words": len(text.split()), "characters": len(text)}
