"""Profiles: which archives, suites and packages make the root of one framework on one
architecture.

A profile family (``ubuntu-20.04``, ``ubuntu-24.04``, ``debian-12``) serves one
framework; :func:`profile_for` makes the profile of a framework x architecture.
The Ubuntu families are faithful (Ubuntu's ports archive plus the UBports
repository, as the phone has them) and each is its framework's default;
``debian-12`` is a stand-in for 24.04-1.x on machines that cannot reach Ubuntu's
archive, and says so (:attr:`Profile.approximate`) wherever it is used.

Mirrors are settings: ``mirrors={"debian": URL}`` (the command line's ``--mirror``,
later ``[tool.click-build.sysroot]``), else ``CLICK_BUILD_MIRROR_<ARCHIVE>``, else
the archive's own host.
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping
from dataclasses import dataclass

from ..elf import ARCH_TRIPLETS
from ..errors import SysrootError

__all__ = ["ARCHES", "ARCHIVES", "FAMILIES", "Archive", "Family", "Profile", "Source",
           "base_framework", "check_packages", "mirror_url", "processor_for", "profile_for",
           "qemu_for"]

#: The phone's architectures (Ubuntu's ports archive has no others).
ARCHES = ("arm64", "armhf")
_QEMU = {"arm64": "aarch64", "armhf": "arm"}
_PROCESSOR = {"arm64": "aarch64", "armhf": "armv7l"}


@dataclass(frozen=True)
class Archive:
    name: str
    default_url: str
    key: str  # a name in keys.KEYS

    @property
    def setting(self) -> str:
        """The environment variable that names a mirror of this archive."""
        return "CLICK_BUILD_MIRROR_" + self.name.upper().replace("-", "_")


ARCHIVES = {a.name: a for a in (
    Archive("debian", "http://deb.debian.org/debian", "debian"),
    Archive("ubuntu-ports", "http://ports.ubuntu.com/ubuntu-ports", "ubuntu"),
    Archive("ubports", "http://repo.ubports.com", "ubports"),
)}


@dataclass(frozen=True)
class Source:
    archive: str
    suites: tuple[str, ...]
    components: tuple[str, ...]


@dataclass(frozen=True)
class Family:
    name: str
    framework: str
    sources: tuple[Source, ...]
    packages: tuple[str, ...]
    #: Why the roots are not the phone's own ("" when they are).
    approximate: str = ""
    default: bool = False
    #: Notes for one architecture only (Debian's armhf is not Ubuntu's).
    arch_notes: tuple[tuple[str, str], ...] = ()


_QT_BUILD = ("qtbase5-dev", "qtdeclarative5-dev", "qml-module-qtquick2",
             "qml-module-qtquick-window2", "libc6-dev")

FAMILIES = {f.name: f for f in (
    Family(
        "ubuntu-20.04", "ubuntu-sdk-20.04",
        (Source("ubuntu-ports", ("focal", "focal-updates", "focal-security"),
                ("main", "universe")),
         Source("ubports", ("focal",), ("main",))),
        (*_QT_BUILD, "libstdc++-9-dev", "qml-module-ubuntu-components"),
        default=True),
    Family(
        "ubuntu-24.04", "ubuntu-touch-24.04-1.x",
        (Source("ubuntu-ports", ("noble", "noble-updates", "noble-security"),
                ("main", "universe")),
         Source("ubports", ("24.04-1.x",), ("main",))),
        (*_QT_BUILD, "libstdc++-13-dev", "qml-module-lomiri-components"),
        default=True),
    Family(
        "debian-12", "ubuntu-touch-24.04-1.x",
        (Source("debian", ("bookworm", "bookworm-updates"), ("main",)),),
        (*_QT_BUILD, "libstdc++-12-dev", "qml-module-lomiri-components"),
        approximate="Debian 12 stands in for Ubuntu 24.04 (Qt 5.15 both; glibc 2.36, not "
                    "2.39; Lomiri from Debian, not UBports)",
        arch_notes=(("armhf", "Debian 12's armhf has a 32-bit time_t, Ubuntu 24.04's a "
                              "64-bit one"),)),
)}


@dataclass(frozen=True)
class Profile:
    """One family for one architecture: everything that decides a root's contents."""

    family: Family
    arch: str
    extra_packages: tuple[str, ...] = ()

    @property
    def name(self) -> str:
        return self.family.name

    @property
    def framework(self) -> str:
        return self.family.framework

    @property
    def sources(self) -> tuple[Source, ...]:
        return self.family.sources

    @property
    def packages(self) -> tuple[str, ...]:
        return tuple(sorted({*self.family.packages, *self.extra_packages}))

    @property
    def triplet(self) -> str:
        return ARCH_TRIPLETS[self.arch]

    @property
    def qemu(self) -> str:
        """The qemu user-mode emulator that runs this architecture's programs."""
        return qemu_for(self.arch)

    @property
    def processor(self) -> str:
        """``CMAKE_SYSTEM_PROCESSOR``."""
        return processor_for(self.arch)

    @property
    def approximate(self) -> str:
        """Why this root is not the phone's own, in one phrase; "" when it is."""
        notes = [self.family.approximate] if self.family.approximate else []
        notes += [note for arch, note in self.family.arch_notes if arch == self.arch]
        return "; ".join(notes)

    @property
    def label(self) -> str:
        """``debian-12 arm64 (approximate: ...)``: how every message names the root."""
        text = f"{self.name} {self.arch}"
        return f"{text} (approximate: {self.approximate})" if self.approximate else text


