"""Building a package with the CLI and reading its ar members' sizes, for the build
tests."""

from __future__ import annotations

import os
from pathlib import Path

from conftest import Cli


def build(cli: Cli, app: Path, out: Path, *extra: str,
          env: dict[str, str] | None = None) -> Path:
    """``click-build build APP -o OUT EXTRA``, which must succeed; the one package."""
    out.mkdir(exist_ok=True)
    result = cli("build", app, "-o", out, *extra, env=env)
    assert "Successfully built package in" in result.stdout
    (click,) = out.glob("*.click")
    return click


def data_member_size(click: Path) -> int:
    """The size of a package's data.tar.gz member, read from its ar header."""
    with open(click, "rb") as f:
        f.seek(8)
        while header := f.read(60):
            size = int(header[48:58])
            if header[:16].strip() == b"data.tar.gz":
                return size
            f.seek(size + size % 2, os.SEEK_CUR)
    raise AssertionError("no data.tar.gz")
