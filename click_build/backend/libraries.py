"""``[tool.click-build.libraries.NAME]``: sub-projects built before the app (Clickable's
``libraries`` and ``build --libs``).

Each library is built for the app's target, in the app's build folder
(``libs/NAME/build``), and installed into its own prefix (``libs/NAME/install``), in
the order the table lists them: a later library, and then the app, find the earlier
ones through ``CMAKE_PREFIX_PATH`` and ``PKG_CONFIG_PATH``, and Clickable's
``NAME_LIB_INSTALL_DIR``, ``NAME_LIB_BUILD_DIR`` and ``NAME_LIB_SRC_DIR`` (``NAME`` in
capitals, other characters as ``_``).  The shared libraries a library installs
(``lib*.so*`` in its ``lib`` folder) are packed into ``lib/<triplet>``, where the phone's
launcher looks for them; static libraries, headers and CMake files are not.
"""

from __future__ import annotations

import os
import re
import shutil
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, replace
from pathlib import Path

from .. import _console
from ..build import Entry, package_timestamp
from ..errors import BuildError, ConfigError
from .context import Staged, Staging, clean, expand, real_dir
from .kind_settings import LibrarySettings
from .steps import SETTINGS, run_steps, run_tool, step_environment

__all__ = ["Libraries", "build_libraries", "pack_shared", "variable_name"]

_SHARED = re.compile(r"lib[^/]*\.so(\.[0-9][^/]*)?")


def variable_name(name: str) -> str:
    """Clickable's prefix of a library's variables: ``my-libC++`` -> ``MY_LIBC__``."""
    return re.sub(r"[^A-Z0-9_]", "_", name.upper())


@dataclass(frozen=True)
class Libraries:
    """What the libraries installed: their prefixes, in build order."""

    prefixes: tuple[tuple[str, Path], ...]

    def shared(self) -> Iterator[tuple[str, Path]]:
        """(file name, path) of every shared library (file or link) they installed."""
        for _name, prefix in self.prefixes:
            for folder in _lib_dirs(prefix):
                try:
                    names = sorted(os.listdir(folder))
                except OSError:
                    continue
                for file in names:
                    path = folder / file
                    if _SHARED.fullmatch(file) and (path.is_symlink() or path.is_file()):
                        yield file, path

    def pack(self, ctx: Staging, staged: Staged) -> Staged:
        """``staged`` with the libraries' shared libraries in ``lib/<triplet>`` (the app's
        own file of the same name wins)."""
        return pack_shared(ctx, staged, self.shared(), "Libraries")


def pack_shared(ctx: Staging, staged: Staged, files: Iterable[tuple[str, Path]],
                what: str) -> Staged:
    """``staged`` with the shared libraries ``files`` ((file name, path) pairs: files and
    links beside them) in ``lib/<triplet>``, where the launcher's ``LD_LIBRARY_PATH``
    finds them; the app's own file of the same name wins."""
    have = {e.arcname for e in staged.entries}
    added: list[Entry] = []
    mtime = package_timestamp()
    for file, path in files:
        arcname = f"lib/{ctx.triplet}/{file}"
        if arcname in have:
            continue
        have.add(arcname)
        if path.is_symlink():
            target = os.readlink(path)
            if "/" in target:  # only links beside their library keep their meaning
                target = os.path.realpath(path)
                if os.path.dirname(target) != str(path.parent.resolve()):
                    raise BuildError(f"{path}: a link out of its library folder; a "
                                     "library's links must name files beside them")
                target = os.path.basename(target)
            added.append(Entry(arcname, "symlink", 0o777, 0, mtime, target=target))
        else:
            st = path.stat()
            added.append(Entry(arcname, "file", 0o755 if st.st_mode & 0o111 else 0o644,
                               st.st_size, mtime, str(path)))
    if added:
        shown = ", ".join(sorted(e.arcname.rsplit("/", 1)[1] for e in added
                                 if e.kind == "file"))
        _console.info(f"* {what} packed into lib/{ctx.triplet}: {shown}")
    return replace(staged, entries=[*staged.entries, *added])


def _lib_dirs(prefix: Path) -> list[Path]:
    """Where a prefix's shared libraries are: ``lib`` (CMake's GNUInstallDirs outside
    /usr), ``lib/<triplet>``, and under ``usr/`` for qmake's ``$$[QT_INSTALL_LIBS]``."""
    out = []
    for base in (prefix, prefix / "usr"):
        out += [base / "lib", base / "lib64"]
        out += sorted(p for p in (base / "lib").glob("*-linux-gnu*") if p.is_dir())
    return out


def _search_paths(prefix: Path, triplet: str) -> tuple[list[str], list[str]]:
    """(CMake prefixes, pkg-config folders) of an install prefix."""
    prefixes = [str(prefix), str(prefix / "usr")]
    pkgconfig = [str(base / sub / "pkgconfig") for base in (prefix, prefix / "usr")
                 for sub in ("lib", f"lib/{triplet}", "share")]
    return prefixes, pkgconfig


def _joined(new: list[str], old: str | None) -> str:
    return os.pathsep.join([*new, *filter(None, [old])])


