"""The finishing stage every route calls: the review decides, placeholders get filled,
settings may not contradict the manifest, and no package silently loses a folder."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from backend_helpers import (
    EXAMPLES,
    assert_one_error,
    control_field,
    copy_project,
    data_members,
    member_text,
    only_click,
    pybuild,
)
from conftest import CLICK_BUILD, run

from click_build.build import Entry
from click_build.choices import decide_architecture
from click_build.errors import BuildError
from click_build.manifest import Manifest
from click_build.staging import staged_code
from click_build.tree_checks import check_tree


def click_build(*args: str | Path, cwd: Path | None = None, env: dict[str, str] | None = None,
                check: bool = True):  # type: ignore[no-untyped-def]
    return run([*CLICK_BUILD, *map(str, args)], cwd=cwd, env=env, check=check)


def _break_icon(project: Path, name: str = "hello-qml") -> None:
    """A store error: the desktop file's Icon names a file the package lacks."""
    desktop = project / f"{name}.desktop"
    desktop.write_text(desktop.read_text().replace("Icon=assets/logo.svg",
                                                   "Icon=assets/gone.svg"))


# ------------------------------------------------------------------ review

def test_backend_fails_on_review_errors(tmp_path: Path) -> None:
    """python -m build ran no review at all; now its errors stop the build."""
    project = copy_project(EXAMPLES / "hello-qml", tmp_path / "p")
    _break_icon(project)
    result = pybuild(project, "--wheel", "-o", str(tmp_path / "a"), check=False)
    error = assert_one_error(result, "review: 1 error", 'review = "report"')
    assert "desktop.icon" in result.stdout + result.stderr, error
    assert not list((tmp_path / "a").glob("*.click"))
    reported = pybuild(project, "--wheel", "-o", str(tmp_path / "b"), "-C",
                       "click-build.review=report")
    assert "[desktop.icon]" in reported.stdout + reported.stderr
    only_click(tmp_path / "b")


def test_click_build_build_fails_on_review_errors(tmp_path: Path) -> None:
    project = copy_project(EXAMPLES / "hello-qml", tmp_path / "p")
    _break_icon(project)
    result = click_build("build", project, "-o", tmp_path, check=False)
    assert_one_error(result, "review: 1 error", "--no-validate")
    assert not list(tmp_path.glob("*.click"))
    result = click_build("build", project, "-o", tmp_path, "--no-validate")
    assert "review: error:" in result.stderr and "[desktop.icon]" in result.stderr
    only_click(tmp_path).unlink()
    result = click_build("build", project, "-o", tmp_path, "--review", "off")
    assert "review" not in result.stderr  # no review at all
    only_click(tmp_path)


def test_strict_fails_on_warnings(tmp_path: Path) -> None:
    """A description shorter than the app's name is a warning (the store's): fine by
    default, fatal with --strict."""
    project = copy_project(EXAMPLES / "hello-qml", tmp_path / "p")
    manifest = project / "manifest.json"
    data = json.loads(manifest.read_text())
    manifest.write_text(json.dumps(dict(data, description="Hello")))
    for out in ("a", "b"):
        (tmp_path / out).mkdir()
    built = click_build("build", project, "-o", tmp_path / "a")
    assert "[lint.description-short]" in built.stderr
    only_click(tmp_path / "a")
    result = click_build("build", project, "-o", tmp_path / "b", "--strict", check=False)
    assert_one_error(result, "review: 1 warning", "errors and warnings")
    assert not list((tmp_path / "b").glob("*.click"))
    result = pybuild(project, "--wheel", "-o", str(tmp_path / "c"), "-C",
                     "click-build.review=strict", check=False)
    assert_one_error(result, "review: 1 warning")
    result = click_build("build", project, "-o", tmp_path / "b", check=False,
                         env={"CLICK_BUILD_REVIEW": "strict"})
    assert_one_error(result, "review: 1 warning")


