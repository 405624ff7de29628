"""The templates as a user gets them: click-build installed from its wheel."""

from __future__ import annotations

from pathlib import Path

import pytest
from templates_support import KINDS
from user_env import UserEnv


@pytest.mark.slow
def test_new_never_copies_bytecode(user_env: UserEnv, tmp_path: Path) -> None:
    """pip byte-compiles the installed template folders; a new project gets none of it."""
    shipped = Path(user_env.sh("click-build --templates-dir", cwd=tmp_path).stdout.strip())
    assert shipped.is_relative_to(user_env.venv)
    compiled = [p for p in shipped.rglob("*") if p.name == "__pycache__" or p.suffix == ".pyc"]
    assert compiled, "pip compiled nothing: the test would prove nothing"
    for kind in KINDS:
        user_env.sh(f"click-build new {kind} --no-input -o {kind}", cwd=tmp_path)
        made = [p for p in (tmp_path / kind).rglob("*")
                if p.name == "__pycache__" or p.suffix in (".pyc", ".pyo")]
        assert made == [], made
