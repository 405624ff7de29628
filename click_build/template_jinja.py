"""The Jinja extension the app templates load (``_extensions`` in cookiecutter.json).

It gives every template the same few facts from click-build itself, so they
cannot drift from the code: the running ``click_build_version``, the AppArmor
``policy_version`` a framework needs, and a ``tojson`` for JSON *files*.
Jinja's own ``tojson`` is made for HTML ``<script>`` blocks: it writes
``\\u003c`` for ``<`` and ``\\u00e9`` for ``é``, which is valid JSON but turns
``Jane <jane@example.com>`` and every non-English title into noise in a
manifest the developer reads and edits.  This one writes plain UTF-8 JSON.

Only Jinja imports this module (cookiecutter loads it by name), so importing
jinja2 at the top costs the CLI nothing.
"""

from __future__ import annotations

import json

from jinja2 import Environment
from jinja2.ext import Extension
from markupsafe import Markup

from . import __version__

__all__ = ["ClickBuildExtension", "apparmor_policy_version", "json_value"]


def json_value(value: object, indent: int | None = None) -> Markup:
    """``value`` as a JSON literal: UTF-8 kept, nothing HTML-escaped."""
    return Markup(json.dumps(value, ensure_ascii=False, indent=indent))


def apparmor_policy_version(framework: str) -> float:
    """The ``policy_version`` an AppArmor hook file needs for ``framework``."""
    from .framework_table import policy_version_for
    from .new import FRAMEWORKS

    found = policy_version_for([framework]) if framework in FRAMEWORKS else None
    if found is None:
        raise ValueError(f"unknown framework {framework!r} (known: {', '.join(FRAMEWORKS)})")
    return found[1]


class ClickBuildExtension(Extension):
    """Adds ``click_build_version``, ``apparmor_policy_version`` and a file-safe ``tojson``."""

    def __init__(self, environment: Environment) -> None:
        super().__init__(environment)
        environment.filters["tojson"] = json_value
        environment.filters["apparmor_policy_version"] = apparmor_policy_version
        environment.globals["click_build_version"] = __version__