def test_bad_review_mode(tmp_path: Path) -> None:
    project = copy_project(EXAMPLES / "hello-qml", tmp_path / "p")
    result = pybuild(project, "--wheel", "-C", "click-build.review=lenient", check=False)
    assert_one_error(result, "'lenient' is not one of 'errors', 'strict', 'report', 'off'")
    result = click_build("build", project, "--review", "lenient", check=False)
    assert result.returncode == 2 and "invalid choice: 'lenient'" in result.stderr


# ------------------------------------------------------- click-build build

def test_click_build_build_of_the_qml_example(tmp_path: Path) -> None:
    """examples/hello-qml leaves its version to pyproject.toml: 'click-build build' used to
    refuse it; now it builds the same package as python -m build."""
    project = copy_project(EXAMPLES / "hello-qml", tmp_path / "p")
    (tmp_path / "cli").mkdir()
    click_build("build", project, "-o", tmp_path / "cli")
    pybuild(project, "--wheel", "-o", str(tmp_path / "pep517"))
    ours = only_click(tmp_path / "cli")
    assert ours.name == "hello-qml.clickbuild_1.0.0_all.click"
    assert ours.read_bytes() == only_click(tmp_path / "pep517").read_bytes()
    assert "./README.md" not in data_members(ours)  # the project's exclude setting holds


def test_click_build_build_fills_placeholders(tmp_path: Path) -> None:
    """A plain tree (no pyproject.toml) with the placeholders the backend fills."""
    app = copy_project(EXAMPLES / "hello-qml", tmp_path / "app")
    (app / "pyproject.toml").unlink()
    (app / "README.md").unlink()
    data = json.loads((app / "manifest.json").read_text())
    data.update(version="2.0", architecture="@CLICK_ARCH@", framework="@CLICK_FRAMEWORK@")
    (app / "manifest.json").write_text(json.dumps(data, indent=4))
    built = click_build("build", app, "-o", tmp_path, env={"SDK_FRAMEWORK": "ubuntu-sdk-20.04"})
    click = tmp_path / "hello-qml.clickbuild_2.0_all.click"
    assert click.is_file(), built.stdout + built.stderr
    manifest = json.loads(run(["dpkg-deb", "-I", str(click), "manifest"]).stdout)
    assert (manifest["architecture"], manifest["framework"]) == ("all", "ubuntu-sdk-20.04")
    assert json.loads(member_text(click, "./hello-qml.apparmor"))["policy_version"] == 20.04
    run(["click", "verify", "--force-missing-framework", "--allow-unauthenticated", str(click)])


def test_an_empty_framework_stays_empty_unless_one_is_named(tmp_path: Path) -> None:
    """The original builds (and installs) packages with "framework": ""; a build that is
    told a framework fills it, like any placeholder."""
    app = copy_project(EXAMPLES / "hello-qml", tmp_path / "app")
    (app / "pyproject.toml").unlink()
    data = json.loads((app / "manifest.json").read_text())
    (app / "manifest.json").write_text(json.dumps(dict(data, version="1.0", framework="")))
    (app / "hello-qml.apparmor").write_text('{"policy_groups": [], "policy_version": 20.04}')
    for out, env in (("a", {}), ("b", {"SDK_FRAMEWORK": "ubuntu-sdk-20.04"})):
        (tmp_path / out).mkdir()
        click_build("build", app, "-o", tmp_path / out, "--review", "off", env=env)
    framework = {out: json.loads(run(["dpkg-deb", "-I", str(only_click(tmp_path / out)),
                                      "manifest"]).stdout)["framework"] for out in "ab"}
    assert framework == {"a": "", "b": "ubuntu-sdk-20.04"}


def test_click_build_build_says_where_a_version_comes_from(tmp_path: Path) -> None:
    app = copy_project(EXAMPLES / "hello-qml", tmp_path / "app")
    (app / "pyproject.toml").unlink()
    result = click_build("build", app, "-o", tmp_path, check=False)
    assert_one_error(result, "version: is missing; set it here or as [project].version in a "
                             "pyproject.toml")


# ------------------------------------------------------------- contradictions

