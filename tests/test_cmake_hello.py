"""examples/hello-cpp built with plain CMake, as its README says, and checked by the oracles."""

from __future__ import annotations

import json
import os
import re
import subprocess
from dataclasses import dataclass
from pathlib import Path

import pytest
from backend_helpers import (
    EXAMPLES,
    control_field,
    copy_project,
    data_members,
    only_click,
    verify_both,
)
from cmake_support import cache, cmake, cmake_env, doc_console, doc_sh, elf_machine, flat
from conftest import need, run
from deadlines import seconds

import click_build

pytestmark = [pytest.mark.slow, pytest.mark.oracle]

#: e_machine per Debian architecture, for the ELF check.
MACHINES = {"amd64": 62, "arm64": 183, "armhf": 40, "i386": 3}


@dataclass(frozen=True)
class Built:
    project: Path
    build: Path
    click: Path
    arch: str
    triplet: str
    log: str


@pytest.fixture(scope="module")
def hello(tmp_path_factory: pytest.TempPathFactory) -> Built:
    for tool in ("cmake", "g++", "msgfmt", "xgettext", "dpkg-deb", "click"):
        need(tool)
    project = copy_project(EXAMPLES / "hello-cpp", tmp_path_factory.mktemp("hello") / "hello-cpp")
    # The commands of docs/cmake.md's example, as pasted into one shell.
    commands, _ = doc_console("export CMAKE_PREFIX_PATH=")
    result = subprocess.run(["sh", "-ec", "\n".join(commands)], cwd=project, env=cmake_env(),
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                            check=False)
    assert result.returncode == 0, result.stdout
    arch = run(["dpkg", "--print-architecture"]).stdout.strip()
    triplet = run(["dpkg-architecture", "-qDEB_HOST_MULTIARCH"]).stdout.strip()
    return Built(project, project / "build", only_click(project / "build"), arch, triplet,
                 result.stdout)


def test_the_package_passes_the_original_click(hello: Built) -> None:
    assert hello.click.name == f"hello-cpp.clickbuild_1.0.0_{hello.arch}.click"
    verify_both(hello.click)
    assert control_field(hello.click, "Architecture") == hello.arch
    assert control_field(hello.click, "Package") == "hello-cpp.clickbuild"
    assert control_field(hello.click, "Version") == "1.0.0"


def test_the_layout_is_the_click_layout(hello: Built) -> None:
    members = data_members(hello.click)
    lib = f"./lib/{hello.triplet}"
    for path in (f"{lib}/bin/hello-cpp", f"{lib}/Hello/qmldir", f"{lib}/Hello/Greeting.qml",
                 "./qml/Main.qml", "./assets/logo.svg", "./hello-cpp.desktop",
                 "./hello-cpp.apparmor",
                 "./share/locale/de/LC_MESSAGES/hello-cpp.clickbuild.mo"):
        assert path in members, (path, members)
    assert "./manifest.json" not in members  # it is the control manifest
    manifest = json.loads(run(["click", "info", str(hello.click)]).stdout)
    assert manifest["hooks"] == {
        "hello-cpp": {"apparmor": "hello-cpp.apparmor", "desktop": "hello-cpp.desktop"}}
    assert manifest["architecture"] == hello.arch
    assert manifest["framework"] == "ubuntu-touch-24.04-1.x"  # ClickBuild's default


def test_the_executable_is_an_elf_of_the_host_at_the_multiarch_path(
        hello: Built, tmp_path: Path) -> None:
    run(["dpkg-deb", "-x", str(hello.click), str(tmp_path)])
    binary = tmp_path / "lib" / hello.triplet / "bin" / "hello-cpp"
    assert os.access(binary, os.X_OK)
    if hello.arch in MACHINES:
        assert elf_machine(binary) == MACHINES[hello.arch]
    desktop = (tmp_path / "hello-cpp.desktop").read_text()
    assert "Exec=hello-cpp\n" in desktop  # configured from @PROJECT_NAME@
    assert "Name[de]=Hallo C++\n" in desktop  # msgfmt --desktop with po/de.po
    apparmor = json.loads((tmp_path / "hello-cpp.apparmor").read_text())
    assert apparmor == {"policy_groups": [], "policy_version": 2404.1}


@pytest.mark.parametrize(("language", "expected"), [
    ("C", "Hello from C++\nHello, world!\n"),
    ("de", "Hallo aus C++\nHallo, Welt!\n"),
])
def test_the_packaged_app_runs_and_is_translated(
        hello: Built, tmp_path: Path, language: str, expected: str) -> None:
    """The unpacked package is a working app: QML module found, .mo files found."""
    run(["dpkg-deb", "-x", str(hello.click), str(tmp_path)])
    env = cmake_env({"QT_QPA_PLATFORM": "offscreen", "LANG": "C.UTF-8", "LANGUAGE": language,
                     "XDG_RUNTIME_DIR": str(tmp_path)})
    env.pop("APP_DIR", None)
    result = subprocess.run(
        [str(tmp_path / "lib" / hello.triplet / "bin" / "hello-cpp"), "--self-test"],
        capture_output=True, text=True, env=env, timeout=seconds(60))
    assert result.returncode == 0, result.stderr
    assert result.stdout == expected


def test_the_pot_target_extracts_qml_cpp_and_desktop_strings(hello: Built) -> None:
    pot = hello.project / "po" / "hello-cpp.clickbuild.pot"
    pot.unlink()
    cmake("--build", "build", "--target", "pot", cwd=hello.project)
    text = pot.read_text()
    for msgid, where in (("Hello, world!", "qml/Hello/Greeting.qml"),
                         ("Hello from C++", "src/main.cpp"),
                         ("Hello C++", "hello-cpp.desktop.in"),
                         ("A greeting from Qt Quick and C++", "hello-cpp.desktop.in")):
        assert f'msgid "{msgid}"' in text
        assert f"#: {where}:" in text


def test_the_output_is_what_the_page_shows(hello: Built) -> None:
    """docs/cmake.md's commands on the example: its status lines, and nothing warns (the
    page's transcript itself, on the cpp template's project, is checked by test_docs)."""
    python = cache(hello.build)["Python3_EXECUTABLE"]
    lines = hello.log.splitlines()
    for expected in (
            f"-- ClickBuild {click_build.__version__}: {hello.arch} ({hello.triplet}), "
            f"Python {python}",
            "-- ClickBuild: hello-cpp.clickbuild 1.0.0 for ubuntu-touch-24.04-1.x, AppArmor "
            f"policy 2404.1 -> hello-cpp.clickbuild_1.0.0_{hello.arch}.click",
            f"Successfully built package in '{hello.click}'."):
        assert expected in lines, (expected, hello.log)
    assert not re.search("warning|error", hello.log, re.IGNORECASE), hello.log


def test_the_tree_without_the_package_as_the_page_says(hello: Built) -> None:
    """docs/cmake.md: DESTDIR gives the tree a place; without it, install stops."""
    run(["sh", "-ec", doc_sh("DESTDIR=")], cwd=hello.project, env=cmake_env())
    tree = hello.project / "tree"
    assert (tree / "manifest.json").is_file()
    assert (tree / "lib" / hello.triplet / "bin" / "hello-cpp").is_file()
    plain = cmake("--install", "build", cwd=hello.project, check=False)
    assert plain.returncode != 0
    assert "would write the app into the system" in flat(plain.stderr)
