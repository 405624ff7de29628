"""Debian versions: validation rules and dpkg's ordering (checked against dpkg itself)."""

from __future__ import annotations

import itertools
import subprocess

import pytest

from click_build.versions import DebianVersion, compare_versions, epochless, version_problem

VERSIONS = ["1.0", "1.0~rc1", "1.0-1", "1:0.1", "1.0+b1", "1.0a", "1.0.0", "0.9",
            "2.0~beta1", "1.00", "1.0-1~", "3.5.", "1.0~~", "10", "9.9", "1.0-0"]


@pytest.mark.oracle
def test_order_matches_dpkg() -> None:
    for a, b in itertools.product(VERSIONS, repeat=2):
        ours = compare_versions(a, b)
        for op, want in (("lt", ours < 0), ("eq", ours == 0), ("gt", ours > 0)):
            got = subprocess.call(["dpkg", "--compare-versions", a, op, b]) == 0
            assert got == want, (a, op, b)


@pytest.mark.parametrize("good", ["1.0", "1:2.0~beta1-3", "3.5.", "0.1+git20240101", "1.0-1ubuntu1"])
def test_valid(good: str) -> None:
    assert version_problem(good) is None
    assert str(DebianVersion.parse(good)) == good


@pytest.mark.parametrize(("bad", "why"), [
    ("", "non-empty"), ("abc", "start with a digit"), ("1_0", "'_'"), ("1/0", "'/'"),
    ("1.0-", "revision"), ("x:1", "epoch"), ("1.0 beta", "whitespace"), ("1.0-a_b", "'_'"),
    ("1.0-a:b", "epoch"), ("1.0!", "may only contain"),
    # a '$' anchor takes a final newline; every rule must refuse it
    ("1.0\n", "whitespace"), ("1:1.0-1\n", "whitespace"),
])
def test_invalid(bad: str, why: str) -> None:
    problem = version_problem(bad)
    assert problem is not None and why in problem


def test_epochless() -> None:
    assert epochless("1:2.0~beta1") == "2.0~beta1"
    assert epochless("2.0") == "2.0"

