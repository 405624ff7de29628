"""``run --arch``: an app for the phone's processor, started on this computer under qemu.

The package is installed and its launch planned as for any ``run`` (the launcher's
variables, Exec split and expanded); then the program is handed to qemu's user-mode
emulator, ``qemu-ARCH-static -L ROOT PROGRAM ARGS``, with ROOT a sysroot of the app's
framework and architecture (:mod:`click_build.sysroot`): the phone's libraries, Qt and
Lomiri.  What that takes, learnt the hard way (docs/phone.md, /work/shared/PHONE.md):

- qemu finds the program's loader and libraries in ROOT (``-L``), but does not
  redirect ``faccessat`` (qemu 7.2), which Qt uses to find its plugins: so
  ``QT_PLUGIN_PATH``, ``QML2_IMPORT_PATH``, ``LD_LIBRARY_PATH`` and ``XDG_DATA_DIRS``
  name the root's folders, after the app's own (the launcher's order), and none of
  this computer's (an x86 plugin or library is no use to an ARM program);
- Lomiri draws with OpenGL, and the software Qt Quick backend crashes it (natively
  too): X11 (``QT_QPA_PLATFORM=xcb``, a desktop or Xvfb) with Mesa's software
  renderer (``LIBGL_ALWAYS_SOFTWARE=1``) from the root;
- qemu starts ELF programs only and cannot search ``PATH``: Exec's program is found
  here (the package's folders, then the root's) and given by its path, which never
  starts with ``-`` (qemu would read it as an option); a script's ``#!`` interpreter
  is taken from the root.
"""

from __future__ import annotations

import os
import shutil
import stat
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from ..elf import ARCH_TRIPLETS, parse_elf_header
from ..errors import RunError, SysrootError
from .launcher import RUNNER_PACKAGES, LaunchPlan

TYPE_CHECKING = False  # not typing.TYPE_CHECKING: importing typing costs start-up time
if TYPE_CHECKING:
    from ..sysroot.store import Stored

__all__ = ["Emulation", "check_arch", "check_fits", "emulate", "emulation_for", "find_root", "qemu_path",
           "root_env"]

#: The phone's system folders a bare Exec program is looked for in, under the root; Qt's
#: own folders first: Debian's /usr/bin/qmlscene is a qtchooser link, which would have
#: to start another ARM program (qemu cannot: it runs one program, no children).
_SYSTEM_BIN = ("usr/lib/qt5/bin", "usr/lib/{triplet}/qt5/bin", "usr/local/bin", "usr/bin",
               "bin")
_SHEBANG_MAX = 256


def check_arch(arch: str) -> str:
    """``--arch``'s value: an architecture the phone has (a one-line error otherwise)."""
    from ..sysroot.profiles import ARCHES

    if arch not in ARCHES:
        raise RunError(f"--arch {arch!r}: give the phone's architecture, "
                       f"{' or '.join(ARCHES)} (leave --arch out for this computer's)")
    return arch


def qemu_path(arch: str) -> str:
    """The emulator of ``arch``, or a one-line error that says how to install it."""
    from ..sysroot.profiles import qemu_for

    name = qemu_for(arch)
    found = shutil.which(name)
    if found is None:
        raise RunError(f"{name} is not installed, and running {arch} apps on this computer "
                       "needs it: install the Debian package 'qemu-user-static' "
                       "(sudo apt install qemu-user-static)")
    return found


def _create_hint(framework: str, arch: str, stored: Stored | None, package: str | None) -> str:
    words = ["click-build sysroot create", f"--framework {framework}", f"--arch {arch}"]
    if stored is not None:
        if stored.get("profile"):
            words.append(f"--profile {stored.get('profile')}")
        words += [f"--package {p}" for p in _extras(stored)]
    if package:
        words.append(f"--package {package}")
    return " ".join(words)


def _name(stored: Stored) -> str:
    """``debian-12 arm64 (approximate)``: a root in one short phrase."""
    name = f"{stored.get('profile')} {stored.get('arch')}"
    return f"{name} (approximate)" if stored.get("approximate") else name


def _extras(stored: Stored) -> list[str]:
    """The packages a root was made with beyond its profile's (``--package``)."""
    extra = stored.meta.get("extra_packages")
    return [p for p in extra if isinstance(p, str)] if isinstance(extra, list) else []


