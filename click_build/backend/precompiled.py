"""Kind ``precompiled``: files built elsewhere, packed with every check a build gets.

Clickable's ``precompiled`` builder packs the project's tree as it is, compiled files
included, for whatever architecture they are (the ELF headers decide, and the review
checks the libraries they link).  With ``precompiled.dir`` (``"prebuilt/{arch}"``) the
project keeps one folder per architecture: the target's folder is packed at the
package's top, over the project's own files, and the folders of the other targets stay
out.
"""

from __future__ import annotations

import glob
import os

from ..build import Entry, stage_tree
from ..elf import ARCH_TRIPLETS
from ..errors import BuildError, ConfigError
from .context import Staged, Staging, build_dir_patterns, excluded_paths
from .files import stage_files
from .steps import SETTINGS

__all__ = ["stage_precompiled"]


def _top_patterns(template: str) -> list[str]:
    """Ignore patterns for the folder that holds the per-architecture trees."""
    top = template.strip("/").split("/", 1)[0]
    if "{" not in top:
        return ["/" + glob.escape(top)]
    return sorted({"/" + glob.escape(top.replace("{arch}", a).replace("{triplet}", t))
                   for a, t in ARCH_TRIPLETS.items()})


def stage_precompiled(ctx: Staging) -> Staged:
    project = ctx.project
    s = project.settings
    template = s.precompiled.dir
    ignores = [*s.exclude, *build_dir_patterns(project, ctx.kind, ctx.outdir)]
    if template:
        ignores += _top_patterns(template)
    entries = stage_files(ctx.source_root, ignores, s.include, excluded_paths(ctx))
    if not template:
        return Staged(entries)
    where = f"{SETTINGS}.precompiled.dir"
    if ("{arch}" in template or "{triplet}" in template) and not ctx.triplet:
        raise ConfigError(f"{where}: {template!r} is kept per architecture; name the one to "
                          "pack (-C click-build.architecture=arm64)")
    rel = template.replace("{arch}", ctx.arch).replace("{triplet}", ctx.triplet)
    folder = project.root / rel
    real, top = os.path.realpath(folder), os.path.realpath(project.root)
    if not real.startswith(top.rstrip(os.sep) + os.sep) and not s.allow_external_sources:
        raise ConfigError(f"{where}: {rel!r} is outside the project {project.root}")
    if not folder.is_dir():
        have = sorted(a for a, t in ARCH_TRIPLETS.items()
                      if (project.root / template.replace("{arch}", a)
                          .replace("{triplet}", t)).is_dir())
        hint = (f" (architectures with a folder: {', '.join(have)}; choose one with "
                "-C click-build.architecture=ARCH)") if have else ""
        raise BuildError(f"{where}: {rel} is not a folder of the project{hint}")
    return Staged(_overlay(entries, stage_tree(folder, s.exclude), rel))


def _overlay(base: list[Entry], extra: list[Entry], rel: str) -> list[Entry]:
    """``base`` with ``extra`` laid over it: a file of ``extra`` replaces the project's."""
    by_name = {e.arcname: e for e in base}
    for e in extra:
        have = by_name.get(e.arcname)
        if have is not None and (have.kind == "dir") != (e.kind == "dir"):
            raise BuildError(f"{SETTINGS}.precompiled.dir: {rel}/{e.arcname} is a "
                             f"{'folder' if e.kind == 'dir' else 'file'} where the project "
                             f"has a {'folder' if have.kind == 'dir' else 'file'}")
        if have is None or e.kind != "dir":
            by_name[e.arcname] = e
    return [by_name[name] for name in sorted(by_name)]
