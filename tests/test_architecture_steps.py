"""The finishing stage's steps, as docs/architecture.md and finish.py list them, are the
calls finish_jobs() makes, in that order: the drawing cannot drift from the code."""

from __future__ import annotations

import ast
import re

from conftest import ROOT

import click_build.finish

DOC = ROOT / "docs" / "architecture.md"
CODE = ROOT / "click_build" / "finish.py"


def _numbered_items(text: str) -> list[str]:
    """The items of the first numbered list in ``text`` (an item runs to the next one)."""
    items: list[str] = []
    for line in text.splitlines():
        m = re.match(r"\s*(\d+)\. (.*)", line)
        if m and int(m.group(1)) == len(items) + 1:
            items.append(m.group(2))
        elif items and not line.strip():
            break
        elif items:
            items[-1] += " " + line.strip()
    return items


def _name(reference: str) -> str:
    """``build.Packing`` / ``prepare()`` / ``~click_build.targets.check_store_rules`` -> the
    callable's own name."""
    return reference.strip("~").removesuffix("()").rpartition(".")[2]


def doc_steps() -> list[str]:
    text = DOC.read_text(encoding="utf-8")
    start = re.search(r"The steps, in the\s+order\s+`finish_jobs\(\)`\s+calls them", text)
    assert start is not None, "docs/architecture.md no longer introduces the steps"
    items = _numbered_items(text[start.end():])
    return [_name(re.match(r"`([^`]+)`", item).group(1)) for item in items]  # type: ignore[union-attr]


def docstring_steps() -> list[str]:
    doc = click_build.finish.__doc__ or ""
    items = _numbered_items(doc[doc.index(":func:`finish_jobs` runs, in order:"):])
    return [_name(re.match(r":\w+:`([^`]+)`", item).group(1)) for item in items]  # type: ignore[union-attr]


def called_in_order(function: str, names: set[str]) -> list[str]:
    """The names of ``names`` that ``function`` of finish.py calls, by first call in the
    source."""
    tree = ast.parse(CODE.read_text(encoding="utf-8"))
    body = next(n for n in tree.body if isinstance(n, ast.FunctionDef) and n.name == function)
    calls = []
    for node in ast.walk(body):
        if isinstance(node, ast.Call):
            func = node.func
            name = func.id if isinstance(func, ast.Name) else getattr(func, "attr", "")
            if name in names:
                calls.append((node.lineno, node.col_offset, name))
    seen: list[str] = []
    for _line, _col, name in sorted(calls):
        if name not in seen:
            seen.append(name)
    return seen


def test_the_docs_list_the_steps_of_the_code_in_its_order() -> None:
    steps = doc_steps()
    assert steps == ["prepare", "Packing", "final_manifest", "check_store_rules",
                     "write_reviewed"]
    assert docstring_steps() == steps
    assert called_in_order("finish_jobs", set(steps)) == steps


def test_each_step_is_a_name_the_finishing_stage_has() -> None:
    for step in doc_steps():
        assert hasattr(click_build.finish, step), step


def test_the_reader_finds_a_reordering() -> None:
    doc = "1. `b()` does\n   more\n2. `a()`\n\nafter"
    assert [_name(re.match(r"`([^`]+)`", i).group(1)) for i in _numbered_items(doc)] == \
        ["b", "a"]  # type: ignore[union-attr]
