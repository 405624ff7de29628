"""Manifest validation: every field, every problem at once, and the shipped JSON Schema."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from click_build.errors import ManifestError
from click_build.manifest import Manifest, json_schema, load_manifest, validate

GOOD = {
    "name": "com.example.hello",
    "version": "1:1.0~rc1-2",
    "framework": "ubuntu-sdk-20.04",
    "maintainer": "Jane Doe <jane@example.com>",
    "title": "Hello",
    "architecture": ["armhf", "arm64"],
    "hooks": {"hello": {"desktop": "hello.desktop", "apparmor": "a/b.json"}},
    "x-source": {"vcs": "git"},
    "icon": "icon.svg",
}


def test_good_manifest_model() -> None:
    m = Manifest.from_dict(GOOD)
    assert m.control_architecture == "multi"
    assert m.filename == "com.example.hello_1.0~rc1-2_multi.click"
    assert m.frameworks == ["ubuntu-sdk-20.04"]
    out = json.loads(m.control_manifest_bytes(12))
    assert out["installed-size"] == "12" and out["x-source"] == {"vcs": "git"}


@pytest.mark.parametrize(("field", "value", "fragment"), [
    ("name", "Com.Example", "not a valid package name"),
    ("name", "a_b", "not a valid package name"),
    # docs/manifest.md: starts with a letter or digit, at least 2 characters, no '/'
    ("name", "a", "not a valid package name"),
    ("name", ".ab", "not a valid package name"),
    ("name", "-ab", "not a valid package name"),
    ("name", "a/b", "not a valid package name"),
    ("name", 5, "must be a string"),
    ("version", "abc", "must start with a digit"),
    ("version", "1_0", "'_'"),
    ("framework", "a | b", "alternatives"),
    ("framework", "ubuntu-sdk-20.04 (>= 1)", "version relations"),
    ("framework", "Ubuntu", "not a valid framework name"),
    ("maintainer", "Jane", "Full Name <email"),
    ("title", "two\nlines", "single line"),
    ("title", "", "non-empty"),
    ("architecture", "multi", "not 'all'"),
    ("architecture", [], "must not be empty"),
    ("architecture", ["all"], "cannot appear in a list"),
    ("architecture", ["armhf", "armhf"], "twice"),
    ("hooks", {"a_b": {"desktop": "x"}}, "app name"),
    ("hooks", {"app": {"desktop": "/etc/passwd"}}, "relative"),
    ("hooks", {"app": {"desktop": "../x"}}, "'..'"),
    ("hooks", {"app": {"desktop": 3}}, "non-empty string"),
    ("hooks", [], "must be an object"),
    ("description", 4, "must be a string"),
])
def test_each_invalid_field(field: str, value: object, fragment: str) -> None:
    data = dict(GOOD, **{field: value})
    errors = validate(data).errors
    assert any(e.startswith(field) and fragment in e for e in errors), errors


def test_all_problems_at_once() -> None:
    data = {"name": "Bad Name", "version": "x", "framework": "a|b"}
    with pytest.raises(ManifestError) as info:
        Manifest.from_dict(data)
    fields = [p.split(":")[0] for p in info.value.problems]
    assert fields == ["name", "version", "framework", "maintainer", "title"]
    (line,) = info.value.lines()  # all of them, on the one error line
    assert line.startswith("manifest.json: name: ") and line.count("; ") == 4


@pytest.mark.parametrize("name", ["ab", "1a", "a+b.c-d"])
def test_shortest_and_every_allowed_character_of_a_name(name: str) -> None:
    assert validate(dict(GOOD, name=name)).errors == []


def test_reserved_keys_dropped_with_warning() -> None:
    m = Manifest.from_dict(dict(GOOD, _directory="/x", _removable=1))
    assert "_directory" not in m.data and "_removable" not in m.data
    assert any("reserved" in w for w in m.warnings)


def test_typo_warning_and_installed_size_replaced() -> None:
    m = Manifest.from_dict(dict(GOOD, titel="x", **{"installed-size": "99"}))
    assert any("did you mean 'title'" in w for w in m.warnings)
    assert "installed-size" not in m.data


def test_empty_framework_warns_not_fails() -> None:
    # The original's own test suite builds packages with framework "".
    m = Manifest.from_dict(dict(GOOD, framework=""))
    assert m.frameworks == [] and any("empty" in w for w in m.warnings)


@pytest.mark.parametrize(("text", "fragment"), [
    ("{", "invalid JSON at line 1"),
    ("[]", "must be a JSON object"),
    ('{"name": "a", "name": "b"}', "duplicate key 'name'"),
    ('{"version": NaN}', "NaN"),
    # Python would read infinity, written back as Infinity: no JSON reader takes that
    ('{"x-big": 1e400}', "invalid JSON: the number 1e400 is too large"),
    ('{"x-big": -1e400}', "invalid JSON: the number -1e400 is too large"),
    (b"\xff\xfe{}", "UTF-8"),
])
def test_bad_json(tmp_path: Path, text: str | bytes, fragment: str) -> None:
    path = tmp_path / "manifest.json"
    path.write_bytes(text if isinstance(text, bytes) else text.encode())
    with pytest.raises(ManifestError) as info:
        load_manifest(path)
    assert fragment in str(info.value) and str(path) in str(info.value)


def test_missing_manifest(tmp_path: Path) -> None:
    with pytest.raises(ManifestError, match="not found"):
        load_manifest(tmp_path / "manifest.json")


def test_schema_shipped_and_current() -> None:
    shipped = Path(__file__).parent.parent / "click_build" / "manifest.schema.json"
    assert json.loads(shipped.read_text()) == json_schema(), (
        "click_build/manifest.schema.json is stale: regenerate with "
        "'python -m click_build.manifest > click_build/manifest.schema.json'"
    )


def test_schema_agrees_with_validator_on_samples() -> None:
    """The schema's patterns accept what validate() accepts and refuse what it refuses."""
    import re

    props = json_schema()["properties"]
    assert isinstance(props, dict)
    for field, good, bad in [("name", "com.example.a", "Com.A"), ("version", "1:1.0-1", "abc"),
                             ("maintainer", "A B <a@b.c>", "A B"),
                             ("framework", "ubuntu-sdk-20.04, ubuntu-sdk-20.04-qml", "a|b")]:
        pattern = props[field]["pattern"]
        assert re.match(pattern, good) and not validate(dict(GOOD, **{field: good})).errors
        assert not re.match(pattern, bad) and validate(dict(GOOD, **{field: bad})).errors
