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

from click_build import charpattern, deb822, manifest, versions
from click_build.deb822 import parse_control
from click_build.errors import PackageError
from click_build.md5check import md5sums_lines
from click_build.versions import epochless

RULES = [manifest.NAME_RE, manifest.APP_NAME_RE, manifest.HOOK_NAME_RE,
         manifest.FRAMEWORK_RE, manifest.ARCH_RE,
         versions._UPSTREAM_CHARS.pattern, versions._REVISION_CHARS.pattern,
         deb822._FIELD_NAME.pattern, r"^[a-z]*$"]


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
    for text in strings("aZ09.+-_~:;/ \n\t\u00e9\u00b2\x00\x7f", 4):
        assert rule.fullmatch(text) == bool(re.fullmatch(pattern, text)), (pattern, text)


@pytest.mark.parametrize("pattern", [
    manifest.MAINTAINER_RE,  # a negated class
    r"[a-z]+",  # not anchored
    r"^[a-z]$", r"^[a-z]+[0-9]+$", r"^[a-z][0-9]$",  # other shapes
    r"^[\w]+$", r"^[z-a]+$", r"^(?:[a-z])+$",
])
def test_other_patterns_are_refused_not_misread(pattern: str) -> None:
    with pytest.raises(ValueError):
        charpattern.compile(pattern)


_EPOCH = re.compile(r"([0-9]{1,18}):")


def test_epochs_are_split_as_by_the_regex() -> None:
    for text in [*strings("01:-a\u00b2 ", 5), "1" * 18 + ":1", "1" * 19 + ":1"]:
        m = _EPOCH.match(text)
        expected = (int(m.group(1)), text[m.end():]) if m else (0, text)
        assert versions._split_epoch(text) == expected, text
        assert epochless(text) == expected[1], text


def test_maintainers_are_checked_as_by_the_regex() -> None:
    """Valid addresses, each mutated up to three times with characters the rule is
    about: blanks of every kind, angle brackets, '@', newlines."""
    rnd = random.Random(7)
    tricky = "a <>@.\n\t\x1c\x85\xa0\u2028\u00e9"
    bases = ["J Doe <j@example.com>", "a <b@c>", "Ann-Marie O'Neil <a.b+c@d.e>", "x <@>"]
    for _ in range(60000):
        text = list(rnd.choice(bases))
        for _ in range(rnd.randrange(4)):
            at = rnd.randrange(len(text) + 1)
            action = rnd.randrange(3)
            if action == 0:
                text.insert(at, rnd.choice(tricky))
            elif text and at < len(text):
                if action == 1:
                    del text[at]
                else:
                    text[at] = rnd.choice(tricky)
        value = "".join(text)
        expected = bool(re.fullmatch(manifest.MAINTAINER_RE, value))
        assert manifest.maintainer_ok(value) == expected, value


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
