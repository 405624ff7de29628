"""import-clickable: Clickable's project config becomes [tool.click-build] settings.

Every fixture project under tests/packages/ that Clickable builds carries its
clickable.yaml (or .json) beside the pyproject.toml written by hand: the import must
give the very same settings.  The packages built from both are compared in
tests/test_builders.py.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import tomllib
from pathlib import Path

import pytest
from backend_helpers import PACKAGES
from conftest import CLICK_BUILD, Cli, assert_clean_error
from hypothesis import given, settings
from hypothesis import strategies as st

from click_build.backend.settings import load_project
from click_build.backend.toml_text import string, table_lines

#: The fixtures Clickable builds: each has a clickable.yaml or .json and its hand-written
#: pyproject.toml.
IMPORTED = ["ut-qmake-app", "ut-qmake-qml", "ut-steps-app", "ut-precompiled",
            "ut-cmake-library"]


def project_copy(name: str, dest: Path, keep_pyproject: bool = False) -> Path:
    shutil.copytree(PACKAGES / name, dest)
    if not keep_pyproject:
        (dest / "pyproject.toml").unlink()
    return dest


@pytest.mark.parametrize("name", IMPORTED)
def test_import_gives_the_hand_written_settings(cli: Cli, tmp_path: Path, name: str) -> None:
    project = project_copy(name, tmp_path / name)
    result = cli("import-clickable", project)
    assert f"wrote {project / 'pyproject.toml'}" in result.stdout
    imported = load_project(project, environ={})
    written = load_project(PACKAGES / name, environ={})
    assert imported.settings == written.settings
    data = tomllib.loads((project / "pyproject.toml").read_text())
    assert data["build-system"]["build-backend"] == "click_build.backend"
    cmake = imported.settings.kind == "cmake"
    assert data["build-system"]["requires"] == ["click-build[cmake]" if cmake else "click-build"]


def test_the_report_names_each_key_and_what_became_of_it(cli: Cli, tmp_path: Path) -> None:
    project = project_copy("ut-steps-app", tmp_path / "steps")
    out = cli("import-clickable", project).stdout
    assert out.splitlines()[0] == f"Read clickable.yaml; wrote {project / 'pyproject.toml'}:"
    carried, left = out.split("Not carried over:\n")
    for line in ('builder: "pure"', "-> kind = \"qml\"", "prebuild: ", "-> prebuild = [1 command]",
                 "install_data: ", "postbuild: copied into the package", "env_vars: ",
                 "-> env (2 variables)", 'ignore: ["docs", "*.md"]'):
        assert line in carried, (line, carried)
    assert 'kill: "qmlscene"' in left and "no click-build command uses it" in left
    assert "clickable_minimum_required" in left
    assert out.rstrip().endswith(f"(or click-build build {project})")


def test_old_json_keys_real_apps_carry(cli: Cli, tmp_path: Path) -> None:
    """A clickable.json of Clickable 5 and 6: template, arch, dependencies, premake."""
    project = tmp_path / "old"
    project.mkdir()
    (project / "clickable.json").write_text(json.dumps({
        "template": "cmake", "arch": "armhf", "dependencies": ["libfoo-dev"],
        "premake": "echo old", "sdk": "ubuntu-sdk-15.04", "qt_version": "5.12",
        "build_args": ["-DCMAKE_BUILD_TYPE=Debug", "-DCMAKE_INSTALL_PREFIX:PATH=/usr",
                       "-DFOO=$ARCH_TRIPLET"],
        "make_args": "-j4 all", "install_lib": ["/usr/lib/$ARCH_TRIPLET/libfoo.so*"]}))
    out = cli("import-clickable", project).stdout
    data = tomllib.loads((project / "pyproject.toml").read_text())["tool"]["click-build"]
    assert data == {"kind": "cmake", "architecture": "armhf", "framework": "ubuntu-sdk-20.04",
                    "cmake": {"build-type": "Debug", "args": ["-DFOO=${ARCH_TRIPLET}"]}}
    for fragment in ("template: \"cmake\"", "the older name of builder",
                     "dependencies: [\"libfoo-dev\"]", "an older name of dependencies_target",
                     "premake", "a key Clickable no longer reads",
                     "-DCMAKE_INSTALL_PREFIX:PATH=/usr", "DESTDIR and the prefix /.",
                     "make_args", "make arguments do not apply",
                     "copies the build machine's libraries"):
        assert fragment in out, fragment


def test_json_that_only_yaml_reads(cli: Cli, tmp_path: Path) -> None:
    """Clickable reads clickable.json as YAML, tabs made spaces: a trailing comma passes."""
    project = tmp_path / "p"
    project.mkdir()
    (project / "clickable.json").write_text('{\n\t"builder": "pure",\n\t"kill": "x",\n}\n')
    cli("import-clickable", project)
    data = tomllib.loads((project / "pyproject.toml").read_text())["tool"]["click-build"]
    assert data["kind"] == "qml"


def test_builders_and_their_kinds(tmp_path: Path) -> None:
    from click_build.backend.clickable_config import convert

    html = tmp_path / "web"
    (html / "www").mkdir(parents=True)
    expect = {"pure": {"kind": "html5", "exclude": ["build", ".gitlab-ci.yml"]},
              "pure-qml-cmake": {"kind": "cmake", "architecture": "all"},
              "python": {"kind": "precompiled", "exclude": ["build", ".gitlab-ci.yml"]},
              "custom": {"kind": "custom"}}
    for builder, table in expect.items():
        assert convert({"builder": builder}, html, "clickable.yaml").table == table
    out = convert({"restrict_arch": "arm64", "builder": "pure-qml-qmake"}, html, "c").table
    assert out == {"kind": "qmake", "architecture": "all"}


@pytest.mark.parametrize(("builder", "fragment"), [
    ("go", "click-build has no kind for Go projects"),
    ("rust", "click-build has no kind for Rust (cargo) projects"),
    ("qbs", "no kind for Qbs"),
    ("ubuntu-sdk", "'ubuntu-sdk' is not one of Clickable's builders"),
])
def test_builders_it_cannot_build_write_nothing(cli: Cli, tmp_path: Path, builder: str,
                                                fragment: str) -> None:
    (tmp_path / "clickable.yaml").write_text(f"builder: {builder}\n")
    result = cli("import-clickable", tmp_path, check=False)
    assert_clean_error(result, fragment)
    assert not (tmp_path / "pyproject.toml").exists()


def test_custom_builder_with_libraries(cli: Cli, tmp_path: Path) -> None:
    """Kaidan's shape: a custom build and CMake libraries with their own arguments."""
    (tmp_path / "clickable.yaml").write_text("""\
builder: custom
build: ${ROOT}/utils/build-click.sh
build_dir: ./bin/ubuntu-touch/
kill: kaidan
dependencies_host: [ninja-build]
libraries:
  qxmpp:
    builder: cmake
    src_dir: 3rdparty/qxmpp
    make_jobs: 2
    build_args:
    - -DBUILD_TESTS=OFF
    - -DCMAKE_INSTALL_PREFIX=../../../bin/ubuntu-touch/tmp
    postbuild: make install
    env_vars: {QT_SELECT: "5"}
  zxing-cpp:
    builder: cmake
    src_dir: ${ROOT}/3rdparty/zxing-cpp
  perl:
    builder: custom
    build: perl ${ROOT}/utils/install-pEFL.pl ${INSTALL_DIR}
  helper:
    builder: rust
""")
    cli("import-clickable", tmp_path)
    table = load_project(tmp_path, environ={}).settings
    assert table.kind == "custom" and table.build == ["${ROOT}/utils/build-click.sh"]
    assert list(table.libraries) == ["qxmpp", "zxing-cpp", "perl"]
    qxmpp = table.libraries["qxmpp"]
    assert qxmpp.source_dir == "3rdparty/qxmpp" and qxmpp.args == ["-DBUILD_TESTS=OFF"]
    assert qxmpp.postbuild == ["make install"] and qxmpp.env == {"QT_SELECT": "5"}
    assert table.libraries["zxing-cpp"].source_dir == "3rdparty/zxing-cpp"
    assert table.libraries["perl"].build == ["perl ${ROOT}/utils/install-pEFL.pl ${INSTALL_DIR}"]


