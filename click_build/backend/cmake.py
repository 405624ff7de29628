"""Kind ``cmake``: configure, build and install with scikit-build-core's machinery.

What existing Ubuntu Touch projects do, and how it is handled here:

- they install to absolute destinations (``DESTINATION /``, ``/lib/<triplet>``)
  or force ``CMAKE_INSTALL_PREFIX``: we stage with ``DESTDIR`` and the prefix
  ``/.``, so nothing ever lands in the build host's root;
- they read Clickable's environment (``$ENV{ARCH}``, ``$ENV{SDK_FRAMEWORK}``...),
  ``CLICK_MODE`` and ``INSTALL_TESTS``: all are set (``INSTALL_TESTS=OFF``), Clickable's
  variables with this build's values (:func:`clickable_environment`), except a
  framework nobody chose: a project may choose its own;
- their builds write into the source tree (``po/*.pot``): CMake runs on a
  mirror of the sources inside the build folder, updated file by file
  (:mod:`~click_build.backend.mirror`), so the checkout is never touched and
  unchanged files keep their timestamps (the build stays incremental).
"""

from __future__ import annotations

import os
import re
import sys
import tempfile
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING

from .. import _console
from ..build import Entry, package_timestamp, stage_tree
from ..errors import BuildError, ConfigError
from ..placeholders import ManifestSource, read_manifest_file
from .context import (
    Staged,
    Staging,
    build_dir_patterns,
    clean,
    excluded_paths,
    expand,
    real_dir,
)
from .mirror import mirror_sources

if TYPE_CHECKING:
    from collections.abc import Iterator

    from .settings import Project

__all__ = ["clickable_environment", "missing_tools", "stage_cmake", "used_defines"]


def _skbuild_settings(project: Project) -> object:
    """scikit-build-core's settings for the app, with the choices an app cannot make.

    An app project is not a Python package: its author did not pick a
    scikit-build-core release, nor a CMake version for it (old projects say
    ``cmake_minimum_required(VERSION 3.10)``).  Unless ``[tool.scikit-build]``
    says otherwise, click-build pins ``minimum-version`` to the release it runs
    with and asks for CMake >= 3.15, so scikit-build-core has nothing to warn
    the app's author about.
    """
    import copy

    from scikit_build_core import __version__ as skbuild_version
    from scikit_build_core.settings.skbuild_read_settings import SettingsReader

    data = copy.deepcopy(project.pyproject)
    data.pop("project", None)  # an app's [project] is not a Python distribution
    tool = data.setdefault("tool", {})
    table = tool.setdefault("scikit-build", {}) if isinstance(tool, dict) else {}
    if isinstance(table, dict):
        release = ".".join(skbuild_version.split(".")[:2])
        table.setdefault("minimum-version", release)
        cmake = table.setdefault("cmake", {})
        if isinstance(cmake, dict) and "version" not in cmake and \
                "minimum-version" not in cmake:
            cmake["version"] = ">=3.15"
    reader = SettingsReader(data, {}, state="wheel", retry=False)
    return reader.settings


def _cmake_words(folder: Path, skip: tuple[Path, ...] = ()) -> set[str]:
    """Every identifier written in the CMake files under ``folder`` (not under ``skip``:
    the libraries' own projects, which are not the app's)."""
    words: set[str] = set()
    for pattern in ("CMakeLists.txt", "*.cmake"):
        for path in folder.rglob(pattern):
            if any(path.is_relative_to(s) for s in skip):
                continue
            try:
                words.update(_WORD.findall(path.read_text(encoding="utf-8", errors="replace")))
            except OSError:
                continue
    return words


_WORD = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


def _module_dir() -> Path | None:
    """The ClickBuild CMake package shipped with this click-build."""
    from importlib.util import find_spec

    spec = find_spec("click_build.cmake")
    for location in (spec.submodule_search_locations or []) if spec else []:
        if Path(location, "ClickBuild.cmake").is_file():
            return Path(location)
    return None


def project_words(source: Path, skip: tuple[Path, ...] = ()) -> set[str]:
    """The names the project's CMake files (and the ClickBuild package, if it loads it) use."""
    words = _cmake_words(source, skip)
    module = _module_dir() if "ClickBuild" in words else None
    if module is not None:
        words |= _cmake_words(module)
    return words


def used_defines(defines: dict[str, str | bool | Path],
                 words: set[str]) -> dict[str, str | bool | Path]:
    """The defines whose names the project's CMake files (``words``) use.

    CMake warns about every ``-D`` that nothing reads ("Manually-specified
    variables were not used"), which tells the app's author to change an app
    that is fine; so only variables the project names are passed.
    """
    return {name: value for name, value in defines.items() if name in words}


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


