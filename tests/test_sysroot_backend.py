"""Builds for the phone through click-build's own routes, against the suite's real Debian
12 stand-in roots (tests/sysroot_support.py): ``python -m build -C
click-build.toolchains...=sysroot``, ``click-build build`` with the setting in
pyproject.toml, the CMake module, and a qmake project.  Each package's program is
aarch64 and passes the review against its framework; the tests of the ``cpp`` template
and of a fixture that needs a library the framework lacks run through ctest under qemu;
``[tool.click-build.sysroot]`` ``packages`` and ``bundle`` put that library in the root
and the package.  Also as an unprivileged user, against roots another user made.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import tempfile
from importlib.util import find_spec
from pathlib import Path

import pytest
from backend_helpers import assert_one_error, pybuild
from cmake_support import click_build_copy, elf_machine
from conftest import CLICK_BUILD, ROOT, need, run
from install_support import run as run_as
from sysroot_support import (
    FRAMEWORK,
    MACHINES,
    cli,
    made,
    new_cpp,
    packed_program,
    review_clean,
    test_cache,
)

from click_build.sysroot.store import Stored

pytestmark = [pytest.mark.slow, pytest.mark.xdist_group("sysroot")]

QRCODE = ROOT / "tests" / "packages" / "ut-sysroot-qrcode"
#: What a build against the stand-in says, and that it is approximate.
APPROXIMATE = f"* {FRAMEWORK}/arm64: built against the debian-12 arm64 (approximate: Debian 12"
SYSROOT_ENV = {"CLICK_BUILD_SYSROOT_CACHE": str(test_cache())}


@pytest.fixture(scope="module")
def arm64() -> Stored:
    return made("arm64")


@pytest.fixture(scope="module")
def arm64_qrencode() -> Stored:
    """The root with the fixture's build dependency (its own root, made once)."""
    return made("arm64", packages=("libqrencode-dev",))


def backend_build(project: Path, *settings: str) -> subprocess.CompletedProcess[str]:
    args = [item for setting in settings for item in ("-C", f"click-build.{setting}")]
    return pybuild(project, "--wheel", *args, env=SYSROOT_ENV)


def ctest_under_qemu(build: Path, qemu: str = "qemu-aarch64-static") -> str:
    tests = run(["ctest", "--test-dir", str(build), "--output-on-failure"])
    assert "100% tests passed" in tests.stdout, tests.stdout
    assert qemu in (build / "CTestTestfile.cmake").read_text()  # they ran under the emulator
    return tests.stdout


def test_the_cpp_template_by_python_m_build(arm64: Stored, tmp_path: Path) -> None:
    project = new_cpp(tmp_path)
    result = backend_build(project, f"toolchains.{FRAMEWORK}/arm64=sysroot",
                           "architecture=arm64")
    assert APPROXIMATE in result.stdout, result.stdout
    assert f"({arm64.root})" in result.stdout  # the root sysroot create made
    click = project / "dist" / "tea-timer.yourname_1.0.0_arm64.click"
    assert elf_machine(packed_program(click, tmp_path, "tea-timer")) == MACHINES["arm64"]
    review_clean(click)
    build = project / "build" / "click-arm64" / "cmake"
    assert f"CMAKE_TOOLCHAIN_FILE:FILEPATH={arm64.folder}/toolchain.cmake" in \
        (build / "CMakeCache.txt").read_text()
    assert elf_machine(build / "tst_textstats") == MACHINES["arm64"]
    ctest_under_qemu(build)


def test_hello_cpp_by_click_build_build_with_the_setting_in_pyproject(
        arm64: Stored, tmp_path: Path) -> None:
    """The plain-architecture key, in the project's own settings; the framework is then
    click-build's default (the manifest leaves it to the build)."""
    project = tmp_path / "hello-cpp"
    shutil.copytree(ROOT / "examples" / "hello-cpp", project)
    pyproject = project / "pyproject.toml"
    pyproject.write_text(pyproject.read_text().replace(
        'kind = "cmake"', 'kind = "cmake"\narchitecture = "arm64"\n\n'
                          '[tool.click-build.toolchains]\narm64 = "sysroot"'))
    result = cli("build", str(project), "-o", str(tmp_path / "out"))
    assert APPROXIMATE in result.stdout
    click = tmp_path / "out" / "hello-cpp.clickbuild_1.0.0_arm64.click"
    assert elf_machine(packed_program(click, tmp_path, "hello-cpp")) == MACHINES["arm64"]
    review_clean(click)


