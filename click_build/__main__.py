"""``python -m click_build``: the same CLI as ``click-build``."""

from .cli import run

run()
