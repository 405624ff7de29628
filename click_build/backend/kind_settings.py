"""Settings of the kinds that run a project's own build tools: ``qmake``, ``precompiled``
and the ``libraries`` built before the app; and of the phone's root they build against
(``sysroot``).

Kept apart from :mod:`.settings` (which holds the table and how it is read) so each file
stays one job; :mod:`.schema` reads the field docstrings of both modules.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal

__all__ = ["LibrarySettings", "PrecompiledSettings", "QMakeSettings", "SysrootSettings"]


@dataclass(frozen=True)
class QMakeSettings:
    """Settings of the ``qmake`` kind."""

    project: str = ""
    """The ``.pro`` file, relative to the project; empty: the only ``*.pro`` at the
    project's top (or the one named after the project's folder)."""

    config: list[str] = field(default_factory=list)
    """Words added to qmake's ``CONFIG``, each passed as ``CONFIG+=WORD`` (``lrelease`` makes
    qmake compile the project's ``TRANSLATIONS`` into ``.qm`` files)."""

    args: list[str] = field(default_factory=list)
    """Further qmake arguments, such as ``"DEFINES+=USE_FOO"``; Clickable's placeholders
    (``${ARCH_TRIPLET}``, ``${ROOT}``...) are replaced."""

    make_args: list[str] = field(default_factory=list)
    """Arguments for ``make`` (a target name, ``VERBOSE=1``); the number of jobs is the
    machine's processors."""


@dataclass(frozen=True)
class PrecompiledSettings:
    """Settings of the ``precompiled`` kind."""

    dir: str = ""
    """Folder of the files built elsewhere for the target, relative to the project;
    ``{arch}`` and ``{triplet}`` are replaced (``"prebuilt/{arch}"``).  Its content is
    packed at the package's top, over the project's own files.  Empty: the project's tree
    itself holds the compiled files (Clickable's ``precompiled`` builder)."""


@dataclass(frozen=True)
class LibrarySettings:
    """One sub-project built, for the same target, before the app (Clickable's
    ``libraries``)."""

    kind: Literal["cmake", "qmake", "custom"] = "cmake"
    """How it builds: ``cmake`` (configure, build, install), ``qmake`` (qmake, make,
    make install), or ``custom`` (the ``build`` commands, which install into
    ``$INSTALL_DIR``)."""

    source_dir: str = ""
    """Its folder, relative to the project; empty: ``libs/NAME`` (as Clickable)."""

    args: list[str] = field(default_factory=list)
    """Arguments of its configure step (``-DBUILD_TESTS=OFF`` for CMake,
    ``CONFIG+=staticlib`` for qmake); Clickable's placeholders are replaced."""

    make_args: list[str] = field(default_factory=list)
    """Arguments for ``make`` (``qmake`` libraries)."""

    build: list[str] = field(default_factory=list)
    """The shell commands of a ``custom`` library, run in its build folder."""

    prebuild: list[str] = field(default_factory=list)
    """Shell commands run in the project folder before it is built."""

    postbuild: list[str] = field(default_factory=list)
    """Shell commands run in the project folder after it is installed."""

    env: dict[str, str] = field(default_factory=dict)
    """Environment variables of its build steps, beside the app's ``env``."""


@dataclass(frozen=True)
class SysrootSettings:
    """The phone's root that targets with ``toolchains = "sysroot"`` build against
    (``click-build sysroot``; docs/phone.md)."""

    profile: str = ""
    """The profile that makes the root: ``ubuntu-24.04``, ``ubuntu-20.04`` or
    ``debian-12`` (an approximate stand-in for 24.04), for the target's framework
    (``-C click-build.sysroot.profile=debian-12``).  Empty: the root ``click-build sysroot
    create`` made for the target's framework and architecture, else the framework's
    default profile."""

    packages: list[str] = field(default_factory=list)
    """Debian packages the app builds against, added to the root (Clickable's
    ``dependencies_target``), such as ``["libqrencode-dev"]``: a root with them is a root
    of its own, made (downloaded) the first time."""

    bundle: list[str] = field(default_factory=list)
    """Packages of the root whose shared libraries are packed into the app's
    ``lib/<triplet>/`` (Clickable's ``install_lib``), such as ``["libqrencode4"]``;
    libraries the framework provides (the phone has them) are left out, with a
    warning."""
