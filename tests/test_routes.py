"""Every build route gives the same package and the same findings (issue 12's matrix).

Routes: ``python -m build --wheel`` (the PEP 517 backend), ``python -m build`` (sdist,
then the wheel from it), ``click-build build PROJECT``, ``click-build build TREE`` (the
app tree without pyproject.toml, as the original ``click build`` takes it) and the CMake
module's ``click`` target.  Each project is built once per route; every other route's
package is compared with the backend's: file list, control manifest and review findings,
and the bytes wherever the routes promise them.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from backend_helpers import (
    EXAMPLES,
    PACKAGES,
    copy_project,
    data_members,
    host_arch,
    member_text,
    pybuild,
)
from cmake_support import CMAKE_DIR, configure
from cmake_support import build as cmake_build
from conftest import CLICK_BUILD, need, run

pytestmark = pytest.mark.slow

#: Every route reports findings and builds anyway, so the findings can be compared.
REPORT = {"CLICK_BUILD_REVIEW": "report"}
HOST_ARCH = host_arch()

PURE_QML_CMAKE = {
    "CMakeLists.txt": """cmake_minimum_required(VERSION 3.19)
project(pureqml VERSION 1.2 LANGUAGES NONE)
find_package(ClickBuild CONFIG REQUIRED)
install(FILES qml/Main.qml DESTINATION qml)
install(DIRECTORY assets DESTINATION .)
click_manifest(manifest.json.in)
click_add_hook(pureqml DESKTOP pureqml.desktop APPARMOR pureqml.apparmor)
click_package()
""",
    "manifest.json.in": json.dumps({
        "name": "pureqml.clickbuild", "title": "Pure QML", "framework": "ubuntu-sdk-20.04",
        "description": "A QML app built by CMake",
        "maintainer": "click-build developers <click-build@example.com>",
        "icon": "assets/logo.svg"}, indent=4) + "\n",
    "pureqml.desktop": "[Desktop Entry]\nName=Pure QML\nExec=qmlscene %U qml/Main.qml\n"
                       "Icon=assets/logo.svg\nType=Application\nX-Lomiri-Touch=true\n",
    "pureqml.apparmor": '{\n    "policy_groups": []\n}\n',
    "qml/Main.qml": "import QtQuick 2.7\nRectangle { width: 100; height: 100 }\n",
    "assets/logo.svg": "<svg xmlns='http://www.w3.org/2000/svg' width='8' height='8'/>\n",
    "pyproject.toml": '[build-system]\nrequires = ["click-build[cmake]"]\n'
                      'build-backend = "click_build.backend"\n\n[project]\nname = "pureqml"\n'
                      'version = "1.2"\n\n[tool.click-build]\nkind = "cmake"\n',
}


def _write(root: Path, files: dict[str, str]) -> Path:
    for rel, text in files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    return root


def _hello_qml_variant(dest: Path, **manifest: object) -> Path:
    project = copy_project(EXAMPLES / "hello-qml", dest)
    path = project / "manifest.json"
    data = json.loads(path.read_text())
    data.update(manifest)
    path.write_text(json.dumps(data, indent=4) + "\n")
    return project


def _qml_with_dependencies(dest: Path) -> Path:
    """A QML app that declares Python dependencies: kind "auto" makes it a python app."""
    project = copy_project(EXAMPLES / "hello-qml", dest)
    path = project / "pyproject.toml"
    path.write_text(path.read_text().replace('kind = "qml"', 'kind = "auto"').replace(
        'description = "Hello World in QML for Ubuntu Touch"',
        'description = "Hello World in QML for Ubuntu Touch"\n'
        'dependencies = ["text-unidecode>=1.3"]'))
    return project


def _legacy(dest: Path) -> Path:
    """A 16.04-era CMake app: CLICK_MODE, a forced prefix, absolute destinations.  For the
    CMake module route it gets what docs/cmake.md asks for: find_package right after
    project() (before the app's install rules and its INSTALL_TESTS option), and one call."""
    project = copy_project(PACKAGES / "ut-legacy-cmake", dest)
    lists = project / "CMakeLists.txt"
    text = lists.read_text().replace("project(legacyapp C CXX)\n", "project(legacyapp C CXX)\n"
                                     "find_package(ClickBuild CONFIG REQUIRED)\n", 1)
    assert "find_package(ClickBuild" in text
    lists.write_text(text + "\nclick_package()\n")
    return project


def _with_click_build(project: Path) -> Path:
    """The two lines docs/cmake.md adds for the CMake module route, and nothing else."""
    lists = project / "CMakeLists.txt"
    text, n = re.subn(r"^(project\(.*\)\n)", r"\1find_package(ClickBuild CONFIG REQUIRED)\n",
                      lists.read_text(), count=1, flags=re.MULTILINE)
    assert n == 1
    lists.write_text(text + "click_package()\n")
    return project


#: Clickable's environment for a QML-only app (its pure-QML builders set ARCH=all), by the
#: names of its docs' "Placeholders & Environment Variables"; its folders are under
#: ``clickable/`` of the test's folder, which no route may write into.
def _clickable_env(top: Path) -> dict[str, str]:
    root = top / "clickable"
    install = root / "build" / "all" / "app" / "install"
    return {"ARCH": "all", "ARCH_TRIPLET": "all", "CLICK_FRAMEWORK": "ubuntu-sdk-20.04",
            "SDK_FRAMEWORK": "ubuntu-sdk-20.04", "CLICK_FRAMEWORK_BASE": "20.04",
            "APPARMOR_POLICY": "20.04", "QT_VERSION": "5.12", "NUM_PROCS": "2",
            "ROOT": str(root), "SRC_DIR": str(root), "BUILD_DIR": str(install.parent),
            "INSTALL_DIR": str(install), "CLICK_LD_LIBRARY_PATH": f"{install}/lib",
            "CLICK_QML2_IMPORT_PATH": f"{install}/qml", "CLICK_PATH": str(install)}


#: Each project's environment, and whether its CMake module route adds the two lines.
ENVIRONMENTS: dict[str, Callable[[Path], dict[str, str]]] = {
    "legacy-cmake": lambda top: {"SDK_FRAMEWORK": "ubuntu-sdk-16.04"},
    "clickable-qml": _clickable_env,
}
ADD_CLICK_BUILD = ("clickable-qml", "own-framework")

PROJECTS: dict[str, Callable[[Path], Path]] = {
    "hello-qml": lambda d: copy_project(EXAMPLES / "hello-qml", d),
    "hello-html5": lambda d: copy_project(EXAMPLES / "hello-html5", d),
    "hello-python": lambda d: copy_project(EXAMPLES / "hello-python", d),
    "hello-cpp": lambda d: copy_project(EXAMPLES / "hello-cpp", d),
    "qml-with-dependencies": _qml_with_dependencies,
    "click-arch-manifest": lambda d: _hello_qml_variant(d, architecture="@CLICK_ARCH@"),
    "pure-qml-cmake": lambda d: _write(d, PURE_QML_CMAKE),
    "legacy-cmake": _legacy,
    "rcc-cmake": lambda d: copy_project(PACKAGES / "cmake-rcc", d),
    # Clickable's QML-only template (project(... C CXX)), built in Clickable's environment
    "clickable-qml": lambda d: copy_project(PACKAGES / "ut-clickable-qml", d),
    # a CMake app that chooses its own framework: $SDK_FRAMEWORK, else its own default
    "own-framework": lambda d: copy_project(PACKAGES / "ut-own-framework", d),
}

#: The routes each project has besides the backend's ``--wheel`` (the reference).
ROUTES = {
    "hello-qml": ("cli", "tree"),
    "hello-html5": ("cli", "tree"),
    "hello-python": ("cli",),
    "hello-cpp": ("sdist", "cli", "cmake"),
    "qml-with-dependencies": ("cli",),
    "click-arch-manifest": ("cli", "tree"),
    "pure-qml-cmake": ("cli", "cmake"),
    "legacy-cmake": ("cli", "cmake"),
    "rcc-cmake": ("sdist", "cli"),
    "clickable-qml": ("sdist", "cli", "cmake"),
    "own-framework": ("sdist", "cli", "cmake"),
}

def _cells() -> Iterator[object]:
    for project, routes in ROUTES.items():
        for route in routes:
            yield pytest.param(project, route, id=f"{project}-{route}")


def _the_click(outdir: Path) -> Path:
    found = sorted(outdir.glob("*.click"))
    assert len(found) == 1, found
    return found[0]


def _build(project_name: str, route: str, top: Path) -> Path:
    """Build ``project_name`` by ``route`` in a fresh copy under ``top``; return the .click."""
    project = PROJECTS[project_name](top / "src" / project_name)
    out = top / "out"
    out.mkdir(parents=True)
    env = {**REPORT, **ENVIRONMENTS.get(project_name, lambda _: {})(top)}
    if route in ("wheel", "sdist"):
        pybuild(project, *(["--wheel"] if route == "wheel" else []), "-o", str(out), env=env)
    elif route == "cli":
        run([*CLICK_BUILD, "build", str(project), "-o", str(out)], env=env)
    elif route == "tree":
        version = project / "pyproject.toml"
        manifest = json.loads((project / "manifest.json").read_text())
        manifest.setdefault("version", _project_version(version))
        (project / "manifest.json").write_text(json.dumps(manifest, indent=4) + "\n")
        version.unlink()
        for extra in ("README.md",):
            (project / extra).unlink(missing_ok=True)
        run([*CLICK_BUILD, "build", str(project), "-o", str(out)], env=REPORT)
    elif route == "cmake":
        for tool in ("cmake", "ninja"):
            need(tool)
        if project_name in ADD_CLICK_BUILD:
            _with_click_build(project)
        # no build type, as docs/cmake.md configures: ClickBuild picks the backend's
        # (cmake.build-type, Release), so the compiled bytes are the same
        configure(project, top / "cmake-build", env=env)
        cmake_build(top / "cmake-build", env=env)
        return _the_click(top / "cmake-build")
    else:  # pragma: no cover
        raise AssertionError(route)
    return _the_click(out)


def _project_version(pyproject: Path) -> str:
    import tomllib

    return str(tomllib.loads(pyproject.read_text())["project"]["version"])


_BUILT: dict[tuple[str, str], Path] = {}


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> Callable[[str, str], Path]:
    def get(project: str, route: str) -> Path:
        key = (project, route)
        if key not in _BUILT:
            _BUILT[key] = _build(project, route, tmp_path_factory.mktemp(f"{project}-{route}"))
        return _BUILT[key]

    return get


def _manifest(click: Path) -> dict[str, object]:
    return json.loads(run(["dpkg-deb", "-I", str(click), "manifest"]).stdout)


def _findings(click: Path) -> list[dict[str, str]]:
    result = run([*CLICK_BUILD, "review", "--json", str(click)], check=False)
    data = json.loads(result.stdout)
    findings: list[dict[str, str]] = data["findings"]
    return findings


@pytest.mark.oracle
@pytest.mark.parametrize(("project", "route"), list(_cells()))
def test_every_route_builds_the_same_package(built: Callable[[str, str], Path], project: str,
                                             route: str) -> None:
    reference = built(project, "wheel")
    other = built(project, route)
    assert other.name == reference.name
    assert data_members(other) == data_members(reference)
    assert _manifest(other) == _manifest(reference)
    assert _findings(other) == _findings(reference)
    if route in ("cli", "sdist", "tree"):
        assert other.read_bytes() == reference.read_bytes()


#: What each real app's package must hold whatever the route: its framework, architecture
#: and the AppArmor policy_version of its hook (issue 27: Clickable's ARCH=all stopped the
#: first at configure; the backend gave the second click-build's default framework).
CHOICES = {
    "clickable-qml": ("ubuntu-sdk-20.04", "all", 20.04),  # all from Clickable's environment
    "own-framework": ("ubuntu-sdk-20.04", HOST_ARCH, 20.04),  # the app's own default
}


@pytest.mark.parametrize(("project", "route"), [
    pytest.param(project, route, id=f"{project}-{route}")
    for project in CHOICES for route in ("wheel", *ROUTES[project])])
def test_a_real_apps_choices_hold_on_every_route(built: Callable[[str, str], Path],
                                                 project: str, route: str) -> None:
    click = built(project, route)
    manifest = _manifest(click)
    hooks = manifest["hooks"]
    assert isinstance(hooks, dict)
    (app, hook), = hooks.items()
    framework, arch, policy = CHOICES[project]
    assert (manifest["framework"], manifest["architecture"]) == (framework, arch)
    assert click.name.endswith(f"_{arch}.click")
    assert json.loads(member_text(click, f"./{hook['apparmor']}"))["policy_version"] == policy
    # no error, no warning but the one this machine's compiler earns for code on 20.04: its
    # glibc is newer than the framework's (the fix, a 20.04 sysroot, is docs/phone.md's)
    compiled_for_20_04 = arch != "all" and framework.startswith("ubuntu-sdk-20.04")
    expected = {"lint.abi-glibc"} if compiled_for_20_04 else set()
    assert {f["check"] for f in _findings(click) if f["severity"] != "info"} == expected
    assert not (click.parent.parent / "clickable").exists()  # Clickable's INSTALL_DIR etc.


def test_the_matrix_covers_every_example() -> None:
    assert {p.name for p in EXAMPLES.iterdir() if p.is_dir()} <= set(ROUTES)


# ------------------------------------------------------- nothing else is written

def _snapshot(*roots: Path, skip: tuple[Path, ...] = ()) -> dict[str, tuple[int, int]]:
    out = {}
    for root in roots:
        for dirpath, dirnames, filenames in os.walk(root):
            here = Path(dirpath)
            dirnames[:] = [d for d in dirnames if here / d not in skip]
            for name in [*dirnames, *filenames]:
                st = os.lstat(here / name)
                out[str(here / name)] = (st.st_size, st.st_mtime_ns)
    return out


@pytest.mark.root
@pytest.mark.parametrize("route", ["pep517-hook", "cli", "tree", "cmake"])
def test_as_nobody_nothing_is_written_outside_the_build_folder(
        public_tmp: Path, portable: Path, route: str) -> None:
    """Built as an unprivileged user with a real home: the project, the home and the
    temporary folder are as they were; only the build folder and the output are new."""
    if route == "cmake":
        project = _write(public_tmp / "project", PURE_QML_CMAKE)
        expected = "pureqml.clickbuild_1.2_all.click"
    else:
        project = _hello_qml_variant(public_tmp / "project", architecture="@CLICK_ARCH@")
        expected = "hello-qml.clickbuild_1.0.0_all.click"
    if route == "tree":
        (project / "pyproject.toml").unlink()
        manifest = json.loads((project / "manifest.json").read_text())
        (project / "manifest.json").write_text(json.dumps(dict(manifest, version="1.0.0")))
    home, tmp = public_tmp / "home", public_tmp / "tmp"
    for path in (home, tmp):
        path.mkdir()
    out, build = project / "dist", project / "build"
    if route in ("cli", "tree"):
        out.mkdir()  # click-build build writes into a folder that exists, as the original
    subprocess.run(["chown", "-R", "nobody:nogroup", str(public_tmp)], check=True)
    before = _snapshot(project, home, tmp, skip=(out,))
    env = {"HOME": str(home), "TMPDIR": str(tmp), "PYTHONPATH": str(portable),
           "PATH": "/usr/bin:/bin"}
    python = "/usr/bin/python3"
    commands = {
        "cli": [[python, "-m", "click_build", "build", str(project), "-o", str(out)]],
        "tree": [[python, "-m", "click_build", "build", str(project), "-o", str(out)]],
        # what a frontend runs in the project folder, without the frontend
        "pep517-hook": [[python, "-c", "import os, click_build.backend as b; "
                         "os.makedirs('dist', exist_ok=True); print(b.build_wheel('dist'))"]],
        "cmake": [[need("cmake"), "-S", str(project), "-B", str(build), "-G", "Ninja",
                   f"-DClickBuild_DIR={CMAKE_DIR}",
                   f"-DPython3_EXECUTABLE={python}",
                   f"-DCMAKE_MAKE_PROGRAM={need('ninja')}"],
                  [need("cmake"), "--build", str(build), "--target", "click"]],
    }
    from install_support import run as run_as

    for cmd in commands[route]:
        result = run_as(cmd, env=env, user="nobody", cwd=str(project))
        assert result.returncode == 0, result.stdout + result.stderr
    after = _snapshot(project, home, tmp, skip=(out, build))
    assert after == before
    where = build if route == "cmake" else out
    assert [p.name for p in where.glob("*.click")] == [expected]