def qemu_for(arch: str) -> str:
    return f"qemu-{_QEMU[arch]}-static"


def processor_for(arch: str) -> str:
    return _PROCESSOR[arch]


_PACKAGE_NAME = re.compile(r"[a-z0-9][a-z0-9+.-]+")
_MIRROR = re.compile(r"(?:https?|file)://[^\s\[\]\"'\\]+")
_VARIANT = re.compile(r"-(?:qml|papi|html)$")


def base_framework(framework: str) -> str:
    """``ubuntu-touch-24.04-1.x-qml`` -> ``ubuntu-touch-24.04-1.x``: the variants share
    one root."""
    return _VARIANT.sub("", framework.strip())


def check_packages(names: list[str] | tuple[str, ...], what: str) -> tuple[str, ...]:
    """Debian package names, as settings may give them (untrusted): refused otherwise."""
    bad = [n for n in names if not isinstance(n, str) or not _PACKAGE_NAME.fullmatch(n)]
    if bad:
        raise SysrootError(f"{what}: {bad[0]!r} is not a Debian package name (lower-case "
                           "letters, digits, '+', '-' and '.', starting with a letter or digit)")
    return tuple(sorted(set(names)))


def profile_for(framework: str, arch: str, name: str | None = None,
                packages: tuple[str, ...] = ()) -> Profile:
    """The profile that makes ``framework``'s root for ``arch``: the family ``name``, or
    the framework's default one."""
    if arch not in ARCHES:
        raise SysrootError(f"no sysroot for architecture {arch!r}: the phone's are "
                           f"{', '.join(ARCHES)}")
    base = base_framework(framework)
    serving = [f for f in FAMILIES.values() if f.framework == base]
    if not serving:
        known = sorted({f.framework for f in FAMILIES.values()})
        raise SysrootError(f"no sysroot profile for framework {framework!r}; there are "
                           f"profiles for {', '.join(known)}")
    if name is None:
        family = next(f for f in serving if f.default)
    else:
        family = FAMILIES.get(name)  # type: ignore[assignment]
        if family is None:
            raise SysrootError(f"unknown sysroot profile {name!r}; the profiles are "
                               f"{', '.join(FAMILIES)}")
        if family.framework != base:
            fits = ", ".join(f.name for f in serving)
            raise SysrootError(f"profile {name} makes roots for {family.framework}, not "
                               f"{base}; for {base} use {fits}")
    return Profile(family, arch, check_packages(packages, "sysroot packages"))


def mirror_url(archive: Archive, mirrors: Mapping[str, str] | None = None,
               environ: Mapping[str, str] = os.environ) -> str:
    """Where ``archive`` is fetched from: ``mirrors[name]``, else its environment
    setting, else its own host.  Refused unless an http(s) or file URL."""
    url = (mirrors or {}).get(archive.name) or environ.get(archive.setting) \
        or archive.default_url
    if not _MIRROR.fullmatch(url):
        raise SysrootError(f"mirror of {archive.name} {url!r} is not an http://, https:// or "
                           f"file:// URL (set {archive.setting} or --mirror "
                           f"{archive.name}=URL)")
    return url.rstrip("/")