def test_packages_and_bundle_put_a_library_the_framework_lacks_in_the_package(
        arm64_qrencode: Stored, tmp_path: Path) -> None:
    """ut-sysroot-qrcode links libqrencode (not on the phone): ``packages`` adds its -dev
    package to the root, ``bundle`` packs libqrencode4's library into lib/<triplet>/, and
    the review, which finds every library the program needs on the phone or in the
    package, passes; without ``bundle`` it is one error that names the library."""
    project = tmp_path / "qrcode"
    shutil.copytree(QRCODE, project)
    result = backend_build(project, "architecture=arm64")
    assert f"({arm64_qrencode.root})" in result.stdout
    assert "* Bundled libraries packed into lib/aarch64-linux-gnu: libqrencode.so.4.1.1" \
        in result.stdout
    click = project / "dist" / "qrcode.clickbuild_1.0.0_arm64.click"
    listing = run(["dpkg-deb", "-c", str(click)]).stdout
    assert "./lib/aarch64-linux-gnu/libqrencode.so.4 -> libqrencode.so.4.1.1" in listing
    assert "./lib/aarch64-linux-gnu/libqrencode.so.4.1.1\n" in listing
    assert elf_machine(packed_program(click, tmp_path, "qrcode")) == MACHINES["arm64"]
    review_clean(click)
    # the program runs under qemu with the root's library: its test prints a 21x21 code
    out = ctest_under_qemu(project / "build" / "click-arm64" / "cmake")
    assert "1/1 Test #1: qrcode-encodes" in out
    # a library the framework provides is left out, with a warning; an unknown package
    # is one error line
    result = backend_build(project, "architecture=arm64",
                           "sysroot.bundle=libqrencode4;libdouble-conversion3")
    assert "bundle: libdouble-conversion.so.3, libdouble-conversion.so.3.1: the framework " \
           "provides it" in result.stderr
    result = pybuild(project, "--wheel", "-C", "click-build.architecture=arm64", "-C",
                     "click-build.sysroot.bundle=libnotthere1", check=False, env=SYSROOT_ENV)
    assert_one_error(result, "tool.click-build.sysroot.bundle: libnotthere1 is not in the "
                             "debian-12 arm64 (approximate")
    result = pybuild(project, "--wheel", "-C", "click-build.architecture=arm64", "-C",
                     "click-build.sysroot.bundle=", check=False, env=SYSROOT_ENV)
    assert_one_error(result, "review: 1 error in qrcode.clickbuild_1.0.0_arm64.click")
    assert "needs libqrencode.so.4, which neither framework" in result.stderr
    assert "[tool.click-build.sysroot] bundle names the root's package" in result.stderr


def test_the_cmake_module_bundles_from_the_root(arm64_qrencode: Stored, tmp_path: Path) -> None:
    """Plain CMake with the root's toolchain file: click_bundle_runtime_deps() finds the
    program's libraries in the root, not on this machine."""
    need("ninja")
    project = tmp_path / "qrcode"
    shutil.copytree(QRCODE, project)
    toolchain = cli("sysroot", "toolchain", "--arch", "arm64", "--profile", "debian-12",
                    "--package", "libqrencode-dev").stdout.strip()
    build = project / "b"
    env = {"PATH": f"{Path(CLICK_BUILD[0]).parent}:{os.environ['PATH']}"}
    run(["cmake", "-S", str(project), "-B", str(build), "-G", "Ninja",
         f"-DCMAKE_TOOLCHAIN_FILE={toolchain}", "-DQRCODE_BUNDLE_WITH_CMAKE=ON"], env=env)
    run(["cmake", "--build", str(build), "--target", "click"], env=env)
    click = build / "qrcode.clickbuild_1.0.0_arm64.click"
    listing = run(["dpkg-deb", "-c", str(click)]).stdout
    assert "./lib/aarch64-linux-gnu/libqrencode.so.4 -> libqrencode.so.4.1.1" in listing
    review_clean(click)
    ctest_under_qemu(build)


def test_a_qmake_project_cross_built_with_the_roots_qt(arm64: Stored, tmp_path: Path) -> None:
    need("qmake")
    need("make")
    project = tmp_path / "qmake-app"
    shutil.copytree(ROOT / "tests" / "packages" / "ut-qmake-app", project)
    result = backend_build(project, "toolchains.arm64=sysroot", "architecture=arm64")
    assert APPROXIMATE in result.stdout
    spec = project / "build" / "click-arm64" / "qmake-sysroot"
    assert f"Sysroot={arm64.root}" in (spec / "qt.conf").read_text()
    assert "QMAKE_CXX = aarch64-linux-gnu-g++" in (spec / "spec" / "qmake.conf").read_text()
    (click,) = (project / "dist").glob("*_arm64.click")
    assert elf_machine(packed_program(click, tmp_path, "qmakeapp")) == MACHINES["arm64"]
    review_clean(click)
    # without a root, another architecture is refused before anything runs, with the fix
    shutil.rmtree(project / "build")
    result = pybuild(project, "--wheel", "-C", "click-build.architecture=arm64", check=False)
    assert_one_error(result, "a qmake project is built for this machine",
                     "click-build.toolchains.arm64=sysroot")