def test_settings_may_not_contradict_the_manifest(tmp_path: Path) -> None:
    """The issue's case: 20.04 + arm64 vendored cp38/aarch64 wheels into a 24.04 'all' package."""
    project = copy_project(EXAMPLES / "hello-python", tmp_path / "p")
    manifest = project / "manifest.json"
    data = json.loads(manifest.read_text())
    data.update(framework="ubuntu-touch-24.04-1.x", architecture="all")
    manifest.write_text(json.dumps(data, indent=4))
    result = pybuild(project, "--wheel", "-C", "click-build.framework=ubuntu-sdk-20.04",
                     "-C", "click-build.architecture=arm64", check=False)
    assert_one_error(result, "framework 'ubuntu-sdk-20.04' differs from manifest.json: "
                             "framework 'ubuntu-touch-24.04-1.x'", "@CLICK_FRAMEWORK@")
    assert "pip install" not in result.stdout  # refused before anything was vendored
    result = pybuild(project, "--wheel", "-C", "click-build.architecture=arm64", check=False)
    assert_one_error(result, "architecture 'arm64' differs from manifest.json: architecture "
                             "'all'", "@CLICK_ARCH@")


@pytest.mark.slow
def test_a_setting_fills_the_placeholder_consistently(tmp_path: Path) -> None:
    """With placeholders, the setting decides the manifest, the policy and the Python."""
    project = copy_project(EXAMPLES / "hello-python", tmp_path / "p")
    manifest = project / "manifest.json"
    data = json.loads(manifest.read_text())
    data.update(framework="@CLICK_FRAMEWORK@")
    manifest.write_text(json.dumps(data, indent=4))
    result = pybuild(project, "--wheel", "-o", str(tmp_path / "a"), "-C",
                     "click-build.framework=ubuntu-touch-24.04-1.x")
    assert "--python-version 3.12" in result.stdout
    click = only_click(tmp_path / "a")
    info = json.loads(run(["dpkg-deb", "-I", str(click), "manifest"]).stdout)
    assert info["framework"] == "ubuntu-touch-24.04-1.x"
    assert json.loads(member_text(click, "./hello-python.apparmor"))["policy_version"] == 2404.1


@pytest.mark.parametrize("value", ["../../../tmp/evil", "armhf;rm -rf /", "multi", "ALL"])
def test_architecture_settings_are_names(tmp_path: Path, value: str) -> None:
    project = copy_project(EXAMPLES / "hello-qml", tmp_path / "p")
    result = pybuild(project, "--wheel", "-C", f"click-build.architecture={value}", check=False)
    assert_one_error(result, "tool.click-build.architecture", "is not 'all', a Debian "
                             "architecture")


# ------------------------------------------------------------ no silent loss

def _entries(tmp_path: Path, files: dict[str, str]) -> list[Entry]:
    out = []
    for rel, text in files.items():
        path = tmp_path / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
        out.append(Entry(rel, "file", 0o644, path.stat().st_size, 0, str(path)))
    return out


MANIFEST = {"name": "a.b", "version": "1", "framework": "ubuntu-sdk-20.04", "title": "T",
            "maintainer": "A <a@example.com>",
            "hooks": {"a": {"desktop": "a.desktop", "apparmor": "a.apparmor"}}}
DESKTOP = "[Desktop Entry]\nName=A\nExec=qmlscene %U qml/Main.qml\nIcon=assets/a.svg\n" \
          "Type=Application\nX-Lomiri-Touch=true\n"


@pytest.mark.parametrize(("files", "message"), [
    ({"a.desktop": DESKTOP, "assets/a.svg": ""}, "a.desktop: Exec refers to 'qml/Main.qml', "
                                                 "but the package has no folder qml/"),
    ({"a.desktop": DESKTOP, "qml/Main.qml": ""}, "a.desktop: Icon refers to 'assets/a.svg'"),
    ({"a.desktop": DESKTOP, "assets/a.svg": "",
      "qml/Main.qml": 'import "components"\nItem {}\n'},
     "qml/Main.qml: import refers to 'components', but the package has no folder "
     "qml/components/"),
    ({"a.desktop": DESKTOP, "assets/a.svg": "",
      "qml/Main.qml": 'Image { source: Qt.resolvedUrl("../graphics/bg.png") }\n'},
     "qml/Main.qml: Qt.resolvedUrl refers to '../graphics/bg.png', but the package has no "
     "folder graphics/"),
    ({"a.desktop": DESKTOP.replace("qmlscene %U qml/Main.qml",
                                   "webapp-container --www=www index.html"),
      "assets/a.svg": ""}, "refers to 'www', but the package has no folder www/"),
])
def test_a_lost_folder_is_refused(tmp_path: Path, files: dict[str, str], message: str) -> None:
    entries = _entries(tmp_path, {"a.apparmor": "{}", **files})
    with pytest.raises(BuildError, match="the build left it out") as e:
        check_tree(Manifest.from_dict(MANIFEST), entries, "manifest.json")
    assert message in str(e.value)


