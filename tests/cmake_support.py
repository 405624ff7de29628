"""Helpers for the ClickBuild CMake package tests: real cmake on projects in tmp_path."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Mapping
from pathlib import Path

from conftest import ROOT, write_tree

import click_build

__all__ = [
    "APPARMOR",
    "CMAKE_DIR",
    "DESKTOP",
    "VENV_BIN",
    "build",
    "cache",
    "click_build_copy",
    "cmake",
    "cmake_env",
    "configure",
    "doc_console",
    "doc_file",
    "doc_sh",
    "elf_machine",
    "fix_command",
    "flat",
    "qml_app",
]

CMAKE_DIR = ROOT / "cmake"
DOC = ROOT / "docs" / "cmake.md"
VENV_BIN = Path(sys.executable).parent
#: Beside what the suite clears for every test (conftest.STEERING): FindPython3, by which
#: ClickBuild finds click-build, looks in a caller's $VIRTUAL_ENV first.
CLICK_ENV = ("VIRTUAL_ENV",)

DESKTOP = ("[Desktop Entry]\nName=QML app\nExec=qmlscene %U Main.qml\nIcon=icon.svg\n"
           "Terminal=false\nType=Application\nX-Lomiri-Touch=true\n")
APPARMOR = '{\n    "policy_groups": []\n}\n'


def cmake_env(extra: Mapping[str, str] | None = None) -> dict[str, str]:
    """The test's environment without ClickBuild's inputs, with click-build on PATH."""
    env = {k: v for k, v in os.environ.items() if k not in CLICK_ENV}
    env["PATH"] = f"{VENV_BIN}{os.pathsep}{env.get('PATH', '')}"
    env.update(extra or {})
    return env


def cmake(*args: str | Path, env: Mapping[str, str] | None = None, check: bool = True,
          cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    """Run cmake; ``env`` entries are added to :func:`cmake_env`'s environment.

    It runs outside the checkout by default: there, any Python imports click_build
    from the current directory, which would hide a missing installation.
    """
    cmd = ["cmake", *map(str, args)]
    result = subprocess.run(cmd, capture_output=True, text=True, env=cmake_env(env),
                            cwd=cwd or tempfile.gettempdir())
    if check and result.returncode != 0:
        raise AssertionError(f"{cmd} failed ({result.returncode}):\n{result.stdout}\n"
                             f"{result.stderr}")
    return result


def configure(source: Path, binary: Path, *defines: str, env: Mapping[str, str] | None = None,
              check: bool = True, locate: bool = True) -> subprocess.CompletedProcess[str]:
    """``cmake -S source -B binary -G Ninja``, finding ClickBuild in this checkout."""
    args: list[str | Path] = ["-S", source, "-B", binary, "-G", "Ninja"]
    if locate:
        args.append(f"-DClickBuild_DIR={CMAKE_DIR}")
    return cmake(*args, *defines, env=env, check=check)


def build(binary: Path, target: str = "click", env: Mapping[str, str] | None = None,
          check: bool = True) -> subprocess.CompletedProcess[str]:
    return cmake("--build", binary, "--target", target, env=env, check=check)


def cache(binary: Path) -> dict[str, str]:
    """CMakeCache.txt as NAME -> value."""
    out = {}
    for line in (binary / "CMakeCache.txt").read_text().splitlines():
        if line and not line.startswith(("#", "//")) and "=" in line:
            key, value = line.split("=", 1)
            out[key.split(":", 1)[0]] = value
    return out


def qml_app(root: Path, body: str, files: Mapping[str, str] | None = None,
            project: str = "project(qmlapp VERSION 2.1 LANGUAGES NONE)") -> Path:
    """A project that compiles nothing: a QML app with its desktop and AppArmor files."""
    tree: dict[str, str | bytes] = {
        "CMakeLists.txt": f"cmake_minimum_required(VERSION 3.19)\n{project}\n{body}\n",
        "Main.qml": "import QtQuick 2.7\nRectangle { width: 100; height: 100 }\n",
        "icon.svg": "<svg xmlns='http://www.w3.org/2000/svg'/>\n",
        "qmlapp.desktop": DESKTOP,
        "qmlapp.apparmor": APPARMOR,
    }
    tree.update(files or {})
    return write_tree(root, tree)


def flat(text: str) -> str:
    """CMake wraps its messages; compare them with the line breaks folded away."""
    return " ".join(text.split())


def elf_machine(path: Path) -> int:
    """e_machine of an ELF file (62 x86-64, 183 AArch64, 40 ARM, 3 i386)."""
    header = path.read_bytes()[:20]
    assert header[:4] == b"\x7fELF", f"{path} is not an ELF file"
    return int.from_bytes(header[18:20], "little" if header[5] == 1 else "big")


def fix_command(stderr: str) -> str:
    """The command a ClickBuild error prints on a line of its own after "Fix:"."""
    lines = stderr.splitlines()
    start = next(i for i, line in enumerate(lines) if "Fix:" in line)
    return next(line.strip() for line in lines[start:] if line.startswith("    "))


def click_build_copy(root: Path, version: str | None = None) -> Path:
    """click_build with its CMake files, laid out as a wheel installs it, in ``root``:
    world-readable (for other users), optionally claiming another ``version``."""
    package = root / "click_build"
    ignore = shutil.ignore_patterns("__pycache__", "*.pyc")
    shutil.copytree(Path(click_build.__file__).parent, package, ignore=ignore)
    shutil.copytree(CMAKE_DIR, package / "cmake", ignore=ignore)
    if version is not None:
        init = package / "__init__.py"
        init.write_text(init.read_text().replace(
            f'__version__ = "{click_build.__version__}"', f'__version__ = "{version}"'))
        vfile = package / "cmake" / "ClickBuildConfigVersion.cmake"
        vfile.write_text(vfile.read_text().replace(
            f'set(PACKAGE_VERSION "{click_build.__version__}")', f'set(PACKAGE_VERSION "{version}")'))
    for path in [root, *root.rglob("*")]:
        path.chmod(0o755 if path.is_dir() else 0o644)
    return root


def doc_console(first_command: str) -> tuple[list[str], list[str]]:
    """The console block of docs/cmake.md with a ``$ first_command`` line: its commands
    from that one on, and the output lines it shows (not the "..." that stand for more)."""
    for block in re.findall(r"^```console\n(.*?)^```", DOC.read_text(), re.DOTALL | re.MULTILINE):
        lines = block.splitlines()
        starts = [i for i, line in enumerate(lines) if line.startswith(f"$ {first_command}")]
        if starts:
            lines = lines[starts[0]:]
            commands = [line[2:] for line in lines if line.startswith("$ ")]
            return commands, [line for line in lines if not line.startswith("$ ")
                              and line != "..."]
    raise AssertionError(f"docs/cmake.md has no console block starting with $ {first_command}")


def doc_file(name: str) -> str:
    """The cmake block of docs/cmake.md that opens with the comment ``# name``."""
    for block in re.findall(r"^```cmake\n(.*?)^```", DOC.read_text(), re.DOTALL | re.MULTILINE):
        if block.startswith(f"# {name}"):
            return str(block)
    raise AssertionError(f"docs/cmake.md shows no file {name}")


def doc_sh(containing: str) -> str:
    """The sh block of docs/cmake.md that contains ``containing``."""
    for block in re.findall(r"^```sh\n(.*?)^```", DOC.read_text(), re.DOTALL | re.MULTILINE):
        if containing in block:
            return str(block)
    raise AssertionError(f"docs/cmake.md has no sh block with {containing}")
