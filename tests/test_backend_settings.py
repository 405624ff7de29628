"""Settings, placeholders, architectures and versions: each bad input is one clear line."""

from __future__ import annotations

import json
import shutil
import struct
from pathlib import Path

import pytest
from backend_helpers import (
    EXAMPLES,
    assert_one_error,
    control_field,
    copy_project,
    member_text,
    only_click,
    pybuild,
)

from click_build.backend.pysetup import python_requires_ok
from click_build.backend.sdist import normalise_name, pep440_version
from click_build.backend.settings import load_project
from click_build.elf import parse_elf_header
from click_build.errors import ConfigError
from click_build.framework_table import framework_facts
from click_build.placeholders import fill_apparmor


def _project(tmp_path: Path, table: str = "", project: str = "") -> Path:
    root = tmp_path / "p"
    root.mkdir(exist_ok=True)
    (root / "pyproject.toml").write_text(
        '[build-system]\nrequires = ["click-build"]\nbuild-backend = "click_build.backend"\n'
        + (f"[project]\n{project}\n" if project else "")
        + f"[tool.click-build]\n{table}\n")
    return root


# ------------------------------------------------------------------ settings


def test_sources_merge_in_order(tmp_path: Path) -> None:
    root = _project(tmp_path, 'kind = "qml"\narchitecture = "armhf"\nexclude = ["a"]\n'
                    '[tool.click-build.cmake]\ndefine = { FOO = "1", BAR = true }')
    env = {"CLICK_BUILD_KIND": "html5", "CLICK_BUILD_ARCHITECTURE": "arm64",
           "CLICK_BUILD_PYTHON_VENDOR": "off"}
    p = load_project(root, {"click-build.architecture": "amd64",
                            "click-build.exclude": ["x", "y"],
                            "click-build.cmake.define.BAZ": "2",
                            "other-tool.key": "ignored"}, environ=env)
    s = p.settings
    assert s.kind == "html5"  # env beats TOML
    assert s.architecture == "amd64"  # -C beats env
    assert s.exclude == ["x", "y"]  # repeated -C keys make a list
    assert s.python.vendor is False
    assert s.cmake.define == {"FOO": "1", "BAR": "ON", "BAZ": "2"}
    fat = load_project(root, {"click-build.architecture": "armhf,arm64"}, environ={})
    assert fat.settings.architecture == ["armhf", "arm64"]


def test_other_click_build_variables_are_not_called_typos(tmp_path: Path) -> None:
    """CLICK_BUILD_DEFLATE and CLICK_BUILD_DEVICE are read elsewhere: a build in a
    project folder takes them without an "ignored" warning; a typo still gets one."""
    project = copy_project(EXAMPLES / "hello-qml", tmp_path / "p")
    env = {"CLICK_BUILD_DEFLATE": "zlib", "CLICK_BUILD_DEVICE": "adb"}
    result = pybuild(project, "--wheel", env=env)
    assert "CLICK_BUILD_" not in result.stdout + result.stderr
    result = pybuild(project, "--wheel", env={"CLICK_BUILD_DEFLAT": "zlib"})
    assert ("environment: CLICK_BUILD_DEFLAT: not a click-build setting; ignored"
            in result.stdout + result.stderr)


def test_every_click_build_variable_is_a_setting_or_named_as_another() -> None:
    """Each ``CLICK_BUILD_*`` name in the sources is a backend setting's variable or in
    OTHER_VARIABLES, so the backend never calls a variable click-build reads a typo."""
    import re

    import click_build
    from click_build.backend import settings
    from click_build.sysroot.profiles import ARCHIVES

    leaves = {"CLICK_BUILD_" + "_".join(p).replace("-", "_").upper()
              for p in settings._leaves(settings.Settings)}
    cmake_variables = {"CLICK_BUILD_BACKEND"}  # a CMake define, not the environment
    package = Path(click_build.__file__).parent
    found = {name for path in package.rglob("*.py")
             for name in re.findall(r"CLICK_BUILD_[A-Z_]*[A-Z]", path.read_text())}
    found -= {"CLICK_BUILD_CMAKE_DEFINE"}  # the prefix of -D variables
    found -= {"CLICK_BUILD_MIRROR"}  # the prefix of the archives' mirror variables, below
    found |= {archive.setting for archive in ARCHIVES.values()}
    assert found, "the scan found no variable at all"
    assert found - leaves - cmake_variables == set(settings.OTHER_VARIABLES)


