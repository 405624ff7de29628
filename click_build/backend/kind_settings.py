"""Settings of the kinds that run a project's own build tools: ``qmake``, ``precompiled``
and the ``libraries`` built before the app.

Kept apart from :mod:`.settings` (which holds the table and how it is read) so each file
stays one job; :mod:`.schema` reads the field docstrings of both modules.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal

__all__ = ["LibrarySettings", "PrecompiledSettings", "QMakeSettings"]


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
