"""Which architecture, triplet, framework and AppArmor policy ClickBuild picks, in which order.

Most cases only configure (nothing is compiled or run); the last one cross
builds for arm64 with Debian's cross compiler and checks the ELF it packed.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

import pytest
from backend_helpers import (
    EXAMPLES,
    control_field,
    copy_project,
    only_click,
    verify_both,
)
from cmake_support import (
    CMAKE_DIR,
    build,
    cache,
    cmake_env,
    configure,
    doc_console,
    doc_file,
    elf_machine,
    flat,
    qml_app,
)
from conftest import need, run, write_tree

pytestmark = pytest.mark.slow

LOAD = "find_package(ClickBuild CONFIG REQUIRED)"
CXX = "project(cxxapp VERSION 1.0 LANGUAGES CXX)"
HOST_ARCH = run(["dpkg", "--print-architecture"]).stdout.strip()
HOST_TRIPLET = run(["dpkg-architecture", "-qDEB_HOST_MULTIARCH"]).stdout.strip()
PACKAGE = """
install(TARGETS hello RUNTIME DESTINATION ${CLICK_INSTALL_BINDIR})
install(FILES Main.qml icon.svg DESTINATION ${CLICK_INSTALL_DATADIR})
click_manifest(NAME cxxapp.example TITLE "C++ app" DESCRIPTION "A C++ app for the tests"
               MAINTAINER "Jane Doe <jane@example.com>")