@pytest.mark.parametrize(("table", "config", "fragment"), [
    ('architectur = "all"', {}, "tool.click-build.architectur: unknown setting (did you mean 'architecture'?)"),
    ('kind = "qmll"', {}, "tool.click-build.kind: 'qmll' is not one of"),
    ("exclude = 3", {}, "tool.click-build.exclude: must be a list of strings"),
    ('[tool.click-build.python]\nvendr = false', {}, "tool.click-build.python.vendr: unknown setting (did you mean 'vendor'?)"),
    ("python = 1", {}, "tool.click-build.python: must be a table"),
    ("", {"click-build.kindd": "qml"}, "-C click-build.kindd: unknown setting (did you mean 'kind'?)"),
    ("", {"click-build.python.vendor": "maybe"}, "-C click-build.python.vendor: 'maybe' is not true or false"),
    ("", {"kind": "qml"}, "-C kind: click-build settings need the prefix"),
])
def test_bad_settings(tmp_path: Path, table: str, config: dict[str, str], fragment: str) -> None:
    root = _project(tmp_path, table)
    with pytest.raises(ConfigError) as e:
        load_project(root, config, environ={})
    assert fragment in str(e.value)
    assert "\n" not in str(e.value)


def test_bad_settings_through_the_frontend(tmp_path: Path) -> None:
    project = copy_project(EXAMPLES / "hello-qml", tmp_path / "p")
    path = project / "pyproject.toml"
    path.write_text(path.read_text().replace('kind = "qml"', 'kind = "qml"\nicon = "x.svg"'))
    result = pybuild(project, "--wheel", check=False)
    assert_one_error(result, "pyproject.toml: tool.click-build.icon: unknown setting")
    path.write_text(path.read_text().replace('icon = "x.svg"', "source-dir = 3"))
    result = pybuild(project, "--wheel", check=False)
    assert_one_error(result, "pyproject.toml: tool.click-build.source-dir: must be a string, "
                             "not a number")
    path.write_text(path.read_text().replace("source-dir = 3", ""))
    result = pybuild(project, "-C", "click-build.excludes=x", check=False)
    assert_one_error(result, "-C click-build.excludes: unknown setting (did you mean 'exclude'?)")


def test_missing_manifest(tmp_path: Path) -> None:
    project = copy_project(EXAMPLES / "hello-qml", tmp_path / "p")
    (project / "manifest.json").unlink()
    result = pybuild(project, "--wheel", check=False)
    assert_one_error(result, "manifest.json: not found")
    path = project / "pyproject.toml"
    path.write_text(path.read_text().replace('kind = "qml"', 'kind = "qml"\nmanifest = "app.json"'))
    result = pybuild(project, "--wheel", check=False)
    assert_one_error(result, "pyproject.toml: tool.click-build.manifest: 'app.json' does not exist")


def test_version_mismatch_names_both_files(tmp_path: Path) -> None:
    project = copy_project(EXAMPLES / "hello-qml", tmp_path / "p")
    manifest = json.loads((project / "manifest.json").read_text())
    manifest["version"] = "1.1"
    (project / "manifest.json").write_text(json.dumps(manifest))
    for args in (["--wheel"], []):
        result = pybuild(project, *args, check=False)
        assert_one_error(result, "manifest.json: version '1.1' differs from pyproject.toml: "
                                 "project.version '1.0.0'")


def test_invalid_manifest_field(tmp_path: Path) -> None:
    project = copy_project(EXAMPLES / "hello-qml", tmp_path / "p")
    manifest = json.loads((project / "manifest.json").read_text())
    manifest["name"] = "Bad_Name"
    (project / "manifest.json").write_text(json.dumps(manifest))
    result = pybuild(project, "--wheel", check=False)
    assert_one_error(result, "manifest.json: name: 'Bad_Name' is not a valid package name")


def test_missing_hook_target(tmp_path: Path) -> None:
    project = copy_project(EXAMPLES / "hello-qml", tmp_path / "p")
    (project / "hello-qml.desktop").unlink()
    result = pybuild(project, "--wheel", check=False)
    assert_one_error(result, "manifest.json: hooks.hello-qml.desktop: 'hello-qml.desktop' is "
                             "not in the package")


