"""This machine's Debian architecture: what a build compiles for when nothing says
otherwise, and which packages the installer takes.

A leaf of its own, with no import beyond ``os`` and ``sys``: the installer asks on
every install, and the ELF tables (:mod:`click_build.elf`) would cost it their loading.
"""

from __future__ import annotations

import os
import sys

__all__ = ["host_architecture"]

#: ``uname -m`` -> the Debian architecture of a 64-bit and of a 32-bit userland on it.
_MACHINE_ARCH = {
    "x86_64": ("amd64", "i386"), "amd64": ("amd64", "i386"),
    "aarch64": ("arm64", "armhf"), "arm64": ("arm64", "armhf"),
    "ppc64le": ("ppc64el", "powerpc"), "s390x": ("s390x", "s390"),
    "riscv64": ("riscv64", "riscv32"), "i386": ("i386", "i386"),
    "i486": ("i386", "i386"), "i586": ("i386", "i386"), "i686": ("i386", "i386"),
}

_known: list[str] = []  # asked once per process: dpkg may have to be asked


def host_architecture() -> str:
    """This machine's Debian architecture, from the running interpreter (no process).

    A 32-bit userland on a 64-bit kernel (armhf on aarch64, as on many phones) is told
    apart by the interpreter's pointer size.  A machine the table does not know is
    dpkg's to name (``dpkg --print-architecture``); without dpkg it is refused.
    """
    if not _known:
        _known.append(_ask())
    return _known[0]


def _ask() -> str:
    machine = os.uname().machine
    if machine.startswith("armv") or machine == "arm":
        return "armhf"
    pair = _MACHINE_ARCH.get(machine)
    if pair is not None:
        return pair[0] if sys.maxsize > 2**32 else pair[1]
    import subprocess

    try:
        answer = subprocess.run(["dpkg", "--print-architecture"], capture_output=True,
                                text=True, check=True).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        answer = ""
    if not answer:
        from .errors import ClickError

        raise ClickError(f"cannot tell the Debian architecture of machine {machine!r}: it "
                         "is not one click-build knows and dpkg --print-architecture did "
                         "not say")
    return answer
