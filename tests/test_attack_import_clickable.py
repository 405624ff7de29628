"""import-clickable reads someone else's file: every bad input is one error line, nothing
in the file runs, and nothing is written outside the project's pyproject.toml.

The attacker owns the project folder (a cloned repository): its clickable.yaml, any
pyproject.toml, links and special files in place of either.
"""

from __future__ import annotations

import os
import tomllib
from pathlib import Path

import pytest
from conftest import Cli, assert_clean_error

BOMB = "\n".join(["a: &a [x, x, x, x, x, x, x, x, x]"] + [
    f"{b}: &{b} [*{a}, *{a}, *{a}, *{a}, *{a}, *{a}, *{a}, *{a}, *{a}]"
    for a, b in zip("abcdefghijklmnopq", "bcdefghijklmnopqr")])


def project(tmp_path: Path, text: str | bytes, name: str = "clickable.yaml") -> Path:
    folder = tmp_path / "p"
    folder.mkdir(exist_ok=True)
    data = text.encode() if isinstance(text, str) else text
    (folder / name).write_bytes(data)
    return folder


@pytest.mark.parametrize(("text", "fragment"), [
    ("!!python/object/apply:os.system ['touch PWNED']\n", "not valid YAML"),
    ("builder: !!python/name:os.system\n", "not valid YAML"),
    ("builder: !!python/object/new:type [x, [], {}]\n", "not valid YAML"),
    ("[1, 2]\n", "must be a mapping of settings (key: value), not a list"),
    ("just text\n", "must be a mapping of settings (key: value), not a string"),
    ("", "empty; nothing to import"),
    ("# only a comment\n", "empty; nothing to import"),
    ("builder: [cmake\n", "not valid YAML (line 2, column 1)"),
    ("? [a, b]\n: c\n", "not valid YAML"),
    ("1: one\n", "a key is a number"),
    ("builder: 3\n", "builder: must be a string, not a number"),
    ("builder: pure\nprebuild: {a: b}\n", "prebuild: must be a string or a list of strings, "
                                          "not a mapping"),
    ("builder: pure\nprebuild: [[nested]]\n", "prebuild: must be a string or a list"),
    ("builder: pure\nprebuild: \"echo \\0\"\n", "prebuild: holds a NUL character"),
    ("builder: pure\nprebuild: \"echo \\ud800\"\n", "prebuild: holds a lone surrogate"),
    ("builder: pure\nenv_vars: {DEBUG: true}\n", "env_vars.DEBUG: must be a string (quote it)"),
    ("builder: pure\nenv_vars: [a]\n", "env_vars: must be a mapping"),
    ("builder: pure\nlibraries: [a]\n", "libraries: must be a mapping"),
    ("builder: pure\nlibraries: {a: 1}\n", "libraries.a: must be a mapping, not a number"),
    ("builder: pure\ninstall_data: [a]\n", "install_data: must be a mapping of sources"),
    ("skip_review: maybe\n", "skip_review: must be true or false"),
    ("[" * 100000 + "]" * 100000 + "\n", "nested too deeply"),
    (BOMB + "\nprebuild: *r\n", "prebuild: must be a string or a list of strings"),
    (BOMB + "\nenv_vars: {X: *r}\n", "env_vars.X: must be a string"),
])
def test_hostile_yaml_is_one_error_line(cli: Cli, tmp_path: Path, text: str,
                                        fragment: str) -> None:
    folder = project(tmp_path, text)
    result = cli("import-clickable", folder, check=False)
    assert_clean_error(result, fragment)
    assert sorted(os.listdir(folder)) == ["clickable.yaml"]  # nothing written, nothing run


@pytest.mark.parametrize(("text", "fragment"), [
    ("[1]", "must be a mapping of settings"),
    ('{"builder": "pure", "prebuild": 7}', "prebuild: must be a string or a list"),
    ("[" * 100000 + "]" * 100000, "nested too deeply"),
    ('{"builder": "pure",, }', "not valid YAML"),
])
def test_hostile_json_is_one_error_line(cli: Cli, tmp_path: Path, text: str,
                                        fragment: str) -> None:
    folder = project(tmp_path, text, "clickable.json")
    assert_clean_error(cli("import-clickable", folder, check=False), fragment)
    assert not (folder / "pyproject.toml").exists()


def test_an_alias_bomb_in_keys_it_leaves_out_is_named_briefly(cli: Cli, tmp_path: Path) -> None:
    folder = project(tmp_path, BOMB + "\nbuilder: pure\n")
    result = cli("import-clickable", folder)
    lines = result.stdout.splitlines()
    assert any(line.startswith("  r: [[[[") and "--" in line for line in lines)
    assert max(map(len, lines)) < 200


def test_nothing_in_the_file_runs_at_import(cli: Cli, tmp_path: Path) -> None:
    folder = project(tmp_path, """\
builder: custom
prebuild: touch PRE
build: [touch BUILT]
postbuild: touch POST
scripts: {x: touch SCRIPT}
install_root_data: ["x; touch INSTALLED", "$(touch SUBST)", "`touch TICK`"]
install_data: {"a b": "c;touch D", "ok.txt": "../../outside"}
libraries:
  lib:
    builder: custom
    build: touch LIB
    prebuild: touch LIBPRE
""")
    out = cli("import-clickable", folder).stdout
    assert sorted(os.listdir(folder)) == ["clickable.yaml", "pyproject.toml"]
    data = tomllib.loads((folder / "pyproject.toml").read_text())["tool"]["click-build"]
    assert data["prebuild"] == ["touch PRE"] and data["postbuild"] == ["touch POST"]
    assert out.count("a name a shell would read otherwise") == 4
    assert "a destination outside the package" in out


