"""Kind ``cmake``: configure, build and install with scikit-build-core's machinery.

What existing Ubuntu Touch projects do, and how it is handled here:

- they install to absolute destinations (``DESTINATION /``, ``/lib/<triplet>``)
  or force ``CMAKE_INSTALL_PREFIX``: we stage with ``DESTDIR`` and the prefix
  ``/.``, so nothing ever lands in the build host's root;
- they read ``$ENV{ARCH}``, ``$ENV{SDK_FRAMEWORK}``, ``CLICK_MODE`` and
  ``INSTALL_TESTS``: all are set (``INSTALL_TESTS=OFF``);
- their builds write into the source tree (``po/*.pot``): CMake runs on a
  mirror of the sources inside the build folder, updated file by file, so
  the checkout is never touched and unchanged files keep their timestamps
  (the build stays incremental).
"""

from __future__ import annotations

import os
import shutil
import sys
from pathlib import Path
from typing import TYPE_CHECKING

from .. import _console
from ..build import Entry, stage_tree
from ..errors import BuildError, ConfigError
from ..placeholders import ManifestSource, read_manifest_file
from .context import Context, Staged, build_dir_patterns, excluded_paths

if TYPE_CHECKING:
    from .settings import Project

__all__ = ["missing_tools", "mirror_sources", "stage_cmake"]


def _skbuild_settings(project: Project) -> object:
    from scikit_build_core.settings.skbuild_read_settings import SettingsReader

    data = dict(project.pyproject)
    data.pop("project", None)  # an app's [project] is not a Python distribution
    reader = SettingsReader(data, {}, state="wheel", retry=False)
    return reader.settings


def missing_tools(project: Project) -> list[str]:
    """cmake/ninja requirements, as scikit-build-core computes them."""
    from scikit_build_core.builder.get_requires import GetRequires

    old = os.getcwd()
    os.chdir(project.root)  # GetRequires reads CMakeLists.txt for the minimum version
    try:
        requires = GetRequires(_skbuild_settings(project))  # type: ignore[arg-type]
        return [*requires.cmake(), *requires.ninja()]
    finally:
        os.chdir(old)


def mirror_sources(root: Path, mirror: Path, ignores: list[str],
                   exclude: list[Path] | None = None) -> int:
    """Make ``mirror`` hold the project's source files; copy only what changed.

    Returns the number of files copied.  Files the build wrote into the
    mirror (a regenerated ``.pot``) are put back to the checkout's version.
    """
    entries = stage_tree(root, ignores, exclude=exclude or [])
    wanted = {e.arcname for e in entries}
    copied = 0
    for e in entries:
        dest = mirror / e.arcname
        if e.kind == "dir":
            if dest.is_symlink() or (dest.exists() and not dest.is_dir()):
                dest.unlink()
            dest.mkdir(parents=True, exist_ok=True)
        elif e.kind == "symlink":
            if dest.is_symlink() and os.readlink(dest) == e.target:
                continue
            _remove(dest)
            dest.symlink_to(e.target)
        else:
            assert e.source is not None
            st = os.stat(e.source)
            try:
                have = os.lstat(dest)
                if (have.st_size == st.st_size and have.st_mtime_ns == st.st_mtime_ns
                        and not os.path.islink(dest)):
                    continue
            except FileNotFoundError:
                pass
            _remove(dest)
            shutil.copy2(e.source, dest)
            copied += 1
    for path in sorted(mirror.rglob("*"), reverse=True):
        rel = path.relative_to(mirror).as_posix()
        if rel not in wanted:
            _remove(path)
    return copied


def _remove(path: Path) -> None:
    if path.is_symlink() or path.is_file():
        path.unlink()
    elif path.is_dir():
        shutil.rmtree(path)