def test_folders_that_are_there_pass(tmp_path: Path) -> None:
    entries = _entries(tmp_path, {
        "a.apparmor": "{}", "a.desktop": DESKTOP, "assets/a.svg": "",
        "qml/Main.qml": 'import "components"\nimport "../js/util.js" as U\n'
                        'Image { source: Qt.resolvedUrl("../assets/a.svg") }\n'
                        'Item { property string s: Qt.resolvedUrl("qrc:/x.qml") }\n',
        "qml/components/B.qml": "", "js/util.js": ""})
    check_tree(Manifest.from_dict(MANIFEST), entries, "manifest.json")


@pytest.mark.slow
def test_python_kind_packs_the_data_folders(tmp_path: Path) -> None:
    """kind = "auto" picks python for a QML app with dependencies; setuptools' discovery
    took qml/ and assets/ for packages and the package came out without them."""
    project = copy_project(EXAMPLES / "hello-qml", tmp_path / "p")
    path = project / "pyproject.toml"
    path.write_text(path.read_text().replace('kind = "qml"', 'kind = "auto"').replace(
        'description = "Hello World in QML for Ubuntu Touch"',
        'description = "Hello World in QML for Ubuntu Touch"\n'
        'dependencies = ["text-unidecode>=1.3"]'))
    result = pybuild(project, "--wheel", "-o", str(tmp_path / "a"))
    assert "* Building python app" in result.stdout
    members = data_members(only_click(tmp_path / "a"))
    assert {"./qml/Main.qml", "./assets/logo.svg", "./hello-qml.desktop"} <= set(members)
    assert "./lib/python3/dist-packages/text_unidecode/__init__.py" in members


@pytest.mark.slow
def test_python_example_keeps_its_layout(tmp_path: Path) -> None:
    """src/ is built by setuptools (and left out as data); everything else is data."""
    project = copy_project(EXAMPLES / "hello-python", tmp_path / "p")
    pybuild(project, "--wheel", "-o", str(tmp_path / "a"))
    members = data_members(only_click(tmp_path / "a"))
    assert "./lib/python3/dist-packages/hello/__init__.py" in members
    assert not [m for m in members if m.startswith("./src")]
    assert {"./qml/Main.qml", "./assets/logo.svg"} <= set(members)


# ------------------------------------------------------------ architecture

def test_architecture_is_decided_in_one_place(tmp_path: Path) -> None:
    lib = tmp_path / "libx.so"
    header = bytearray(64)
    header[:6] = b"\x7fELF\x02\x01"
    header[16:20] = (3).to_bytes(2, "little") + (183).to_bytes(2, "little")
    lib.write_bytes(bytes(header))
    code = staged_code([Entry("lib/libx.so", "file", 0o644, 64, 0, str(lib))])
    assert decide_architecture(None, code, "m") == "arm64"
    assert decide_architecture("arm64", code, "m") == "arm64"
    assert decide_architecture(["armhf", "arm64"], code, "m") == ["armhf", "arm64"]
    with pytest.raises(BuildError, match="compiled for arm64; declare 'arm64'"):
        decide_architecture("all", code, "m")
    assert decide_architecture(None, {}, "m") == "all"


