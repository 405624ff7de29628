"""The kinds Clickable builds with its other builders, on real apps' layouts.

Each fixture under tests/packages/ is built three ways: ``python -m build -n -x``
(source package, then the .click from it), ``click-build build``, and as Clickable
would (its builder's steps done here by hand with the real qmake, make, CMake and
shell, then the original ``click build``).  The three packages hold the same files
with the same modes and links, and the same manifest.  Then ``import-clickable`` turns
each fixture's clickable.yaml (or .json) into settings, and the build from those is
byte for byte the build from the hand-written ones.
"""

from __future__ import annotations

import json
import os
import shutil
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import pytest
from backend_helpers import PACKAGES, manifest_of, only_click, pybuild, verify_both
from conftest import CLICK_BUILD, need, run

pytestmark = [pytest.mark.slow, pytest.mark.oracle]

HOST = run(["dpkg", "--print-architecture"]).stdout.strip()
TRIPLET = run(["dpkg-architecture", "-qDEB_HOST_MULTIARCH"]).stdout.strip()
#: The Ubuntu SDK's ubuntu-click qmake feature as it shipped (qtcreator-plugin-ubuntu):
#: what Clickable's containers give ``load(ubuntu-click)``.
SDK_UBUNTU_CLICK = """\
UBUNTU_CLICK_ARCH=$$system(dpkg-architecture -qDEB_HOST_ARCH)
qt_install_libs = $$[QT_INSTALL_LIBS]
UBUNTU_CLICK_PLUGIN_PATH=/lib/$$basename(qt_install_libs)
UBUNTU_CLICK_BINARY_PATH=/lib/$$basename(qt_install_libs)/bin
"""


def listing(click: Path) -> list[tuple[str, str, str]]:
    """(mode and type, name, link target) of every member, as dpkg-deb lists them."""
    out = []
    for line in run(["dpkg-deb", "-c", str(click)]).stdout.splitlines():
        fields = line.split()
        name, target = fields[5], fields[7] if len(fields) > 7 else ""
        out.append((fields[0], name, target))
    return sorted(out)


def qmake_by_hand(project: Path, work: Path, *args: str) -> Path:
    """Clickable's qmake builder: qmake, make, make INSTALL_ROOT=... install."""
    features = work / "sdk-features"
    features.mkdir(parents=True)
    (features / "ubuntu-click.prf").write_text(SDK_UBUNTU_CLICK)
    build, stage = work / "qmake", work / "install"
    build.mkdir()
    env = {"QMAKEFEATURES": str(features), "QT_SELECT": "qt5"}
    pro = next(project.glob("*.pro"))
    run([need("qmake"), *args, str(pro)], cwd=build, env=env)
    run(["make", "-j2"], cwd=build, env=env)
    run(["make", f"INSTALL_ROOT={stage}/", "install"], cwd=build, env=env)
    return stage


def copy_tree(project: Path, stage: Path, ignore: list[str]) -> Path:
    """Clickable's pure and precompiled builders: the project folder, minus its ignores."""
    shutil.copytree(project, stage, symlinks=True, ignore=shutil.ignore_patterns(
        *ignore, ".git", ".gitignore", "clickable.yaml", "clickable.json", "pyproject.toml"))
    return stage


def set_manifest_arch(stage: Path, arch: str) -> None:
    """What Clickable does to a manifest left to it (``@CLICK_ARCH@``) before click build."""
    path = stage / "manifest.json"
    data = json.loads(path.read_text())
    if data.get("architecture") in ("@CLICK_ARCH@", ""):
        data["architecture"] = arch
    path.write_text(json.dumps(data, indent=4))


def by_hand_qmake_app(project: Path, work: Path) -> Path:
    return qmake_by_hand(project, work, "CONFIG+=click")


def by_hand_qmake_qml(project: Path, work: Path) -> Path:
    stage = qmake_by_hand(project, work)
    set_manifest_arch(stage, "all")
    return stage