def test_a_custom_build_gets_the_roots_toolchain(arm64: Stored, tmp_path: Path) -> None:
    """Kind ``custom`` (Clickable's custom builder): the project's own commands run CMake,
    which takes the root's toolchain file from ``$CMAKE_TOOLCHAIN_FILE``; ``$CLICK_SYSROOT``
    names the root.  The program is the phone's, and runs under qemu from the root."""
    project = tmp_path / "custom"
    shutil.copytree(ROOT / "tests" / "packages" / "ut-custom-cross", project)
    result = backend_build(project, "toolchains.arm64=sysroot", "architecture=arm64")
    assert APPROXIMATE in result.stdout
    (click,) = (project / "dist").glob("*_arm64.click")
    program = packed_program(click, tmp_path, "greeter")
    assert elf_machine(program) == MACHINES["arm64"]
    review_clean(click)
    ran = run([need("qemu-aarch64-static"), "-L", str(arm64.root), str(program)])
    assert ran.stdout == "hello from the phone's own architecture\n"


def test_the_qmake_spec_with_clang_and_lld(arm64: Stored, tmp_path: Path) -> None:
    """Where the root's glibc is not the cross gcc's (Ubuntu 20.04's), the spec uses clang
    and lld, with clang's own qmake settings (qmake asks it for its library folders) and
    --as-needed: the program names only the libraries it uses."""
    need("clang")
    need("ld.lld")
    from click_build.sysroot.qmakespec import qmake_args

    project = tmp_path / "qmake-app"
    shutil.copytree(ROOT / "tests" / "packages" / "ut-qmake-app", project)
    args = qmake_args(tmp_path / "spec", arm64.root, "arm64", "debian-12 arm64", "clang")
    assert "QMAKE_CXX = clang++ --target=aarch64-linux-gnu" in \
        (tmp_path / "spec" / "spec" / "qmake.conf").read_text()
    features = tmp_path / "features"
    features.mkdir()
    (features / "ubuntu-click.prf").write_text("UBUNTU_CLICK_BINARY_PATH = /bin\n")
    build = project / "b"
    build.mkdir()
    env = {"QMAKEFEATURES": str(features), "DEB_HOST_ARCH": "arm64"}
    run(["/usr/lib/qt5/bin/qmake", *args, str(project / "qmake-app.pro")], cwd=build, env=env)
    run(["make", "-j2"], cwd=build, env=env)
    program = build / "app" / "qmakeapp"
    assert elf_machine(program) == MACHINES["arm64"]
    needed = run(["readelf", "-d", str(program)]).stdout
    assert "libQt5Quick.so.5" in needed and "libQt5QmlModels" not in needed


def test_a_build_makes_the_root_it_needs_once(arm64: Stored, tmp_path: Path) -> None:
    """No root made yet: the first build makes one from the profile the settings name
    (from the packages the suite downloaded already), the next uses it."""
    cache = tmp_path / "sysroots"
    (cache / "debs").mkdir(parents=True)
    for deb in (arm64.folder.parent / "debs").glob("*.deb"):
        os.link(deb, cache / "debs" / deb.name)
    project = tmp_path / "cmake-hello"
    shutil.copytree(ROOT / "tests" / "packages" / "cmake-hello", project)
    args = ["--wheel", "-C", "click-build.architecture=arm64", "-C",
            f"click-build.framework={FRAMEWORK}", "-C", "click-build.toolchains.arm64=sysroot",
            "-C", "click-build.sysroot.profile=debian-12"]
    env = {"CLICK_BUILD_SYSROOT_CACHE": str(cache)}
    first = pybuild(project, *args, env=env)
    assert f"* {FRAMEWORK}/arm64: built against a new debian-12 arm64 (approximate: " \
        in first.stdout
    assert "Making the debian-12 arm64 (approximate" in first.stdout + first.stderr
    (made_now,) = (p for p in cache.iterdir() if p.name.startswith("debian-12-arm64-")
                   and p.is_dir())
    assert made_now.name == arm64.ident  # the same root as sysroot create makes
    second = pybuild(project, *args, env=env)
    assert f"root ({made_now / 'root'})" in second.stdout
    (click,) = (project / "dist").glob("*_arm64.click")
    run(["dpkg-deb", "-x", str(click), str(tmp_path / "unpacked")])
    assert elf_machine(tmp_path / "unpacked" / "bin" / "cmake-hello") == MACHINES["arm64"]


