"""prebuild, postbuild, kind = "custom", env: the project's own steps in a build.

They run in a shell with Clickable's variables, as Clickable runs them; a failing step
stops the build with its output and exit status, and under -q its output is shown
only then.  Settings that would reach the operating system malformed are refused
first.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from backend_helpers import assert_one_error, data_members, manifest_of, only_click, pybuild
from conftest import CLICK_BUILD, Cli, run

HOST = run(["dpkg", "--print-architecture"]).stdout.strip()


def qml_project(root: Path, table: str, files: dict[str, str] | None = None) -> Path:
    """A small QML app with ``table`` as its [tool.click-build] lines."""
    manifest = {"name": "steps.example", "version": "1.0", "title": "Steps",
                "description": "An app with build steps", "framework": "ubuntu-sdk-20.04",
                "maintainer": "Jane Doe <jane@example.org>", "architecture": "@CLICK_ARCH@",
                "hooks": {"steps": {"apparmor": "steps.apparmor", "desktop": "steps.desktop"}}}
    tree = {
        "manifest.json": json.dumps(manifest, indent=2),
        "steps.apparmor": '{"policy_groups": [], "policy_version": 20.04}',
        "steps.desktop": "[Desktop Entry]\nName=Steps\nExec=qmlscene qml/Main.qml\n"
                         "Icon=icon.svg\nType=Application\nX-Lomiri-Touch=true\n",
        "icon.svg": "<svg xmlns='http://www.w3.org/2000/svg'/>\n",
        "qml/Main.qml": "import QtQuick 2.7\nRectangle {}\n",
        "pyproject.toml": '[build-system]\nrequires = ["click-build"]\n'
                          'build-backend = "click_build.backend"\n\n'
                          f"[tool.click-build]\n{table}\n",
        **(files or {}),
    }
    for rel, text in tree.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    return root


def test_steps_see_clickable_variables(tmp_path: Path) -> None:
    project = qml_project(tmp_path / "p", """\
