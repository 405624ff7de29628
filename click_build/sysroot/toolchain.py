"""The CMake toolchain file of a root, and the facts it is decided from.

- The compiler: the cross gcc (``g++-aarch64-linux-gnu``) links its own glibc, not
  the root's, so it is used only when the two are the same release; otherwise clang
  and lld, which use the root's alone (with ``--as-needed``).
- Qt's tools (``moc``, ``rcc``...): the build machine's when its Qt is the root's
  release; else the root's own, through small wrappers that run them under qemu.
- The emulator: ``qemu-ARCH-static -L ROOT`` with ``QT_PLUGIN_PATH`` and
  ``QML2_IMPORT_PATH`` into the root (qemu's ``-L`` does not redirect the
  ``faccessat`` Qt finds its plugins with), so ``ctest`` runs tests under it.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path

from ..atomicfile import write_file
from ..elf import ARCH_TRIPLETS
from ..hostarch import host_architecture
from ..resources import data_dir

__all__ = ["Choices", "choose", "glibc_of", "qt_version_of", "write_toolchain"]

_GLIBC = re.compile(rb"GNU C Library [^\n]*?release version (\d+\.\d+)")
_QT_VERSION = re.compile(r'set\(PACKAGE_VERSION "?(\d+\.\d+\.\d+)"?\)')
_QT_TOOLS = ("qmake", "moc", "rcc", "uic", "qmlcachegen", "qmlimportscanner")


def glibc_of(libc: Path) -> str | None:
    """The glibc release a ``libc.so.6`` is (``2.36``), from its version banner."""
    try:
        with open(libc, "rb") as f:
            found = _GLIBC.search(f.read(16 << 20))  # libc.so.6: about 2 MB
    except OSError:
        return None
    return found.group(1).decode() if found else None


def _root_libc(root: Path, triplet: str) -> Path | None:
    for folder in ("lib", "usr/lib"):
        path = root / folder / triplet / "libc.so.6"
        if path.exists():
            return path
    return None


def _cross_libc(triplet: str) -> Path | None:
    gcc = shutil.which(f"{triplet}-gcc")
    if gcc is None:
        return None
    result = subprocess.run([gcc, "-print-file-name=libc.so.6"], capture_output=True, text=True)
    path = Path(result.stdout.strip())
    return path if result.returncode == 0 and path.is_absolute() and path.exists() else None


def qt_version_of(prefix: Path, triplet: str) -> str | None:
    """Qt 5's release in a system tree (``/`` or a root), from its CMake files."""
    path = prefix / "usr" / "lib" / triplet / "cmake" / "Qt5Core" / "Qt5CoreConfigVersion.cmake"
    try:
        found = _QT_VERSION.search(path.read_text(encoding="utf-8", errors="replace"))
    except OSError:
        return None
    return found.group(1) if found else None


@dataclass(frozen=True)
class Choices:
    compiler: str  # gcc or clang
    why_compiler: str
    host_qt: bool  # the build machine's Qt tools, else the root's through qemu
    why_qt: str
    qemu: str | None  # the emulator's path, None when not installed


def choose(root: Path, arch: str, qemu: str, compiler: str = "auto",
           qt_tools: str = "auto") -> Choices:
    """``compiler``: auto, gcc or clang; ``qt_tools``: auto, host or root."""
    triplet = ARCH_TRIPLETS[arch]
    root_glibc = glibc_of(_root_libc(root, triplet) or Path("/nonexistent"))
    cross = _cross_libc(triplet)
    cross_glibc = glibc_of(cross) if cross else None
    if compiler == "auto":
        if cross_glibc and cross_glibc == root_glibc:
            compiler, why = "gcc", f"the cross gcc's glibc is the root's ({root_glibc})"
        elif cross_glibc is None and shutil.which(f"{triplet}-g++") and not shutil.which("clang"):
            compiler, why = "gcc", "no clang"
        else:
            compiler = "clang"
            why = (f"the root's glibc ({root_glibc}) is not the cross gcc's ({cross_glibc})"
                   if cross_glibc else f"no {triplet}-gcc")
    else:
        why = "asked for"
    host = host_architecture()
    host_qt = qt_version_of(Path("/"), ARCH_TRIPLETS.get(host, ""))
    root_qt = qt_version_of(root, triplet)
    same = bool(host_qt) and host_qt == root_qt and os.path.exists("/usr/lib/qt5/bin/moc")
    why_qt = (f"this machine's Qt is the root's ({root_qt})" if same else
              f"this machine's Qt ({host_qt or 'none'}) is not the root's ({root_qt}): "
              "the root's tools run under qemu")
    if qt_tools != "auto":
        same, why_qt = qt_tools == "host", f"{qt_tools}'s, as asked"
    return Choices(compiler, why, same, why_qt, shutil.which(qemu))


