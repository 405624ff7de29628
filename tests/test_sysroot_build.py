"""Real roots, real cross builds: the Debian 12 stand-in roots (arm64, armhf) made from
Debian's archive, then ``examples/hello-cpp`` and the ``cpp`` template built against
them through plain CMake with ``click-build sysroot toolchain``, their tests run under
qemu by ctest, as root and as an unprivileged user.

The roots are made once per machine into a folder that outlives the test run
(``CLICK_BUILD_TEST_SYSROOTS``; by default /var/cache/click-build-tests/sysroots as
root, ~/.cache/click-build-tests/sysroots otherwise), so a later run costs only
its builds.  Without Deb.debian.org these tests are skipped, and say why.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import tempfile
from pathlib import Path

import pytest
from cmake_support import click_build_copy, elf_machine
from conftest import CLICK_BUILD, ROOT, need, run
from deadlines import seconds, wait_for
from install_support import flocks
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

from click_build.sysroot import aptroot, profile_for, stored_roots, toolchain_for
from click_build.sysroot.builtin import _candidates
from click_build.sysroot.keys import KEYS, pinned_keyring
from click_build.sysroot.profiles import ARCHIVES, mirror_url
from click_build.sysroot.resolve import Index, resolve
from click_build.sysroot.store import Stored

pytestmark = [pytest.mark.slow, pytest.mark.xdist_group("sysroot")]

@pytest.fixture(scope="session")
def arm64() -> Stored:
    return made("arm64")


@pytest.fixture(scope="session")
def armhf() -> Stored:
    return made("armhf")


def toolchain(arch: str, *extra: str) -> Path:
    path = Path(cli("sysroot", "toolchain", "--arch", arch, "--profile", "debian-12",
                    *extra).stdout.strip())
    assert path.is_file()
    return path


def cmake_build(project: Path, toolchain_file: Path, *defines: str,
                env: dict[str, str] | None = None) -> Path:
    need("cmake")
    need("ninja")
    build = project / "build"
    base = {"PATH": f"{Path(CLICK_BUILD[0]).parent}:{os.environ['PATH']}", **(env or {})}
    run(["cmake", "-S", str(project), "-B", str(build), "-G", "Ninja",
         f"-DCMAKE_TOOLCHAIN_FILE={toolchain_file}", *defines], env=base)
    run(["cmake", "--build", str(build)], env=base)
    run(["cmake", "--build", str(build), "--target", "click"], env=base)
    return build


def test_a_root_holds_the_phones_qt_and_is_listed_with_its_size(arm64: Stored) -> None:
    root = arm64.root
    assert (root / "usr/lib/aarch64-linux-gnu/libQt5Quick.so.5").exists()
    assert (root / "usr/lib/aarch64-linux-gnu/qt5/qml/Lomiri/Components/qmldir").exists()
    assert not (root / "usr/share/doc").exists()
    for path in (root / "usr/lib/aarch64-linux-gnu").iterdir():
        if path.is_symlink():
            assert not os.readlink(path).startswith("/"), path
    listing = cli("sysroot", "list").stdout.splitlines()
    row = next(line for line in listing if str(root) in line)
    assert re.match(rf"debian-12\* +{FRAMEWORK} +arm64 +\d+ MB +\d+ +{re.escape(str(root))}$", row)
    assert listing[-1].startswith("* approximate:")
    assert cli("sysroot", "path", "--arch", "arm64", "--profile", "debian-12").stdout.strip() \
        == str(root)


def test_hello_cpp_for_arm64_with_the_toolchain_file(arm64: Stored, tmp_path: Path) -> None:
    project = tmp_path / "hello-cpp"
    shutil.copytree(ROOT / "examples" / "hello-cpp", project)
    tc = toolchain("arm64")
    text = tc.read_text()
    # Debian 12's root has the cross gcc's glibc, and this machine's Qt is the root's
    assert "# Compiler: gcc (the cross gcc's glibc is the root's (2.36))." in text
    assert 'set(CLICK_SYSROOT_QT_BIN "/usr/lib/qt5/bin")' in text
    build = cmake_build(project, tc)
    (click,) = build.glob("*.click")
    assert click.name == "hello-cpp.clickbuild_1.0.0_arm64.click"
    assert elf_machine(packed_program(click, tmp_path, "hello-cpp")) == MACHINES["arm64"]
    review_clean(click)


@pytest.mark.parametrize("arch", ["arm64", "armhf"])
def test_the_cpp_template_cross_built_and_its_tests_run_under_qemu(
        arch: str, tmp_path: Path, request: pytest.FixtureRequest) -> None:
    request.getfixturevalue(arch)
    project = new_cpp(tmp_path)
    build = cmake_build(project, toolchain(arch))
    (click,) = build.glob("*.click")
    assert click.name.endswith(f"_{arch}.click")
    assert elf_machine(packed_program(click, tmp_path, "tea-timer")) == MACHINES[arch]
    assert elf_machine(build / "tst_textstats") == MACHINES[arch]
    review_clean(click)
    tests = run(["ctest", "--test-dir", str(build), "--output-on-failure"])
    assert "100% tests passed" in tests.stdout
    qemu = "qemu-aarch64-static" if arch == "arm64" else "qemu-arm-static"
    assert qemu in (build / "CTestTestfile.cmake").read_text()  # it ran under the emulator


def test_clang_and_lld_link_only_what_is_used(arm64: Stored, tmp_path: Path) -> None:
    """Where the root's glibc is not the cross gcc's (Ubuntu 20.04's), clang and lld
    build against the root alone; --as-needed keeps libraries the program does not use
    (libQt5QmlModels, which Qt 5.12 lacks) out of it."""
    need("clang")
    need("ld.lld")
    tc = toolchain("arm64", "--compiler", "clang")
    assert 'set(CLICK_SYSROOT_COMPILER "clang")' in tc.read_text()
    project = tmp_path / "hello-cpp"
    shutil.copytree(ROOT / "examples" / "hello-cpp", project)
    build = cmake_build(project, tc)
    (click,) = build.glob("*.click")
    program = packed_program(click, tmp_path, "hello-cpp")
    assert elf_machine(program) == MACHINES["arm64"]
    needed = run(["readelf", "-d", str(program)]).stdout
    assert "libQt5Qml.so.5" in needed and "libQt5QmlModels" not in needed
    assert "clang" in (build / "CMakeCache.txt").read_text()


def test_the_roots_own_qt_tools_run_under_qemu(arm64: Stored, tmp_path: Path) -> None:
    """When this machine's Qt is not the root's, moc and rcc are the root's own (ARM
    programs) through wrappers that run them under qemu."""
    tc = toolchain_for(arm64, qt_tools="root")
    text = tc.read_text()
    wrappers = Path(re.search(r'set\(CLICK_SYSROOT_QT_BIN "([^"]+)"\)', text).group(1))  # type: ignore[union-attr]
    assert wrappers != Path("/usr/lib/qt5/bin")
    assert "qemu-aarch64-static" in (wrappers / "moc").read_text()
    assert run([str(wrappers / "moc"), "-v"]).stdout.startswith("moc 5.15")
    project = tmp_path / "hello-cpp"
    shutil.copytree(ROOT / "examples" / "hello-cpp", project)
    build = cmake_build(project, tc)
    assert str(wrappers / "moc") in (build / "build.ninja").read_text()
    (click,) = build.glob("*.click")
    assert elf_machine(packed_program(click, tmp_path, "hello-cpp")) == MACHINES["arm64"]


def test_cmake_prefix_path_still_finds_clickbuild_through_the_root(
        arm64: Stored, tmp_path: Path) -> None:
    """CMAKE_FIND_ROOT_PATH_MODE_PACKAGE ONLY re-roots every CMAKE_PREFIX_PATH entry into
    the phone's root: CMAKE_PREFIX_PATH="$(click-build --cmake-dir)", as docs/cmake.md
    advises, would then miss ClickBuild. The toolchain file keeps it found."""
    project = tmp_path / "hello-cpp"
    shutil.copytree(ROOT / "examples" / "hello-cpp", project)
    cmake_dir = cli("--cmake-dir").stdout.strip()
    env = {"CMAKE_PREFIX_PATH": cmake_dir,
           "PATH": f"{Path(CLICK_BUILD[0]).parent}:{os.environ['PATH']}"}
    result = run(["cmake", "-S", str(project), "-B", str(project / "build"), "-G", "Ninja",
                  f"-DCMAKE_TOOLCHAIN_FILE={toolchain('arm64')}",
                  "-DClickBuild_DIR=ClickBuild_DIR-NOTFOUND"], env=env)  # no help from _DIR
    assert "ClickBuild 0.1.0: arm64 (aarch64-linux-gnu)" in result.stdout
    # the root is named as every message names it: approximate
    assert "-- ClickBuild: against the debian-12 arm64 (approximate: Debian 12 stands in " \
        "for Ubuntu 24.04" in result.stdout
    # a toolchain file of one's own, as docs/cmake.md has it, needs ClickBuild_DIR
    own = tmp_path / "own.cmake"
    own.write_text("".join(line for line in toolchain("arm64").read_text().splitlines(True)
                           if "list(APPEND CMAKE_FIND_ROOT_PATH" not in line))
    configure = ["cmake", "-S", str(project), "-G", "Ninja", f"-DCMAKE_TOOLCHAIN_FILE={own}"]
    lost = run([*configure, "-B", str(tmp_path / "b2"),
                "-DClickBuild_DIR=ClickBuild_DIR-NOTFOUND"], env=env, check=False)
    assert lost.returncode != 0 and '"ClickBuild"' in lost.stderr
    found = run([*configure, "-B", str(tmp_path / "b3"), f"-DClickBuild_DIR={cmake_dir}"],
                env=env)
    assert "ClickBuild 0.1.0: arm64 (aarch64-linux-gnu)" in found.stdout


def test_pkg_config_looks_in_the_root_only(arm64: Stored, tmp_path: Path) -> None:
    project = tmp_path / "pc"
    project.mkdir()
    (project / "CMakeLists.txt").write_text(
        "cmake_minimum_required(VERSION 3.19)\nproject(pc LANGUAGES CXX)\n"
        "find_package(PkgConfig REQUIRED)\npkg_check_modules(QTCORE REQUIRED Qt5Core)\n"
        'message(STATUS "QTCORE_INCLUDE_DIRS=${QTCORE_INCLUDE_DIRS}")\n'
        'message(STATUS "QTCORE_LINK_LIBRARIES=${QTCORE_LINK_LIBRARIES}")\n')
    result = run(["cmake", "-S", str(project), "-B", str(project / "build"), "-G", "Ninja",
                  f"-DCMAKE_TOOLCHAIN_FILE={toolchain('arm64')}"])
    root = str(arm64.root)
    assert f"QTCORE_INCLUDE_DIRS={root}/usr/include/aarch64-linux-gnu/qt5" in result.stdout
    assert f"QTCORE_LINK_LIBRARIES={root}/usr/lib/aarch64-linux-gnu/libQt5Core.so" \
        in result.stdout


def test_click_builds_own_way_picks_what_apt_picks(arm64: Stored, tmp_path: Path) -> None:
    """The hosts-without-apt way, forced here: its resolver over the real archive picks
    the very packages and versions apt picks for the profile, and a root it made
    (once per machine) has the same files as apt's."""
    profile = profile_for(FRAMEWORK, "arm64", "debian-12")
    urls = {"debian": mirror_url(ARCHIVES["debian"])}
    keyrings = {"debian": pinned_keyring(KEYS["debian"])}
    ours = {(c.name, c.version) for c in resolve(profile.packages,
                                                  Index(_candidates(profile, urls, keyrings)))}
    work = tmp_path / "apt"
    conf = aptroot._config(work, tmp_path / "pool", "arm64")
    aptroot._sources(work, profile, urls, keyrings)
    run(["apt-get", "update"], env={"APT_CONFIG": str(conf), "LC_ALL": "C"})
    plan = run(["apt-get", "install", "-s", "-y", *profile.packages],
               env={"APT_CONFIG": str(conf), "LC_ALL": "C"}).stdout
    apts = {(n, v) for n, v, _ in aptroot._INST.findall(plan)}
    assert len(apts) > 200 and ours == apts, (sorted(ours - apts), sorted(apts - ours))
    # the whole root, made the builtin way from the shared pool of downloads
    builtin_cache = test_cache().parent / "sysroots-builtin"
    pool = builtin_cache / "debs"
    if not pool.exists():
        pool.mkdir(parents=True)
        for deb in (test_cache() / "debs").glob("*.deb"):
            os.link(deb, pool / deb.name)
    other = made("arm64", builtin_cache, method="builtin")
    assert other.meta["method"] == "builtin" and arm64.meta["method"] == "apt"
    assert other.meta["installed"] == arm64.meta["installed"]

    def files(root: Path) -> set[str]:
        return {os.path.relpath(os.path.join(d, n), root)
                for d, dirs, names in os.walk(root) for n in dirs + names}

    assert files(other.root) == files(arm64.root)


