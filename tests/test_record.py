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


def test_binds_arguments_as_a_namedtuple_does() -> None:
    import pickle

    assert Point(1, label="q") == (1, 0, "q") and Point(y=2, x=1) == (1, 2, "p")
    for call, message in [(lambda: Point(), "missing required argument: 'x'"),
                          (lambda: Point(1, 2, "a", 4), "takes 3 positional arguments"),
                          (lambda: Point(1, x=2), "multiple values for argument 'x'"),
                          (lambda: Point(1, z=2), "unexpected keyword argument 'z'")]:
        with pytest.raises(TypeError, match=message):
            call()
    p = Point._make([5, 6, "r"])
    assert type(p) is Point and p._asdict() == {"x": 5, "y": 6, "label": "r"}
    with pytest.raises(TypeError, match="Expected 3 arguments, got 2"):
        Point._make([1, 2])
    with pytest.raises(ValueError, match="unexpected field names"):
        p._replace(z=1)
    assert pickle.loads(pickle.dumps(p)) == p and type(pickle.loads(pickle.dumps(p))) is Point
    match p:
        case Point(x, y):
            assert (x, y) == (5, 6)
        case _:
            pytest.fail("positional match")
    assert Point.x.__doc__ == "Alias for field number 0" and p[2] == p.label == "r"


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