def _in_root(root: Path, path: str) -> Path | None:
    """``path`` as the phone sees it (absolute), inside ``root``, if it is an executable
    file there (its links resolved inside the root, as qemu's ``-L`` resolves them)."""
    real = os.path.realpath(os.path.join(root, path.lstrip("/")))
    top = os.path.realpath(root)
    if os.path.commonpath([real, top]) != top or not os.path.isfile(real) \
            or not os.access(real, os.X_OK):
        return None
    if os.path.basename(real) == "qtchooser":
        return None
    return Path(real)


def _system_program(root: Path, program: str, triplet: str) -> Path | None:
    for folder in _SYSTEM_BIN:
        found = _in_root(root, f"/{folder.format(triplet=triplet)}/{program}")
        if found is not None:
            return found
    return None


def _app_program(app_dir: str, program: str, triplet: str) -> str | None:
    """A program the package ships: where the launcher's ``PATH`` finds it first."""
    if "/" in program:
        path = os.path.join(app_dir, program)
        return path if os.path.isfile(path) else None
    for folder in (os.path.join(app_dir, "lib", triplet, "bin"), app_dir):
        path = os.path.join(folder, program)
        if os.path.isfile(path) and os.access(path, os.X_OK):
            return path
    return None


def find_root(framework: str, arch: str, runner: str | None, app_id: str) -> Stored:
    """The sysroot to run ``app_id`` in: one made for its framework (its variants share
    one) and ``arch``; with ``runner`` (a program the app needs from the system, such as
    ``qmlscene``), one that has it.  The phone's own roots before stand-ins."""
    from ..sysroot import cache_home, stored_roots
    from ..sysroot.profiles import base_framework

    base = base_framework(framework)
    fitting = [s for s in stored_roots(cache_home())
               if s.get("framework") == base and s.get("arch") == arch]
    fitting.sort(key=lambda s: (bool(s.get("approximate")), _extras(s) != [], s.ident))
    triplet = ARCH_TRIPLETS[arch]
    if runner not in RUNNER_PACKAGES:  # not a runner a root can add: Exec's own business
        runner = None
    having = [s for s in fitting if runner is None
              or _system_program(s.root, runner, triplet) is not None]
    if having:
        return having[0]
    package = RUNNER_PACKAGES[runner] if runner else None
    if not fitting:
        raise RunError(f"no sysroot of {base} for {arch}, which {app_id} needs to run "
                       f"under qemu: make one with: {_create_hint(base, arch, None, package)}")
    raise RunError(f"the {_name(fitting[0])} sysroot has no "
                   f"{runner}, which {app_id} starts: make one that has it: "
                   f"{_create_hint(base, arch, fitting[0], package)}")


def _interpreter(program: str, root: Path, arch: str, app_id: str) -> list[str]:
    """What qemu is given to start ``program``: itself if it is an ELF program for
    ``arch``, its ``#!`` interpreter from the root (and the line's argument) if a script."""
    try:  # the package's file: not opened blocking (a FIFO would wait forever)
        fd = os.open(program, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC)
    except OSError as e:
        raise RunError(f"{app_id}: cannot read {program}: {e.strerror}") from None
    with os.fdopen(fd, "rb") as f:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            raise RunError(f"{app_id}: {program} is not a file")
        head = f.read(_SHEBANG_MAX)
    if head.startswith(b"#!"):
        line = head[2:].split(b"\n", 1)[0].decode("utf-8", "replace").strip()
        words = line.split(None, 1)
        found = _in_root(root, words[0]) if words and words[0].startswith("/") else None
        if found is None:
            raise RunError(f"{app_id}: {program} is a script for {line or 'nothing'!r}, which "
                           f"the sysroot {root} does not have")
        return [str(found), *words[1:], program]
    info = parse_elf_header(head)
    if info is None:
        raise RunError(f"{app_id}: {program} is neither a program nor a script (#!)")
    if arch not in info.arches:
        raise RunError(f"{app_id}: {os.path.basename(program)} is a program for "
                       f"{info.description}, not {arch}: build the app for {arch} "
                       f"(click-build run --arch {arch} PROJECT builds it so)")
    return [program]


