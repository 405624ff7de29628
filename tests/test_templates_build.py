"""Every template, rendered with default and with unusual answers, builds with
`python -m build` through our backend, passes the original `click verify`, our
`verify` and `review`, and installs into a database that both click-build and
the original click read."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import CLICK_BUILD, CLICK_REVIEW, need, run
from templates_support import (
    ANSWER_SETS,
    KINDS,
    SLOW_KINDS,
    UNUSUAL,
    answers_for,
    new,
    project_of,
    run_qml_tests,
    source_manifest,
)
from xdisplay import showing

CASES = [
    pytest.param((kind, label), marks=[pytest.mark.slow] if kind in SLOW_KINDS else [],
                 id=f"{kind}-{label}")
    for kind in KINDS for label in ANSWER_SETS
]


@pytest.fixture
def built(request: pytest.FixtureRequest,
          tmp_path: Path) -> tuple[str, Path, Path, dict[str, object]]:
    """Render a template and build it with `python -m build -n -x` (sdist, then the
    .click from the sdist); return the kind, the project, the .click and the source
    manifest."""
    kind, label = request.param
    new(tmp_path / "src", kind, answers_for(kind, label))
    project = project_of(tmp_path / "src")
    result = run([sys.executable, "-m", "build", "-n", "-x", "-o", str(tmp_path / "dist")],
                 cwd=project)
    (click,) = (tmp_path / "dist").glob("*.click")
    (sdist,) = (tmp_path / "dist").glob("*.tar.gz")
    assert f"Successfully built {sdist.name} and {click.name}" in result.stdout
    return kind, project, click, source_manifest(project)


@pytest.fixture
def db_root(public_tmp: Path) -> Path:
    """A database root that the ``clickpkg`` user can reach (see ``public_tmp``)."""
    return public_tmp / "db"


@pytest.mark.oracle
@pytest.mark.parametrize("built", CASES, indirect=True)
def test_built_package_verifies_reviews_and_installs(
    built: tuple[str, Path, Path, dict[str, object]], original_click: str, db_root: Path
) -> None:
    kind, project, click, manifest = built
    name = manifest["name"]
    app = project.name
    assert click.name.startswith(f"{name}_")

    run([original_click, "verify", "--force-missing-framework", "--allow-unauthenticated",
         str(click)])
    run([*CLICK_BUILD, "verify", "--force-missing-framework", "--allow-unauthenticated",
         str(click)])

    info = json.loads(run([*CLICK_BUILD, "info", str(click)]).stdout)
    review = json.loads(run([*CLICK_BUILD, "review", "--strict", "--json", str(click)]).stdout)
    # No finding at all, not even advice: the pure-QML kind starts on the -qml variant.
    assert review["passed"] and review["findings"] == [], review
    if not CLICK_REVIEW.exists():
        pytest.fail(f"{CLICK_REVIEW} is missing; run ./scripts/setup as root")
    store = run([str(CLICK_REVIEW), "--json", str(click)], check=False)
    assert store.returncode in (0, 3), store  # 3: warnings only
    findings = {severity: sorted(check for section in json.loads(store.stdout).values()
                                 for check in section.get(severity, {}))
                for severity in ("error", "warn")}
    assert findings["error"] == [], findings
    # Only the long app id of the unusual answers (click-build new warns about it too).
    long_id = len(f"{name}_{app}_{info['version']}") > 100
    assert findings["warn"] == ([f"security:profile_name_length:{app}.apparmor"]
                                if long_id else []), findings

    for key in ("name", "title", "description", "framework", "maintainer"):
        assert info[key] == manifest[key], key
    assert info["hooks"] == {app: {"desktop": f"{app}.desktop", "apparmor": f"{app}.apparmor"}}
    contents = run([*CLICK_BUILD, "contents", str(click)]).stdout
    for left_out in ("README.md", "pyproject.toml", "./po/", "./tests/"):
        assert left_out not in contents

    root = db_root
    run([*CLICK_BUILD, "install", "--root", str(root), "--all-users", "--allow-unauthenticated",
         "--force-missing-framework", str(click)])
    version = info["version"]
    assert run([*CLICK_BUILD, "list", "--root", str(root)]).stdout == f"{name}\t{version}\n"
    assert f"{name}\t{version}\n" in run([original_click, "list", "--root", str(root)]).stdout
    installed = root / str(name) / str(version)
    assert (root / str(name) / "current").resolve() == installed.resolve()
    for target in info["hooks"][app].values():
        assert (installed / target).is_file()
    apparmor = json.loads((installed / f"{app}.apparmor").read_text())
    assert apparmor["policy_version"] == {"ubuntu-touch-24.04-1.x": 2404.1, "ubuntu-sdk-20.04": 20.04}[
        info["framework"].removesuffix("-qml")]
    assert json.loads((installed / f".click/info/{name}.manifest").read_text())["name"] == name


@pytest.mark.slow
@pytest.mark.parametrize("built", [pytest.param(("python", "unusual"), id="python-unusual")],
                         indirect=True)
def test_installed_python_app_finds_its_code(
    built: tuple[str, Path, Path, dict[str, object]], db_root: Path, tmp_path: Path
) -> None:
    """The QML test, run against the *installed* tree (no src/ there), reaches the
    Python module through lib/python3/dist-packages, as on a device."""
    _, project, click, manifest = built
    run([*CLICK_BUILD, "install", "--root", str(db_root), "--allow-unauthenticated",
         "--force-missing-framework", str(click)])
    (installed,) = (db_root / str(manifest["name"])).glob("[0-9]*")
    assert not (installed / "src").exists()
    tree = tmp_path / "installed"
    shutil.copytree(installed, tree, symlinks=True, ignore=shutil.ignore_patterns(".click"))
    shutil.copytree(project / "tests", tree / "tests")
    (tree / "tests/test_app.py").unlink()
    result = run_qml_tests(tree)
    assert "PASS   : qmltestrunner::Main::test_python_answers()" in result.stdout


def _msgids(pot: str) -> set[str]:
    return {line for line in pot.splitlines() if line.startswith(("msgid ", "msgid_plural "))}


@pytest.mark.slow
@pytest.mark.oracle
@pytest.mark.parametrize("framework", ["ubuntu-touch-24.04-1.x", "ubuntu-sdk-20.04"])
def test_cpp_project_builds_with_plain_cmake(original_click: str, tmp_path: Path,
                                             db_root: Path, framework: str) -> None:
    """No Python build front end: find_package(ClickBuild), compile, ctest, the
    `click` target; the package verifies and the packaged app starts.

    Compiled here, the app links this machine's Qt 5.15 and glibc 2.36: right for 24.04
    devices and too new for ubuntu-sdk-20.04's Qt 5.12 and glibc 2.31, which our review
    reports (the stores' only the Qt: their review has no glibc check); 20.04 apps are
    built in that SDK's environment."""
    new(tmp_path / "src", "cpp", {**UNUSUAL, "framework": framework})
    project = project_of(tmp_path / "src")
    build = tmp_path / "build"
    cmake_dir = run([*CLICK_BUILD, "--cmake-dir"]).stdout.strip()
    run([need("cmake"), "-S", str(project), "-B", str(build), f"-DClickBuild_DIR={cmake_dir}",
         f"-DPython3_EXECUTABLE={sys.executable}"])
    run([need("cmake"), "--build", str(build), "-j2"])
    tests = run([need("ctest"), "--test-dir", str(build)])
    assert "100% tests passed, 0 tests failed out of 1" in tests.stdout
    too_new = framework == "ubuntu-sdk-20.04"
    target = [need("cmake"), "--build", str(build), "--target", "click"]
    if too_new:  # the review's error fails the click target, as every build route
        refused = run(target, check=False)
        assert refused.returncode != 0 and "[lint.qt-version]" in refused.stdout + refused.stderr
        assert not list(build.glob("*.click"))
    run(target, env={"CLICK_BUILD_REVIEW": "report"} if too_new else None)
    (click,) = build.glob("*.click")
    arch = run(["dpkg", "--print-architecture"]).stdout.strip()
    assert click.name.endswith(f"_{arch}.click")
    run([original_click, "verify", "--force-missing-framework", "--allow-unauthenticated",
         str(click)])
    manifest = json.loads(run([*CLICK_BUILD, "info", str(click)]).stdout)
    assert manifest["framework"] == framework and manifest["architecture"] == arch
    assert manifest["description"] == UNUSUAL["description"]  # '@' and '${' survive CMake
    review = json.loads(run([*CLICK_BUILD, "review", "--strict", "--json", str(click)],
                            check=False).stdout)
    assert sorted(f["check"] for f in review["findings"]) == (
        ["lint.abi-glibc", "lint.qt-version"] if too_new else [])
    store = run([str(CLICK_REVIEW), "--json", str(click)], check=False)
    errors = sorted(check for section in json.loads(store.stdout).values()
                    for check in section.get("error", {}))
    assert errors == (["functional:qt_version_framework"] if too_new else []), errors

    # The shipped po/ skeleton lists exactly what `pot` extracts from the sources.
    shipped = next((project / "po").glob("*.pot")).read_text(encoding="utf-8")
    run([need("cmake"), "--build", str(build), "--target", "pot"])
    assert _msgids(next((project / "po").glob("*.pot")).read_text(encoding="utf-8")) \
        == _msgids(shipped)

    # The packaged app starts (Lomiri Components, its QML and C++ type) and keeps running.
    run([*CLICK_BUILD, "install", "--root", str(db_root), "--allow-unauthenticated",
         "--force-missing-framework", str(click)])
    installed = db_root / manifest["name"] / manifest["version"]
    (binary,) = installed.glob(f"lib/*/bin/{project.name}")
    log = tmp_path / "app.log"
    with showing([str(binary)], UNUSUAL["title"], {"LIBGL_ALWAYS_SOFTWARE": "1"}, log) as shown:
        app, _display = shown
        with pytest.raises(subprocess.TimeoutExpired):  # its window is up: it stays
            app.wait(timeout=2)
    ours = [line for line in log.read_text(errors="replace").splitlines()
            if "qml/Main.qml" in line]
    assert not ours, ours


@pytest.mark.slow
def test_python_template_builds_for_the_architecture_its_readme_names(tmp_path: Path) -> None:
    """The README's command for dependencies with compiled code works as written: the
    manifest leaves the architecture to the build (issue 13, item 7)."""
    new(tmp_path / "src", "python", answers_for("python", "defaults"))
    project = project_of(tmp_path / "src")
    readme = (project / "README.md").read_text(encoding="utf-8")
    command = "python -m build --wheel -C click-build.architecture=arm64"
    assert f"`{command}`" in readme
    for arch, setting in (("all", []), ("arm64", command.split()[4:])):
        out = tmp_path / arch
        run([sys.executable, "-m", "build", "-n", "--wheel", *setting, "-o", str(out)],
            cwd=project)
        (click,) = out.glob("*.click")
        manifest = json.loads(run(["dpkg-deb", "-I", str(click), "manifest"]).stdout)
        assert click.name == f"{manifest['name']}_{manifest['version']}_{arch}.click"
        assert manifest["architecture"] == arch
        assert run(["dpkg-deb", "-f", str(click), "Architecture"]).stdout.strip() == arch