def by_hand_steps(project: Path, work: Path) -> Path:
    env = {"APP_FLAVOUR": "store", "ARCH": "all", "ARCH_TRIPLET": "all", "BUILT_FOR": "all",
           "ROOT": str(project)}
    run(["sh", "-c", "sh ${ROOT}/tools/build-info.sh qml/BuildInfo.js"], cwd=project, env=env)
    stage = copy_tree(project, work / "install", ["docs", "*.md", "build", ".gitlab-ci.yml"])
    shutil.copy(project / "packaging" / "store-icon.svg", stage / "assets")
    shutil.rmtree(stage / "tools")
    os.chmod(stage / "assets", 0o755)
    return stage


def by_hand_precompiled(project: Path, work: Path) -> Path:
    stage = copy_tree(project, work / "install", ["src", "build", ".gitlab-ci.yml"])
    set_manifest_arch(stage, HOST)
    return stage


def by_hand_library(project: Path, work: Path) -> Path:
    prefix, stage = work / "greeter-install", work / "install"
    lib_build, app_build = work / "greeter", work / "app"
    cmake = need("cmake")
    run([cmake, "-S", str(project / "3rdparty" / "greeter"), "-B", str(lib_build),
         "-DCMAKE_BUILD_TYPE=Release", f"-DCMAKE_INSTALL_PREFIX={prefix}", "-DBUILD_TESTS=OFF"])
    run([cmake, "--build", str(lib_build)])
    run([cmake, "--install", str(lib_build)])
    run([cmake, "-S", str(project), "-B", str(app_build), "-DCMAKE_BUILD_TYPE=Release",
         f"-DCMAKE_PREFIX_PATH={prefix}"])
    run([cmake, "--build", str(app_build)])
    run([cmake, "--install", str(app_build)], env={"DESTDIR": str(stage)})
    dest = stage / "lib" / TRIPLET  # install_lib: ${GREETER_LIB_INSTALL_DIR}/lib/libgreeter.so*
    for lib in sorted((prefix / "lib").glob("libgreeter.so*")):
        shutil.copy(lib, dest, follow_symlinks=False)
    set_manifest_arch(stage, HOST)
    return stage


def compile_hello(project: Path) -> None:
    """The precompiled app's program, built elsewhere: here, before the project is packed."""
    out = project / "lib" / TRIPLET / "bin"
    out.mkdir(parents=True)
    run([need("gcc"), "-O2", "-o", str(out / "hello"), str(project / "src" / "hello.c")])


@dataclass(frozen=True)
class Fixture:
    by_hand: Callable[[Path, Path], Path]
    prepare: Callable[[Path], None] | None = None


FIXTURES = {
    "ut-qmake-app": Fixture(by_hand_qmake_app),
    "ut-qmake-qml": Fixture(by_hand_qmake_qml),
    "ut-steps-app": Fixture(by_hand_steps),
    "ut-precompiled": Fixture(by_hand_precompiled, compile_hello),
    "ut-cmake-library": Fixture(by_hand_library),
}


def fixture_copy(name: str, dest: Path) -> Path:
    shutil.copytree(PACKAGES / name, dest)
    prepare = FIXTURES[name].prepare
    if prepare is not None:
        prepare(dest)
    return dest


@pytest.mark.parametrize("name", sorted(FIXTURES))
def test_every_route_packs_what_clickable_would(tmp_path: Path, name: str) -> None:
    for tool in ("qmake", "make", "cmake", "g++", "click", "dpkg-deb"):
        need(tool)
    built: dict[str, Path] = {}
    project = fixture_copy(name, tmp_path / "backend" / name)
    pybuild(project, "-o", str(tmp_path / "pep517"))
    built["python -m build"] = only_click(tmp_path / "pep517")
    project = fixture_copy(name, tmp_path / "cli" / name)
    run([*CLICK_BUILD, "build", str(project), "-o", str(tmp_path / "cli-out")])
    built["click-build build"] = only_click(tmp_path / "cli-out")
    project = fixture_copy(name, tmp_path / "clickable" / name)
    stage = FIXTURES[name].by_hand(project, tmp_path / "clickable-work")
    (tmp_path / "original").mkdir()
    run(["click", "build", "--no-validate", str(stage)], cwd=tmp_path / "original")
    built["click build"] = only_click(tmp_path / "original")

    expected = listing(built["click build"])
    want = manifest_of(built["click build"])
    want.pop("installed-size")
    for route, click in built.items():
        assert listing(click) == expected, route
        got = manifest_of(click)
        got.pop("installed-size")
        assert got == want, route
        assert click.name == built["click build"].name, route
        verify_both(click)


