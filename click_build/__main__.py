"""``python -m click_build``: the same CLI as ``click-build``."""

import sys

from .cli import main

sys.exit(main())
