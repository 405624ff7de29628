"""Where click-build's data folders (``cmake``, ``templates``) are installed."""

from __future__ import annotations

import os

__all__ = ["data_dir"]


def data_dir(which: str) -> str | None:
    """The folder of the data package ``click_build.<which>``, or None when missing.

    Asked of the import system rather than derived from ``__file__``: a wheel
    holds ``click_build/cmake``, an editable install maps the package to the
    source tree's top-level ``cmake/`` (and ``templates/``).
    """
    from importlib.util import find_spec

    spec = find_spec(f"click_build.{which}")
    locations = list(spec.submodule_search_locations or []) if spec else []
    checkout = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    if os.path.isfile(os.path.join(checkout, "pyproject.toml")):
        locations.append(os.path.join(checkout, which))  # run from a source checkout
    for location in locations:
        if os.path.isdir(location):
            return location
    return None
