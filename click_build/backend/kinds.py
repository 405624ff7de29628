"""The kinds of app project, how one is recognised, and what each needs to build.

Each kind turns a project into staged :class:`~click_build.build.Entry`
objects; a plain dict maps names to them (no plugin machinery until a
second source of kinds exists).
"""

from __future__ import annotations

import importlib.util
import shutil
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path

from .context import INSTALLING_KINDS, Staged, Staging, build_dir_patterns, excluded_paths
from .settings import Project

__all__ = ["KINDS", "OWN_TRANSLATIONS", "builds_for_host", "detect", "requires", "resolve",
           "stage"]


def _stage_files(ctx: Staging) -> Staged:
    from .files import stage_files

    s = ctx.project.settings
    ignores = [*s.exclude, *build_dir_patterns(ctx.project, ctx.kind, ctx.outdir)]
    return Staged(stage_files(ctx.source_root, ignores, s.include, excluded_paths(ctx)))


def _stage_python(ctx: Staging) -> Staged:
    from .pysetup import stage_python

    return Staged(stage_python(ctx))


def _stage_cmake(ctx: Staging) -> Staged:
    from .cmake import stage_cmake

    return stage_cmake(ctx)


def _stage_qmake(ctx: Staging) -> Staged:
    from .qmake import stage_qmake

    return stage_qmake(ctx)


def _stage_custom(ctx: Staging) -> Staged:
    from .custom import stage_custom

    return stage_custom(ctx)


def _stage_precompiled(ctx: Staging) -> Staged:
    from .precompiled import stage_precompiled

    return stage_precompiled(ctx)


KINDS: dict[str, Callable[[Staging], Staged]] = {
    "qml": _stage_files,
    "html5": _stage_files,
    "python": _stage_python,
    "cmake": _stage_cmake,
    "qmake": _stage_qmake,
    "custom": _stage_custom,
    "precompiled": _stage_precompiled,
}
#: Kinds whose project builds its own translations (CMake's ``click_translations()``, a
#: custom build's): the finishing stage compiles ``po/`` for the others.
OWN_TRANSLATIONS = ("cmake", "custom")


def detect(project: Project) -> str:
    """``auto``: CMakeLists.txt -> cmake; a ``*.pro`` file -> qmake; Python code or
    dependencies -> python; an index.html or www/ -> html5; anything else -> qml."""
    root = project.root
    source = root / project.settings.source_dir
    if (root / "CMakeLists.txt").is_file():
        return "cmake"
    if any(p.is_file() for p in root.glob("*.pro")):
        return "qmake"
    if (root / "setup.py").is_file() or project.dependencies or _has_python_package(root):
        return "python"
    if (source / "index.html").is_file() or (source / "www").is_dir():
        return "html5"
    return "qml"


def _has_python_package(root: Path) -> bool:
    for top in (root, root / "src"):
        try:
            if any((d / "__init__.py").is_file() for d in top.iterdir() if d.is_dir()):
                return True
        except OSError:
            continue
    return False


def resolve(project: Project) -> str:
    kind = project.settings.kind
    return detect(project) if kind == "auto" else kind


def builds_for_host(project: Project, kind: str) -> bool:
    """Does a build of this kind, with no architecture declared, build for this machine
    (the compiled files then decide, as for CMake)?  Kinds that compile do, and a
    ``precompiled`` project whose files are kept per architecture."""
    folder = project.settings.precompiled.dir
    return kind in INSTALLING_KINDS or (
        kind == "precompiled" and ("{arch}" in folder or "{triplet}" in folder))


def stage(ctx: Staging) -> Staged:
    """The libraries, ``prebuild``, the kind's staging, then ``postbuild``."""
    from .steps import SETTINGS, environment_setting, postbuild, run_steps, step_environment

    settings = ctx.project.settings
    ctx = replace(ctx, environment={**ctx.environment, **environment_setting(ctx)})
    libraries = None
    if settings.libraries:
        from .libraries import build_libraries

        ctx, libraries = build_libraries(ctx)
    if settings.prebuild:
        run_steps(f"{SETTINGS}.prebuild", settings.prebuild, ctx.project.root,
                  step_environment(ctx, ctx.work))
    staged = KINDS[ctx.kind](ctx)
    if libraries is not None:
        staged = libraries.pack(ctx, staged)
    if ctx.sysroot is not None:
        from .crossroot import pack_bundle

        staged = pack_bundle(ctx, staged, ctx.sysroot)
    return postbuild(ctx, staged)


def _missing(module: str) -> bool:
    return importlib.util.find_spec(module) is None


def requires(project: Project, kind: str) -> list[str]:
    """Build requirements the kind needs and the environment lacks."""
    if kind == "python":
        out = []
        if _missing("setuptools"):
            out.append("setuptools>=68")
        if project.settings.python.vendor and project.dependencies and _missing("pip"):
            out.append("pip>=22")
        return out
    if kind == "cmake":
        if _missing("scikit_build_core"):
            out = ["scikit-build-core>=0.10"]
            if shutil.which("cmake") is None:
                out.append("cmake>=3.15")
            if shutil.which("ninja") is None:
                out.append("ninja>=1.5")
            return out
        from .cmake import missing_tools

        return missing_tools(project)
    return []