@pytest.mark.parametrize("name", sorted(FIXTURES))
def test_imported_settings_build_the_same_package(tmp_path: Path, name: str) -> None:
    project = fixture_copy(name, tmp_path / name)
    env = {"SOURCE_DATE_EPOCH": "1700000000"}
    run([*CLICK_BUILD, "build", str(project), "-o", str(tmp_path / "by-hand")], env=env)
    (project / "pyproject.toml").unlink()
    shutil.rmtree(project / "build", ignore_errors=True)  # qml and precompiled have none
    if name == "ut-steps-app":
        (project / "qml" / "BuildInfo.js").unlink()  # prebuild writes it again
    run([*CLICK_BUILD, "import-clickable", str(project)])
    run([*CLICK_BUILD, "build", str(project), "-o", str(tmp_path / "imported")], env=env)
    by_hand, imported = only_click(tmp_path / "by-hand"), only_click(tmp_path / "imported")
    assert by_hand.name == imported.name
    assert by_hand.read_bytes() == imported.read_bytes()


def test_a_qmake_build_is_incremental(tmp_path: Path) -> None:
    project = fixture_copy("ut-qmake-app", tmp_path / "app")
    out = tmp_path / "out"
    run([*CLICK_BUILD, "build", str(project), "-o", str(out)])
    first = only_click(out).read_bytes()
    again = run([*CLICK_BUILD, "build", str(project), "-o", str(out)])
    assert "g++ " not in again.stdout  # nothing to recompile
    assert only_click(out).read_bytes() == first
    main = project / "app" / "main.cpp"
    main.write_text(main.read_text().replace("view.show();", "view.showFullScreen();"))
    changed = run([*CLICK_BUILD, "build", str(project), "-o", str(out)])
    assert changed.stdout.count("g++ -c ") == 1  # main.cpp alone
    assert only_click(out).read_bytes() != first


def test_precompiled_folders_per_architecture(tmp_path: Path) -> None:
    """precompiled.dir = "prebuilt/{arch}": one package per architecture, and code of the
    wrong architecture in a folder is refused, naming the file."""
    need("aarch64-linux-gnu-gcc")
    project = shutil.copytree(PACKAGES / "ut-precompiled", tmp_path / "p")
    for arch, cc in ((HOST, "gcc"), ("arm64", "aarch64-linux-gnu-gcc")):
        triplet = run(["dpkg-architecture", f"-a{arch}", "-qDEB_HOST_MULTIARCH"],
                      env={"DEB_HOST_ARCH": ""}).stdout.strip()
        out = project / "prebuilt" / arch / "lib" / triplet / "bin"
        out.mkdir(parents=True)
        run([cc, "-o", str(out / "hello"), str(project / "src" / "hello.c")])
    with open(project / "pyproject.toml", "a") as f:
        f.write('\n[tool.click-build.precompiled]\ndir = "prebuilt/{arch}"\n')
    pybuild(project, "--wheel", "-C", f"click-build.architectures=arm64,{HOST}",
            "-o", str(tmp_path / "out"))
    clicks = sorted((tmp_path / "out").glob("*.click"))
    assert [c.name for c in clicks] == sorted(
        f"prebuilt.example_0.3_{a}.click" for a in ("arm64", HOST))
    for click in clicks:
        arch = click.stem.rsplit("_", 1)[1]
        names = [n for _, n, _ in listing(click)]
        assert any(n.endswith("/bin/hello") and ("aarch64" in n) == (arch == "arm64")
                   for n in names), names
        assert not any(n.startswith(("./prebuilt/", "./src/")) for n in names), names
    wrong = project / "prebuilt" / HOST / "lib" / TRIPLET / "bin" / "hello"
    shutil.copy(project / "prebuilt" / "arm64" / "lib" / "aarch64-linux-gnu" / "bin" / "hello",
                wrong)
    result = run([*CLICK_BUILD, "build", str(project), "-o", str(tmp_path / "bad")], check=False)
    assert result.returncode != 0
    assert f"lib/{TRIPLET}/bin/hello is compiled for arm64" in result.stderr
    assert "Traceback" not in result.stderr
    missing = run([*CLICK_BUILD, "build", str(project), "-o", str(tmp_path / "bad")],
                  env={"ARCH": "armhf"}, check=False)
    assert "prebuilt/armhf is not a folder of the project (architectures with a folder: " \
        f"{', '.join(sorted(['arm64', HOST]))}" in missing.stderr


