"""Just enough ELF to tell which Debian architectures a binary can run on."""

from __future__ import annotations

import struct

from .._record import Record

__all__ = ["ElfInfo", "HEADER_SIZE", "parse_elf_header"]

HEADER_SIZE = 64
ET_REL, ET_EXEC, ET_DYN, ET_CORE = 1, 2, 3, 4
_EF_ARM_ABI_FLOAT_SOFT = 0x200
_EF_ARM_ABI_FLOAT_HARD = 0x400


class ElfInfo(Record):
    """The header facts of one ELF file."""

    kind: int  # e_type: ET_REL, ET_EXEC, ET_DYN, ET_CORE
    machine: int
    arches: frozenset[str]  # Debian architectures it can belong to; empty if unknown

    @property
    def is_code(self) -> bool:
        return self.kind in (ET_REL, ET_EXEC, ET_DYN)

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
    simple = {3: "i386", 183: "arm64", 20: "powerpc", 22: "s390x", 243: "riscv64",
              258: "loong64", 2: "sparc", 43: "sparc64", 4: "m68k"}
    name = simple.get(machine)
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
