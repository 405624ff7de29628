"""The settings schema and the docs' reference table are generated, committed and current."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

from conftest import ROOT
from deadlines import seconds

from click_build.backend.schema import (
    DOCS_BEGIN,
    DOCS_END,
    SCHEMA_FILE,
    field_docs,
    reference_markdown,
    settings_schema,
    tool_schema,
)
from click_build.backend.settings import Settings

FIX = "regenerate with: python -m click_build.backend.schema --write"


def test_committed_schema_is_current() -> None:
    assert json.loads(SCHEMA_FILE.read_text()) == settings_schema(), FIX
    assert tool_schema("click-build") == settings_schema()


def test_docs_reference_is_current() -> None:
    text = (ROOT / "docs" / "backend.md").read_text()
    start, end = text.index(DOCS_BEGIN), text.index(DOCS_END) + len(DOCS_END) + 1
    assert text[start:end] == reference_markdown(), FIX


def test_every_setting_is_documented() -> None:
    docs = field_docs()
    for cls in ("Settings", "PythonSettings", "CMakeSettings"):
        fields = docs[cls]
        assert fields and all(len(doc) > 20 for doc in fields.values()), cls
    assert set(docs["Settings"]) == set(Settings.__dataclass_fields__)


def test_schema_entry_point_and_package_data_declared() -> None:
    data = tomllib.loads((ROOT / "pyproject.toml").read_text())
    eps = data["project"]["entry-points"]
    assert eps["validate_pyproject.tool_schema"]["click-build"] == \
        "click_build.backend.schema:tool_schema"
    assert eps["distutils.commands"]["bdist_click"] == \
        "click_build.backend.bdist_click:bdist_click"
    assert "*.json" in data["tool"]["setuptools"]["package-data"]["click_build.backend"]


def test_examples_follow_the_schema() -> None:
    """Every key the examples and fixtures use is in the schema, with the right type."""
    props = settings_schema()["properties"]
    assert isinstance(props, dict)
    for pyproject in [*(ROOT / "examples").glob("*/pyproject.toml"),
                      *(ROOT / "tests" / "packages").glob("*/pyproject.toml")]:
        table = tomllib.loads(pyproject.read_text()).get("tool", {}).get("click-build", {})
        for key, value in table.items():
            assert key in props, (pyproject, key)
            if "enum" in props[key]:
                assert value in props[key]["enum"], (pyproject, key)


def _validate_pyproject(*files: Path) -> subprocess.CompletedProcess[str]:
    """The real validate-pyproject of this environment, where click-build's
    ``validate_pyproject.tool_schema`` entry point is installed."""
    return subprocess.run([sys.executable, "-m", "validate_pyproject", *map(str, files)],
                          capture_output=True, text=True, timeout=seconds(120))


def test_validate_pyproject_accepts_examples_and_unrelated_projects(tmp_path: Path) -> None:
    """Installing click-build must not break validate-pyproject for any project: it
    compiles every tool schema into one draft-07 validator (issue 13)."""
    unrelated = tmp_path / "unrelated" / "pyproject.toml"
    unrelated.parent.mkdir()
    unrelated.write_text('[build-system]\nrequires = ["setuptools"]\n'
                         'build-backend = "setuptools.build_meta"\n'
                         '[project]\nname = "unrelated"\nversion = "1.0"\n'
                         '[tool.setuptools]\npackages = ["unrelated"]\n')
    projects = [*sorted((ROOT / "examples").glob("*/pyproject.toml")),
                *sorted((ROOT / "tests" / "packages").glob("*/pyproject.toml")), unrelated]
    result = _validate_pyproject(*projects)
    assert result.returncode == 0, result.stdout + result.stderr
    assert result.stdout.count("Valid file") == len(projects), result.stdout


def test_validate_pyproject_applies_our_schema(tmp_path: Path) -> None:
    """The schema is really loaded: a misspelt key and a wrong kind are refused."""
    for table, bad in (('build-dri = "b"', "build-dri"), ('kind = "rust"', "kind")):
        project = tmp_path / bad / "pyproject.toml"
        project.parent.mkdir()
        project.write_text(f'[project]\nname = "app"\nversion = "1"\n'
                           f'[tool.click-build]\n{table}\n')
        result = _validate_pyproject(project)
        assert result.returncode != 0, result.stdout
        assert "tool.click-build" in result.stdout + result.stderr and bad in \
            result.stdout + result.stderr