def test_invisible_characters_are_escaped_in_the_report_and_the_file(
        cli: Cli, tmp_path: Path) -> None:
    folder = project(tmp_path, '"\\e[31mred\\e[0m": 1\nbuilder: pure\n'
                               'prebuild: "echo \\u202eevil\\u200b \\e]0;title\\a"\n')
    result = cli("import-clickable", folder)
    assert "\x1b" not in result.stdout + result.stderr
    assert "\\u001b[31mred" in result.stdout
    text = (folder / "pyproject.toml").read_text()
    assert "\x1b" not in text and "\u202e" not in text and "\u200b" not in text
    data = tomllib.loads(text)["tool"]["click-build"]
    assert data["prebuild"] == ["echo \u202eevil\u200b \x1b]0;title\x07"]


def test_names_that_would_leave_the_project(cli: Cli, tmp_path: Path) -> None:
    folder = project(tmp_path, """\
builder: cmake
libraries:
  ../../evil: {builder: cmake}
  good: {builder: cmake, src_dir: ../../../etc}
  abs: {builder: cmake, src_dir: /etc}
env_vars: {"A=B": x, "1X": y, "PATH_OK": z}
install_root_data: [/etc/passwd, ../secret]
""")
    out = cli("import-clickable", folder).stdout
    data = tomllib.loads((folder / "pyproject.toml").read_text())["tool"]["click-build"]
    assert set(data["libraries"]) == {"good", "abs"}
    assert "source-dir" not in data["libraries"]["good"]
    assert "source-dir" not in data["libraries"]["abs"]
    assert data["env"] == {"PATH_OK": "z"}
    assert "postbuild" not in data
    assert out.count("a folder outside the project") == 2
    assert out.count("not an environment variable name") == 2


@pytest.mark.parametrize("kind", ["fifo", "link-out", "folder", "huge", "binary"])
def test_special_config_files(cli: Cli, tmp_path: Path, kind: str) -> None:
    folder = tmp_path / "p"
    folder.mkdir()
    path = folder / "clickable.yaml"
    fragment = {"fifo": "not a regular file", "link-out": "a link out of the project",
                "folder": "not a regular file", "huge": "larger than 1 MiB",
                "binary": "not UTF-8 text"}[kind]
    if kind == "fifo":
        os.mkfifo(path)
    elif kind == "link-out":
        outside = tmp_path / "secret.yaml"
        outside.write_text("builder: pure\n")
        path.symlink_to(outside)
    elif kind == "folder":
        path.mkdir()
    elif kind == "huge":
        path.write_text("builder: pure\n" + "# padding\n" * 120000)
    else:
        path.write_bytes(b"builder: \xff\xfe\n")
    result = cli("import-clickable", folder, check=False)
    assert_clean_error(result, fragment)
    assert not (folder / "pyproject.toml").exists()


def test_a_link_inside_the_project_is_read(cli: Cli, tmp_path: Path) -> None:
    folder = tmp_path / "p"
    (folder / "platforms").mkdir(parents=True)
    (folder / "platforms" / "clickable.yaml").write_text("builder: pure\n")
    (folder / "clickable.yaml").symlink_to("platforms/clickable.yaml")
    cli("import-clickable", folder)
    assert (folder / "pyproject.toml").is_file()


@pytest.mark.parametrize("kind", ["link", "invalid", "folder"])
def test_a_hostile_pyproject_is_left_alone(cli: Cli, tmp_path: Path, kind: str) -> None:
    folder = project(tmp_path, "builder: pure\n")
    target = folder / "pyproject.toml"
    victim = tmp_path / "victim.toml"
    victim.write_text("[tool.x]\ny = 1\n")
    fragment = {"link": "a symbolic link", "invalid": "invalid TOML",
                "folder": "not a regular file"}[kind]
    if kind == "link":
        target.symlink_to(victim)
    elif kind == "invalid":
        target.write_text("[tool\n")
    else:
        target.mkdir()
    result = cli("import-clickable", folder, "--force", check=False)
    assert_clean_error(result, fragment)
    assert victim.read_text() == "[tool.x]\ny = 1\n"
    assert target.is_symlink() or target.is_dir() or target.read_text() == "[tool\n"
    assert sorted(os.listdir(folder)) == ["clickable.yaml", "pyproject.toml"]


@pytest.mark.parametrize("name", ["../clickable.yaml", "/etc/passwd", ".."])
def test_config_must_name_a_file_in_the_folder(cli: Cli, tmp_path: Path, name: str) -> None:
    folder = project(tmp_path, "builder: pure\n")
    assert_clean_error(cli("import-clickable", folder, "--config", name, check=False),
                       "name a file in")


def test_no_config_and_no_folder(cli: Cli, tmp_path: Path) -> None:
    assert_clean_error(cli("import-clickable", tmp_path, check=False),
                       "no clickable.yaml, clickable.yml, clickable.json")
    assert_clean_error(cli("import-clickable", tmp_path / "nowhere", check=False),
                       "not a folder")