def stage_cmake(ctx: Staging) -> Staged:
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
    source = real_dir(ctx.work / "source")
    stage = ctx.work / "stage"
    build = real_dir(ctx.work / "cmake")
    mirror_ignores = [*build_dir_patterns(project, "cmake", ctx.outdir), "/dist", ".venv"]
    copied = mirror_sources(project.root, source, mirror_ignores,
                            [ctx.outdir] if ctx.outdir else [])
    _console.info(f"* Sources mirrored into {source} ({copied} changed)")
    try:
        cmake = CMake.default_search(version=skb.cmake.version, env=os.environ)  # type: ignore[attr-defined]
    except CMakeNotFoundError as e:
        raise BuildError(f"CMakeLists.txt: {e}; install cmake (apt install cmake)") from None
    config = CMaker(cmake, source_dir=source, build_dir=build, build_type=settings.cmake.build_type)
    words = project_words(source, tuple(source / (lib.source_dir or f"libs/{name}")
                                        for name, lib in settings.libraries.items()))
    # Undeclared, the architecture is the host's guess; a project that uses the ClickBuild
    # package lets it decide, as its CMake route does ('all' when nothing is compiled), and
    # reads one the environment declared itself (naming the variable).
    tell_arch = not ((ctx.arch_guessed or ctx.arch_env) and "ClickBuild" in words)
    config.env.update(clickable_environment(ctx, source, build, stage, tell_arch,
                                            _tell_framework(ctx, source)))
    config.env.update(ctx.environment)  # the env setting, the libraries' prefixes
    # Builds that embed file times (Qt's rcc, __DATE__) get the package's one time, so
    # the sdist route (files dated by the sdist) and --wheel (the checkout's) agree.
    stamp = str(package_timestamp())
    config.env.setdefault("SOURCE_DATE_EPOCH", stamp)
    config.env.setdefault("QT_RCC_SOURCE_DATE_OVERRIDE", config.env["SOURCE_DATE_EPOCH"])
    builder = Builder(skb, config)  # type: ignore[arg-type]
    defines: dict[str, str | bool | Path] = {
        "CLICK_MODE": True,
        "INSTALL_TESTS": False,
        "CLICK_BUILD_BACKEND": True,
        "CLICK_INSTALL_PREFIX": "/.",
    }
    if ctx.framework_chosen_by in ("settings", "manifest"):  # the environment's: read there
        defines.update(CLICK_FRAMEWORK=ctx.facts.framework,
                       CLICK_APPARMOR_POLICY=ctx.facts.apparmor_policy)
    if tell_arch:
        defines.update(CLICK_ARCH=ctx.arch, CLICK_ARCH_TRIPLET=ctx.triplet)
        if "ClickBuild" not in words:
            # A project that loads ClickBuild gets its layout from it, whether or not the
            # architecture was declared, as on its CMake route (`cmake -B build`).
            defines["CMAKE_INSTALL_LIBDIR"] = f"lib/{ctx.triplet}" if ctx.triplet else "lib"
    if ctx.manifest and ctx.manifest.path:
        defines["CLICK_MANIFEST"] = source / Path(ctx.manifest.path).relative_to(project.root)
    if project.version:
        defines["CLICK_VERSION"] = project.version
    defines = used_defines(defines, words)
    module = _module_dir() if "ClickBuild" in words else None
    if module is not None:  # scikit-build-core's ClickBuild_ROOT needs policy CMP0074 (3.12)
        defines["ClickBuild_DIR"] = module
    defines.update(settings.cmake.define)  # the user's own: always passed
    with _tool_output():
        try:
            # STRING, not PATH: a PATH value "/." is normalised to "/", for which
            # GNUInstallDirs moves everything under usr/.
            builder.configure(defines=defines, name=project.name,
                              configure_args=["-DCMAKE_INSTALL_PREFIX:STRING=/.",
                                              *(expand(a, config.env)  # ${ARCH_TRIPLET}
                                                for a in settings.cmake.args)])
        except FailedLiveProcessError:
            raise BuildError(
                f"CMakeLists.txt: CMake configuration failed (see its output above; build "
                f"folder {build})") from None
        try:
            builder.build(build_args=[])
        except FailedLiveProcessError:
            raise BuildError(f"CMakeLists.txt: the build failed (see the compiler output "
                             f"above; build folder {build})") from None
        clean(stage)
        stage.mkdir()
        config.env["DESTDIR"] = str(stage)
        try:
            builder.install(Path("/."))
        except FailedLiveProcessError:
            raise BuildError(
                "CMakeLists.txt: 'cmake --install' failed (see its output above)") from None
        finally:
            del config.env["DESTDIR"]
    sys.stdout.flush()
    return _staged(ctx, stage, excluded_paths(ctx))