def test_a_root_in_use_is_not_removed_until_the_build_ends(tmp_path: Path) -> None:
    """Builds hold a root shared; remove (and update) wait for them, on the same lock."""
    import json

    from click_build.sysroot.store import RootLock, root_id

    profile = profile_for(FRAMEWORK, "arm64", "debian-12")
    ident = root_id(profile, {"debian": mirror_url(ARCHIVES["debian"])})
    cache = tmp_path / "cache"
    (cache / ident / "root").mkdir(parents=True)
    (cache / ident / "sysroot.json").write_text(json.dumps(
        {"profile": "debian-12", "framework": FRAMEWORK, "arch": "arm64"}))
    env = {**os.environ, "CLICK_BUILD_SYSROOT_CACHE": str(cache)}
    lock = RootLock(cache, ident, exclusive=False).__enter__()  # a build using the root
    held = True
    with subprocess.Popen([*CLICK_BUILD, "-q", "sysroot", "remove", "--arch", "arm64",
                           "--profile", "debian-12"], env=env) as proc:
        try:
            waits = ("waits", lock.path.stat().st_ino)
            wait_for(lambda: waits in flocks(proc.pid) or proc.poll() is not None,
                     "remove to wait for the lock")
            assert proc.poll() is None, "remove did not wait"
            assert (cache / ident / "root").is_dir()  # still there while the build holds it
            lock.__exit__(None, None, None)  # the build ends
            held = False
            assert proc.wait(timeout=seconds(120)) == 0
        finally:
            if held:
                proc.kill()
                lock.__exit__(None, None, None)
    assert not (cache / ident).exists()
    assert stored_roots(cache) == []