def _cmake_text(value: str) -> str:
    return '"' + value.replace("\\", "\\\\").replace('"', '\\"').replace("$", "\\$") + '"'


def _wrappers(folder: Path, root: Path, qemu: str) -> Path:
    """``moc``, ``rcc``... that run the root's own under qemu."""
    bin_dir = folder / "qt-bin"
    bin_dir.mkdir(exist_ok=True)
    for tool in _QT_TOOLS:
        target = root / "usr" / "lib" / "qt5" / "bin" / tool
        if not target.exists():
            continue
        script = bin_dir / tool
        text = f'#!/bin/sh\nexec "{qemu}" -L "{root}" "{target}" "$@"\n'
        write_file(script, text.encode(), 0o755, only_if_changed=True)
    return bin_dir


def emulator(root: Path, arch: str, qemu: str) -> list[str]:
    triplet = ARCH_TRIPLETS[arch]
    qt = root / "usr" / "lib" / triplet / "qt5"
    return [qemu, "-L", str(root), "-E", f"QT_PLUGIN_PATH={qt / 'plugins'}",
            "-E", f"QML2_IMPORT_PATH={qt / 'qml'}"]


def write_toolchain(folder: Path, root: Path, arch: str, processor: str, qemu: str,
                    label: str, compiler: str = "auto", name: str = "toolchain.cmake",
                    qt_tools: str = "auto") -> tuple[Path, Choices]:
    """Write ``folder/name`` for ``root``; the file and what was chosen."""
    choices = choose(root, arch, qemu, compiler, qt_tools)
    qemu_path = choices.qemu or qemu
    qt_bin = Path("/usr/lib/qt5/bin") if choices.host_qt else _wrappers(folder, root, qemu_path)
    cmake_dir = data_dir("cmake") or ""
    body = Path(cmake_dir, "ClickBuildSysroot.cmake").read_text(encoding="utf-8") \
        if cmake_dir else ""
    emulate = ";".join(emulator(root, arch, qemu_path)) if choices.qemu else ""
    values = {
        "CLICK_SYSROOT": str(root), "CLICK_SYSROOT_PROCESSOR": processor,
        "CLICK_SYSROOT_TRIPLET": ARCH_TRIPLETS[arch], "CLICK_SYSROOT_COMPILER": choices.compiler,
        "CLICK_SYSROOT_QT_BIN": str(qt_bin), "CLICK_SYSROOT_EMULATOR": emulate,
        "CLICK_SYSROOT_CMAKE_DIR": cmake_dir, "CLICK_SYSROOT_LABEL": label,
    }
    head = [f"# CMake toolchain file for the {label} root, written by click-build sysroot.",
            f"# Compiler: {choices.compiler} ({choices.why_compiler}).",
            f"# Qt tools: {choices.why_qt}.",
            "# Use: cmake -B build -DCMAKE_TOOLCHAIN_FILE=<this file>", ""]
    head += [f"set({k} {_cmake_text(v)})" for k, v in values.items()]
    path = folder / name
    text = "\n".join(head) + "\n\n" + body
    # unchanged: left alone, so a build reading it never sees it change
    write_file(path, text.encode("utf-8"), only_if_changed=True)
    return path, choices
