"""Checks written without ``re`` (start-up cost) give the answers of the regexes
that define them: the naming rules, Debian version characters and epochs, md5sums
lines and control-file field lines.  Each is run on every string of a small
alphabet up to a length and on random strings, beside the regex it replaces."""

from __future__ import annotations

import itertools
import random
import re
from collections.abc import Iterator

import pytest

from click_build import charpattern, manifest
from click_build.deb822 import parse_control
from click_build.errors import PackageError
from click_build.md5check import md5sums_lines
from click_build.versions import epochless, version_problem

RULES = [manifest.NAME_RE, manifest.APP_NAME_RE, manifest.HOOK_NAME_RE,
         manifest.FRAMEWORK_RE, manifest.ARCH_RE]


def strings(alphabet: str, upto: int, random_count: int = 20000, longest: int = 30,
            seed: int = 15) -> Iterator[str]:
    for n in range(upto + 1):
        for chars in itertools.product(alphabet, repeat=n):
            yield "".join(chars)
    rnd = random.Random(seed)
    for _ in range(random_count):
        yield "".join(rnd.choice(alphabet) for _ in range(rnd.randrange(longest)))


@pytest.mark.parametrize("pattern", RULES)
def test_naming_rules_match_as_re_fullmatch(pattern: str) -> None:
    rule = charpattern.compile(pattern)
    for text in strings("aZ09.+-_~:/ \n\t\u00e9\u00b2\x00", 4):
        assert rule.fullmatch(text) == bool(re.fullmatch(pattern, text)), (pattern, text)


@pytest.mark.parametrize("pattern", [
    manifest.MAINTAINER_RE,  # a negated class
    r"[a-z]+",  # not anchored
    r"^[a-z]$", r"^[a-z]*$", r"^[a-z]+[0-9]+$", r"^[a-z][0-9]$",  # other shapes
    r"^[\w]+$", r"^[z-a]+$", r"^(?:[a-z])+$",
])
def test_other_patterns_are_refused_not_misread(pattern: str) -> None:
    with pytest.raises(ValueError):
        charpattern.compile(pattern)


_UPSTREAM = re.compile(r"[A-Za-z0-9.+~:-]*")
_REVISION = re.compile(r"[A-Za-z0-9.+~]*")
_EPOCH = re.compile(r"([0-9]{1,18}):")


def _version_problem_by_regex(text: str) -> str | None:
    """The version rule as it was written with regexes."""
    if not text:
        return "must be a non-empty string"
    if text != text.strip() or any(c.isspace() for c in text):
        return "must not contain whitespace"
    if "_" in text or "/" in text:
        return "must not contain '_' or '/'"
    rest = text
    if ":" in text:
        epoch, _, rest = text.partition(":")
        if not (0 < len(epoch) <= 18 and epoch.isascii() and epoch.isdigit()):
            return f"epoch {epoch!r} must be a number"
    upstream, sep, revision = rest.rpartition("-")
    if not sep:
        upstream, revision = rest, ""
    elif not revision:
        return "revision after the last '-' must not be empty"
    if not upstream:
        return "upstream version must not be empty"
    if not "0" <= upstream[0] <= "9":
        return f"upstream version {upstream!r} must start with a digit"
    if not _UPSTREAM.fullmatch(upstream):
        return (f"upstream version {upstream!r} may only contain letters, digits "
                "and . + ~ - :")
    if revision and not _REVISION.fullmatch(revision):
        return f"revision {revision!r} may only contain letters, digits and . + ~"
    return None


def test_versions_are_checked_and_split_as_by_the_regexes() -> None:
    for text in [*strings("0a:-~.+_\u00b2 \n", 5), "1" * 18 + ":1", "1" * 19 + ":1"]:
        assert version_problem(text) == _version_problem_by_regex(text), text
        m = _EPOCH.match(text)
        assert epochless(text) == (text[m.end():] if m else text), text


_MD5_LINE = re.compile(rb"([0-9a-fA-F]{32})(?:  | \*)(.+)\Z", re.DOTALL)


def test_md5sums_lines_are_read_as_by_the_regex() -> None:
    digest = "0123456789abcdefABCDEF0123456789"
    for tail in strings("aF0g *./\xff", 4, random_count=5000, longest=8):
        for line in (digest[:31] + tail, digest + tail, digest[:30] + tail):
            raw = line.encode("latin-1")
            m = _MD5_LINE.match(raw)
            try:
                got = list(md5sums_lines([raw]))
            except PackageError:
                assert m is None, raw
                continue
            assert m is not None, raw
            path = m.group(2)[2:] if m.group(2).startswith(b"./") else m.group(2)
            assert [(1, path, m.group(1).lower())] == got, raw


_CONTROL_FIELD = re.compile(r"([!-9;-~][!-9;-~]*):[ \t]*(.*?)[ \t]*")


def test_control_field_lines_are_read_as_by_the_regex() -> None:
    for line in strings("a:; \t\u00e9\x7f~!\r\x0b-", 5):
        if not line.strip() or line[0] in " \t":
            continue  # blank and continuation lines are not field lines
        m = _CONTROL_FIELD.fullmatch(line)
        try:
            got = parse_control(line)
        except PackageError:
            assert m is None, line
            continue
        assert m is not None and got == {m.group(1): m.group(2)}, line