def test_control_fields_match_the_manifest(tmp_path: Path) -> None:
    project = copy_project(EXAMPLES / "hello-qml", tmp_path / "p")
    pybuild(project, "--wheel", "-o", str(tmp_path / "a"))
    click = only_click(tmp_path / "a")
    assert control_field(click, "Architecture") == "all"
    manifest = json.loads(run(["dpkg-deb", "-I", str(click), "manifest"]).stdout)
    assert "architecture" not in manifest  # 'all' by the format's default, as written


# --------------------------------------------------------- vendored wheels

def _with_dependencies(tmp_path: Path, *deps: str, framework: str = "") -> Path:
    project = copy_project(EXAMPLES / "hello-python", tmp_path / "p")
    path = project / "pyproject.toml"
    path.write_text(path.read_text().replace('dependencies = ["text-unidecode>=1.3"]',
                                             f"dependencies = {json.dumps(list(deps))}"))
    if framework:
        manifest = project / "manifest.json"
        manifest.write_text(manifest.read_text().replace("ubuntu-sdk-20.04", framework))
    return project


@pytest.mark.slow
@pytest.mark.parametrize(("framework", "python", "tag"), [
    ("", "3.8", "cpython-38-aarch64-linux-gnu"),
    ("ubuntu-touch-24.04-1.x", "3.12", "cpython-312-aarch64-linux-gnu"),
])
def test_vendored_wheels_match_the_framework_and_architecture(
        tmp_path: Path, framework: str, python: str, tag: str) -> None:
    from click_build.elf import parse_elf_header

    project = _with_dependencies(tmp_path, "markupsafe", framework=framework)
    result = pybuild(project, "--wheel", "-o", str(tmp_path / "a"), "-C",
                     "click-build.architecture=arm64")
    assert f"--python-version {python}" in result.stdout
    click = only_click(tmp_path / "a")
    assert click.name.endswith("_arm64.click")
    compiled = [m for m in data_members(click) if m.endswith(".so")]
    assert compiled and all(tag in m for m in compiled), compiled
    info = parse_elf_header(member_bytes(click, compiled[0])[:64])
    assert info is not None and info.arches == {"arm64"}


def member_bytes(click: Path, member: str) -> bytes:
    import io
    import tarfile

    data = run_bytes(["dpkg-deb", "--fsys-tarfile", str(click)])
    with tarfile.open(fileobj=io.BytesIO(data)) as tar:
        f = tar.extractfile(member)
        assert f is not None
        return f.read()


def run_bytes(cmd: list[str]) -> bytes:
    import subprocess

    return subprocess.run(cmd, capture_output=True, check=True).stdout


@pytest.mark.slow
def test_a_fat_python_package_gets_the_wheels_of_each_architecture(tmp_path: Path) -> None:
    """It printed "for all", vendored pure wheels only and named the file _multi."""
    project = _with_dependencies(tmp_path, "text-unidecode>=1.3")
    result = pybuild(project, "--wheel", "-o", str(tmp_path / "a"), "-C",
                     "click-build.architecture=armhf;arm64")
    assert "* Building python app for armhf, arm64" in result.stdout
    assert "manylinux2014_armv7l" in result.stdout and "manylinux2014_aarch64" in result.stdout
    click = only_click(tmp_path / "a")
    assert click.name == "hello-python.clickbuild_1.0.0_multi.click"
    assert json.loads(run(["dpkg-deb", "-I", str(click), "manifest"]).stdout)[
        "architecture"] == ["armhf", "arm64"]
    assert "./lib/python3/dist-packages/text_unidecode/__init__.py" in data_members(click)


@pytest.mark.slow
def test_a_fat_package_with_compiled_dependencies_is_refused(tmp_path: Path) -> None:
    project = _with_dependencies(tmp_path, "markupsafe")
    result = pybuild(project, "--wheel", "-o", str(tmp_path / "a"), "-C",
                     "click-build.architecture=amd64;arm64", check=False)
    assert_one_error(result, "the wheels for amd64 and arm64 differ",
                     "Build one package per architecture")
    assert not list((tmp_path / "a").glob("*.click"))


# ------------------------------------------------------- the CMake helper