# ------------------------------------------------------ manifest variants


def test_manifest_table_and_template(tmp_path: Path) -> None:
    project = copy_project(EXAMPLES / "hello-qml", tmp_path / "p")
    data = json.loads((project / "manifest.json").read_text())
    (project / "manifest.json").unlink()
    table = "\n".join(f"{k} = {json.dumps(v)}" for k, v in data.items() if k != "hooks")
    hooks = data["hooks"]["hello-qml"]
    path = project / "pyproject.toml"
    path.write_text(path.read_text() + "\n[tool.click-build.manifest]\n" + table
                    + '\n[tool.click-build.manifest.hooks.hello-qml]\n'
                    + "\n".join(f"{k} = {json.dumps(v)}" for k, v in hooks.items()) + "\n")
    pybuild(project, "--wheel", "-o", str(tmp_path / "a"))
    from_table = only_click(tmp_path / "a")
    assert control_field(from_table, "Package") == "hello-qml.clickbuild"
    # the same manifest as a template with @VAR@ and $ENV{} placeholders
    path.write_text(path.read_text().split("\n[tool.click-build.manifest]")[0])
    data.update(framework="@CLICK_FRAMEWORK@", architecture="$ENV{CLICK_ARCH}",
                version="@PROJECT_VERSION@")
    (project / "manifest.json.in").write_text(json.dumps(data))
    pybuild(project, "--wheel", "-o", str(tmp_path / "b"), "-C",
            "click-build.framework=ubuntu-touch-24.04-1.x")
    click = only_click(tmp_path / "b")
    info = json.loads(member_text_control(click))
    assert info["framework"] == "ubuntu-touch-24.04-1.x"
    assert info["architecture"] == "all" and info["version"] == "1.0.0"
    assert json.loads(member_text(click, "./hello-qml.apparmor"))["policy_version"] == 2404.1
    assert "./manifest.json.in" not in member_names(click)


def test_unknown_template_variable(tmp_path: Path) -> None:
    project = copy_project(EXAMPLES / "hello-qml", tmp_path / "p")
    data = json.loads((project / "manifest.json").read_text())
    data["title"] = "@APP_TITLE@"
    (project / "manifest.json").unlink()
    (project / "manifest.json.in").write_text(json.dumps(data))
    result = pybuild(project, "--wheel", check=False)
    assert_one_error(result, "manifest.json.in: @APP_TITLE@ is not a variable click-build fills in")


def member_text_control(click: Path) -> str:
    import subprocess

    return subprocess.run(["dpkg-deb", "-I", str(click), "manifest"], capture_output=True,
                          text=True, check=True).stdout


def member_names(click: Path) -> list[str]:
    from backend_helpers import data_members

    return data_members(click)


# ------------------------------------------------------------ architecture


def _elf(machine: int, is64: bool = True, flags: int = 0, little: bool = True) -> bytes:
    """The header of a shared library (ET_DYN) for ``machine``."""
    order = "<" if little else ">"
    header = bytearray(64)
    header[:4] = b"\x7fELF"
    header[4] = 2 if is64 else 1
    header[5] = 1 if little else 2
    header[16:20] = struct.pack(order + "HH", 3, machine)
    at = 48 if is64 else 36  # e_flags
    header[at:at + 4] = struct.pack(order + "I", flags)
    return bytes(header)


def _arches(header: bytes) -> set[str] | None:
    info = parse_elf_header(header)
    return None if info is None else set(info.arches)


def test_elf_machines() -> None:
    assert _arches(_elf(62)) == {"amd64"}
    assert _arches(_elf(183)) == {"arm64"}
    assert _arches(_elf(40, False, 0x5000400)) == {"armhf"}
    assert _arches(_elf(40, False, 0x5000200)) == {"armel"}
    assert _arches(_elf(40, False, 0x5000000)) == {"armhf", "armel"}  # no float ABI flag
    assert _arches(_elf(3, False)) == {"i386"}
    assert _arches(_elf(8, False)) == {"mipsel"}
    assert _arches(_elf(8, False, little=False)) == {"mips"}
    assert _arches(_elf(20, False, little=False)) == {"powerpc"}
    assert _arches(_elf(258)) == {"loong64"}
    assert _arches(_elf(243)) == {"riscv64"}
    assert _arches(_elf(4242)) == set()  # unknown: reported by the callers
    assert _arches(b"#!/bin/sh\n" + bytes(60)) is None
    assert _arches(b"\x7fELF") is None


