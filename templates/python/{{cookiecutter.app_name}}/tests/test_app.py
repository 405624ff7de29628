"""Tests of the Python side. Run them from the project folder with
    python -m pytest
(pyproject.toml puts src/ on the import path)."""

import re

from {{ cookiecutter.__module }} import describe, greeting, python_version


def test_describe_counts_words_and_characters():
    assert describe("") == {"words": 0, "characters": 0}
    assert describe("hello  Ubuntu Touch") == {"words": 3, "characters": 19}


def test_python_version_is_dotted():
    assert re.match(r"^3\.\d+\.\d+", python_version())


def test_greeting_names_the_python():
    # No APP_DIR here, so no translations: the text as written in the code.
    assert greeting() == "Hello from Python " + python_version() + "!"
