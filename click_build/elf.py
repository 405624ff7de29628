"""Which Debian architecture compiled code is for, read from ELF headers.

The build host is not the target: a package is only right when its
``Architecture`` matches the machine code inside it, so the builders and the
review read the code instead of trusting ``uname``.  This is the one ELF
table of click-build.  Standard library only; it reads 64 bytes a file.

An ARM file says its float ABI in ``e_flags`` (hard float: armhf, soft:
armel); one that records neither can run on both, so it is
``{"armhf", "armel"}``.  A machine this table does not know has no
architectures: callers report it, they never guess.
"""

from __future__ import annotations

import struct

from ._record import Record

TYPE_CHECKING = False  # not typing.TYPE_CHECKING: importing typing costs start-up time

if TYPE_CHECKING:
    from collections.abc import Iterable

__all__ = [
    "ARCH_TRIPLETS",
    "HEADER_SIZE",
    "MANYLINUX_MACHINES",
    "ElfInfo",
    "parse_elf_header",
    "scan_elf",
]

HEADER_SIZE = 64
ET_REL, ET_EXEC, ET_DYN, ET_CORE = 1, 2, 3, 4
_EF_ARM_ABI_FLOAT_SOFT = 0x200
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

#: ELF machines whose Debian architecture depends on nothing but the machine.
_SIMPLE = {3: "i386", 183: "arm64", 20: "powerpc", 22: "s390x", 243: "riscv64",
           258: "loong64", 2: "sparc", 43: "sparc64", 4: "m68k"}


class ElfInfo(Record):
    """The header facts of one ELF file."""

    kind: int  # e_type: ET_REL, ET_EXEC, ET_DYN, ET_CORE
    machine: int
    arches: frozenset[str]  # Debian architectures it can belong to; empty if unknown

    @property
    def is_code(self) -> bool:
        return self.kind in (ET_REL, ET_EXEC, ET_DYN)

    @property
    def is_core_dump(self) -> bool:
        """A crashed program's memory (``core``): a build leftover, never an app's file."""
        return self.kind == ET_CORE

    @property
    def description(self) -> str:
        if self.arches:
            return "/".join(sorted(self.arches))
        return f"ELF machine {self.machine}"


def _arches(machine: int, bits: int, little: bool, flags: int) -> frozenset[str]:
    if machine == 40:  # EM_ARM
        if flags & _EF_ARM_ABI_FLOAT_HARD:
            return frozenset({"armhf"})
        if flags & _EF_ARM_ABI_FLOAT_SOFT:
            return frozenset({"armel"})
        return frozenset({"armhf", "armel"})  # no float ABI recorded
    if machine == 62:  # EM_X86_64
        return frozenset({"amd64" if bits == 64 else "x32"})
    if machine == 8:  # EM_MIPS
        if bits == 64:
            return frozenset({"mips64el" if little else "mips64"})
        return frozenset({"mipsel" if little else "mips"})
    if machine == 21:  # EM_PPC64
        return frozenset({"ppc64el" if little else "ppc64"})
    if machine in (22, 243) and bits == 32:  # EM_S390, EM_RISCV: Debian has 64-bit only
        return frozenset()
    name = _SIMPLE.get(machine)
    return frozenset({name}) if name else frozenset()


def parse_elf_header(head: bytes) -> ElfInfo | None:
    """The ELF facts of a file from its first bytes, or None if it is not ELF."""
    if len(head) < 52 or head[:4] != b"\x7fELF":
        return None
    bits = {1: 32, 2: 64}.get(head[4])
    order = {1: "<", 2: ">"}.get(head[5])
    if bits is None or order is None:
        return None
    kind, machine = struct.unpack_from(order + "HH", head, 16)
    flags_at = 36 if bits == 32 else 48
    if len(head) < flags_at + 4:
        return None
    (flags,) = struct.unpack_from(order + "I", head, flags_at)
    return ElfInfo(kind, machine, _arches(machine, bits, order == "<", flags))


def scan_elf(paths: Iterable[str]) -> dict[str, ElfInfo]:
    """The compiled code (ELF objects, executables, libraries) among ``paths``."""
    found: dict[str, ElfInfo] = {}
    for path in paths:
        try:
            with open(path, "rb") as f:
                header = f.read(HEADER_SIZE)
        except OSError:
            continue
        info = parse_elf_header(header)
        if info is not None and info.is_code:
            found[path] = info
    return found