def test_architecture_from_elf_and_mismatch(tmp_path: Path) -> None:
    """A QML app bundling a prebuilt library: the ELF header decides, or contradicts."""
    project = copy_project(EXAMPLES / "hello-qml", tmp_path / "p")
    lib = project / "lib" / "aarch64-linux-gnu"
    lib.mkdir(parents=True)
    (lib / "libfoo.so").write_bytes(_elf(183) + b"payload")
    pybuild(project, "--wheel", "-o", str(tmp_path / "a"))
    assert only_click(tmp_path / "a").name == "hello-qml.clickbuild_1.0.0_arm64.click"
    result = pybuild(project, "--wheel", "-o", str(tmp_path / "b"), "-C",
                     "click-build.architecture=armhf", check=False)
    assert_one_error(result, "architecture is 'armhf', but lib/aarch64-linux-gnu/libfoo.so "
                             "is compiled for arm64")
    result = pybuild(project, "--wheel", "-C", "click-build.architecture=all", check=False)
    assert_one_error(result, "architecture is 'all' (no compiled code)")


@pytest.mark.parametrize(("header", "arch"), [
    (_elf(40, False, 0x5000000), "armhf"),  # no float ABI flag: fits armhf, the device's
    (_elf(40, False, 0x5000200), "armel"),
    (_elf(8, False), "mipsel"),
    (_elf(20, False, little=False), "powerpc"),
    (_elf(258), "loong64"),
], ids=["arm-no-float-abi", "armel", "mipsel", "powerpc", "loong64"])
def test_architecture_of_every_known_machine(tmp_path: Path, header: bytes, arch: str) -> None:
    project = copy_project(EXAMPLES / "hello-qml", tmp_path / "p")
    (project / "lib").mkdir()
    (project / "lib" / "libfoo.so").write_bytes(header + b"payload")
    # review=report: the stores refuse all but four architectures; the name is the point here
    pybuild(project, "--wheel", "-o", str(tmp_path / "a"), "-C", "click-build.review=report")
    assert only_click(tmp_path / "a").name == f"hello-qml.clickbuild_1.0.0_{arch}.click"


def test_unknown_machine_is_reported(tmp_path: Path) -> None:
    project = copy_project(EXAMPLES / "hello-qml", tmp_path / "p")
    (project / "lib").mkdir()
    (project / "lib" / "libfoo.so").write_bytes(_elf(4242) + b"payload")
    result = pybuild(project, "--wheel", "-o", str(tmp_path / "a"), check=False)
    assert_one_error(result, "lib/libfoo.so is compiled for ELF machine 4242",
                     "declare the architecture")
    assert not list((tmp_path / "a").glob("*.click"))
    result = pybuild(project, "--wheel", "-o", str(tmp_path / "b"), "-C",
                     "click-build.architecture=arm64", "-C", "click-build.review=report")
    assert "cannot name; trusting the declared 'arm64'" in result.stdout + result.stderr
    assert only_click(tmp_path / "b").name.endswith("_arm64.click")


@pytest.mark.oracle
def test_fat_package_from_a_list(tmp_path: Path) -> None:
    project = copy_project(EXAMPLES / "hello-qml", tmp_path / "p")
    for triplet, machine in (("aarch64-linux-gnu", 183), ("arm-linux-gnueabihf", 40)):
        lib = project / "lib" / triplet
        lib.mkdir(parents=True)
        flags = 0x5000400 if machine == 40 else 0
        (lib / "libfoo.so").write_bytes(_elf(machine, machine != 40, flags))
    pybuild(project, "--wheel", "-o", str(tmp_path / "a"))  # detected: both
    click = only_click(tmp_path / "a")
    assert click.name.endswith("_multi.click")
    assert control_field(click, "Architecture") == "multi"
    assert json.loads(member_text_control(click))["architecture"] == ["arm64", "armhf"]
    shutil.rmtree(project / "lib" / "arm-linux-gnueabihf")
    pybuild(project, "--wheel", "-o", str(tmp_path / "b"), "-C",
            "click-build.architecture=armhf;arm64")  # declared list, one of them present
    assert json.loads(member_text_control(only_click(tmp_path / "b")))["architecture"] == [
        "armhf", "arm64"]