prebuild = ["env | sort > env.txt", "pwd > pre-cwd.txt"]
postbuild = ['cp env.txt "$CLICK_BUILD_STAGE/seen.txt" && pwd > "$INSTALL_DIR/post-cwd.txt"']
[tool.click-build.env]
FLAVOUR = "store-${ARCH}"
""")
    pybuild(project, "--wheel", "-o", str(tmp_path / "out"))
    env = dict(line.split("=", 1) for line in (project / "env.txt").read_text().splitlines()
               if "=" in line)
    assert env["ARCH"] == "all" and env["ARCH_TRIPLET"] == "all"
    assert env["CLICK_FRAMEWORK"] == env["SDK_FRAMEWORK"] == "ubuntu-sdk-20.04"
    assert env["ROOT"] == env["SRC_DIR"] == str(project)
    assert env["INSTALL_DIR"] == env["CLICK_BUILD_STAGE"]
    assert env["FLAVOUR"] == "store-all"
    assert (project / "pre-cwd.txt").read_text().strip() == str(project)
    click = only_click(tmp_path / "out")
    members = data_members(click)
    assert "./seen.txt" in members and "./post-cwd.txt" in members
    assert "./env.txt" in members  # prebuild wrote it into the project: it is packed


def test_a_postbuild_that_changes_nothing_changes_no_byte(tmp_path: Path, cli: Cli) -> None:
    plain = qml_project(tmp_path / "plain", 'exclude = ["*.txt"]')
    stepped = qml_project(tmp_path / "stepped", 'exclude = ["*.txt"]\npostbuild = ["true"]')
    for project in (plain, stepped):
        os.utime(project / "qml", (1600000000, 1600000000))
        cli("build", project, "-o", tmp_path / project.name,
            env={"SOURCE_DATE_EPOCH": "1700000000"})
    a, b = only_click(tmp_path / "plain"), only_click(tmp_path / "stepped")
    assert a.read_bytes() == b.read_bytes()


def test_postbuild_may_edit_the_manifest(tmp_path: Path, cli: Cli) -> None:
    project = qml_project(tmp_path / "p", """postbuild = [
    'sed -i "s/\\"version\\": \\"1.0\\"/\\"version\\": \\"1.0.$BUILD_NUMBER\\"/" "$INSTALL_DIR/manifest.json"',
    'rm "$INSTALL_DIR/icon.svg" && echo "<svg/>" > "$INSTALL_DIR/icon.svg"',
]
[tool.click-build.env]
BUILD_NUMBER = "7"
""")
    cli("build", project, "-o", tmp_path / "out")
    click = only_click(tmp_path / "out")
    assert manifest_of(click)["version"] == "1.0.7"
    assert click.name == "steps.example_1.0.7_all.click"
    assert json.loads((project / "manifest.json").read_text())["version"] == "1.0"


@pytest.mark.parametrize("step", ["prebuild", "postbuild"])
def test_a_failing_step_stops_the_build_with_its_output(tmp_path: Path, step: str) -> None:
    project = qml_project(tmp_path / "p", f"""{step} = [
    "echo first step",
    "echo 'something broke' >&2; echo on stdout; exit 3",
    "touch never-run",
]""")
    result = pybuild(project, "--wheel", "-o", str(tmp_path / "out"), check=False)
    error = assert_one_error(result, f"pyproject.toml: tool.click-build.{step}[2]",
                             "failed with exit status 3 (its output is above)")
    assert "something broke" in result.stderr and "on stdout" in result.stdout
    assert "echo 'something broke'" in error
    assert not (project / "never-run").exists()
    assert not list((tmp_path / "out").glob("*.click")) if (tmp_path / "out").exists() else True


def test_quiet_holds_the_output_back_until_a_step_fails(tmp_path: Path) -> None:
    ok = qml_project(tmp_path / "ok", 'prebuild = ["echo chatty output"]')
    quiet = run([*CLICK_BUILD, "-q", "build", str(ok), "-o", str(tmp_path / "o1")])
    assert quiet.stdout == "" and "chatty" not in quiet.stderr
    bad = qml_project(tmp_path / "bad", 'prebuild = ["echo chatty output; kill -TERM $$"]')
    result = run([*CLICK_BUILD, "-q", "build", str(bad), "-o", str(tmp_path / "o2")],
                 check=False)
    assert "chatty output" in result.stderr
    assert_one_error(result, "pyproject.toml: tool.click-build.prebuild", "was killed by SIGTERM")


def test_custom_kind(tmp_path: Path, cli: Cli) -> None:
    script = """#!/bin/sh
