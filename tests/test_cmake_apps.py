"""Real Ubuntu Touch CMake apps, unchanged but for find_package(ClickBuild) and click_package().

The fixtures under tests/packages/ are laid out as apps written for the Ubuntu SDK
and clickable are: absolute install destinations, a prefix forced to "/" or left
to the builder, architecture and framework from dpkg or the environment, autopilot
tests installed into the system's Python path.  The click target stages them with
DESTDIR: each is built here as root with the host paths it targets watched, and
one as ``nobody``, who cannot write to "/".
"""

from __future__ import annotations

import json
import os
import re
import shutil
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

import pytest
from backend_helpers import (
    PACKAGES,
    control_field,
    data_members,
    only_click,
    verify_both,
)
from cmake_support import build, click_build_copy, configure, flat
from conftest import need, run
from install_support import run as run_as

# One worker builds each app once for all the tests that look at it.
pytestmark = [pytest.mark.slow, pytest.mark.xdist_group("cmake-apps")]

HOST_ARCH = run(["dpkg", "--print-architecture"]).stdout.strip()
TRIPLET = run(["dpkg-architecture", "-qDEB_HOST_MULTIARCH"]).stdout.strip()
LOAD = "find_package(ClickBuild CONFIG REQUIRED)"


@dataclass(frozen=True)
class App:
    click: str  # the package's file name
    framework: str  # what its manifest declares
    files: list[str]  # the package's files, as dpkg-deb -c lists them
    elsewhere: list[str] = field(default_factory=list)  # host paths it would install, not packed
    #: its code, compiled here (glibc 2.36), cannot load on its framework's system: the
    #: review says so (lint.abi-glibc), and the package is built anyway (report mode)
    too_new_here: bool = False


APPS = {
    # Ubuntu SDK era: prefix forced to "/", /lib/<triplet>, autopilot tests (INSTALL_TESTS).
    "ut-sdk-autopilot": App(
        f"sdkapp.developer_0.3_{HOST_ARCH}.click", "ubuntu-sdk-16.04",
        ["./assets/sdkapp.svg", f"./lib/{TRIPLET}/Sdkapp/libsdkappplugin.so",
         f"./lib/{TRIPLET}/Sdkapp/qmldir", f"./lib/{TRIPLET}/bin/sdkapp", "./qml/Main.qml",
         "./sdkapp.apparmor", "./sdkapp.desktop"],
        ["/usr/lib/python3/dist-packages/sdkapp_ap/__init__.py",
         "/usr/lib/python3/dist-packages/sdkapp_ap/test_main.py"]),
    # clickable era: ${CMAKE_INSTALL_PREFIX} left to the builder, GNUInstallDirs, $ENV{ARCH}.
    "ut-clickable-prefix": App(
        f"prefixapp.example_1.2.0_{HOST_ARCH}.click", "ubuntu-sdk-20.04",
        ["./assets/logo.svg", "./prefixapp", "./prefixapp.apparmor", "./prefixapp.desktop",
         "./qml/Main.qml", "./share/locale/de/LC_MESSAGES/prefixapp.example.mo"],
        too_new_here=True),
    # QML only, yet project(... C CXX) and the host architecture from dpkg-architecture.
    "ut-pure-qml-cmake": App(
        "pureqml.example_1.0.0_all.click", "ubuntu-touch-24.04-1.x",
        ["./assets/logo.svg", "./pureqml.apparmor", "./pureqml.desktop", "./qml/Main.qml"]),
}


def with_click_build(fixture: str, dest: Path) -> Path:
    """A copy of the fixture with the two lines a developer adds, and nothing else."""
    shutil.copytree(PACKAGES / fixture, dest)
    lists = dest / "CMakeLists.txt"
    text, n = re.subn(r"^(project\(.*\)\n)", rf"\1{LOAD}\n", lists.read_text(), count=1,
                      flags=re.MULTILINE)
    assert n == 1
    lists.write_text(text + "click_package()\n")
    return dest


def host_state(paths: list[str]) -> dict[str, tuple[int, int] | None]:
    """What is at each host path (inode and mtime), or None."""
    state: dict[str, tuple[int, int] | None] = {}
    for path in paths:
        try:
            st = os.lstat(path)
            state[path] = (st.st_ino, st.st_mtime_ns)
        except FileNotFoundError:
            state[path] = None
    return state


def host_paths(app: App) -> list[str]:
    return sorted({"/manifest.json", *(f[1:] for f in app.files), *app.elsewhere})


@dataclass(frozen=True)
class Built:
    name: str
    app: App
    project: Path
    click: Path
    log: str
    before: dict[str, tuple[int, int] | None]
    after: dict[str, tuple[int, int] | None]