#: Clickable's variables about the framework, read in CMake files or ``*.in`` templates, and
#: an ``if()`` that tests one: a project that reads them untested has no default of its own.
_FRAMEWORK_READ = re.compile(r"\$ENV\{(CLICK_FRAMEWORK|SDK_FRAMEWORK|APPARMOR_POLICY)\}")
_FRAMEWORK_TESTED = re.compile(
    r"\bif\s*\([^)]*\bENV\{(?:CLICK_FRAMEWORK|SDK_FRAMEWORK|APPARMOR_POLICY)\}", re.I)


def _tell_framework(ctx: Staging, source: Path) -> bool:
    """Is CMake told the framework (Clickable's variables)?  Yes when the settings, the
    manifest or the environment chose it.  When nobody did, the project's CMakeLists.txt
    chooses (from ``$SDK_FRAMEWORK``, else its own default) and click-build's default is
    not imposed; a project that reads ``$ENV{CLICK_FRAMEWORK}`` without testing it has no
    default, and gets click-build's, as Clickable's environment would give it one."""
    if ctx.framework_chosen_by:
        return True
    read: set[str] = set()
    for pattern in ("CMakeLists.txt", "*.cmake", "*.in"):
        for path in sorted(source.rglob(pattern)):
            try:
                text = path.read_text(encoding="utf-8", errors="replace")
            except OSError:
                continue
            if _FRAMEWORK_TESTED.search(text):
                _console.info(f"* {path.relative_to(source)} chooses the framework (it tests "
                              "Clickable's variables); [tool.click-build] framework chooses "
                              "another")
                return False
            read.update(_FRAMEWORK_READ.findall(text))
    if read:
        names = ", ".join(f"$ENV{{{v}}}" for v in sorted(read))
        _console.info(f"* the project reads {names} with no default of its own: it gets "
                      f"{ctx.facts.framework}, click-build's default ([tool.click-build] "
                      "framework chooses another)")
        return True
    return False


def clickable_environment(ctx: Staging, source: Path, build: Path, stage: Path,
                          arch: bool = True, framework: bool = True) -> dict[str, str]:
    """The variables Clickable sets for a build, with this build's values: where it builds
    and installs, and (``arch``, ``framework``) what it builds for.

    ``ARCH_TRIPLET`` is ``all`` for an ``all`` build and the ``CLICK_*`` folders are then
    those of an architecture-independent app, as Clickable has them.  They replace any the
    caller's environment holds: a Clickable ``INSTALL_DIR`` must not receive this build.
    """
    install = str(stage)
    triplet = ctx.triplet
    lib = f"{install}/lib/{triplet}" if triplet else f"{install}/lib"
    out = {
        "ROOT": str(source), "SRC_DIR": str(source), "BUILD_DIR": str(build),
        "INSTALL_DIR": install, "NUM_PROCS": str(os.cpu_count() or 1),
        "CLICK_LD_LIBRARY_PATH": lib,
        "CLICK_QML2_IMPORT_PATH": lib if triplet else f"{install}/qml",
        "CLICK_PATH": f"{lib}/bin" if triplet else install,
    }
    if arch:
        out.update(ARCH=ctx.arch, CLICK_ARCH=ctx.arch, CLICK_ARCH_TRIPLET=triplet,
                   ARCH_TRIPLET=triplet or ("all" if ctx.arch == "all" else ""))
    if framework:
        facts = ctx.facts
        out.update(CLICK_FRAMEWORK=facts.framework, SDK_FRAMEWORK=facts.framework,
                   CLICK_FRAMEWORK_BASE=facts.base, APPARMOR_POLICY=facts.apparmor_policy)
    return {k: v for k, v in out.items() if v}


@contextmanager
def _tool_output() -> Iterator[None]:
    """Under ``-q``, hold back what CMake and the build tool write to stdout.

    Their progress (``-- Configuring``, every compile line, every ``-- Installing:``)
    is kept in a file and written to stderr only when a step fails, before the error;
    their stderr (CMake's warnings and errors) passes through.  The redirect is made on
    file descriptor 1, where scikit-build-core's subprocesses write.  Without ``-q``,
    the output is live.
    """
    sys.stdout.flush()
    if not _console.is_quiet():
        yield
        return
    with tempfile.TemporaryFile() as log, _console.StdoutFd(log.fileno()):
        try:
            yield
        except Exception:
            sys.stdout.flush()
            log.seek(0)
            sys.stderr.write(log.read().decode("utf-8", "replace"))
            sys.stderr.flush()
            raise


def _staged(ctx: Staging, stage: Path, exclude: list[str]) -> Staged:
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
    return Staged(entries, manifest, folder=stage)
