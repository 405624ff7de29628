"""Which Debian architecture compiled code is for, read from ELF headers.

The build host is not the target: a package is only right when its
``Architecture`` matches the machine code inside it, so we read the code
instead of trusting ``uname``.  Standard library only; reads 64 bytes a file.
"""

from __future__ import annotations

import platform
import shutil
import subprocess
from collections.abc import Iterable
from typing import Literal

__all__ = [
    "ARCH_TRIPLETS",
    "MANYLINUX_MACHINES",
    "elf_architecture",
    "host_architecture",
    "scan_architectures",
]

_EM_386, _EM_ARM, _EM_X86_64, _EM_AARCH64 = 3, 40, 62, 183
_EM_PPC64, _EM_S390, _EM_RISCV = 21, 22, 243
_EF_ARM_ABI_FLOAT_HARD = 0x400

#: Debian architecture -> GNU multiarch triplet (the ``lib/<triplet>`` folder).
ARCH_TRIPLETS: dict[str, str] = {
    "amd64": "x86_64-linux-gnu",
    "arm64": "aarch64-linux-gnu",
    "armhf": "arm-linux-gnueabihf",
    "armel": "arm-linux-gnueabi",
    "i386": "i386-linux-gnu",
    "ppc64el": "powerpc64le-linux-gnu",
    "riscv64": "riscv64-linux-gnu",
    "s390x": "s390x-linux-gnu",
}

#: Debian architecture -> machine part of a manylinux wheel platform tag.
MANYLINUX_MACHINES: dict[str, str] = {
    "amd64": "x86_64",
    "arm64": "aarch64",
    "armhf": "armv7l",
    "i386": "i686",
    "ppc64el": "ppc64le",
    "s390x": "s390x",
    "riscv64": "riscv64",
}

_UNAME = {
    "x86_64": "amd64", "aarch64": "arm64", "arm64": "arm64", "armv7l": "armhf",
    "armv8l": "armhf", "i686": "i386", "i386": "i386", "ppc64le": "ppc64el",
    "riscv64": "riscv64", "s390x": "s390x",
}


def elf_architecture(header: bytes) -> str | None:
    """The Debian architecture of an ELF header, or None for anything else."""
    if len(header) < 52 or header[:4] != b"\x7fELF":
        return None
    is64 = header[4] == 2
    order: Literal["little", "big"] = "little" if header[5] == 1 else "big"
    machine = int.from_bytes(header[18:20], order)
    if machine == _EM_X86_64:
        return "amd64" if is64 else "x32"
    if machine == _EM_386:
        return "i386"
    if machine == _EM_AARCH64:
        return "arm64"
    if machine == _EM_ARM:
        flags = int.from_bytes(header[36:40], order)
        return "armhf" if flags & _EF_ARM_ABI_FLOAT_HARD else "armel"
    if machine == _EM_PPC64:
        return "ppc64el" if order == "little" else "ppc64"
    if machine == _EM_RISCV and is64:
        return "riscv64"
    if machine == _EM_S390 and is64:
        return "s390x"
    return f"unknown-elf-machine-{machine}"


def scan_architectures(paths: Iterable[str]) -> dict[str, list[str]]:
    """Map each architecture found to the files compiled for it (sorted input order)."""
    found: dict[str, list[str]] = {}
    for path in paths:
        try:
            with open(path, "rb") as f:
                header = f.read(64)
        except OSError:
            continue
        arch = elf_architecture(header)
        if arch is not None:
            found.setdefault(arch, []).append(path)
    return found


def host_architecture() -> str:
    """The build machine's Debian architecture (dpkg's answer when dpkg exists)."""
    dpkg = shutil.which("dpkg")
    if dpkg:
        try:
            out = subprocess.run([dpkg, "--print-architecture"], capture_output=True,
                                 text=True, check=True).stdout.strip()
            if out:
                return out
        except (OSError, subprocess.CalledProcessError):
            pass
    machine = platform.machine().lower()
    return _UNAME.get(machine, machine or "all")

