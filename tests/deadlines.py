"""Time limits for a machine that may be busy, and waiting for facts instead of sleeping.

Every limit in the suite is written as what an idle 2-core machine needs, with room to
spare, and passes through `seconds()`, which multiplies it by CLICK_BUILD_TEST_SLOWDOWN
(default 5): on a loaded machine (other suites, builds, a CPU-bound job on every core)
the tests still pass, and a hang still ends in a failure that says what was awaited.
No test sleeps a fixed time to let something happen: `wait_for` polls the fact itself.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable
from typing import TypeVar

T = TypeVar("T")

VARIABLE = "CLICK_BUILD_TEST_SLOWDOWN"


def _slowdown() -> float:
    raw = os.environ.get(VARIABLE, "5")
    try:
        value = float(raw)
    except ValueError:
        value = 0.0
    if not 1 <= value < 1000:
        raise ValueError(f"{VARIABLE}={raw!r}: give how many times slower than an idle "
                         "machine this one may be, a number from 1 (default 5)")
    return value


#: How many times slower than an idle 2-core machine the suite lets this one be.
SLOWDOWN = _slowdown()


def seconds(idle: float) -> float:
    """The limit for something an idle 2-core machine does within ``idle`` seconds."""
    return idle * SLOWDOWN


def wait_for(fact: Callable[[], T], what: str, within: float = 10) -> T:
    """The first true value of ``fact()``, asked again and again until it holds; an
    AssertionError naming ``what`` when it has not held within ``seconds(within)``."""
    limit = seconds(within)
    deadline = time.monotonic() + limit
    pause = 0.005
    while True:
        value = fact()
        if value:
            return value
        if time.monotonic() > deadline:
            raise AssertionError(f"waited {limit:.0f} s for {what}")
        time.sleep(pause)  # a polling interval, growing to 0.2 s, not a wait for the fact
        pause = min(pause * 2, 0.2)