def test_library_shared_objects_only(tmp_path: Path) -> None:
    """The library's headers, CMake package and .pc file stay out; its links stay links."""
    project = fixture_copy("ut-cmake-library", tmp_path / "app")
    result = run([*CLICK_BUILD, "build", str(project), "-o", str(tmp_path / "out")])
    assert f"* Libraries packed into lib/{TRIPLET}: libgreeter.so.1.2.0" in result.stdout
    members = listing(only_click(tmp_path / "out"))
    libs = sorted((n, mode[0], t) for mode, n, t in members if "libgreeter" in n)
    assert libs == [(f"./lib/{TRIPLET}/libgreeter.so", "l", "libgreeter.so.1"),
                    (f"./lib/{TRIPLET}/libgreeter.so.1", "l", "libgreeter.so.1.2.0"),
                    (f"./lib/{TRIPLET}/libgreeter.so.1.2.0", "-", "")]
    assert not any("include" in n or "cmake" in n or "pkgconfig" in n for _, n, _ in members)


def test_a_library_is_built_for_the_apps_target(tmp_path: Path) -> None:
    """Cross built with the app's toolchain file: the library, the app and the package are
    arm64; ${ARCH_TRIPLET} in cmake.args is the target's."""
    need("aarch64-linux-gnu-g++")
    project = fixture_copy("ut-cmake-library", tmp_path / "app")
    (project / "arm64.cmake").write_text(
        "set(CMAKE_SYSTEM_NAME Linux)\nset(CMAKE_SYSTEM_PROCESSOR aarch64)\n"
        "set(CMAKE_CXX_COMPILER aarch64-linux-gnu-g++)\n")
    lists = project / "CMakeLists.txt"
    lists.write_text(lists.read_text() + 'message(STATUS "APP_TRIPLET=${APP_TRIPLET}")\n')
    result = pybuild(project, "--wheel", "-o", str(tmp_path / "out"),
                     "-C", "click-build.architecture=arm64", "-C",
                     "click-build.cmake.args=--toolchain=arm64.cmake;"
                     "-DAPP_TRIPLET=${ARCH_TRIPLET}")
    assert "APP_TRIPLET=aarch64-linux-gnu" in result.stdout
    click = only_click(tmp_path / "out")
    assert click.name == "greeterapp.example_0.9.1_arm64.click"
    unpacked = tmp_path / "unpacked"
    run(["dpkg-deb", "-x", str(click), str(unpacked)])
    for rel in ("lib/aarch64-linux-gnu/libgreeter.so.1.2.0", "lib/aarch64-linux-gnu/bin/greeterapp"):
        assert (unpacked / rel).read_bytes()[18:20] == (183).to_bytes(2, "little"), rel  # EM_AARCH64


def test_run_takes_qmake_projects(public_tmp: Path) -> None:
    """Without a pyproject.toml, a folder with a .pro file is a qmake project: run builds
    it and starts the app (here the qmake C++ app, stopped after its timeout)."""
    tmp_path = public_tmp  # as root, the installer unpacks as clickpkg, who must enter it
    qml = fixture_copy("ut-qmake-qml", tmp_path / "qml")
    (qml / "pyproject.toml").unlink()
    script = run([*CLICK_BUILD, "run", str(qml), "--print-env"]).stdout
    assert script.rstrip().endswith("exec qmlscene qml/Main.qml")
    assert (qml / "build" / f"click-{HOST}" / "qmake" / "Makefile").is_file()
    app = fixture_copy("ut-qmake-app", tmp_path / "app")
    (app / "pyproject.toml").unlink()
    ran = run([*CLICK_BUILD, "run", str(app), "--timeout", "5"],
              env={"DISPLAY": "", "WAYLAND_DISPLAY": "", "QT_QPA_PLATFORM": "minimal"})
    assert "click-build: stopped qmakeapp.example_qmakeapp_1.4.0 after 5 s (--timeout)" in \
        ran.stdout + ran.stderr