def _install_tree(tmp_path: Path, **fields: object) -> Path:
    """hello-qml as the CMake click target stages it: no pyproject.toml, a concrete version."""
    tree = copy_project(EXAMPLES / "hello-qml", tmp_path / "stage")
    (tree / "pyproject.toml").unlink()
    data = json.loads((tree / "manifest.json").read_text())
    (tree / "manifest.json").write_text(json.dumps(dict(data, version="1.0", **fields)))
    return tree


def _cmake_package(tree: Path, out: Path, *args: str, check: bool = True,
                   env: dict[str, str] | None = None):  # type: ignore[no-untyped-def]
    return click_build("_cmake", "package", tree, "--output-dir", out, "--summary",
                       out / "summary.json", *args, check=check, env=env)


def test_cmake_helper_runs_the_finishing_checks(tmp_path: Path) -> None:
    """`_cmake package` (the CMake click target's packing) has the finishing stage's rules:
    a desktop file whose QML folder was not installed is refused before packing, and a
    missing hook file is named with the install tree and its CMake fix."""
    tree = _install_tree(tmp_path)
    (tree / "po").mkdir()  # installed as-is: click_translations() compiles a project's own
    (tree / "po" / "de.po").write_text('msgid ""\nmsgstr ""\n"Language: de\\n"\n')
    out = tmp_path / "out"
    result = _cmake_package(tree, out)
    click = only_click(out)
    assert f"Successfully built package in '{click}'." in result.stdout
    members = data_members(click)
    assert "./po/de.po" in members and not [m for m in members if m.endswith(".mo")]
    assert json.loads((out / "summary.json").read_text()) == {
        "filename": click.name, "name": "hello-qml.clickbuild", "version": "1.0",
        "framework": "ubuntu-sdk-20.04", "architecture": "all"}
    click.unlink()
    (out / "summary.json").unlink()
    (tree / "qml" / "Main.qml").rename(tmp_path / "Main.qml")
    (tree / "qml").rmdir()
    result = _cmake_package(tree, out, check=False)
    assert_one_error(result, "Exec refers to 'qml/Main.qml', but the package has no folder qml/")
    (tree / "hello-qml.apparmor").unlink()
    result = _cmake_package(tree, out, check=False)
    assert_one_error(result, "hooks.hello-qml.apparmor: 'hello-qml.apparmor' is not in the "
                             f"install tree {tree}; install it (click_add_hook() or "
                             "install(FILES ...)) or fix the path")
    assert not list(out.glob("*")), "nothing is written, not even the summary"


def test_cmake_helper_reviews_as_click_build_build(tmp_path: Path) -> None:
    """$CLICK_BUILD_REVIEW sets the review mode; the way out it names works from CMake."""
    tree = _install_tree(tmp_path)
    _break_icon(tree)
    out = tmp_path / "out"
    result = _cmake_package(tree, out, check=False)
    assert_one_error(result, "review: 1 error", "build anyway with CLICK_BUILD_REVIEW=report")
    assert not list(out.glob("*"))
    result = _cmake_package(tree, out, check=False, env={"CLICK_BUILD_REVIEW": "lenient"})
    assert_one_error(result, "$CLICK_BUILD_REVIEW: 'lenient' is not one of errors, strict, "
                             "report, off")
    result = _cmake_package(tree, out, env={"CLICK_BUILD_REVIEW": "report"})
    assert "[desktop.icon]" in result.stdout + result.stderr
    only_click(out)


def test_cmake_helper_fills_apparmor_as_every_route(tmp_path: Path) -> None:
    src = tmp_path / "a.apparmor"
    src.write_text('{\n  "policy_groups": [],\n  "policy_version": @APPARMOR_POLICY@\n}\n')
    manifest = tmp_path / "manifest.json.in"
    manifest.write_text(json.dumps(dict(MANIFEST, framework="ubuntu-touch-24.04-1.x")))
    click_build("_cmake", "manifest", "--output", tmp_path / "out.json", "--input", manifest,
                "--apparmor", src, tmp_path / "filled.apparmor")
    filled = (tmp_path / "filled.apparmor").read_text()
    assert filled == src.read_text().replace("@APPARMOR_POLICY@", "2404.1")  # layout kept


