"""What a user who installed click-build from its wheel (no docs/ beside it) reads first.
Each template's README, pasted in order in the project `new` makes, is run by
test_docs.py (its checks of issue 13 there: template_readme_outcomes)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from user_env import UserEnv


@pytest.mark.slow
def test_new_help_stands_on_its_own(user_env: UserEnv, tmp_path: Path) -> None:
    """The wheel has no docs/: `new --help` itself says what a first app needs."""
    text = user_env.sh("click-build new --help", tmp_path).stdout
    assert "docs/" not in text
    for needed in ("title", "app_name", "namespace", "maintainer_email", "framework",
                   "--no-input", "--set", "python -m build --wheel", "click-build install",
                   "never evaluated"):
        assert needed in text, needed
    listing = json.dumps(text)
    assert "qml" in listing and "cpp" in listing
