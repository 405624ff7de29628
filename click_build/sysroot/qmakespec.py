"""A root's qmake setup, for qmake projects built for the phone: a ``qt.conf`` and a
mkspec, given to this machine's qmake as ``-qtconf FILE -spec FOLDER``.

- ``qt.conf`` makes the root's Qt the target's: ``Sysroot`` is the root, so qmake's
  include and library paths (``$$[QT_INSTALL_HEADERS]``, the modules' ``.pri`` and
  ``.prl`` files) point inside it; ``HostData`` is the root's Qt data, so qmake reads
  the phone's ``qconfig.pri`` and modules; ``HostBinaries`` are the Qt tools that run
  here (this machine's when its Qt is the root's, else the root's through qemu, as
  for CMake: :func:`~.toolchain.choose`).
- The mkspec is the root's ``linux-g++`` with the cross compilers (or clang and lld
  with ``--as-needed``, where the root's glibc is not the cross gcc's) and
  ``--sysroot``.
"""

from __future__ import annotations

from pathlib import Path

from ..atomicfile import write_file
from ..elf import ARCH_TRIPLETS
from .profiles import qemu_for
from .toolchain import _wrappers, choose

__all__ = ["qmake_args", "qmake_environment"]

_QT_CONF = """\
# qt.conf for the {label} root, written by click-build: qmake -qtconf THIS -spec {spec}
[Paths]
Prefix=/usr
ArchData=lib/{triplet}/qt5
Binaries=lib/qt5/bin
Data=share/qt5
Documentation=share/qt5/doc
Headers=include/{triplet}/qt5
Libraries=lib/{triplet}
LibraryExecutables=lib/{triplet}/qt5/libexec
Plugins=lib/{triplet}/qt5/plugins
Imports=lib/{triplet}/qt5/imports
Qml2Imports=lib/{triplet}/qt5/qml
Translations=share/qt5/translations
Examples=lib/{triplet}/qt5/examples
Settings=/etc/xdg
HostPrefix=/usr
HostBinaries={host_bin}
HostData={root}/usr/lib/{triplet}/qt5
Sysroot={root}
SysrootifyPrefix=true
TargetSpec={spec}
HostSpec=linux-g++
"""

_GCC = """\
QMAKE_CC = {triplet}-gcc
QMAKE_CXX = {triplet}-g++
QMAKE_LINK = {triplet}-g++
QMAKE_LINK_SHLIB = {triplet}-g++
QMAKE_LINK_C = {triplet}-gcc
QMAKE_LINK_C_SHLIB = {triplet}-gcc
"""

_CLANG = """\
QMAKE_CC = clang --target={triplet}
QMAKE_CXX = clang++ --target={triplet}
QMAKE_LINK = clang++ --target={triplet}
QMAKE_LINK_SHLIB = clang++ --target={triplet}
QMAKE_LINK_C = clang --target={triplet}
QMAKE_LINK_C_SHLIB = clang --target={triplet}
# --as-needed: lld would otherwise record every library named on the command line
QMAKE_LFLAGS += -fuse-ld=lld -Wl,--as-needed
"""

_SPEC = """\
# qmake spec for the {label} root, written by click-build ({why}).
MAKEFILE_GENERATOR      = UNIX
CONFIG                 += incremental
QMAKE_INCREMENTAL_STYLE = sublib

include({linux})
include({gcc_base_unix})
include({compiler_conf})

{compiler}QMAKE_AR = {triplet}-ar cqs
QMAKE_OBJCOPY = {triplet}-objcopy
QMAKE_NM = {triplet}-nm -P
QMAKE_STRIP = {triplet}-strip
QMAKE_CFLAGS += --sysroot={root}
QMAKE_CXXFLAGS += --sysroot={root}
QMAKE_LFLAGS += --sysroot={root}

load(qt_config)
"""


def write_if_changed(path: Path, text: str) -> None:
    """Left alone when unchanged: make sees no new dependency."""
    write_file(path, text.encode("utf-8"), only_if_changed=True)


def _qmake_text(value: str) -> str:
    """A path in qmake's language: quoted, and nothing qmake expands."""
    return '"' + value.replace("\\", "\\\\").replace('"', '\\"').replace("$", "$$") + '"'


def qmake_args(folder: Path, root: Path, arch: str, label: str,
               compiler: str = "auto") -> list[str]:
    """Write the root's ``qt.conf`` and mkspec into ``folder`` (left alone when unchanged,
    so make sees no new dependency); qmake's arguments that use them.  ``compiler``: as
    for the toolchain file (:func:`~.toolchain.choose`)."""
    triplet = ARCH_TRIPLETS[arch]
    qemu = qemu_for(arch)
    choices = choose(root, arch, qemu, compiler)
    folder.mkdir(parents=True, exist_ok=True)
    host_bin = Path("/usr/lib/qt5/bin") if choices.host_qt else \
        _wrappers(folder, root, choices.qemu or qemu)
    spec = folder / "spec"
    spec.mkdir(exist_ok=True)
    mkspecs = root / "usr" / "lib" / triplet / "qt5" / "mkspecs"
    compiler = (_CLANG if choices.compiler == "clang" else _GCC).format(triplet=triplet)
    write_if_changed(spec / "qmake.conf", _SPEC.format(
        label=label, why=f"{choices.compiler}: {choices.why_compiler}",
        linux=_qmake_text(str(mkspecs / "common" / "linux.conf")),
        gcc_base_unix=_qmake_text(str(mkspecs / "common" / "gcc-base-unix.conf")),
        # clang.conf: qmake then asks clang for its library folders (-print-search-dirs)
        compiler_conf=_qmake_text(str(mkspecs / "common" / (
            "clang.conf" if choices.compiler == "clang" else "g++-unix.conf"))),
        compiler=compiler, triplet=triplet,
        root=_qmake_text(str(root))))
    platform = str(mkspecs / "linux-g++" / "qplatformdefs.h").replace("\\", "\\\\") \
        .replace('"', '\\"')
    write_if_changed(spec / "qplatformdefs.h", f'#include "{platform}"\n')
    conf = folder / "qt.conf"
    write_if_changed(conf, _QT_CONF.format(label=label, triplet=triplet, root=root,
                                           host_bin=host_bin, spec=spec))
    return ["-qtconf", str(conf), "-spec", str(spec)]


def qmake_environment(root: Path, arch: str) -> dict[str, str]:
    """pkg-config inside the root only (qmake's ``link_pkgconfig``)."""
    triplet = ARCH_TRIPLETS[arch]
    return {
        "PKG_CONFIG_SYSROOT_DIR": str(root),
        "PKG_CONFIG_LIBDIR": ":".join(str(root / p) for p in (
            f"usr/lib/{triplet}/pkgconfig", "usr/lib/pkgconfig", "usr/share/pkgconfig")),
        "PKG_CONFIG_PATH": "",
    }