def test_one_command_builds_arm64_and_armhf_against_their_roots(
        arm64: Stored, tmp_path: Path) -> None:
    armhf = made("armhf")
    project = tmp_path / "cmake-hello"
    shutil.copytree(ROOT / "tests" / "packages" / "cmake-hello", project)
    result = backend_build(project, "architectures=arm64,armhf", "toolchains.arm64=sysroot",
                           "toolchains.armhf=sysroot")
    assert f"({arm64.root})" in result.stdout and f"({armhf.root})" in result.stdout
    assert "Debian 12's armhf has a 32-bit time_t" in result.stdout  # its own approximation
    for arch in ("arm64", "armhf"):
        click = project / "dist" / f"cmake-hello.clickbuild_2.0.1_{arch}.click"
        run(["dpkg-deb", "-x", str(click), str(tmp_path / arch)])
        assert elf_machine(tmp_path / arch / "bin" / "cmake-hello") == MACHINES[arch]
        review_clean(click)


def test_build_for_phone_is_one_call(arm64: Stored, tmp_path: Path,
                                     monkeypatch: pytest.MonkeyPatch) -> None:
    """What run --arch and device run call: a project for one framework and architecture
    against its root, whatever the project's own settings say."""
    from click_build.backend.phone import build_for_phone

    monkeypatch.setenv("CLICK_BUILD_SYSROOT_CACHE", str(test_cache()))
    project = tmp_path / "cmake-hello"
    shutil.copytree(ROOT / "tests" / "packages" / "cmake-hello", project)
    click = build_for_phone(project, FRAMEWORK, "arm64", tmp_path / "out")
    assert click == tmp_path / "out" / "cmake-hello.clickbuild_2.0.1_arm64.click"
    run(["dpkg-deb", "-x", str(click), str(tmp_path / "unpacked")])
    assert elf_machine(tmp_path / "unpacked" / "bin" / "cmake-hello") == MACHINES["arm64"]
    from click_build.errors import ClickError

    with pytest.raises(ClickError, match="no sysroot for architecture 'amd64'"):
        build_for_phone(project, FRAMEWORK, "amd64", tmp_path / "out")


@pytest.mark.root
def test_an_unprivileged_user_builds_against_roots_another_user_made(arm64: Stored) -> None:
    """As nobody, with the suite's roots (root's, read-only to nobody): python -m build
    of the cpp template for arm64, its toolchain file then in nobody's own cache, and its
    tests under qemu."""
    if os.geteuid() != 0:
        pytest.skip("needs root to become nobody")
    work = Path(tempfile.mkdtemp(prefix="click-build-sysroot."))
    try:
        home = work / "home"
        project = new_cpp(home)
        for path in (work, home, *home.rglob("*")):
            os.chown(path, 65534, 65534, follow_symlinks=False)
        work.chmod(0o755)
        # the system's Python with click-build (a world-readable copy), build and
        # scikit-build-core (this environment's) on its path
        lib = click_build_copy(work / "lib")
        site = {str(Path(find_spec(name).origin).parent.parent)  # type: ignore[union-attr, arg-type]
                for name in ("build", "scikit_build_core")}
        env = {"PATH": "/usr/bin:/bin", "HOME": str(home),
               "PYTHONPATH": os.pathsep.join([str(lib), *sorted(site)]), **SYSROOT_ENV}

        def as_nobody(*cmd: str) -> subprocess.CompletedProcess[str]:
            result = run_as(list(cmd), env=env, user="nobody", cwd=str(project), within=300)
            assert result.returncode == 0, f"{cmd}:\n{result.stdout}\n{result.stderr}"
            return result

        result = as_nobody("/usr/bin/python3", "-m", "build", "-n", "-x", "--wheel", "-C",
                           "click-build.toolchains.arm64=sysroot", "-C",
                           "click-build.architecture=arm64")
        assert f"({arm64.root})" in result.stdout
        cache = home / ".cache" / "click-build" / "sysroots" / ".toolchains" / arm64.ident
        assert (cache / "toolchain.cmake").is_file()
        (click,) = (project / "dist").glob("*_arm64.click")
        assert click.stat().st_uid == 65534
        review_clean(click)
        tests = as_nobody("ctest", "--test-dir", str(project / "build" / "click-arm64" / "cmake"))
        assert "100% tests passed" in tests.stdout
    finally:
        shutil.rmtree(work, ignore_errors=True)