click_add_hook(hello DESKTOP qmlapp.desktop APPARMOR qmlapp.apparmor)
click_package()
"""


@pytest.fixture(autouse=True)
def _tools() -> None:
    need("cmake")
    need("ninja")


def chosen(tmp_path: Path, *defines: str, env: Mapping[str, str] | None = None,
           project: str = "project(noneapp LANGUAGES NONE)", body: str = LOAD,
           binary: str = "build") -> dict[str, str]:
    src = qml_app(tmp_path / "app", body, project=project,
                  files={"main.cpp": "int main() { return 0; }\n"})
    configure(src, tmp_path / binary, *defines, env=env)
    return cache(tmp_path / binary)


def arch(values: Mapping[str, str]) -> tuple[str, str]:
    return values["CLICK_ARCH"], values["CLICK_ARCH_TRIPLET"]


def toolchain(tmp_path: Path, **settings: str) -> str:
    text = "set(CMAKE_SYSTEM_NAME Linux)\n" + "".join(
        f'set({k} "{v}")\n' for k, v in settings.items())
    path = write_tree(tmp_path / "tc", {"toolchain.cmake": text}) / "toolchain.cmake"
    return f"-DCMAKE_TOOLCHAIN_FILE={path}"


def test_a_project_that_compiles_nothing_is_all(tmp_path: Path) -> None:
    values = chosen(tmp_path)
    assert arch(values) == ("all", "")
    assert [values[f"CLICK_INSTALL_{d}"] for d in ("BINDIR", "LIBDIR", "QMLDIR", "DATADIR",
                                                   "LOCALEDIR")] == [
        ".", "lib", "qml", ".", "share/locale"]


def test_a_compiled_project_takes_the_toolchains_architecture(tmp_path: Path) -> None:
    values = chosen(tmp_path, project=CXX)
    assert arch(values) == (HOST_ARCH, HOST_TRIPLET)
    assert values["CLICK_INSTALL_BINDIR"] == f"lib/{HOST_TRIPLET}/bin"
    assert values["CLICK_INSTALL_LIBDIR"] == f"lib/{HOST_TRIPLET}"
    assert values["CLICK_INSTALL_QMLDIR"] == f"lib/{HOST_TRIPLET}"
    assert values["CLICK_MODE"] == "ON"
    # The package root is the prefix (staged with DESTDIR); "/." keeps GNUInstallDirs off usr/.
    assert values["CMAKE_INSTALL_PREFIX"] == "/."


@pytest.mark.parametrize(("env", "expected"), [
    ({"ARCH": "arm64"}, ("arm64", "aarch64-linux-gnu")),
    ({"ARCH": "armhf", "ARCH_TRIPLET": "arm-linux-gnueabihf"}, ("armhf", "arm-linux-gnueabihf")),
    ({"ARCH_TRIPLET": "aarch64-linux-gnu"}, ("arm64", "aarch64-linux-gnu")),
    ({"ARCH": "x86_64"}, ("amd64", "x86_64-linux-gnu")),  # a processor name is mapped
])
def test_the_environment_of_the_existing_tooling(
        tmp_path: Path, env: dict[str, str], expected: tuple[str, str]) -> None:
    assert arch(chosen(tmp_path, env=env, project=CXX)) == expected


def test_an_explicit_define_beats_the_environment(tmp_path: Path) -> None:
    values = chosen(tmp_path, "-DCLICK_ARCH=armhf", env={"ARCH": "arm64"})
    assert arch(values) == ("armhf", "arm-linux-gnueabihf")


def test_the_environment_is_read_again_but_a_define_sticks(tmp_path: Path) -> None:
    assert arch(chosen(tmp_path, env={"ARCH": "arm64"}))[0] == "arm64"
    assert arch(chosen(tmp_path))[0] == "all"  # same build folder, ARCH gone
    assert arch(chosen(tmp_path, "-DCLICK_ARCH=i386"))[0] == "i386"
    assert arch(chosen(tmp_path, env={"ARCH": "arm64"})) == ("i386", "i386-linux-gnu")


@pytest.mark.parametrize(("processor", "expected"), [
    ("aarch64", ("arm64", "aarch64-linux-gnu")),
    ("armv7l", ("armhf", "arm-linux-gnueabihf")),
    ("i686", ("i386", "i386-linux-gnu")),
    ("x86_64", ("amd64", "x86_64-linux-gnu")),
])
def test_a_cross_toolchain_decides_without_compiling_anything(
        tmp_path: Path, processor: str, expected: tuple[str, str]) -> None:
    """CMAKE_SYSTEM_PROCESSOR of a toolchain file; no compiler is needed or run."""
    tc = toolchain(tmp_path, CMAKE_SYSTEM_PROCESSOR=processor)
    values = chosen(tmp_path, tc)
    assert arch(values) == expected
    assert values["CLICK_INSTALL_BINDIR"] == f"lib/{expected[1]}/bin"


def test_the_toolchains_library_architecture_comes_first(tmp_path: Path) -> None:
    tc = toolchain(tmp_path, CMAKE_SYSTEM_PROCESSOR="armv7l",
                   CMAKE_LIBRARY_ARCHITECTURE="arm-linux-gnueabi")
    assert arch(chosen(tmp_path, tc)) == ("armel", "arm-linux-gnueabi")


def test_an_unknown_processor_names_the_fix(tmp_path: Path) -> None:
    src = qml_app(tmp_path / "app", LOAD, project="project(noneapp LANGUAGES NONE)")
    tc = toolchain(tmp_path, CMAKE_SYSTEM_PROCESSOR="sh4")
    result = configure(src, tmp_path / "build", tc, check=False)
    assert result.returncode != 0
    assert ("the toolchain's CMAKE_SYSTEM_PROCESSOR 'sh4' is not a processor this module can map "
            "to a Debian architecture. Fix: pass -DCLICK_ARCH=<architecture> "
            "-DCLICK_ARCH_TRIPLET=<triplet>") in flat(result.stderr)


def test_an_unknown_arch_in_the_environment_names_the_fix(tmp_path: Path) -> None:
    src = qml_app(tmp_path / "app", LOAD, project="project(noneapp LANGUAGES NONE)")
    result = configure(src, tmp_path / "build", env={"ARCH": "vax"}, check=False)
    assert result.returncode != 0
    error = flat(result.stderr)
    assert "the ARCH environment variable is 'vax', which is not a Debian architecture" in error
    assert "-DCLICK_ARCH_TRIPLET=" in error


@pytest.mark.parametrize(("defines", "env", "expected"), [
    ((), {}, ("ubuntu-touch-24.04-1.x", "2404.1")),  # the templates' framework (new.FRAMEWORKS)
    ((), {"SDK_FRAMEWORK": "ubuntu-sdk-16.04"}, ("ubuntu-sdk-16.04", "16.04")),
    ((), {"CLICK_FRAMEWORK": "ubuntu-touch-24.04-1.x", "SDK_FRAMEWORK": "ubuntu-sdk-16.04"},
     ("ubuntu-touch-24.04-1.x", "2404.1")),
    ((), {"CLICK_FRAMEWORK": "ubuntu-sdk-15.04"}, ("ubuntu-sdk-15.04", "1.3")),
    ((), {"APPARMOR_POLICY": "16.04"}, ("ubuntu-touch-24.04-1.x", "16.04")),
    (("-DCLICK_FRAMEWORK=ubuntu-sdk-16.04",), {"CLICK_FRAMEWORK": "ubuntu-sdk-20.04"},
     ("ubuntu-sdk-16.04", "16.04")),
    (("-DCLICK_APPARMOR_POLICY=1.3",), {"APPARMOR_POLICY": "16.04"},
     ("ubuntu-touch-24.04-1.x", "1.3")),
])
def test_framework_and_apparmor_policy(
        tmp_path: Path, defines: tuple[str, ...], env: dict[str, str],
        expected: tuple[str, str]) -> None:
    values = chosen(tmp_path, *defines, env=env)
    assert (values["CLICK_FRAMEWORK"], values["CLICK_APPARMOR_POLICY"]) == expected


def test_languages_enabled_after_loading_are_caught(tmp_path: Path) -> None:
    body = f"{LOAD}\nenable_language(CXX)\nadd_executable(hello main.cpp)\n{PACKAGE}"
    src = qml_app(tmp_path / "app", body, project="project(late VERSION 1.0 LANGUAGES NONE)",
                  files={"main.cpp": "int main() { return 0; }\n"})
    result = configure(src, tmp_path / "build", check=False)
    assert result.returncode != 0
    assert ("CLICK_ARCH became 'all' because no language was enabled when ClickBuild was "
            "loaded, but the project builds executables or libraries. Fix: call "
            "find_package(ClickBuild) after project(... CXX)") in flat(result.stderr)


# ------------------------------------------------ Clickable's environment (issue 27)

#: What Clickable exports for a QML-only app (its pure-QML builders), by its docs' names.
CLICKABLE_ALL = {"ARCH": "all", "ARCH_TRIPLET": "all", "CLICK_FRAMEWORK": "ubuntu-sdk-20.04",
                 "SDK_FRAMEWORK": "ubuntu-sdk-20.04", "CLICK_FRAMEWORK_BASE": "20.04",
                 "APPARMOR_POLICY": "20.04"}


def test_clickables_arch_all_configures_a_qml_app_that_names_c_and_cxx(tmp_path: Path) -> None:
    """project(... C CXX) enables compilers but builds nothing: ARCH=all is right, and the
    status says it came from the environment; ARCH_TRIPLET=all is no triplet."""
    body = f"""{LOAD}
