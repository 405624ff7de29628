"""Record: a NamedTuple at run time too, without importing typing."""

from __future__ import annotations

import subprocess
import sys

import pytest

from click_build._record import Record


class Point(Record):
    """A doc."""

    x: int
    y: int = 0
    label: str = "p"

    @property
    def norm1(self) -> int:
        return abs(self.x) + abs(self.y)

    @classmethod
    def origin(cls) -> Point:
        return cls(0)

    def __str__(self) -> str:
        return f"({self.x}, {self.y})"


def test_behaves_like_a_namedtuple() -> None:
    p = Point(3, -4)
    assert p == (3, -4, "p") and p == Point(x=3, y=-4)
    assert p._fields == ("x", "y", "label") and Point._field_defaults == {"y": 0, "label": "p"}
    assert p.norm1 == 7 and Point.origin() == Point(0, 0) and str(p) == "(3, -4)"
    assert repr(p) == "Point(x=3, y=-4, label='p')" and Point.__doc__ == "A doc."
    assert p._replace(label="q").label == "q" and hash(p) == hash((3, -4, "p"))
    assert Point.__module__ == __name__ and Point.__qualname__ == "Point"
    with pytest.raises(AttributeError):
        p.x = 1  # type: ignore[misc]


def test_defaults_must_come_last() -> None:
    with pytest.raises(TypeError, match="without a default"):
        class Bad(Record):  # noqa: F841
            a: int = 1
            b: int


def test_cli_start_up_does_not_import_typing() -> None:
    probe = ("import sys\nfrom click_build.cli import main\n"
             "try:\n    main(['verify', '--help'])\nexcept SystemExit:\n    pass\n"
             "import click_build.build, click_build.package, click_build.install.installer\n"
             "import click_build.review.lint, click_build.review.desktop\n"
             "import click_build.review.security, click_build.review.hooks\n"
             "print('typing' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True)
    assert out.stdout.strip().splitlines()[-1] == "False"