def build_libraries(ctx: Staging) -> tuple[Staging, Libraries]:
    """Build every library; return the context whose environment finds them, and them."""
    libraries = ctx.project.settings.libraries
    if not ctx.triplet:
        raise ConfigError(f"{SETTINGS}.libraries: the libraries are compiled for one "
                          f"architecture, not {ctx.arch!r}; build the app for one "
                          "(-C click-build.architecture=arm64)")
    prefixes: list[tuple[str, Path]] = []
    for name, lib in libraries.items():
        folder = real_dir(real_dir(ctx.work / "libs") / name)
        source = ctx.project.root / (lib.source_dir or f"libs/{name}")
        if not source.is_dir():
            raise ConfigError(f"{SETTINGS}.libraries.{name}.source-dir: {source} is not a "
                              "folder of the project")
        build, prefix = real_dir(folder / "build"), folder / "install"
        _console.info(f"* Library {name} ({lib.kind}, {source.relative_to(ctx.project.root)})")
        _build_one(ctx, name, lib, source, build, prefix)
        prefixes.append((name, prefix))
        ctx = replace(ctx, environment=_found(ctx, name, source, build, prefix))
    return ctx, Libraries(tuple(prefixes))


def _found(ctx: Staging, name: str, source: Path, build: Path,
           prefix: Path) -> dict[str, str]:
    """The build's environment once library ``name`` is installed at ``prefix``."""
    env = dict(ctx.environment)
    cmake, pkgconfig = _search_paths(prefix, ctx.triplet)
    env["CMAKE_PREFIX_PATH"] = _joined(cmake, env.get("CMAKE_PREFIX_PATH",
                                                      os.environ.get("CMAKE_PREFIX_PATH")))
    env["PKG_CONFIG_PATH"] = _joined(pkgconfig, env.get("PKG_CONFIG_PATH",
                                                        os.environ.get("PKG_CONFIG_PATH")))
    var = variable_name(name)
    env.update({f"{var}_LIB_INSTALL_DIR": str(prefix), f"{var}_LIB_BUILD_DIR": str(build),
                f"{var}_LIB_SRC_DIR": str(source)})
    return env


def _build_one(ctx: Staging, name: str, lib: LibrarySettings, source: Path, build: Path,
               prefix: Path) -> None:
    where = f"{SETTINGS}.libraries.{name}"
    own = {"NAME": name, "ROOT": str(ctx.project.root), "SRC_DIR": str(source),
           "BUILD_DIR": str(build), "INSTALL_DIR": str(prefix)}
    env = step_environment(ctx, build, source, own)
    env.update({k: expand(v, env) for k, v in lib.env.items()})
    args = [expand(a, env) for a in lib.args]
    if lib.prebuild:
        run_steps(f"{where}.prebuild", lib.prebuild, ctx.project.root, env)
    if lib.kind == "cmake":
        _cmake(ctx, name, source, build, prefix, env, args)
    elif lib.kind == "qmake":
        from .qmake import project_file, qmake_environment, qmake_install

        pro = source / project_file(source, "")
        qmake_install(ctx, pro, build, prefix, qmake_environment(ctx, env), args,
                      lib.make_args, f"library {name}")
    else:
        if not lib.build:
            raise ConfigError(f"{where}.build: a custom library needs the shell commands "
                              "that build it and install it into $INSTALL_DIR")
        clean(prefix)
        prefix.mkdir(parents=True)
        run_steps(f"{where}.build", lib.build, build, env)
    if lib.postbuild:
        run_steps(f"{where}.postbuild", lib.postbuild, ctx.project.root, env)


def _cmake(ctx: Staging, name: str, source: Path, build: Path, prefix: Path,
           env: dict[str, str], args: list[str]) -> None:
    """Configure, build and install a CMake library into ``prefix``, with the app's
    toolchain (its ``cmake.args`` and ``cmake.define`` name it for a cross build)."""
    cmake = shutil.which("cmake", path=env.get("PATH"))
    if cmake is None:
        raise BuildError(f"{SETTINGS}.libraries.{name}: CMake is not installed (apt install "
                         "cmake, or pip install cmake)")
    settings = ctx.project.settings.cmake
    toolchain = [_toolchain(ctx.project.root, expand(a, env)) for a in settings.args
                 if a.startswith("--toolchain") or "CMAKE_TOOLCHAIN_FILE" in a]
    if "CMAKE_TOOLCHAIN_FILE" in settings.define:
        toolchain.append(_toolchain(ctx.project.root, "-DCMAKE_TOOLCHAIN_FILE="
                                    + settings.define["CMAKE_TOOLCHAIN_FILE"]))
    label = f"library {name}"
    run_tool([cmake, "-S", str(source), "-B", str(build),
              f"-DCMAKE_BUILD_TYPE={settings.build_type}",
              f"-DCMAKE_INSTALL_PREFIX={prefix}", *toolchain, *args],
             build, env, f"CMake configure ({label})")
    jobs = env.get("NUM_PROCS") or str(os.cpu_count() or 1)
    run_tool([cmake, "--build", str(build), "--parallel", jobs], build, env,
             f"CMake build ({label})")
    clean(prefix)
    run_tool([cmake, "--install", str(build)], build, env, f"CMake install ({label})")


def _toolchain(root: Path, arg: str) -> str:
    """The app's toolchain argument for a library's CMake: a relative file is the app's
    (CMake looks for it in the app's source folder, the project's top)."""
    m = re.match(r"(--toolchain[= ]|-DCMAKE_TOOLCHAIN_FILE(?::\w+)?=)(.+)", arg)
    if m is None or os.path.isabs(m.group(2)):
        return arg
    return m.group(1).replace(" ", "=") + str(root / m.group(2))