install(FILES Main.qml icon.svg DESTINATION ${{CLICK_INSTALL_DATADIR}})
click_manifest(NAME qmlapp.example TITLE "QML app" DESCRIPTION "A QML app for the tests"
               MAINTAINER "Jane Doe <jane@example.com>"
               ICON icon.svg)
click_add_hook(qmlapp DESKTOP qmlapp.desktop APPARMOR qmlapp.apparmor)
click_package()
"""
    src = qml_app(tmp_path / "app", body, project="project(qmlapp VERSION 1.0 LANGUAGES C CXX)")
    result = configure(src, tmp_path / "build", env=CLICKABLE_ALL)
    status = flat(result.stdout)
    assert "ClickBuild: architecture all, from the ARCH environment variable" in status
    assert ("ClickBuild: framework ubuntu-sdk-20.04, from the CLICK_FRAMEWORK environment "
            "variable") in status
    values = cache(tmp_path / "build")
    assert arch(values) == ("all", "")
    assert values["CLICK_INSTALL_LIBDIR"] == "lib"  # not lib/all
    assert "-> qmlapp.example_1.0_all.click" in status
    click = build(tmp_path / "build", env=CLICKABLE_ALL)
    assert "Successfully built package" in click.stdout
    package = only_click(tmp_path / "build")
    assert control_field(package, "Architecture") == "all"


@pytest.mark.parametrize("env", [{"ARCH": "all"}, {"ARCH_TRIPLET": "all"}])
def test_arch_all_with_compiled_code_names_the_variable(tmp_path: Path,
                                                          env: dict[str, str]) -> None:
    src = qml_app(tmp_path / "app", f"{LOAD}\nadd_executable(hello main.cpp)\n{PACKAGE}",
                  project=CXX, files={"main.cpp": "int main() { return 0; }\n"})
    result = configure(src, tmp_path / "build", env=env, check=False)
    assert result.returncode != 0
    var = next(iter(env))
    assert (f"CLICK_ARCH is 'all' (no compiled code), from the {var} environment variable "
            "(Clickable sets ARCH=all for QML-only and Python apps), but the project builds "
            "executables or libraries. Fix: unset ARCH and ARCH_TRIPLET") in flat(result.stderr)
    assert "no language was enabled" not in result.stderr


def test_an_architecture_the_compiler_does_not_build_for_is_flagged(tmp_path: Path) -> None:
    other = "arm64" if HOST_ARCH != "arm64" else "amd64"
    src = qml_app(tmp_path / "app", f"{LOAD}\nadd_executable(hello main.cpp)\n{PACKAGE}",
                  project=CXX, files={"main.cpp": "int main() { return 0; }\n"})
    result = configure(src, tmp_path / "build", env={"ARCH": other})
    assert (f"the package is declared {other}") in flat(result.stderr)
    assert f"but the compiler builds for {HOST_TRIPLET}" in flat(result.stderr)


@pytest.mark.oracle
def test_a_real_cross_build_for_arm64_as_the_page_says(tmp_path: Path) -> None:
    """docs/cmake.md's arm64.cmake and command, pasted, with Debian's cross compiler."""
    need("aarch64-linux-gnu-g++")
    src = qml_app(tmp_path / "app", f"{LOAD}\nadd_executable(hello main.cpp)\n{PACKAGE}",
                  project=CXX, files={"main.cpp": "#include <cstdio>\nint main() { "
                                                  "std::puts(\"hi\"); }\n",
                                      "arm64.cmake": doc_file("arm64.cmake")})
    (command,), _ = doc_console("cmake -B build-arm64")
    run(["sh", "-ec", command], cwd=src, env=cmake_env({"CMAKE_PREFIX_PATH": str(CMAKE_DIR)}))
    binary = src / "build-arm64"
    assert arch(cache(binary)) == ("arm64", "aarch64-linux-gnu")
    click = only_click(binary)
    assert click.name == "cxxapp.example_1.0_arm64.click"
    verify_both(click)
    assert control_field(click, "Architecture") == "arm64"
    run(["dpkg-deb", "-x", str(click), str(tmp_path / "x")])
    assert elf_machine(tmp_path / "x" / "lib/aarch64-linux-gnu/bin/hello") == 183  # AArch64


def test_a_qt_app_needs_qt_for_the_target(tmp_path: Path) -> None:
    """What the page says of hello-cpp: arm64.cmake alone stops at find_package(Qt5)."""
    need("aarch64-linux-gnu-g++")
    project = copy_project(EXAMPLES / "hello-cpp", tmp_path / "hello-cpp")
    (project / "arm64.cmake").write_text(doc_file("arm64.cmake"))
    result = configure(project, tmp_path / "build", "-DCMAKE_TOOLCHAIN_FILE=arm64.cmake",
                       check=False)
    assert result.returncode != 0
    assert 'By not providing "FindQt5.cmake"' in flat(result.stderr)
    lines = (project / "CMakeLists.txt").read_text().splitlines()
    qt = next(i for i, line in enumerate(lines, 1) if line.startswith("find_package(Qt5"))
    assert f"CMake Error at CMakeLists.txt:{qt} (find_package)" in result.stderr


def test_the_sysroot_toolchain_of_the_page(tmp_path: Path) -> None:
    """arm64-qt.cmake with a sysroot that holds the cross C++ runtime as Debian lays it
    out (no arm64 Qt here): it builds, and Qt's tools are the build machine's."""
    need("aarch64-linux-gnu-g++")
    sysroot = write_tree(tmp_path / "sysroot", {"usr/aarch64-linux-gnu": "-> /usr/aarch64-linux-gnu"})
    tc = write_tree(tmp_path / "tc", {
        "arm64.cmake": doc_file("arm64.cmake"),
        "arm64-qt.cmake": doc_file("arm64-qt.cmake").replace("/srv/arm64", str(sysroot))})
    body = (f"{LOAD}\nget_target_property(moc Qt5::moc IMPORTED_LOCATION)\n"
            'file(WRITE "${CMAKE_BINARY_DIR}/moc.txt" "${moc}")\n'
            f"add_executable(hello main.cpp)\n{PACKAGE}")
    src = qml_app(tmp_path / "app", body, project=CXX,
                  files={"main.cpp": "int main() { return 0; }\n"})
    binary = tmp_path / "build"
    configure(src, binary, f"-DCMAKE_TOOLCHAIN_FILE={tc / 'arm64-qt.cmake'}")
    assert (binary / "moc.txt").read_text() == "/usr/lib/qt5/bin/moc"
    build(binary)
    run(["dpkg-deb", "-x", str(only_click(binary)), str(tmp_path / "x")])
    assert elf_machine(tmp_path / "x" / "lib/aarch64-linux-gnu/bin/hello") == 183


def test_an_all_of_your_own_with_compiled_code_is_refused(tmp_path: Path) -> None:
    src = qml_app(tmp_path / "app", f"{LOAD}\nadd_executable(hello main.cpp)\n{PACKAGE}",
                  project=CXX, files={"main.cpp": "int main() { return 0; }\n"})
    result = configure(src, tmp_path / "build", "-DCLICK_ARCH=all", check=False)
    assert result.returncode != 0
    assert ("CLICK_ARCH is 'all' (no compiled code), but the project builds executables or "
            "libraries. Fix: pass the architecture they are built for, "
            "-DCLICK_ARCH=<architecture>, or leave CLICK_ARCH out") in flat(result.stderr)