def stage_cmake(ctx: Context) -> Staged:
    """Build and install into ``<build>/stage``; stage that tree."""
    try:
        from scikit_build_core.builder.builder import Builder
        from scikit_build_core.cmake import CMake, CMaker
        from scikit_build_core.errors import CMakeNotFoundError, FailedLiveProcessError
    except ImportError:
        raise ConfigError(
            "pyproject.toml: tool.click-build.kind: 'cmake' needs scikit-build-core; "
            "install click-build[cmake]") from None
    project = ctx.project
    settings = project.settings
    skb = _skbuild_settings(project)
    source = ctx.work / "source"
    stage = ctx.work / "stage"
    build = ctx.work / "cmake"
    source.mkdir(exist_ok=True)
    mirror_ignores = [*build_dir_patterns(project), "/dist", ".venv"]
    copied = mirror_sources(project.root, source, mirror_ignores,
                            [ctx.outdir] if ctx.outdir else [])
    _console.info(f"* Sources mirrored into {source} ({copied} changed)")
    try:
        cmake = CMake.default_search(version=skb.cmake.version, env=os.environ)  # type: ignore[attr-defined]
    except CMakeNotFoundError as e:
        raise BuildError(f"CMakeLists.txt: {e}; install cmake (apt install cmake)") from None
    config = CMaker(cmake, source_dir=source, build_dir=build, build_type=settings.cmake.build_type)
    env = {
        "ARCH": ctx.arch, "CLICK_ARCH": ctx.arch,
        "ARCH_TRIPLET": ctx.triplet, "CLICK_ARCH_TRIPLET": ctx.triplet,
        "SDK_FRAMEWORK": ctx.facts.framework, "CLICK_FRAMEWORK": ctx.facts.framework,
        "APPARMOR_POLICY": ctx.facts.apparmor_policy,
    }
    config.env.update({k: v for k, v in env.items() if v})
    builder = Builder(skb, config)  # type: ignore[arg-type]
    defines: dict[str, str | bool | Path] = {
        "CLICK_MODE": True,
        "INSTALL_TESTS": False,
        "CLICK_BUILD_BACKEND": True,
        "CLICK_ARCH": ctx.arch,
        "CLICK_ARCH_TRIPLET": ctx.triplet,
        "CLICK_FRAMEWORK": ctx.facts.framework,
        "CLICK_APPARMOR_POLICY": ctx.facts.apparmor_policy,
        "CLICK_INSTALL_PREFIX": "/.",
        "CMAKE_INSTALL_LIBDIR": f"lib/{ctx.triplet}" if ctx.triplet else "lib",
    }
    if ctx.manifest and ctx.manifest.path:
        defines["CLICK_MANIFEST"] = source / Path(ctx.manifest.path).relative_to(project.root)
    if project.version:
        defines["CLICK_VERSION"] = project.version
    defines.update(settings.cmake.define)
    try:
        # STRING, not PATH: a PATH value "/." is normalised to "/", for which
        # GNUInstallDirs moves everything under usr/.
        builder.configure(defines=defines, name=project.name,
                          configure_args=["-DCMAKE_INSTALL_PREFIX:STRING=/.",
                                          *settings.cmake.args])
    except FailedLiveProcessError:
        raise BuildError(
            f"CMakeLists.txt: CMake configuration failed (see its output above; build folder "
            f"{build})") from None
    try:
        builder.build(build_args=[])
    except FailedLiveProcessError:
        raise BuildError(f"CMakeLists.txt: the build failed (see the compiler output above; "
                         f"build folder {build})") from None
    shutil.rmtree(stage, ignore_errors=True)
    stage.mkdir()
    config.env["DESTDIR"] = str(stage)
    try:
        builder.install(Path("/."))
    except FailedLiveProcessError:
        raise BuildError("CMakeLists.txt: 'cmake --install' failed (see its output above)") from None
    finally:
        del config.env["DESTDIR"]
    sys.stdout.flush()
    return _staged(ctx, stage, excluded_paths(ctx))


def _staged(ctx: Context, stage: Path, exclude: list[str]) -> Staged:
    settings = ctx.project.settings
    installed = stage / "manifest.json"
    manifest: ManifestSource | None = None
    if installed.is_file():
        manifest = read_manifest_file(installed, "manifest.json (installed by CMake)")
    entries: list[Entry] = stage_tree(stage, settings.exclude,
                                      exclude=[installed, *exclude])
    if not entries:
        raise BuildError("CMakeLists.txt: 'cmake --install' installed nothing; add install() "
                         "rules for the app's files")
    return Staged(entries, manifest)