def test_cmake_helper_names_the_default_framework() -> None:
    from click_build.framework_table import TEMPLATE_FRAMEWORKS

    out = click_build("_cmake", "policy-version").stdout
    assert out == f"{TEMPLATE_FRAMEWORKS[0]}\n2404.1\n" == "ubuntu-touch-24.04-1.x\n2404.1\n"
    assert click_build("_cmake", "policy-version", "ubuntu-sdk-20.04").stdout == "20.04\n"


def test_cmake_helper_decides_a_guessed_architecture(tmp_path: Path) -> None:
    """--guessed-architecture: the finishing stage's rule, as the backend applies it."""
    tree = _install_tree(tmp_path, architecture="amd64")
    off = {"CLICK_BUILD_REVIEW": "off"}
    _cmake_package(tree, tmp_path / "kept", "--guessed-architecture", "armhf", env=off)
    assert only_click(tmp_path / "kept").name == "hello-qml.clickbuild_1.0_amd64.click"
    _cmake_package(tree, tmp_path / "all", "--guessed-architecture", "amd64", env=off)
    assert only_click(tmp_path / "all").name == "hello-qml.clickbuild_1.0_all.click"
    header = bytearray(64)
    header[:6] = b"\x7fELF\x02\x01"
    header[16:20] = (3).to_bytes(2, "little") + (183).to_bytes(2, "little")
    (tree / "lib").mkdir()
    (tree / "lib" / "libx.so").write_bytes(bytes(header))
    ours = tmp_path / "ours"
    _cmake_package(tree, ours, "--guessed-architecture", "amd64", env=off)
    click = only_click(ours)
    assert click.name == "hello-qml.clickbuild_1.0_arm64.click"
    summary = json.loads((ours / "summary.json").read_text())
    assert (summary["filename"], summary["architecture"]) == (click.name, "arm64")
    assert json.loads(run(["dpkg-deb", "-I", str(click), "manifest"]).stdout)[
        "architecture"] == "arm64"
    # Installed-Size counts the tree's own manifest.json, as the original's du does when
    # it builds with the decided manifest given by -m.
    decided = tmp_path / "decided.json"
    decided.write_text(json.dumps(dict(json.loads((tree / "manifest.json").read_text()),
                                       architecture="arm64")))
    (tmp_path / "theirs").mkdir()
    run(["click", "build", "--no-validate", "-m", str(decided), str(tree)],
        cwd=tmp_path / "theirs")
    sizes = {name: run(["dpkg-deb", "-f", str(only_click(tmp_path / name)),
                        "Installed-Size"]).stdout for name in ("ours", "theirs")}
    assert sizes["ours"] == sizes["theirs"], sizes


def test_a_template_leaves_the_framework_to_the_build(tmp_path: Path) -> None:
    """"@CLICK_FRAMEWORK@" in a manifest.json.in is a placeholder, not an empty framework."""
    project = copy_project(EXAMPLES / "hello-qml", tmp_path / "p")
    data = json.loads((project / "manifest.json").read_text())
    (project / "manifest.json").unlink()
    (project / "manifest.json.in").write_text(json.dumps(dict(data,
                                                              framework="@CLICK_FRAMEWORK@")))
    result = pybuild(project, "--wheel", "-o", str(tmp_path / "a"))
    assert "using ubuntu-touch-24.04-1.x" in result.stdout
    manifest = json.loads(run(["dpkg-deb", "-I", str(only_click(tmp_path / "a")),
                               "manifest"]).stdout)
    assert manifest["framework"] == "ubuntu-touch-24.04-1.x"


