"""Framework names: the manifest's rule, matched whole."""

from __future__ import annotations

from pathlib import Path

import pytest

from click_build.errors import ClickError
from click_build.frameworks import list_frameworks, read_framework, validate_framework


def test_a_name_with_a_final_newline_is_no_framework(tmp_path: Path) -> None:
    """'$' would take a final newline: a name ending in one is refused, never looked up
    (a file named that way is not a framework either)."""
    (tmp_path / "ubuntu-sdk-20.04.framework").write_text("Base-Name: ubuntu-sdk\n")
    (tmp_path / "ubuntu-sdk-20.04\n.framework").write_text("Base-Name: ubuntu-sdk\n")
    assert read_framework("ubuntu-sdk-20.04", tmp_path) is not None
    assert read_framework("ubuntu-sdk-20.04\n", tmp_path) is None
    assert [f.name for f in list_frameworks(tmp_path)] == ["ubuntu-sdk-20.04"]
    validate_framework("ubuntu-sdk-20.04", tmp_path)
    with pytest.raises(ClickError, match="Could not parse framework"):
        validate_framework("ubuntu-sdk-20.04\nx", tmp_path)