set -eu
cp "$ROOT"/manifest.json "$ROOT"/steps.* "$ROOT"/icon.svg "$INSTALL_DIR"/
mkdir -p "$INSTALL_DIR/qml" "$INSTALL_DIR/lib/$ARCH_TRIPLET/bin"
cp "$ROOT"/qml/Main.qml "$INSTALL_DIR/qml/"
printf '#!/bin/sh\\nexec qmlscene qml/Main.qml\\n' > "$INSTALL_DIR/lib/$ARCH_TRIPLET/bin/run"
chmod 755 "$INSTALL_DIR/lib/$ARCH_TRIPLET/bin/run"
pwd > "$ROOT/build-cwd.txt"
"""
    project = qml_project(tmp_path / "p", 'kind = "custom"\nbuild = ["sh $ROOT/build.sh"]\n'
                          'architecture = "all"', {"build.sh": script})
    cli("build", project, "-o", tmp_path / "out")
    click = only_click(tmp_path / "out")
    assert "./lib/all/bin/run" in data_members(click)
    assert (project / "build-cwd.txt").read_text().strip() == \
        str(project / "build" / "click-all" / "build")
    empty = qml_project(tmp_path / "empty", 'kind = "custom"\nbuild = ["true"]')
    result = cli("build", empty, "-o", tmp_path / "o2", check=False)
    assert_one_error(result, "tool.click-build.build: the commands installed nothing into "
                     "$INSTALL_DIR")
    none = qml_project(tmp_path / "none", 'kind = "custom"')
    assert_one_error(cli("build", none, "-o", tmp_path / "o3", check=False),
                     "tool.click-build.build: kind 'custom' needs the shell commands")


@pytest.mark.parametrize(("table", "fragment"), [
    ('[tool.click-build.env]\n"A=B" = "x"', "env.'A=B': not an environment variable name"),
    ('[tool.click-build.env]\n"1X" = "x"', "env.'1X': not an environment variable name"),
    ('[tool.click-build.env]\nA = "x\\u0000y"', "env.A: holds a NUL character"),
    ('prebuild = ["echo \\u0000"]', "prebuild: item 1 holds a NUL character"),
    ('[tool.click-build.libraries."../../x"]', "libraries.'../../x': a library's name is"),
    ('[tool.click-build.libraries.x]\nsource-dir = "../../etc"',
     "libraries.x.source-dir: '../../etc' is outside the project"),
    ('[tool.click-build.libraries.x]\nkind = "meson"', "libraries.x.kind: 'meson' is not one of"),
    ('[tool.click-build.libraries.x]\nargs = "-DX"', "libraries.x.args: must be a list"),
    ('[tool.click-build.qmake]\nproject = "../../x.pro"', "qmake.project: '../../x.pro' is "
     "outside the project"),
    ('[tool.click-build.precompiled]\ndir = "../../../{arch}"',
     "precompiled.dir: '../../../"),
])
def test_hostile_settings_are_refused_before_anything_runs(tmp_path: Path, table: str,
                                                           fragment: str) -> None:
    kind = ('kind = "qmake"\n' if "qmake" in table else
            'kind = "precompiled"\narchitecture = "arm64"\n' if "precompiled" in table else "")
    project = qml_project(tmp_path / "p", f'{kind}prebuild = ["touch RAN"]\n{table}',
                          {"x.pro": "TEMPLATE = aux\n"})
    if "prebuild =" in table:
        text = (project / "pyproject.toml").read_text().replace('prebuild = ["touch RAN"]\n', "")
        (project / "pyproject.toml").write_text(text)
    result = pybuild(project, "--wheel", "-o", str(tmp_path / "out"), check=False)
    assert_one_error(result, fragment)
    assert not (project / "RAN").exists()


def test_qmake_project_file_choice(tmp_path: Path, cli: Cli) -> None:
    project = qml_project(tmp_path / "p", 'kind = "qmake"', {"a.pro": "", "b.pro": ""})
    assert_one_error(cli("build", project, "-o", tmp_path / "o", check=False),
                     "qmake.project: a.pro, b.pro are all at the top of")
    empty = qml_project(tmp_path / "q", 'kind = "qmake"')
    assert_one_error(cli("build", empty, "-o", tmp_path / "o", check=False),
                     "qmake.project: no *.pro file at the top of")


def test_qmake_builds_for_another_machine_only_against_its_root(tmp_path: Path,
                                                                 cli: Cli) -> None:
    """Without toolchains = "sysroot" (tests/test_sysroot_backend.py builds with it)."""
    other = "arm64" if HOST != "arm64" else "amd64"
    project = qml_project(tmp_path / "p", f'kind = "qmake"\narchitecture = "{other}"',
                          {"p.pro": "TEMPLATE = aux\n"})
    error = assert_one_error(cli("build", project, "-o", tmp_path / "o", check=False),
                             f"a qmake project is built for this machine ({HOST}), not "
                             f"{other}, unless it builds against the phone's root",
                             f"click-build.toolchains.{other}=sysroot")
    assert error
    assert not (project / "build" / f"click-{other}" / "source").exists()


def test_a_failing_qmake_step_names_it(tmp_path: Path, cli: Cli) -> None:
    project = qml_project(tmp_path / "p", 'kind = "qmake"',
                          {"p.pro": 'TEMPLATE = aux\nerror("this project cannot build")\n'})
    result = cli("build", project, "-o", tmp_path / "o", check=False)
    assert "this project cannot build" in result.stderr
    assert_one_error(result, "qmake (p.pro) failed with exit status")


def test_a_custom_library_and_its_variables(tmp_path: Path, cli: Cli) -> None:
    build = ('mkdir -p "$INSTALL_DIR/lib" && printf "int f(void) { return 1; }" > f.c && '
             'gcc -shared -fPIC -Wl,-soname,libx.so.1 -o "$INSTALL_DIR/lib/libx.so.1" f.c && '
             'echo "$NAME $ROOT $SRC_DIR $BUILD_DIR" > "$ROOT/lib-vars.txt"')
    project = qml_project(tmp_path / "p", f"""prebuild = ['echo "$MY_LIB_LIB_INSTALL_DIR|$CMAKE_PREFIX_PATH|$PKG_CONFIG_PATH" > app-vars.txt']