def _names_the_architecture(dest: Path) -> tuple[Path, str, str]:
    """hello-qml as a template whose hook paths name the architecture
    (``@CLICK_ARCH_TRIPLET@``), which its compiled helper (this machine's ``true``)
    decides: the project, this machine's architecture and its triplet."""
    import shutil

    from click_build.elf import ARCH_TRIPLETS
    from click_build.hostarch import host_architecture

    host = host_architecture()
    triplet = ARCH_TRIPLETS[host]
    project = copy_project(EXAMPLES / "hello-qml", dest)
    data = json.loads((project / "manifest.json").read_text())
    (project / "manifest.json").unlink()
    folder = project / "lib" / triplet
    folder.mkdir(parents=True)
    for name in ("hello-qml.desktop", "hello-qml.apparmor"):
        (project / name).rename(folder / name)
    true = shutil.which("true")
    assert true
    shutil.copy(true, folder / "helper")
    hooks = {"hello-qml": {"apparmor": "lib/@CLICK_ARCH_TRIPLET@/hello-qml.apparmor",
                           "desktop": "lib/@CLICK_ARCH_TRIPLET@/hello-qml.desktop"}}
    (project / "manifest.json.in").write_text(json.dumps(dict(
        data, architecture="@CLICK_ARCH@", hooks=hooks)))
    return project, host, triplet


def test_hooks_that_name_the_architecture_get_the_decided_ones_files(tmp_path: Path) -> None:
    """A template whose hook paths name the architecture (``@CLICK_ARCH_TRIPLET@``) while the
    compiled files decide it: the AppArmor file filled and the files checked are those of
    the decided architecture, and each file is still packed from one pass."""
    project, host, triplet = _names_the_architecture(tmp_path / "p")
    click_build("build", project, "-o", tmp_path, "--no-validate")
    click = only_click(tmp_path)
    assert click.name == f"hello-qml.clickbuild_1.0.0_{host}.click"
    manifest = json.loads(run(["dpkg-deb", "-I", str(click), "manifest"]).stdout)
    assert manifest["architecture"] == host
    assert manifest["hooks"]["hello-qml"]["apparmor"] == f"lib/{triplet}/hello-qml.apparmor"
    policy = json.loads(member_text(click, f"./lib/{triplet}/hello-qml.apparmor"))
    assert policy["policy_version"] == 20.04


#: Stages the tree of argv[1] (its manifest.json.in), swaps the file argv[2] for a FIFO
#: nobody writes to or a link out of the tree (argv[3]; "none": left alone) as an attacker
#: could once the walk has seen it, then finishes into argv[4]; a ClickError is printed,
#: exit status 1.
SWAP_THEN_FINISH = """
import os, sys
from click_build.build import stage_tree
from click_build.choices import Request
from click_build.errors import ClickError
from click_build.finish import finish
from click_build.placeholders import read_manifest_file

project, victim, swap, out = sys.argv[1:]
template = os.path.join(project, "manifest.json.in")
entries = stage_tree(project, exclude=[template])
if swap == "fifo":
    os.unlink(victim)
    os.mkfifo(victim)
elif swap == "link":
    os.unlink(victim)
    os.symlink("/bin/true", victim)
try:
    finish(read_manifest_file(template, template), entries, out,
           Request(review="off", version="1.0.0"))
except ClickError as e:
    print(e)
    sys.exit(1)
"""


@pytest.mark.parametrize("swap", ["fifo", "link"])
def test_a_compiled_file_swapped_before_its_header_decides_is_refused(tmp_path: Path,
                                                                      swap: str) -> None:
    """Attack: the compiled file whose header must decide the architecture before packing
    (the hook paths name it) is swapped after the walk: for a FIFO (an open that waits for
    a writer hangs the build) or a link out of the tree (read, it would decide).  One
    error naming the file, no package, no hang."""
    import subprocess
    import sys

    project, _host, triplet = _names_the_architecture(tmp_path / "p")
    victim = project / "lib" / triplet / "helper"
    out = tmp_path / "out"
    out.mkdir()
    untouched = subprocess.run([sys.executable, "-c", SWAP_THEN_FINISH, str(project),
                                str(victim), "none", str(tmp_path)], capture_output=True,
                               text=True, timeout=120)
    assert untouched.returncode == 0, untouched.stdout + untouched.stderr  # the swap refused
    result = subprocess.run([sys.executable, "-c", SWAP_THEN_FINISH, str(project), str(victim),
                             swap, str(out)], capture_output=True, text=True, timeout=120)
    assert result.returncode == 1, result.stdout + result.stderr
    assert result.stdout.startswith(f"{victim}: changed while the package was being built")
    assert result.stderr == ""
    assert list(out.iterdir()) == []
