"""jsontext reads and writes JSON exactly as the json module does.

The install path reads manifests with :mod:`click_build.jsontext` instead of
``json`` (issue 15: importing json is a millisecond of a trivial install), and the
builder writes every manifest with it.  On generated documents, good and broken,
text and bytes in every encoding json guesses, both give json's values, json's
errors at json's positions, and json's bytes.
"""

from __future__ import annotations

import json
import math
import subprocess
import sys
from typing import Any

from conftest import ROOT as REPO
from hypothesis import given, settings
from hypothesis import strategies as st

from click_build import jsontext

_scalars = (st.none() | st.booleans() | st.integers() | st.text()
            | st.floats(allow_nan=False, allow_infinity=False))
_documents = st.recursive(
    _scalars,
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(), inner, max_size=4),
    max_leaves=25)
_layouts = st.sampled_from([
    {}, {"indent": 4}, {"indent": 0}, {"separators": (",", ":")}, {"ensure_ascii": False},
    {"indent": "\t", "ensure_ascii": False},
])


def _outcome(load: Any, text: str | bytes, **hooks: Any) -> tuple[str, object]:
    """("ok", value) or (error class, message, position) -- json's JSONDecodeError and
    our JSONError count as the same error when message and position agree."""
    try:
        return ("ok", repr(load(text, **hooks)))  # repr: NaN equals NaN, 0 is not 0.0
    except ValueError as e:
        kind = "syntax" if isinstance(e, (json.JSONDecodeError, jsontext.JSONError)) else \
            type(e).__name__
        return (kind, (str(e), getattr(e, "lineno", None), getattr(e, "colno", None)))
    except RecursionError:
        return ("RecursionError", None)


def _same(text: str | bytes, **hooks: Any) -> None:
    assert _outcome(jsontext.loads, text, **hooks) == _outcome(json.loads, text, **hooks)


@settings(max_examples=400, deadline=None)
@given(_documents, _layouts)
def test_reads_what_json_reads(document: object, layout: dict[str, Any]) -> None:
    text = json.dumps(document, **layout)
    _same(text)
    _same(" \n\t" + text + "\r\n ")
    _same(text, object_pairs_hook=list)  # every object as its list of pairs, in order


@settings(max_examples=600, deadline=None)
@given(_documents, st.integers(min_value=0), st.text(max_size=3), st.booleans())
def test_broken_text_fails_as_json_fails(document: object, where: int, junk: str,
                                         cut: bool) -> None:
    text = json.dumps(document, indent=2)
    where %= len(text) + 1
    broken = text[:where] if cut else text[:where] + junk + text[where:]
    _same(broken)


def test_edges() -> None:
    for text in ["", " ", "\ufeff{}", "{} x", "[1,]", '{"a" 1}', "[1] [2]", "NaN", "-Infinity",
                 '"\\ud800"', "1e400", "01", "[" * 50 + "]" * 50, "\x00", '"\x01"', "tru",
                 "{\n\n  \"a\": [1, 2,\n  }"]:
        _same(text)
        _same(text.encode("utf-8", "surrogatepass"))

    def refuse(name: str) -> object:
        raise ValueError(f"{name} is not valid JSON")

    _same("[1, NaN]", parse_constant=refuse)  # a hook's own error passes through
    _same("[1.5, 2]", parse_float=lambda s: ("float", s))


@given(_documents)
def test_bytes_in_every_encoding_json_guesses(document: object) -> None:
    text = json.dumps(document, ensure_ascii=False)
    for encoding in ("utf-8", "utf-8-sig", "utf-16", "utf-16-le", "utf-16-be", "utf-32",
                     "utf-32-le", "utf-32-be"):
        try:
            raw = text.encode(encoding)
        except UnicodeEncodeError:  # a lone surrogate: no encoding writes it
            continue
        _same(raw)
        _same(raw[:-1])


def _dumps(data: object) -> str:
    return json.dumps(data, ensure_ascii=False, sort_keys=True, indent=4, separators=(",", ": "))


@settings(max_examples=400, deadline=None)
@given(_documents)
def test_writes_what_json_writes(document: object) -> None:
    data = {"top": document, "": [document, (1, 2)], "é": {}}
    assert jsontext.dumps_indented(data, 4) == _dumps(data)


def test_writes_what_json_writes_for_what_json_converts() -> None:
    for data in ({1: "int key", 2: 1, -3: 0}, {"nan": math.nan}, {"inf": [math.inf]},
                 {"t": (1, [2, (3,)])}, {"True": True, "None": None, "-0": -0.0}):
        assert jsontext.dumps_indented(data, 4) == _dumps(data)
    for data in ({"bad": {1, 2}}, {"bad": b"bytes"}, {1: 1, "a": 2}):  # json refuses these
        try:
            expected: object = _dumps(data)
        except TypeError as e:
            expected = str(e)
        try:
            got: object = jsontext.dumps_indented(data, 4)
        except TypeError as e:
            got = str(e)
        assert got == expected


def test_errors_in_a_process_that_never_loaded_json() -> None:
    """The C scanner finds json's error class only once json is loaded (before Python
    3.12): errors deep in a document are still JSONError, at json's position."""
    code = (
        "import sys\n"
        "from click_build import jsontext\n"
        "assert 'json' not in sys.modules\n"
        "assert jsontext.loads(b'{\"a\": [1, {\"b\": null}]}') == {'a': [1, {'b': None}]}\n"
        "assert 'json' not in sys.modules, 'a good document loaded json'\n"
        "for text in ('{broken', '[1, 2', '{\"a\": [1,]}', b'{\"a\" 1}'):\n"
        "    try:\n"
        "        jsontext.loads(text)\n"
        "    except jsontext.JSONError as e:\n"
        "        print(e.msg, e.lineno, e.colno)\n"
    )
    done = subprocess.run([sys.executable, "-S", "-c", code], capture_output=True, text=True,
                          env={"PYTHONPATH": str(REPO)}, check=False)
    assert done.returncode == 0, done.stderr
    expected = []
    for text in ("{broken", "[1, 2", '{"a": [1,]}', b'{"a" 1}'):
        try:
            json.loads(text)
        except json.JSONDecodeError as e:
            expected.append(f"{e.msg} {e.lineno} {e.colno}")
    assert done.stdout.splitlines() == expected
