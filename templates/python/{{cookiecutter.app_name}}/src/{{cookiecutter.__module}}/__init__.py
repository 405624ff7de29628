"""The Python side of the app: functions the QML front end calls through PyOtherSide.

PyOtherSide converts the arguments and results between QML and Python: str,
int, float, bool, lists and dicts cross as they are.  Keep this code working
on the oldest Python your framework ships (3.8 on ubuntu-sdk-20.04).

Text for the user goes through ``_()`` (gettext), like ``i18n.tr()`` in QML:
the same domain (the package name) and the same folder, ``$APP_DIR/share/locale``,
where the build puts the translations from po/*.po.  The launcher sets
``APP_DIR`` to the app's folder and ``LANGUAGE``/``LANG`` to the user's language.
"""

from __future__ import annotations

import gettext
import os
import platform

__all__ = ["DOMAIN", "describe", "greeting", "python_version"]

#: The gettext domain: the package name, as i18n.domain in QML.
DOMAIN = {{ (cookiecutter.app_name ~ "." ~ cookiecutter.namespace) | tojson }}

_ = gettext.translation(
    DOMAIN, os.path.join(os.environ.get("APP_DIR", ""), "share", "locale"), fallback=True
).gettext


def python_version() -> str:
    """The version of the Python running the app, such as '3.12.3'."""
    return platform.python_version()


def greeting() -> str:
    """What the page says once Python runs, in the user's language."""
    return _("Hello from Python {version}!").format(version=python_version())


def describe(text: str) -> dict:
    """How many words and characters ``text`` has (what the page shows as you type)."""
    return {"words": len(text.split()), "characters": len(text)}
