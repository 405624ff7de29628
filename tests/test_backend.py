"""The PEP 517 backend through real frontends: ``python -m build`` and pip."""

from __future__ import annotations

import json
import sys
import tarfile
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
    verify_both,
)
from conftest import run

QML_FILES = ["./assets/logo.svg", "./hello-qml.apparmor", "./hello-qml.desktop", "./qml/Main.qml"]


@pytest.fixture(scope="module")
def qml_builds(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """hello-qml built twice: sdist-then-click (default) and click from the tree."""
    base = tmp_path_factory.mktemp("qml")
    project = copy_project(EXAMPLES / "hello-qml", base / "hello-qml")
    pybuild(project, "-o", str(base / "full"))
    pybuild(project, "--wheel", "-o", str(base / "wheel"))
    return {"project": project, "full": base / "full", "wheel": base / "wheel"}


@pytest.mark.oracle
def test_qml_example_builds_and_verifies(qml_builds: dict[str, Path]) -> None:
    click = only_click(qml_builds["full"])
    assert click.name == "hello-qml.clickbuild_1.0.0_all.click"
    verify_both(click)
    members = data_members(click)
    assert [m for m in members if not m.endswith("/")] == QML_FILES
    assert control_field(click, "Version") == "1.0.0"  # from [project].version only
    assert control_field(click, "Architecture") == "all"
    apparmor = json.loads(member_text(click, "./hello-qml.apparmor"))
    assert apparmor["policy_version"] == 20.04  # @APPARMOR_POLICY@ from the framework


def test_sdist_is_pep625_and_rebuilds_identical_click(qml_builds: dict[str, Path]) -> None:
    sdists = sorted(qml_builds["full"].glob("*.tar.gz"))
    assert [s.name for s in sdists] == ["hello_qml-1.0.0.tar.gz"]
    with tarfile.open(sdists[0]) as tar:
        assert tar.pax_headers == {} or tar.format == tarfile.PAX_FORMAT
        names = tar.getnames()
        assert all(n == "hello_qml-1.0.0" or n.startswith("hello_qml-1.0.0/") for n in names)
        assert "hello_qml-1.0.0/PKG-INFO" in names
        assert "hello_qml-1.0.0/pyproject.toml" in names
        assert "hello_qml-1.0.0/manifest.json" in names
        pkg_info = tar.extractfile("hello_qml-1.0.0/PKG-INFO").read().decode()  # type: ignore[union-attr]
        assert {m.uid for m in tar.getmembers()} == {0}
    assert "Name: hello-qml\nVersion: 1.0.0\n" in pkg_info
    from_sdist = only_click(qml_builds["full"]).read_bytes()
    from_tree = only_click(qml_builds["wheel"]).read_bytes()
    assert from_sdist == from_tree


@pytest.mark.oracle
def test_sdist_route_keeps_prebuilt_plugins(tmp_path: Path) -> None:
    """A QML app shipping a prebuilt plugin: the source package keeps the ``.so`` (and
    any ``.o``), so ``python -m build`` packs what ``--wheel`` packs, byte for byte,
    with the architecture the library gives."""
    project = copy_project(EXAMPLES / "hello-qml", tmp_path / "hello-qml")
    plugin = project / "lib" / "x86_64-linux-gnu" / "Hello"
    plugin.mkdir(parents=True)
    (tmp_path / "hello.c").write_text("int hello(void) { return 42; }\n")
    run(["cc", "-shared", "-fPIC", "-o", str(plugin / "libhelloplugin.so"), str(tmp_path / "hello.c")])
    run(["cc", "-c", "-fPIC", "-o", str(plugin / "hello.o"), str(tmp_path / "hello.c")])
    (plugin / "qmldir").write_text("module Hello\nplugin helloplugin\n")
    pybuild(project, "-o", str(tmp_path / "full"))
    pybuild(project, "--wheel", "-o", str(tmp_path / "wheel"))
    with tarfile.open(tmp_path / "full" / "hello_qml-1.0.0.tar.gz") as tar:
        names = tar.getnames()
    for member in ("libhelloplugin.so", "hello.o", "qmldir"):
        assert f"hello_qml-1.0.0/lib/x86_64-linux-gnu/Hello/{member}" in names
    from_sdist, from_tree = only_click(tmp_path / "full"), only_click(tmp_path / "wheel")
    assert from_sdist.name == from_tree.name == "hello-qml.clickbuild_1.0.0_amd64.click"
    assert from_sdist.read_bytes() == from_tree.read_bytes()
    assert "./lib/x86_64-linux-gnu/Hello/libhelloplugin.so" in data_members(from_sdist)
    verify_both(from_sdist)


def test_builds_are_reproducible(qml_builds: dict[str, Path], tmp_path: Path) -> None:
    again = tmp_path / "again"
    pybuild(qml_builds["project"], "-o", str(again))
    for name in ("hello_qml-1.0.0.tar.gz", "hello-qml.clickbuild_1.0.0_all.click"):
        assert (again / name).read_bytes() == (qml_builds["full"] / name).read_bytes()


def test_checkout_stays_clean(qml_builds: dict[str, Path]) -> None:
    project = qml_builds["project"]
    assert sorted(p.name for p in project.iterdir()) == sorted(
        p.name for p in (EXAMPLES / "hello-qml").iterdir() if p.name not in ("build", "dist"))


@pytest.mark.oracle
def test_html5_example_keeps_dotfiles_drops_vcs(tmp_path: Path) -> None:
    project = copy_project(EXAMPLES / "hello-html5", tmp_path / "hello-html5")
    (project / ".git").mkdir()
    (project / ".git" / "HEAD").write_text("ref: refs/heads/main\n")
    (project / "www" / "index.html~").write_text("editor backup\n")
    (project / "www" / ".index.html.swp").write_text("vim swap\n")
    run_sh = project / "www" / "js" / "run.sh"
    run_sh.write_text("#!/bin/sh\necho hi\n")
    run_sh.chmod(0o755)
    pybuild(project, "-o", str(tmp_path / "out"))
    click = only_click(tmp_path / "out")
    verify_both(click)
    members = data_members(click)
    assert "./www/.htaccess" in members
    assert "./www/js/run.sh" in members
    assert not [m for m in members if ".git" in m or m.endswith("~") or ".swp" in m]
    listing = run(["dpkg-deb", "-c", str(click)]).stdout
    assert "-rwxr-xr-x root/root" in next(l for l in listing.splitlines() if "run.sh" in l)
    apparmor = json.loads(member_text(click, "./hello-html5.apparmor"))
    assert apparmor["policy_version"] == 20.04  # "" filled from the framework


@pytest.mark.oracle
@pytest.mark.slow
def test_python_example_vendors_for_the_device(tmp_path: Path) -> None:
    project = copy_project(EXAMPLES / "hello-python", tmp_path / "hello-python")
    pybuild(project, "-o", str(tmp_path / "full"))
    pybuild(project, "--wheel", "-o", str(tmp_path / "wheel"))
    click = only_click(tmp_path / "full")
    assert click.name == "hello-python.clickbuild_1.0.0_all.click"
    verify_both(click)
    members = data_members(click)
    site = "./lib/python3/dist-packages/"
    assert site + "hello/__init__.py" in members
    assert site + "text_unidecode/__init__.py" in members
    assert any(m.startswith(site + "text_unidecode-") and m.endswith("METADATA") for m in members)
    assert not [m for m in members if m.endswith(".pyc") or "/bin/" in m or "src/" in m]
    assert "./qml/Main.qml" in members
    # The app's module really works with the vendored dependency.
    extract = tmp_path / "x"
    run(["dpkg-deb", "-x", str(click), str(extract)])
    out = run([sys.executable, "-c", "import hello; print(hello.greeting('UT'))"],
              env={"PYTHONPATH": str(extract / "lib/python3/dist-packages")}).stdout
    assert out.strip() == "Grusse, UT! !Hola! Privet!"
    # setuptools left nothing in the checkout (no egg-info, no build/)
    assert not list(project.rglob("*.egg-info")) and not (project / "build").exists()
    assert only_click(tmp_path / "wheel").read_bytes() == click.read_bytes()


@pytest.mark.slow
def test_python_vendoring_refuses_host_only_wheels(tmp_path: Path) -> None:
    """A package that is 'all' may not vendor compiled code; arm64 gets arm64 wheels."""
    project = copy_project(EXAMPLES / "hello-python", tmp_path / "p")
    text = (project / "pyproject.toml").read_text()
    (project / "pyproject.toml").write_text(
        text.replace('["text-unidecode>=1.3"]', '["markupsafe==2.1.5"]'))
    result = pybuild(project, "--wheel", "-o", str(tmp_path / "o1"), check=False)
    assert_one_error(result, "project.dependencies", "pure-Python wheels only")
    pybuild(project, "--wheel", "-o", str(tmp_path / "o2"),
            "-C", "click-build.architecture=arm64")
    click = only_click(tmp_path / "o2")
    assert click.name.endswith("_arm64.click")
    assert control_field(click, "Architecture") == "arm64"
    sos = [m for m in data_members(click) if m.endswith(".so")]
    assert sos and all("x86_64" not in m for m in sos)
    extract = tmp_path / "x"
    run(["dpkg-deb", "-x", str(click), str(extract)])
    so = next(extract.rglob("*.so"))
    assert "aarch64" in run(["file", "-b", str(so)]).stdout or "ARM aarch64" in run(
        ["file", "-b", str(so)]).stdout


def test_prepare_metadata_fails_with_one_line(tmp_path: Path) -> None:
    project = copy_project(EXAMPLES / "hello-qml", tmp_path / "p")
    result = pybuild(project, "--metadata", check=False)
    assert_one_error(result, "click-build produces .click packages; use python -m build")


def test_control_characters_in_an_error_are_escaped_as_the_cli_does(tmp_path: Path) -> None:
    """The python -m build route prints its errors through the CLI's printer: a name with a
    terminal escape and a newline stays one line, shown escaped, never sent raw."""
    project = copy_project(EXAMPLES / "hello-qml", tmp_path / "p")
    name = "b\x1b[31m\nx"
    (project / name).write_text("not a folder")
    result = pybuild(project, "--wheel", "-C", f"click-build.build-dir={name}", check=False)
    line = assert_one_error(result, "b\\x1b[31m\\nx exists and is not a folder")
    assert "\x1b" not in result.stdout + result.stderr, line


@pytest.mark.slow
def test_pip_install_fails_with_one_line(tmp_path: Path) -> None:
    project = copy_project(EXAMPLES / "hello-qml", tmp_path / "p")
    result = run([sys.executable, "-m", "pip", "install", "--no-build-isolation",
                  "--no-deps", "--target", str(tmp_path / "t"), str(project)], check=False)
    assert result.returncode != 0
    assert "click-build produces .click packages; use python -m build" in result.stderr
    assert "BadZipFile" not in result.stderr and "Traceback" not in result.stderr


@pytest.mark.oracle
def test_bdist_click_for_setup_py_projects(tmp_path: Path) -> None:
    from backend_helpers import PACKAGES

    project = copy_project(PACKAGES / "setup-py-app", tmp_path / "app")
    quiet = run([sys.executable, "setup.py", "-q", "bdist_click", "-d", "out"], cwd=project)
    assert "built " not in quiet.stdout
    click = only_click(project / "out")
    assert click.name == "legacy-py.tester_0.3_all.click"
    built = click.read_bytes()
    said = run([sys.executable, "setup.py", "bdist_click", "-d", "out"], cwd=project).stdout
    assert said.splitlines()[-1] == "built out/legacy-py.tester_0.3_all.click"  # docs/backend.md
    assert click.read_bytes() == built
    verify_both(click)
    members = data_members(click)
    assert "./lib/python3/dist-packages/legacypy/__init__.py" in members
    assert "./qml/Main.qml" in members
    assert not [m for m in members if m.startswith(("./legacypy", "./build", "./setup.py"))]
    result = run([sys.executable, "setup.py", "-q", "bdist_click", "-a", "armhf",
                  "-m", "nothere.json"], cwd=project, check=False)
    assert result.returncode != 0 and "Traceback" not in result.stderr
    assert "click-build: error: pyproject.toml: tool.click-build.manifest: 'nothere.json' " \
           "does not exist" in result.stderr


@pytest.mark.parametrize(("change", "message"), [
    ('version="0.4"', "setup.py: version '0.4' differs from the manifest's '0.3'"),
    ('install_requires=["requests"]', "setup.py: install_requires (requests): bdist_click "
                                      "does not put dependencies into the package"),
])
def test_bdist_click_refuses_what_it_would_not_honour(tmp_path: Path, change: str,
                                                     message: str) -> None:
    """docs/backend.md: bdist_click takes neither setup(version=...) nor install_requires;
    a package differing from setup.py is refused, not built."""
    from backend_helpers import PACKAGES

    project = copy_project(PACKAGES / "setup-py-app", tmp_path / "app")
    setup = project / "setup.py"
    key = change.split("=", 1)[0]
    lines = [line for line in setup.read_text().splitlines(keepends=True)
             if not line.strip().startswith(f"{key}=")]
    setup.write_text("".join(lines).replace("setup(\n", f"setup(\n    {change},\n"))
    result = run([sys.executable, "setup.py", "-q", "bdist_click", "-d", "out"], cwd=project,
                 check=False)
    assert result.returncode != 0 and "Traceback" not in result.stderr
    assert f"click-build: error: {message}" in result.stderr
    assert not list((project / "out").glob("*.click")) if (project / "out").exists() else True
