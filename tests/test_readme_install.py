"""The README starts with installing click-build, in the words of templates.md's recipe,
which tests/test_docs.py runs as pasted on both pages."""

from __future__ import annotations

from conftest import ROOT
from doc_pages import page_blocks

INSTALL = "pip install 'click-build[templates]' build"


def _shell_lines(page: str) -> list[list[str]]:
    blocks = page_blocks((ROOT / page).read_text(encoding="utf-8"))
    return [[line.partition("#")[0].strip() for line in b.text.splitlines()] for b in blocks]


def test_the_readme_installs_click_build_before_using_it() -> None:
    first, *rest = _shell_lines("README.md")
    assert INSTALL in first and "pip wheel --no-deps ./click-build -w ~/wheels" in first
    assert not any(line.startswith("click-build ") for line in first)
    assert any(line.startswith("click-build new ") for line in rest[0])  # the quick start


def test_the_readme_and_templates_md_install_alike() -> None:
    readme = _shell_lines("README.md")[0]
    templates = _shell_lines("docs/templates.md")[0]
    assert readme == [line for line in templates if "[templates,cmake]" not in line]