# ------------------------------------------------------------- small tables


@pytest.mark.parametrize(("debian", "pep440"), [
    ("1.0", "1.0"), ("1.0~rc1", "1.0rc1"), ("2:1.0~beta2", "2!1.0b2"), ("1.0-3", "1.0.post3"),
    ("1.0+git20240101", "1.0+git20240101"), ("01.002", "1.2"), ("1.0~alpha", "1.0a0"),
    ("3.5.", None), ("1.0~git5", None), ("1.0ubuntu1", None),
])
def test_pep440_mapping(debian: str, pep440: str | None) -> None:
    assert pep440_version(debian) == pep440


def test_sdist_refuses_unmappable_version(tmp_path: Path) -> None:
    project = copy_project(EXAMPLES / "hello-qml", tmp_path / "p")
    path = project / "pyproject.toml"
    path.write_text(path.read_text().replace('version = "1.0.0"', 'version = "1.0~git5"'))
    result = pybuild(project, check=False)
    assert_one_error(result, "version '1.0~git5' has no PEP 440 spelling",
                     "python -m build --wheel")
    pybuild(project, "--wheel", "-o", str(tmp_path / "w"))
    assert only_click(tmp_path / "w").name == "hello-qml.clickbuild_1.0~git5_all.click"
    path.write_text(path.read_text().replace('version = "1.0~git5"', 'version = "1.0~rc1"'))
    pybuild(project, "-o", str(tmp_path / "s"))
    assert sorted(p.name for p in (tmp_path / "s").iterdir()) == [
        "hello-qml.clickbuild_1.0~rc1_all.click", "hello_qml-1.0rc1.tar.gz"]


def test_names() -> None:
    assert normalise_name("Hello.QML-app__x") == "hello_qml_app_x"


@pytest.mark.parametrize(("framework", "base", "policy", "python"), [
    ("ubuntu-sdk-15.04", "15.04", "1.3", "3.4"),
    ("ubuntu-sdk-16.04.5", "16.04", "16.04", "3.5"),
    ("ubuntu-sdk-20.04", "20.04", "20.04", "3.8"),
    ("ubuntu-touch-24.04-1.x", "24.04", "2404.1", "3.12"),
    ("ubuntu-sdk-20.04.1, other", "20.04", "20.04", "3.8"),
])
def test_framework_table(framework: str, base: str, policy: str, python: str) -> None:
    facts = framework_facts(framework)
    assert (facts.base, facts.apparmor_policy, facts.python) == (base, policy, python)


@pytest.mark.parametrize("field", ['""', '"@APPARMOR_POLICY@"', "@APPARMOR_POLICY@",
                                   '"$ENV{APPARMOR_POLICY}"'])
def test_apparmor_placeholders(field: str) -> None:
    text = '{\n  "policy_groups": [],\n  "policy_version": ' + field + "\n}\n"
    filled = fill_apparmor(text, "2404.1", "ubuntu-touch-24.04-1.x", "a.apparmor") or ""
    assert json.loads(filled)["policy_version"] == 2404.1
    assert filled.replace("2404.1", field) == text  # filled where it stands: layout kept
    kept = '{"policy_groups": [], "policy_version": 20.04}'
    assert fill_apparmor(kept, "20.04", "ubuntu-sdk-20.04", "a") is None


def test_apparmor_without_policy_version_gets_it() -> None:
    filled = fill_apparmor('{"policy_groups": ["networking"]}', "2404.1",
                           "ubuntu-touch-24.04-1.x", "a.apparmor")
    assert json.loads(filled or "") == {"policy_groups": ["networking"], "policy_version": 2404.1}


def test_requires_python() -> None:
    assert python_requires_ok(">=3.8", "3.8")
    assert not python_requires_ok(">=3.10", "3.8")
    assert python_requires_ok(">=3.6, !=3.7.*, <4", "3.8")
    assert not python_requires_ok("!=3.8.*", "3.8")
    assert python_requires_ok("~=3.5", "3.12")