# ------------------------------------------------------------- pyproject.toml ---

def test_settings_already_there_are_kept_and_a_difference_needs_force(
        cli: Cli, tmp_path: Path) -> None:
    project = project_copy("ut-qmake-app", tmp_path / "app")
    original = """\
# the app's own notes stay
[project]
name = "qmakeapp"  # a comment that must survive

[tool.click-build]
kind = "qmake"
review = "strict"

[tool.other]
x = 1
"""
    (project / "pyproject.toml").write_text(original)
    out = cli("import-clickable", project).stdout
    assert "(already there: kind)" in out
    text = (project / "pyproject.toml").read_text()
    assert text.startswith("[build-system]\n") and "# a comment that must survive" in text
    assert "# the app's own notes stay" in text
    data = tomllib.loads(text)
    assert data["tool"]["click-build"] == {"kind": "qmake", "review": "strict",
                                           "qmake": {"config": ["click"]}}
    assert data["tool"]["other"] == {"x": 1} and data["project"] == {"name": "qmakeapp"}
    again = cli("import-clickable", project).stdout  # a second import changes nothing
    assert "(already there: kind, qmake.config)" in again
    assert (project / "pyproject.toml").read_text() == text

    (project / "pyproject.toml").write_text(original.replace('kind = "qmake"', 'kind = "qml"'))
    result = cli("import-clickable", project, check=False)
    assert_clean_error(result, "pyproject.toml already says otherwise: tool.click-build.kind "
                       "is 'qml', the import says 'qmake'; --force replaces them")
    assert 'kind = "qml"' in (project / "pyproject.toml").read_text()
    out = cli("import-clickable", project, "--force").stdout
    assert "(replaced, --force: kind)" in out
    data = tomllib.loads((project / "pyproject.toml").read_text())
    assert data["tool"]["click-build"]["kind"] == "qmake"
    assert data["tool"]["click-build"]["review"] == "strict" and data["tool"]["other"] == {"x": 1}


