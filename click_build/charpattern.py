"""The format's naming rules (``^[a-z0-9][a-z0-9+.-]*$``), matched without ``re``.

The rules are written as regexes because JSON Schema and the docs state them so.
Checking them with ``re`` compiles each one in every process that checks a name: a
tenth of a millisecond apiece, several per install.  They all have one of two
shapes, one character class repeated or a first character then a repeated class,
so :func:`compile` reads the pattern once and :meth:`CharPattern.fullmatch` checks a
string with ``str`` methods, giving ``re.fullmatch``'s answer (tested against it).
Version characters and control-field names are checked the same way.
"""

from __future__ import annotations

__all__ = ["CharPattern", "compile"]


class CharPattern:
    """``^[FIRST][REST]*$``, ``^[FIRST][REST]+$``, ``^[REST]+$`` or ``^[REST]*$``."""

    __slots__ = ("first", "rest", "least", "pattern")

    def __init__(self, pattern: str, first: str | None, rest: str, least: int) -> None:
        self.pattern = pattern
        self.first = first  # None: no separate first character
        self.rest = rest
        self.least = least  # characters REST must have: 0 for '*', 1 for '+'

    def fullmatch(self, text: str) -> bool:
        if self.first is not None:
            if not text or text[0] not in self.first:
                return False
            text = text[1:]
        # every character is in the class exactly when stripping the class leaves nothing
        return len(text) >= self.least and not text.strip(self.rest)

    def __repr__(self) -> str:
        return f"charpattern.compile({self.pattern!r})"


def compile(pattern: str) -> CharPattern:  # noqa: A001 - named after re.compile
    """Read ``pattern``; ValueError for any other shape than the four above."""
    classes: list[str] = []
    body = pattern.removeprefix("^").removesuffix("$")
    if body == pattern or len(body) != len(pattern) - 2:
        raise ValueError(f"{pattern!r}: not anchored with ^ and $")
    while body:
        if not body.startswith("[") or "]" not in body[2:]:
            raise ValueError(f"{pattern!r}: only [character classes] are understood")
        end = body.index("]", 2)
        classes.append(_members(pattern, body[1:end]))
        body = body[end + 1:]
        if body[:1] in ("*", "+"):
            classes.append(body[0])
            body = body[1:]
    if len(classes) == 2 and classes[1] in ("*", "+"):
        return CharPattern(pattern, None, classes[0], 1 if classes[1] == "+" else 0)
    if len(classes) == 3 and classes[2] in ("*", "+") and classes[1] not in ("*", "+"):
        return CharPattern(pattern, classes[0], classes[1], 1 if classes[2] == "+" else 0)
    raise ValueError(f"{pattern!r}: not [FIRST][REST]*, [FIRST][REST]+, [REST]+ or [REST]*")


def _members(pattern: str, spec: str) -> str:
    """The characters of a class: ranges ``a-z`` and single characters; a ``-`` first
    or last stands for itself.  No negation, escapes or nested brackets."""
    if not spec or spec[0] == "^" or "\\" in spec or "[" in spec:
        raise ValueError(f"{pattern!r}: class [{spec}] is not a plain set")
    members: list[str] = []
    i = 0
    while i < len(spec):
        if i + 2 < len(spec) and spec[i + 1] == "-":
            low, high = ord(spec[i]), ord(spec[i + 2])
            if low > high:
                raise ValueError(f"{pattern!r}: bad range {spec[i:i + 3]}")
            members.extend(map(chr, range(low, high + 1)))
            i += 3
        else:
            members.append(spec[i])
            i += 1
    return "".join(members)