[tool.click-build.libraries.my-lib]
kind = "custom"
source-dir = "vendor/mylib"
build = [{json.dumps(build)}]
""", {"vendor/mylib/README": "a library"})
    assert_one_error(cli("build", project, "-o", tmp_path / "o", check=False),
                     "tool.click-build.libraries: the libraries are compiled for one "
                     "architecture, not 'all'")
    cli("build", project, "-o", tmp_path / "o", env={"ARCH": HOST})
    triplet = run(["dpkg-architecture", "-qDEB_HOST_MULTIARCH"]).stdout.strip()
    assert f"./lib/{triplet}/libx.so.1" in data_members(only_click(tmp_path / "o"))
    work = project / "build" / f"click-{HOST}" / "libs" / "my-lib"
    assert (project / "lib-vars.txt").read_text().split() == [
        "my-lib", str(project), str(project / "vendor" / "mylib"), str(work / "build")]
    prefix, cmake, pkgconfig = (project / "app-vars.txt").read_text().strip().split("|")
    assert prefix == str(work / "install")
    assert cmake.split(":")[:2] == [prefix, f"{prefix}/usr"]
    assert f"{prefix}/lib/pkgconfig" in pkgconfig.split(":")


def test_placeholders_in_arguments(tmp_path: Path, cli: Cli) -> None:
    """``${VAR}`` in qmake.args and env values is the build's value; unknown ones stay."""
    pro = ('TEMPLATE = aux\nmessage(SEEN=$$FOO/$$(FLAVOUR))\n'
           'files.path = /\nfiles.files = manifest.json steps.apparmor steps.desktop icon.svg\n'
           'qml.path = /qml\nqml.files = qml/Main.qml\nINSTALLS += files qml\n')
    project = qml_project(tmp_path / "p", 'kind = "qmake"\narchitecture = "all"\n'
                          '[tool.click-build.qmake]\nargs = ["FOO=${ARCH_TRIPLET}-${NOPE}"]\n'
                          '[tool.click-build.env]\nFLAVOUR = "${CLICK_FRAMEWORK}"',
                          {"p.pro": pro})
    result = cli("build", project, "-o", tmp_path / "out")
    assert "SEEN=all-${NOPE}/ubuntu-sdk-20.04" in result.stdout + result.stderr


@pytest.mark.parametrize("step", ['rm -r "$INSTALL_DIR"', 'rm -r "$INSTALL_DIR" && ln -s / "$INSTALL_DIR"'])
def test_a_postbuild_that_takes_the_staging_folder_away(tmp_path: Path, cli: Cli,
                                                         step: str) -> None:
    project = qml_project(tmp_path / "p", f"postbuild = [{json.dumps(step)}]")
    result = cli("build", project, "-o", tmp_path / "out", check=False)
    assert_one_error(result, "the staging folder is gone (or is no longer a folder) after the "
                     "steps (in the staging folder after postbuild)")