def test_another_build_backend_is_a_conflict(cli: Cli, tmp_path: Path) -> None:
    project = project_copy("ut-qmake-qml", tmp_path / "qml")
    (project / "pyproject.toml").write_text(
        '[build-system]\nrequires = ["setuptools"]\nbuild-backend = "setuptools.build_meta"\n')
    result = cli("import-clickable", project, check=False)
    assert_clean_error(result, "build-system.build-backend is 'setuptools.build_meta', not "
                       "'click_build.backend'")
    cli("import-clickable", project, "--force")
    data = tomllib.loads((project / "pyproject.toml").read_text())
    assert data["build-system"]["build-backend"] == "click_build.backend"


def test_a_layout_it_cannot_add_to_is_refused(cli: Cli, tmp_path: Path) -> None:
    project = project_copy("ut-qmake-qml", tmp_path / "qml")
    text = '[tool]\nclick-build = { review = "report" }\n'
    (project / "pyproject.toml").write_text(text)
    result = cli("import-clickable", project, check=False)
    assert_clean_error(result, "written in a form this import cannot add to")
    assert (project / "pyproject.toml").read_text() == text
    dry = cli("import-clickable", project, "--dry-run", check=False)
    assert dry.returncode != 0


def test_dry_run_prints_and_writes_nothing(cli: Cli, tmp_path: Path) -> None:
    project = project_copy("ut-cmake-library", tmp_path / "lib")
    out = cli("import-clickable", project, "--dry-run").stdout
    assert not (project / "pyproject.toml").exists()
    assert tomllib.loads(out)["tool"]["click-build"]["libraries"]["greeter"]["source-dir"] == \
        "3rdparty/greeter"


def test_quiet(cli: Cli, tmp_path: Path) -> None:
    project = project_copy("ut-qmake-app", tmp_path / "app")
    result = cli("-q", "import-clickable", project)
    assert result.stdout == result.stderr == ""
    assert (project / "pyproject.toml").is_file()


def test_without_pyyaml_a_yaml_file_asks_for_it(tmp_path: Path) -> None:
    project = project_copy("ut-qmake-app", tmp_path / "app")
    blocker = tmp_path / "blocker"
    blocker.mkdir()
    (blocker / "yaml.py").write_text("raise ImportError('not here')\n")
    env = {"PYTHONPATH": str(blocker)}
    result = subprocess.run([*CLICK_BUILD, "import-clickable", str(project)],
                            capture_output=True, text=True, env={**_environ(), **env})
    assert_clean_error(result, "clickable.yaml: reading YAML needs PyYAML: pip install "
                       "'click-build[clickable]'")
    json_project = project_copy("ut-qmake-qml", tmp_path / "qml")  # JSON needs nothing
    result = subprocess.run([*CLICK_BUILD, "import-clickable", str(json_project)],
                            capture_output=True, text=True, env={**_environ(), **env})
    assert result.returncode == 0, result.stderr


def _environ() -> dict[str, str]:
    import os

    return dict(os.environ)


# -------------------------------------------------------------- TOML writing ---

_TEXT = st.text(st.characters(codec="utf-8", exclude_categories=("Cs",)), max_size=40)


@settings(max_examples=300, deadline=None)
@given(st.dictionaries(_TEXT, st.one_of(_TEXT, st.booleans(), st.lists(_TEXT, max_size=4)),
                       max_size=5),
       st.dictionaries(_TEXT.filter(bool), st.dictionaries(_TEXT, _TEXT, max_size=3),
                       max_size=3))
def test_what_is_written_reads_back(scalars: dict[str, object],
                                    tables: dict[str, dict[str, str]]) -> None:
    table: dict[str, object] = {**scalars, **{k: v for k, v in tables.items() if v}}
    text = "\n".join(table_lines(["tool", "click-build"], table)) + "\n"
    assert tomllib.loads(text) == ({"tool": {"click-build": table}} if table else
                                   {"tool": {"click-build": {}}})
    for line in text.splitlines():  # nothing a terminal would hide or act on
        assert line.isprintable() or not line, repr(line)


def test_strings_escape_what_a_reader_cannot_see() -> None:
    assert string('a"b\\c\n\t') == '"a\\"b\\\\c\\n\\t"'
    assert string("\u202eevil\u200b") == '"\\u202Eevil\\u200B"'
    assert string("\x1b[31m") == '"\\u001B[31m"'
    assert string("café ☕") == '"café ☕"'
    with pytest.raises(ValueError):
        string("\ud800")


def test_the_command_is_listed(cli: Cli) -> None:
    assert "import-clickable" in cli("--help").stdout
    help_text = cli("import-clickable", "--help").stdout
    assert "--force" in help_text and "--dry-run" in help_text and "PyYAML" in help_text