@pytest.fixture(scope="module", params=sorted(APPS))
def built(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Built:
    for tool in ("cmake", "ninja", "g++", "msgfmt", "dpkg-architecture", "click"):
        need(tool)
    name: str = request.param
    app = APPS[name]
    project = with_click_build(name, tmp_path_factory.mktemp(name) / name)
    watched = host_paths(app)
    before = host_state(watched)
    configured = configure(project, project / "build")
    made = build(project / "build",
                 env={"CLICK_BUILD_REVIEW": "report"} if app.too_new_here else None)
    return Built(name, app, project, only_click(project / "build"),
                 configured.stdout + configured.stderr + made.stdout + made.stderr,
                 before, host_state(watched))


@pytest.mark.oracle
def test_the_package_passes_click_verify_and_dpkg_deb(built: Built) -> None:
    assert built.click.name == built.app.click
    verify_both(built.click)
    assert [m for m in data_members(built.click) if not m.endswith("/")] == built.app.files


def test_nothing_was_written_to_the_host(built: Built) -> None:
    assert built.before == built.after
    assert all(state is None for state in built.after.values()), built.after


def test_the_architecture_is_that_of_the_compiled_files(built: Built) -> None:
    expected = built.app.click.rsplit("_", 1)[1].removesuffix(".click")
    assert control_field(built.click, "Architecture") == expected
    manifest = json.loads(run(["dpkg-deb", "-I", str(built.click), "manifest"]).stdout)
    assert manifest["architecture"] == expected


def test_the_status_names_the_framework_the_manifest_declares(built: Built) -> None:
    """The manifest is the app's own: the click target reports what it declares."""
    manifest = json.loads(run(["dpkg-deb", "-I", str(built.click), "manifest"]).stdout)
    assert manifest["framework"] == built.app.framework
    assert (f"-- click: {manifest['name']} {manifest['version']} for {built.app.framework}"
            in built.log)
    assert set(re.findall(r"ubuntu-(?:sdk|touch)-[0-9][\w.-]*\w", built.log)) <= {
        built.app.framework, "ubuntu-touch-24.04-2.x",  # (the review's advice for 16.04)
        f"{built.app.framework}-qml"}  # (its advice for pure-QML apps)


def test_code_compiled_here_for_an_older_system_is_flagged(built: Built) -> None:
    """This machine's compilers link glibc 2.36: an Ubuntu 20.04 phone (2.31) would not load
    the program, and the review says so; 16.04 has no ABI facts, and 24.04 has 2.39."""
    flagged = "[lint.abi-glibc]" in built.log
    assert flagged == built.app.too_new_here, built.log


def test_no_noise_asks_to_change_the_app(built: Built) -> None:
    assert "CMake Warning" not in built.log
    assert "Manually-specified variables were not used" not in built.log
    assert "click-build: error" not in built.log


def test_the_app_was_not_edited_beyond_two_lines(built: Built) -> None:
    original = (PACKAGES / built.name / "CMakeLists.txt").read_text().splitlines()
    edited = (built.project / "CMakeLists.txt").read_text().splitlines()
    added = list(edited)
    for line in original:
        added.remove(line)
    assert added == [LOAD, "click_package()"]


@pytest.fixture
def nobody_tree() -> Iterator[Path]:
    """A folder nobody owns, which nobody can reach (pytest's tmp_path is private)."""
    path = Path(tempfile.mkdtemp(prefix="click-build-test."))
    path.chmod(0o755)
    yield path
    shutil.rmtree(path, ignore_errors=True)


@pytest.mark.root
@pytest.mark.oracle
def test_a_user_who_cannot_write_to_the_root_builds_an_absolute_layout(nobody_tree: Path) -> None:
    """As nobody, with INSTALL_TESTS=ON: even /usr/lib/python3 lands in the stage."""
    if os.geteuid() != 0:
        pytest.skip("needs root to become nobody")
    lib = click_build_copy(nobody_tree / "lib")  # the venv may be unreadable to nobody
    project = with_click_build("ut-sdk-autopilot", nobody_tree / "app")
    home = nobody_tree / "home"
    home.mkdir()
    for path in [project, *project.rglob("*"), home]:
        os.chown(path, 65534, 65534)
    env = {"PATH": "/usr/bin:/bin", "HOME": str(home), "PYTHONPATH": str(lib)}
    binary = project / "build"
    steps = [
        ["cmake", "-S", str(project), "-B", str(binary), "-G", "Ninja", "-DINSTALL_TESTS=ON",
         f"-DClickBuild_DIR={lib / 'click_build' / 'cmake'}", "-DPython3_EXECUTABLE=/usr/bin/python3"],
        ["cmake", "--build", str(binary), "--target", "click"],
    ]
    for step in steps:
        result = run_as(step, env=env, user="nobody", cwd=str(nobody_tree))
        assert result.returncode == 0, result.stdout + result.stderr
    click = only_click(binary)
    verify_both(click)
    members = data_members(click)
    assert f"./lib/{TRIPLET}/bin/sdkapp" in members
    assert "./usr/lib/python3/dist-packages/sdkapp_ap/test_main.py" in members  # asked for
    # A plain install would write into the system: it stops, and says what to do instead.
    result = run_as(["cmake", "--install", str(binary)], env=env, user="nobody",
                    cwd=str(nobody_tree))
    assert result.returncode != 0
    error = flat(result.stderr)
    assert "in CLICK_MODE the install prefix is the package root /" in error
    assert f"Fix: cmake --build {binary} --target click" in error
    assert "Permission denied" not in error