@dataclass(frozen=True)
class Emulation:
    """Where an app runs under qemu: the emulator, the root and its architecture."""

    arch: str
    qemu: str
    stored: Stored

    @property
    def root(self) -> Path:
        return self.stored.root

    @property
    def triplet(self) -> str:
        return ARCH_TRIPLETS[self.arch]


def root_env(root: Path, triplet: str) -> dict[str, str]:
    """The phone's own values of the variables the launcher adds the app's folders to,
    as folders of the root (an ARM program cannot use this computer's)."""
    lib = root / "usr" / "lib" / triplet
    return {
        "LD_LIBRARY_PATH": f"{root / 'lib' / triplet}:{lib}",
        "QML2_IMPORT_PATH": str(lib / "qt5" / "qml"),
        "XDG_DATA_DIRS": f"{root / 'usr' / 'local' / 'share'}:{root / 'usr' / 'share'}",
    }


def emulate(plan: LaunchPlan, emulation: Emulation, app_id: str) -> LaunchPlan:
    """The launch of ``plan`` under qemu: Exec's program found (the package's, else the
    root's) and given to the emulator, with what Qt needs from the root."""
    root, triplet = emulation.root, emulation.triplet
    program = plan.argv[0]
    found = _app_program(plan.cwd, program, triplet)
    if found is None:
        in_root = _in_root(root, program) if program.startswith("/") else \
            None if "/" in program else _system_program(root, program, triplet)
        if in_root is None:
            where = "the package" if "/" in program and not program.startswith("/") \
                else f"the package nor the sysroot {root}"
            raise RunError(f"{app_id}: Exec starts {program!r}, which is neither in {where}: "
                           "ship it in the package (lib/<triplet>/bin) or correct Exec")
        found = str(in_root)
    start = _interpreter(found, root, emulation.arch, app_id)
    lib = root / "usr" / "lib" / triplet
    changed = dict(plan.changed)
    changed.update({
        "QT_PLUGIN_PATH": str(lib / "qt5" / "plugins"),
        "QT_QPA_PLATFORM": changed.get("QT_QPA_PLATFORM", "xcb"),
        "LIBGL_ALWAYS_SOFTWARE": "1",
        "LIBGL_DRIVERS_PATH": str(lib / "dri"),
    })
    if os.environ.get("LD_PRELOAD"):  # this computer's libraries: the ARM loader refuses them
        changed["LD_PRELOAD"] = ""
    argv = [emulation.qemu, "-L", str(root), *start, *plan.argv[1:]]
    return LaunchPlan(argv, plan.cwd, changed)


def check_fits(manifest: Mapping[str, object], arch: str, name: str) -> None:
    """A package for another architecture is refused before it is installed."""
    declared = manifest.get("architecture", "all")
    arches = declared if isinstance(declared, list) else [declared]
    if "all" not in arches and arch not in arches:
        shown = ", ".join(str(a) for a in arches)
        raise RunError(f"{name} is built for {shown}, not {arch}: build it for {arch} "
                       f"(click-build run --arch {arch} PROJECT does), or leave --arch out")


def emulation_for(arch: str, manifest: Mapping[str, object], app_dir: str, program: str,
                  app_id: str) -> Emulation:
    """The emulator and root for ``app_id``, whose Exec starts ``program`` (one-line
    errors with the fix: a package for another architecture, no qemu, no root)."""
    framework = manifest.get("framework")
    if not isinstance(framework, str) or not framework:
        raise RunError(f"{app_id}: the manifest names no framework, so no sysroot fits it")
    qemu = qemu_path(arch)
    shipped = _app_program(app_dir, program, ARCH_TRIPLETS[arch]) is not None
    runner = None if shipped or "/" in program else program
    try:
        stored = find_root(framework, arch, runner, app_id)
    except SysrootError as e:
        raise RunError(str(e)) from None
    _hold(stored)
    return Emulation(arch, qemu, stored)


_HELD: dict[str, object] = {}


def _hold(stored: Stored) -> None:
    """Hold the root shared while this process runs apps from it, so ``sysroot update``
    and ``remove`` wait (the lock goes with the process)."""
    from ..sysroot.store import RootLock

    if stored.ident not in _HELD:
        _HELD[stored.ident] = RootLock(stored.folder.parent, stored.ident,
                                       exclusive=False).__enter__()
