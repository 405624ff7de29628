"""JSON read and written by the standard library's C scanner and string encoder.

``json`` is a Python layer over the C module ``_json``; importing it loads four
modules and compiles seven regular expressions, a millisecond of a trivial
install, which reads one manifest and writes it back.  This module drives
``_json`` as ``json`` does, for the two things the install and build paths need:

- :func:`loads`: ``json.loads(text, **hooks)`` (same scanner, same errors: a
  :class:`ValueError` with ``msg``, ``lineno`` and ``colno`` for bad syntax);
- :func:`dumps_indented`: ``json.dumps(data, ensure_ascii=False, sort_keys=True,
  indent=INDENT, separators=(",", ": "))`` for data made of dicts with string keys,
  lists, strings, ints, finite floats, booleans and None.

Where ``_json`` is missing (Python without its accelerator), the ``json``
module does the work.  ``tests/test_jsontext.py`` holds both functions to ``json``'s
results on generated documents, malformed ones included.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping

TYPE_CHECKING = False  # not typing.TYPE_CHECKING: importing typing costs start-up time

if TYPE_CHECKING:
    from typing import Any

try:
    import _json
except ImportError:  # pragma: no cover - CPython always has it
    _json = None  # type: ignore[assignment]

_make_scanner: Any = getattr(_json, "make_scanner", None)
_quote: Any = getattr(_json, "encode_basestring", None)

__all__ = ["JSONError", "dumps_indented", "loads"]

_WHITESPACE = " \t\n\r"  # JSON's whitespace, which json.decoder skips around the value


class JSONError(ValueError):
    """Malformed JSON: ``json.JSONDecodeError``'s message, ``msg``, ``pos``,
    ``lineno`` and ``colno``."""

    def __init__(self, msg: str, text: str, pos: int) -> None:
        self.msg, self.pos = msg, pos
        self.lineno = text.count("\n", 0, pos) + 1
        self.colno = pos - text.rfind("\n", 0, pos)
        super().__init__(f"{msg}: line {self.lineno} column {self.colno} (char {pos})")


class _Context:
    """What the C scanner reads from a ``json.JSONDecoder``."""

    def __init__(self, object_pairs_hook: Callable[[list[tuple[str, Any]]], Any] | None,
                 parse_float: Callable[[str], Any] | None,
                 parse_constant: Callable[[str], Any] | None) -> None:
        self.strict = True
        self.object_hook = None
        self.object_pairs_hook = object_pairs_hook
        self.parse_float = parse_float or float
        self.parse_int = int
        self.parse_constant = parse_constant or {
            "-Infinity": float("-inf"), "Infinity": float("inf"), "NaN": float("nan")}.__getitem__


def loads(text: str | bytes, *,
          object_pairs_hook: Callable[[list[tuple[str, Any]]], Any] | None = None,
          parse_float: Callable[[str], Any] | None = None,
          parse_constant: Callable[[str], Any] | None = None) -> Any:
    """``json.loads(text, ...)``, but bad syntax raises :class:`JSONError`.  Bytes in
    UTF-8 without a byte-order mark (what ``json`` takes for UTF-8) are read here;
    other bytes, whose encoding ``json`` guesses, by ``json``."""
    hooks: dict[str, Any] = {"object_pairs_hook": object_pairs_hook,
                             "parse_float": parse_float, "parse_constant": parse_constant}
    try:
        if isinstance(text, bytes):
            if not (len(text) >= 2 and text[0] and text[1]) \
                    or text.startswith((b"\xef\xbb\xbf", b"\xff\xfe", b"\xfe\xff")):
                return _json_loads(text, hooks)
            text = text.decode("utf-8", "surrogatepass")
        if _make_scanner is None:  # pragma: no cover
            return _json_loads(text, hooks)
        try:
            return _scan(text, _make_scanner(_Context(**hooks)))
        except SystemError:
            # Before Python 3.12 the scanner raises a syntax error as json.decoder's
            # exception class, which it finds only if json is loaded: without it, it
            # fails this way.  json then reads the text again and raises it properly.
            return _json_loads(text, hooks)
    except JSONError:
        raise
    except ValueError as e:
        import json  # an error path: loading json here costs a good document nothing

        if isinstance(e, json.JSONDecodeError):
            raise JSONError(e.msg, e.doc, e.pos) from None
        raise


def _json_loads(text: str | bytes, hooks: dict[str, Any]) -> Any:
    import json

    return json.loads(text, **hooks)


def _scan(text: str, scan: Any) -> Any:
    """``json.JSONDecoder.decode``: one value, with JSON whitespace around it."""
    if text.startswith("\ufeff"):
        raise JSONError("Unexpected UTF-8 BOM (decode using utf-8-sig)", text, 0)
    start = len(text) - len(text.lstrip(_WHITESPACE))
    try:
        value, end = scan(text, start)
    except StopIteration as e:
        raise JSONError("Expecting value", text, e.value) from None
    rest = text[end:]
    extra = len(rest) - len(rest.lstrip(_WHITESPACE))
    if end + extra != len(text):
        raise JSONError("Extra data", text, end + extra)
    return value


def dumps_indented(data: Mapping[str, object], indent: int) -> str:
    """``json.dumps(data, ensure_ascii=False, sort_keys=True, indent=indent,
    separators=(",", ": "))``.  JSON-shaped data (see the module docstring) is written
    here; anything else (other key types, NaN, other classes) by ``json``, whose
    conversions and errors it then gets."""
    if _make_scanner is not None:
        out: list[str] = []
        try:
            _write(data, out, " " * indent, "\n")
            return "".join(out)
        except _NotPlain:
            pass
    import json

    return json.dumps(data, ensure_ascii=False, sort_keys=True, indent=indent,
                      separators=(",", ": "))


class _NotPlain(Exception):
    """Data this writer leaves to ``json``."""


def _write(value: object, out: list[str], step: str, newline: str) -> None:
    """Append ``value`` to ``out``; ``newline`` is a line break and this level's indent."""
    if isinstance(value, str):
        out.append(_quote(value))
    elif value is None:
        out.append("null")
    elif value is True:
        out.append("true")
    elif value is False:
        out.append("false")
    elif isinstance(value, int):
        out.append(int.__repr__(value))
    elif isinstance(value, float) and value - value == 0:  # finite: not NaN or infinity
        out.append(float.__repr__(value))
    elif isinstance(value, (dict, list, tuple)):
        if isinstance(value, dict):
            if not all(isinstance(key, str) for key in value):
                raise _NotPlain
            brackets = "{}"
            items = [(_quote(key) + ": ", value[key]) for key in sorted(value)]
        else:
            brackets = "[]"
            items = [("", item) for item in value]
        if not items:
            out.append(brackets)
            return
        inner = newline + step
        out.append(brackets[0])
        for i, (key, item) in enumerate(items):
            out.append(("," if i else "") + inner + key)
            _write(item, out, step, inner)
        out.append(newline + brackets[1])
    else:
        raise _NotPlain