@pytest.mark.root
def test_an_unprivileged_user_makes_a_root_and_builds_against_it(arm64: Stored) -> None:
    """As nobody: a root made by apt as an ordinary user (kept for later runs too), the
    template built against it and its tests run under qemu."""
    if os.geteuid() != 0:
        pytest.skip("needs root to become nobody")
    base = test_cache().parent / "as-nobody"
    cache = base / "sysroots"
    if not (cache / "debs").exists():  # the downloads, copied once (nobody's own files)
        (cache / "debs").mkdir(parents=True)
        for deb in (test_cache() / "debs").glob("*.deb"):
            shutil.copy2(deb, cache / "debs" / deb.name)
        for path in (base, cache, cache / "debs", *(cache / "debs").iterdir()):
            os.chown(path, 65534, 65534)
    work = Path(tempfile.mkdtemp(prefix="click-build-sysroot."))
    try:
        lib = click_build_copy(work / "lib")
        home = work / "home"
        project = new_cpp(home)  # cookiecutter is root's; the project is then nobody's
        for path in (work, home, *home.rglob("*")):
            os.chown(path, 65534, 65534, follow_symlinks=False)
        work.chmod(0o755)
        env = {"PATH": "/usr/bin:/bin", "HOME": str(home), "PYTHONPATH": str(lib),
               "CLICK_BUILD_SYSROOT_CACHE": str(cache)}
        cb = ["/usr/bin/python3", "-m", "click_build"]

        def as_nobody(*cmd: str, cwd: Path = work) -> subprocess.CompletedProcess[str]:
            result = run_as(list(cmd), env=env, user="nobody", cwd=str(cwd), within=180)
            assert result.returncode == 0, f"{cmd}:\n{result.stdout}\n{result.stderr}"
            return result

        root = Path(as_nobody(*cb, "-q", "sysroot", "create", "--arch", "arm64", "--profile",
                              "debian-12").stdout.strip())
        assert root.stat().st_uid == 65534
        tc = as_nobody(*cb, "sysroot", "toolchain", "--arch", "arm64", "--profile",
                       "debian-12").stdout.strip()
        as_nobody("cmake", "-S", str(project), "-B", str(project / "build"), "-G", "Ninja",
                  f"-DCMAKE_TOOLCHAIN_FILE={tc}", "-DPython3_EXECUTABLE=/usr/bin/python3")
        as_nobody("cmake", "--build", str(project / "build"))
        as_nobody("cmake", "--build", str(project / "build"), "--target", "click")
        tests = as_nobody("ctest", "--test-dir", str(project / "build"))
        assert "100% tests passed" in tests.stdout
        (click,) = (project / "build").glob("*_arm64.click")
        review_clean(click)
    finally:
        shutil.rmtree(work, ignore_errors=True)
