"""Targets built against the phone's root: ``toolchains."FW/ARCH" = "sysroot"``.

The plan chooses each such target's root once (:func:`plan_root`, which only reads
the cache); the pipeline then holds it while the target is staged (:func:`use_root`:
made when missing, never updated or removed under the build) and hands the kinds its
CMake toolchain file (``cmake``, the libraries) or its qmake spec (``qmake``,
:mod:`.qmakespec`).  After staging, the shared libraries of the packages the settings
``bundle`` are packed into ``lib/<triplet>`` (:func:`pack_bundle`).

:func:`click_build.backend.phone.build_for_phone` is the one call for other commands
(``run --arch``, ``device run``).
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING

from .. import _console

if TYPE_CHECKING:
    from ..sysroot import Stored
    from ..sysroot.choose import RootChoice
    from .context import Staged, Staging
    from .settings import Project

__all__ = ["SYSROOT", "pack_bundle", "plan_root", "root_toolchain", "use_root"]

#: What ``toolchains`` says for a target built against its root.
SYSROOT = "sysroot"


def plan_root(project: Project, framework: str, arch: str, label: str) -> RootChoice:
    """The root target ``label`` builds against, said on one line (approximate roots say
    so); a refusal (no profile for that framework or architecture) is one error line."""
    from ..errors import ConfigError, SysrootError
    from ..sysroot.choose import choose_root

    s = project.settings.sysroot
    try:
        choice = choose_root(framework, arch, s.profile or None, tuple(s.packages))
    except SysrootError as e:
        raise ConfigError(f"pyproject.toml: tool.click-build.toolchains: {label} = "
                          f"\"sysroot\": {e}") from None
    _console.info(f"* {label}: built against {choice.describe}")
    return choice


@contextmanager
def use_root(choice: RootChoice) -> Iterator[Stored]:
    """The chosen root, made when missing, held shared until the block ends."""
    from ..sysroot import hold

    with hold(choice.profile, stored=choice.stored) as stored:
        yield stored


def root_toolchain(stored: Stored) -> Path:
    """The root's toolchain file (written again when the machine's compilers or Qt
    changed; left alone, and so not rebuilt for, otherwise).  Finding what changed reads
    the root's libc and asks the cross compiler: once per target."""
    from ..sysroot import toolchain_for

    return toolchain_for(stored)


def pack_bundle(ctx: Staging, staged: Staged, stored: Stored) -> Staged:
    """``staged`` with the shared libraries of the ``bundle`` packages in
    ``lib/<triplet>``, except those the framework provides."""
    from ..abi_facts import facts_for
    from ..errors import ConfigError, SysrootError
    from ..sysroot.bundle import bundled_libraries
    from .libraries import pack_shared

    names = ctx.project.settings.sysroot.bundle
    if not names:
        return staged
    facts = facts_for(ctx.facts.framework, ctx.arch)
    try:
        paths = bundled_libraries(stored, names, facts.sonames if facts else frozenset())
    except SysrootError as e:
        raise ConfigError(f"pyproject.toml: tool.click-build.sysroot.{e}") from None
    return pack_shared(ctx, staged, ((p.name, p) for p in paths), "Bundled libraries")
