"""The process entry point: ``click-build`` (its console script calls :func:`main`)
and ``python -m click_build``."""

from __future__ import annotations

TYPE_CHECKING = False  # not typing.TYPE_CHECKING: importing typing costs start-up time

if TYPE_CHECKING:
    from typing import NoReturn


def main() -> NoReturn:
    from .cli import run

    run()


if __name__ == "__main__":
    main()
