"""Several frameworks from one source tree (issue 16): every example and template for
20.04 and 24.04 in one command, each package with its framework, AppArmor policy,
Python, version; the store's rules refused before anything is written; per-target
toolchains for compiled apps; the docs' commands as pasted."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from backend_helpers import (
    BOTH,
    EXAMPLES,
    MATRIX,
    PACKAGES,
    POLICY,
    apparmor_policies,
    assert_one_error,
    check_pair,
    copy_project,
    data_members,
    dpkg_greater,
    host_arch,
    manifest_of,
    member_text,
    pybuild,
)
from conftest import CLICK_BUILD, ROOT, need, run
from templates_support import KINDS, SLOW_KINDS, new, project_of


def click_build(*args: str | Path, cwd: Path | None = None,
                check: bool = True) -> subprocess.CompletedProcess[str]:
    return run([*CLICK_BUILD, *map(str, args)], cwd=cwd, check=check)


def table_rows(stdout: str) -> dict[str, list[str]]:
    """The summary table: target -> [file, size, findings]."""
    lines = [line.removeprefix("< ") for line in stdout.splitlines()]
    start = next(i for i, line in enumerate(lines) if re.match(r"target\s+file\s+size\s+findings", line))
    rows = {}
    for line in lines[start + 1:]:
        parts = re.split(r"\s{2,}", line.strip())
        if len(parts) < 4 or "/" not in parts[0]:
            break
        rows[parts[0]] = parts[1:]
    return rows


# ------------------------------------------------------------ the examples

@pytest.mark.parametrize("example", ["hello-qml", "hello-html5",
                                     pytest.param("hello-python", marks=pytest.mark.slow)])
def test_each_example_builds_for_both_frameworks_in_one_command(tmp_path: Path,
                                                                example: str) -> None:
    project = copy_project(EXAMPLES / example, tmp_path / "p")
    result = pybuild(project, "--wheel", "-o", str(tmp_path / "out"), *MATRIX)
    version = re.search(r'^version = "(.*)"', (project / "pyproject.toml").read_text(), re.M)
    assert version is not None
    by_fw = check_pair(tmp_path / "out", version.group(1))
    rows = table_rows(result.stdout)
    assert set(rows) == {f"{fw}/all" for fw in POLICY}
    for fw, click in by_fw.items():
        file, size, findings = rows[f"{fw}/all"]
        assert file == click.name and size == f"{(click.stat().st_size + 1023) // 1024} KiB"
        advised = "info" in findings
        assert advised == (example == "hello-qml"), findings  # only pure QML: -qml advice
    if example == "hello-python":  # pip asked for each framework's Python
        assert "--python-version 3.8" in result.stdout
        assert "--python-version 3.12" in result.stdout
    if example == "hello-qml":  # the review's advice, with the fix for each package's framework
        assert result.stdout.count("[lint.framework-variant]") == 2
        for fw in POLICY:
            assert f'set "framework": "{fw}-qml" in manifest.json' in result.stdout


@pytest.mark.slow
def test_python_vendors_each_frameworks_wheels_per_architecture(tmp_path: Path) -> None:
    """A compiled dependency: cp38 wheels in the 20.04 package, cp312 in the 24.04 one."""
    project = copy_project(EXAMPLES / "hello-python", tmp_path / "p")
    path = project / "pyproject.toml"
    path.write_text(path.read_text().replace('["text-unidecode>=1.3"]', '["markupsafe"]'))
    pybuild(project, "--wheel", "-o", str(tmp_path / "out"), *MATRIX,
            "-C", "click-build.architectures=arm64")
    by_fw = check_pair(tmp_path / "out", "1.0.0", "arm64")
    tags = {"ubuntu-sdk-20.04": "cpython-38-aarch64", "ubuntu-touch-24.04-1.x":
            "cpython-312-aarch64"}
    for fw, click in by_fw.items():
        compiled = [m for m in data_members(click) if m.endswith(".so")]
        assert compiled and all(tags[fw] in m for m in compiled), compiled
        wheel = [m for m in data_members(click) if m.endswith(".dist-info/WHEEL")]
        tag = "cp38-cp38" if fw == "ubuntu-sdk-20.04" else "cp312-cp312"
        assert tag in member_text(click, wheel[0])


def test_a_pure_qml_app_on_its_qml_variant_gets_no_advice(tmp_path: Path) -> None:
    project = copy_project(EXAMPLES / "hello-qml", tmp_path / "p")
    result = pybuild(project, "--wheel", "-o", str(tmp_path / "out"), "-C",
                     "click-build.frameworks=ubuntu-sdk-20.04-qml,ubuntu-touch-24.04-1.x-qml")
    assert "framework-variant" not in result.stdout
    rows = table_rows(result.stdout)
    assert [r[2] for r in rows.values()] == ["no problems found"] * 2
    frameworks = sorted(str(manifest_of(c)["framework"]) for c in (tmp_path / "out").glob("*"))
    assert frameworks == ["ubuntu-sdk-20.04-qml", "ubuntu-touch-24.04-1.x-qml"]


# --------------------------------------------------------- compiled apps

def test_cmake_targets_without_a_toolchain_are_named_and_not_built(tmp_path: Path) -> None:
    project = copy_project(EXAMPLES / "hello-cpp", tmp_path / "p")
    result = pybuild(project, "--wheel", "-o", str(tmp_path / "out"), *MATRIX,
                     "-C", "click-build.architectures=arm64,amd64",
                     "-C", "click-build.toolchains.amd64=host", check=False)
    error = assert_one_error(result, "cannot build on this machine",
                             "ubuntu-sdk-20.04/arm64 (no toolchain named)",
                             "ubuntu-touch-24.04-1.x/arm64 (no toolchain named)",
                             "not this machine's")
    assert "/amd64" not in error  # those have one
    assert not (project / "build").exists()  # refused before anything was configured
    assert not list((tmp_path / "out").glob("*.click"))


@pytest.mark.slow
def test_hello_cpp_builds_each_target_with_its_toolchain(tmp_path: Path) -> None:
    """20.04 with a toolchain file, 24.04 as 'host'; the Qt check then tells them apart."""
    arch = host_arch()
    project = copy_project(EXAMPLES / "hello-cpp", tmp_path / "p")
    toolchain = tmp_path / "ut-20.04.cmake"
    toolchain.write_text(f"set(CMAKE_CXX_COMPILER {shutil.which('g++')})\n")
    result = pybuild(project, "--wheel", "-o", str(tmp_path / "out"), *MATRIX,
                     "-C", f"click-build.toolchains.ubuntu-sdk-20.04/{arch}={toolchain}",
                     "-C", "click-build.toolchains.ubuntu-touch-24.04-1.x=host",
                     "-C", "click-build.review=report")
    check_pair(tmp_path / "out", "1.0.0", arch)
    cache = project / "build" / f"click-{arch}-ubuntu-sdk-20.04" / "cmake" / "CMakeCache.txt"
    assert re.search(rf"^CMAKE_TOOLCHAIN_FILE:\w+={re.escape(str(toolchain))}$",
                     cache.read_text(), re.M)
    other = project / "build" / f"click-{arch}-ubuntu-touch-24.04-1.x" / "cmake" / "CMakeCache.txt"
    assert str(toolchain) not in other.read_text()
    rows = table_rows(result.stdout)
    # this machine's Qt 5.15 and glibc 2.36 suit 24.04, not 20.04 (Qt 5.12, glibc 2.31): the
    # review says so
    assert rows[f"ubuntu-sdk-20.04/{arch}"][2] == "2 errors"
    assert rows[f"ubuntu-touch-24.04-1.x/{arch}"][2] == "no problems found"
    assert "[lint.qt-version]" in result.stderr and "[lint.abi-glibc]" in result.stderr


@pytest.mark.parametrize("value", ["host-of-mine", "../../etc/passwd"])
def test_a_toolchain_that_is_not_there_is_refused(tmp_path: Path, value: str) -> None:
    project = copy_project(EXAMPLES / "hello-cpp", tmp_path / "p")
    result = pybuild(project, "--wheel", "-o", str(tmp_path / "out"),
                     "-C", "click-build.frameworks=ubuntu-touch-24.04-1.x",
                     "-C", f"click-build.toolchains.ubuntu-touch-24.04-1.x={value}", check=False)
    assert_one_error(result, "cannot build on this machine", "not found")


def test_host_is_refused_for_another_architecture(tmp_path: Path) -> None:
    other = "arm64" if host_arch() != "arm64" else "amd64"
    project = copy_project(EXAMPLES / "hello-cpp", tmp_path / "p")
    result = pybuild(project, "--wheel", "-C", "click-build.frameworks=ubuntu-touch-24.04-1.x",
                     "-C", f"click-build.architectures={other}",
                     "-C", "click-build.toolchains.ubuntu-touch-24.04-1.x=host", check=False)
    assert_one_error(result, f"'host' compiles for {host_arch()}, not {other}")


@pytest.mark.slow  # CMake builds
@pytest.mark.parametrize("several", [False, True], ids=["single", "several"])
def test_one_toolchain_rule_for_a_single_build_and_several_targets(tmp_path: Path,
                                                                   several: bool) -> None:
    """The same target builds the same way alone and among several: this machine's compiler
    for its own architecture, said on a line; another architecture refused before CMake."""
    arch, other = host_arch(), ("arm64" if host_arch() != "arm64" else "amd64")
    # its framework 24.04: this machine's glibc is older than that framework's, so no ABI error
    project = copy_project(PACKAGES / "cmake-hello", tmp_path / "p")
    target = f"ubuntu-touch-24.04-1.x/{arch}"
    frameworks = ("-C", "click-build.framework=", "-C",
                  "click-build.frameworks=ubuntu-touch-24.04-1.x") if several else ()
    result = pybuild(project, "--wheel", "-o", str(tmp_path / "out"), *frameworks)
    assert f"* {target}: built with this machine's compiler and libraries (no toolchain " \
           "named" in result.stdout
    assert (tmp_path / "out" / f"cmake-hello.clickbuild_2.0.1_{arch}.click").is_file()
    shutil.rmtree(project / "build")
    key = "architectures" if several else "architecture"
    refused = pybuild(project, "--wheel", "-o", str(tmp_path / "out2"), *frameworks,
                      "-C", f"click-build.{key}={other}", check=False)
    assert_one_error(refused, "cannot build on this machine: ubuntu-touch-24.04-1.x/"
                     f"{other} (no toolchain named). This machine compiles for {arch}")
    assert not (project / "build").exists()  # nothing was configured
    quiet = pybuild(project, "--wheel", "-o", str(tmp_path / "out3"), *frameworks,
                    "-C", f"click-build.toolchains.{arch}=host")
    assert "this machine's compiler" not in quiet.stdout  # "host" says so: no line


def test_a_failed_target_names_what_was_written(tmp_path: Path) -> None:
    """One target fails its review (an obsolete framework), the other is written: the error
    says which was removed and which file is there, not that none was written."""
    tree = plain_tree(tmp_path, "1.0")
    out = tmp_path / "out"
    out.mkdir()
    result = click_build("build", tree, "--framework", "ubuntu-sdk-15.04,ubuntu-touch-24.04-1.x",
                         "-o", out, check=False)
    written = out / "hello-qml.clickbuild_1.0~2404_all.click"
    error = assert_one_error(
        result, "1 of 2 packages failed the review and was removed (ubuntu-sdk-15.04/all: 2 "
        "errors in hello-qml.clickbuild_1.0~1504_all.click", f"written: {written};",
        "fix them, or build anyway with --no-validate")
    assert "none was written" not in error
    assert [p.name for p in out.iterdir()] == [written.name]
    rows = table_rows(result.stdout)
    assert rows["ubuntu-sdk-15.04/all"][0] == "(removed)"
    assert rows["ubuntu-touch-24.04-1.x/all"][0] == written.name


def test_a_failed_review_never_gives_the_package_its_name(tmp_path: Path) -> None:
    """Among several targets, a package is reviewed under its hidden temporary name: the one
    that fails is never renamed or linked to its name (a reader could have taken it), the
    one that passes is; and no temporary file is left."""
    strace = need("strace")
    tree = plain_tree(tmp_path, "1.0")
    out = tmp_path / "out"
    out.mkdir()
    log = tmp_path / "strace.log"
    result = run([strace, "-f", "-qq", "-e", "trace=rename,renameat,renameat2,link,linkat",
                  "-o", str(log), *CLICK_BUILD, "build", str(tree), "--framework",
                  "ubuntu-sdk-15.04,ubuntu-touch-24.04-1.x", "-o", str(out)], check=False)
    assert result.returncode == 1, result.stdout + result.stderr
    named = log.read_text()
    assert "hello-qml.clickbuild_1.0~2404_all.click\"" in named  # the call is seen
    assert "hello-qml.clickbuild_1.0~1504_all.click\"" not in named
    assert [p.name for p in out.iterdir()] == ["hello-qml.clickbuild_1.0~2404_all.click"]


# ----------------------------------------------------------- store rules

def plain_tree(tmp_path: Path, version: str, apparmor_policy: str = "20.04") -> Path:
    tree = copy_project(EXAMPLES / "hello-qml", tmp_path / "tree")
    (tree / "pyproject.toml").unlink()
    data = json.loads((tree / "manifest.json").read_text())
    (tree / "manifest.json").write_text(json.dumps(dict(data, version=version)))
    (tree / "hello-qml.apparmor").write_text(
        f'{{"policy_groups": ["networking"], "policy_version": {apparmor_policy}}}\n')
    return tree


def test_click_build_framework_rewrites_the_manifest_consistently(tmp_path: Path) -> None:
    tree = plain_tree(tmp_path, "2.1")
    out = tmp_path / "out"
    out.mkdir()
    click_build("build", tree, "--framework", "ubuntu-touch-24.04-1.x", "-o", out)
    (click,) = out.glob("*.click")
    assert click.name == "hello-qml.clickbuild_2.1_all.click"  # one framework: its version
    assert manifest_of(click)["framework"] == "ubuntu-touch-24.04-1.x"
    assert apparmor_policies(click) == {2404.1}  # 20.04's policy went with 20.04
    shutil.rmtree(out)
    out.mkdir()
    result = click_build("build", tree, "--framework", "ubuntu-sdk-20.04", "--framework",
                         "ubuntu-touch-24.04-1.x", "-o", out)
    by_fw = check_pair(out, "2.1")
    assert set(table_rows(result.stdout)) == {"ubuntu-sdk-20.04/all", "ubuntu-touch-24.04-1.x/all"}
    for click in by_fw.values():
        assert f"Successfully built package in '{out / click.name}'." in result.stdout


def test_a_version_scheme_of_ones_own(tmp_path: Path) -> None:
    tree = plain_tree(tmp_path, "3.0+ut@CLICK_FRAMEWORK_BASE@")
    out = tmp_path / "out"
    out.mkdir()
    click_build("build", tree, "--framework", BOTH, "-o", out)
    assert sorted(p.name for p in out.glob("*.click")) == [
        "hello-qml.clickbuild_3.0+ut20.04_all.click", "hello-qml.clickbuild_3.0+ut24.04_all.click"]


def test_one_version_for_two_frameworks_is_refused_before_anything_is_written(
        tmp_path: Path) -> None:
    """A scheme whose variable is empty (a CI variable not set) gives one version twice."""
    tree = plain_tree(tmp_path, "1.0$ENV{CLICK_BUILD_TEST_UNSET}")
    out = tmp_path / "out"
    out.mkdir()
    result = click_build("build", tree, "--framework", BOTH, "-o", out, check=False)
    assert_one_error(result, "store rule: one version has one framework on every "
                             "architecture", "'1.0'", "ubuntu-sdk-20.04 and "
                             "ubuntu-touch-24.04-1.x", "@CLICK_FRAMEWORK_SUFFIX@")
    assert list(out.iterdir()) == []


def _prepared(tmp_path: Path, name: str, apparmor: str, **target: object):  # type: ignore[no-untyped-def]
    from click_build.build import stage_tree
    from click_build.choices import Request
    from click_build.finish import Job, prepare
    from click_build.placeholders import read_manifest_file
    from click_build.targets import Candidate

    tree = plain_tree(tmp_path / name, "1.0")
    (tree / "hello-qml.apparmor").write_text(apparmor)
    source = read_manifest_file(tree / "manifest.json", "manifest.json")
    entries = stage_tree(str(tree), [], exclude=[str(tree / "manifest.json")])
    p = prepare(Job(source, entries, Request(**target),  # type: ignore[arg-type]
                    scratch=str(tmp_path / name / "scratch")))
    return Candidate(f"{p.manifest.framework}/{name}", p.manifest, p.entries, p.kept)


GROUPS = '{"policy_groups": ["networking"], "policy_version": 20.04}'


@pytest.mark.parametrize(("targets", "rule"), [
    ([("a", GROUPS, dict(framework="ubuntu-sdk-20.04", version_suffix="~b", rewrite_framework=True)),
      ("b", GROUPS, dict(framework="ubuntu-touch-24.04-1.x", version_suffix="~a",
                 rewrite_framework=True))],
     "a newer framework's package must sort higher"),
    ([("a", GROUPS, dict(architecture="all")), ("b", GROUPS, dict(architecture="arm64"))],
     "'all' and architecture-specific packages cannot share a version"),
    ([("a", GROUPS, dict(architecture="arm64")),
      ("b", GROUPS.replace("networking", "audio"), dict(architecture="armhf"))],
     "the same permissions on every architecture"),
    ([("a", GROUPS, dict(architecture="arm64")), ("b", GROUPS, dict(architecture="arm64"))],
     "versions strictly increase per architecture and framework"),
])
def test_store_rules(tmp_path: Path, targets: list[tuple[str, str, dict[str, object]]],
                     rule: str) -> None:
    from click_build.errors import BuildError
    from click_build.targets import check_store_rules

    prepared = [_prepared(tmp_path, name, apparmor, **t) for name, apparmor, t in targets]
    with pytest.raises(BuildError, match=re.escape(rule)):
        check_store_rules(prepared)
    check_store_rules(prepared[:1])  # each alone is fine


def test_framework_suffixes_sort_as_the_frameworks() -> None:
    from click_build.framework_table import framework_suffix

    names = ["ubuntu-sdk-16.04", "ubuntu-sdk-20.04", "ubuntu-touch-24.04-1.x",
             "ubuntu-touch-24.04-2.x"]
    versions = [f"1.2.0{framework_suffix(n)}" for n in names]
    assert versions == ["1.2.0~1604", "1.2.0~2004", "1.2.0~2404", "1.2.0~2404.2"]
    for older, newer in zip(versions, versions[1:]):
        assert dpkg_greater(newer, older)
    assert dpkg_greater("1.2.0", versions[-1]) and dpkg_greater("1.2.1~2004", versions[-1])


# -------------------------------------------------------------- settings

@pytest.mark.parametrize(("args", "fragment"), [
    (("-C", "click-build.frameworks=ubuntu-sdk-20.04,../../x"), "'../../x' is not a framework"),
    (("-C", "click-build.frameworks=ubuntu-sdk-20.04", "-C",
      "click-build.framework=ubuntu-sdk-20.04"), "keep one of them"),
    (("-C", "click-build.architectures=arm64;rm -rf /"), "is not 'all', a Debian architecture"),
])
def test_matrix_settings_are_checked(tmp_path: Path, args: tuple[str, ...],
                                     fragment: str) -> None:
    project = copy_project(EXAMPLES / "hello-python", tmp_path / "p")
    result = pybuild(project, "--wheel", "-o", str(tmp_path / "out"), *args, check=False)
    assert_one_error(result, fragment)
    assert not (tmp_path / "out").exists() or not list((tmp_path / "out").iterdir())


# ------------------------------------------------------------- templates

@pytest.mark.parametrize("kind", [pytest.param(k, marks=[pytest.mark.slow] if k in SLOW_KINDS
                                               else []) for k in KINDS])
def test_each_template_builds_for_both_frameworks_in_one_command(tmp_path: Path,
                                                                 kind: str) -> None:
    new(tmp_path / "src", kind, {})
    project = project_of(tmp_path / "src")
    args = [*MATRIX]
    arch = "all"
    if kind == "cpp":  # compiled: this machine stands in for both SDKs, the review reports
        arch = host_arch()
        args += ["-C", "click-build.toolchains.ubuntu-sdk-20.04=host",
                 "-C", "click-build.toolchains.ubuntu-touch-24.04-1.x=host",
                 "-C", "click-build.review=report"]
    both = pybuild(project, "--wheel", "-o", str(tmp_path / "out"), *args)
    assert f"* Building {kind if kind != 'cpp' else 'cmake'} app for 2 targets: " in both.stdout
    check_pair(tmp_path / "out", "1.0.0", arch)
    if kind == "qml":  # one --framework: counted as one
        one = click_build("build", project, "-o", tmp_path / "one", "--framework",
                          "ubuntu-touch-24.04-1.x-qml")
        assert "* Building qml app for 1 target: ubuntu-touch-24.04-1.x-qml/all" in one.stdout


# ------------------------------------------------------------------ docs

def _console_blocks(page: Path, heading: str) -> list[str]:
    text = page.read_text(encoding="utf-8")
    section = text[text.index(heading):]
    section = section[:section.index("\n## ", len(heading))]
    return re.findall(r"```console\n(.*?)```", section, re.S)


def _run_block(block: str, cwd: Path, env: dict[str, str]) -> None:
    """Each ``$`` line runs as pasted, in one shell; the lines under it must be printed."""
    commands = [line[2:] for line in block.splitlines() if line.startswith("$ ")]
    expected = [line for line in block.splitlines()
                if line and line != "..." and not line.startswith("$ ")]
    script = "set -e\n" + "\n".join(commands) + "\n"
    result = subprocess.run(["bash", "-c", script], cwd=cwd, env=env, capture_output=True,
                            text=True)
    assert result.returncode == 0, result.stdout + result.stderr
    for line in expected:
        assert line in result.stdout + result.stderr, (line, result.stdout, result.stderr)


def _doc_env(tmp_path: Path) -> dict[str, str]:
    venv_bin = str(Path(sys.executable).parent)
    return {**os.environ, "PATH": f"{venv_bin}:{os.environ['PATH']}", "HOME": str(tmp_path)}


def test_backend_docs_several_frameworks_run_as_pasted(tmp_path: Path) -> None:
    (block,) = _console_blocks(ROOT / "docs" / "backend.md", "## Several frameworks")
    copy_project(EXAMPLES / "hello-qml", tmp_path / "hello-qml")  # as the page's first block
    _run_block(block, tmp_path, _doc_env(tmp_path))
    dist = tmp_path / "hello-qml" / "dist"
    assert sorted(p.name for p in dist.glob("*.click")) == [
        "hello-qml.clickbuild_1.0.0~2004_all.click", "hello-qml.clickbuild_1.0.0~2404_all.click"]
    for click in dist.glob("*.click"):  # the last command: the -qml variants, same names
        assert str(manifest_of(click)["framework"]).endswith("-qml")


@pytest.mark.slow
def test_cmake_docs_several_frameworks_run_as_pasted(tmp_path: Path) -> None:
    (block,) = _console_blocks(ROOT / "docs" / "cmake.md", "## Several frameworks")
    project = copy_project(EXAMPLES / "hello-cpp", tmp_path / "hello-cpp")
    env = _doc_env(tmp_path)
    env["CMAKE_PREFIX_PATH"] = click_build("--cmake-dir").stdout.strip()
    _run_block(block, project, env)
    (click,) = (project / "build-2404").glob("*.click")
    assert click.name == f"hello-cpp.clickbuild_1.0.0~2404_{host_arch()}.click"
    assert manifest_of(click)["framework"] == "ubuntu-touch-24.04-1.x"
    assert apparmor_policies(click) == {2404.1}


def test_frameworks_in_pyproject_and_the_sdist_route(tmp_path: Path) -> None:
    """The TOML setting, and python -m build's sdist-then-.click route: every package lands."""
    project = copy_project(EXAMPLES / "hello-qml", tmp_path / "p")
    path = project / "pyproject.toml"
    path.write_text(path.read_text().replace(
        'kind = "qml"', 'kind = "qml"\nframeworks = ["ubuntu-sdk-20.04", "ubuntu-touch-24.04-1.x"]'))
    pybuild(project, "-o", str(tmp_path / "out"))
    check_pair(tmp_path / "out", "1.0.0")
    assert [p.name for p in (tmp_path / "out").glob("*.tar.gz")] == ["hello_qml-1.0.0.tar.gz"]


def test_a_version_from_a_placeholder_that_names_no_framework_gets_the_suffix(
        tmp_path: Path) -> None:
    """manifest.json.in with "version": "@PROJECT_VERSION@" is not a scheme of its own."""
    project = copy_project(EXAMPLES / "hello-qml", tmp_path / "p")
    data = json.loads((project / "manifest.json").read_text())
    (project / "manifest.json").unlink()
    (project / "manifest.json.in").write_text(json.dumps(dict(data, version="@PROJECT_VERSION@")))
    pybuild(project, "--wheel", "-o", str(tmp_path / "out"), *MATRIX)
    check_pair(tmp_path / "out", "1.0.0")
