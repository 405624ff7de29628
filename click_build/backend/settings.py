"""``[tool.click-build]``: typed settings from pyproject, environment and ``-C`` keys.

One TOML table, overridden by ``CLICK_BUILD_*`` environment variables, then
by PEP 517 ``config_settings`` (``-C click-build.KEY=VALUE``, dotted keys for
sub-tables, repeated keys for lists).  Field docstrings are the documentation:
:mod:`.schema` turns them into the JSON Schema and the reference page.
Every bad value stops the build with one line that names where it came from.
"""

from __future__ import annotations

import dataclasses
import difflib
import os
import re
import sys
import types
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal, Union, get_args, get_origin, get_type_hints

from ..errors import ConfigError
from .kind_settings import LibrarySettings, PrecompiledSettings, QMakeSettings, SysrootSettings

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - Python 3.10
    import tomli as tomllib  # type: ignore[import-not-found, no-redef, unused-ignore]

__all__ = [
    "OTHER_VARIABLES",
    "CMakeSettings",
    "Kind",
    "LibrarySettings",
    "PrecompiledSettings",
    "PrebuiltPython",
    "Project",
    "PythonSettings",
    "QMakeSettings",
    "Settings",
    "SysrootSettings",
    "load_project",
    "toml_name",
]

Kind = Literal["auto", "qml", "html5", "python", "cmake", "qmake", "custom", "precompiled"]
ConfigSettings = Mapping[str, "str | list[str]"]


@dataclass(frozen=True)
class PythonSettings:
    """Settings of the ``python`` kind."""

    packages_dir: str = "lib/python3/dist-packages"
    """Folder inside the package that receives the app's Python packages and the
    vendored dependencies; add it to the import path in QML (pyotherside's
    ``addImportPath``)."""

    vendor: bool = True
    """Install ``[project].dependencies`` into ``packages-dir`` with pip, resolved
    for the target architecture and the framework's Python, not the build host's."""

    version: str = ""
    """Python version of the target device, such as ``"3.8"``; empty means the
    framework's (``ubuntu-sdk-16.04``: 3.5, ``ubuntu-sdk-20.04``: 3.8, 24.04: 3.12)."""


@dataclass(frozen=True)
class CMakeSettings:
    """Settings of the ``cmake`` kind (scikit-build-core's ``[tool.scikit-build]``
    table is honoured too, for its generator, verbosity and CMake version)."""

    build_type: str = "Release"
    """``CMAKE_BUILD_TYPE`` of the build."""

    define: dict[str, str] = field(default_factory=dict)
    """Extra CMake cache variables, as ``-D NAME=VALUE``
    (``-C click-build.cmake.define.NAME=VALUE``)."""

    args: list[str] = field(default_factory=list)
    """Extra arguments for the CMake configure step."""


@dataclass(frozen=True)
class Settings:
    """The ``[tool.click-build]`` table of pyproject.toml."""

    kind: Kind = "auto"
    """What the project is: ``qml`` or ``html5`` (the tree is the package),
    ``python`` (setuptools plus vendored dependencies), ``cmake`` (compiled and
    installed by CMake), ``qmake`` (qmake, make, make install), ``custom`` (the ``build``
    commands install it), ``precompiled`` (files built elsewhere, per architecture), or
    ``auto``: ``cmake`` with a CMakeLists.txt, ``qmake`` with a ``*.pro`` file, ``python``
    with Python packages or ``[project].dependencies``, ``html5`` with an index.html or
    www/, else ``qml``."""

    manifest: str | dict[str, object] = ""
    """The app's manifest: a path (``manifest.json``, or ``manifest.json.in``
    whose ``@VAR@`` and ``$ENV{VAR}`` are substituted), or the manifest itself
    as a ``[tool.click-build.manifest]`` table.  Empty: ``manifest.json``, then
    ``manifest.json.in``; for ``cmake`` also the one CMake installs.  Its
    ``version`` may be left out: ``[project].version`` is the single source."""

    architecture: str | list[str] = "auto"
    """``all``, a Debian architecture (``arm64``), a list of them for a fat
    package, or ``auto``: what the manifest says, else Clickable's ``$ARCH`` (or
    ``$ARCH_TRIPLET``), else read from the compiled files' ELF headers (``all`` when
    there are none; the build host's for ``cmake``)."""

    framework: str = ""
    """Framework to build for when the manifest leaves it to a placeholder
    (``@CLICK_FRAMEWORK@``); empty: Clickable's ``$CLICK_FRAMEWORK``, ``$SDK_FRAMEWORK``,
    else the templates' framework, except that a ``cmake`` project that chooses its own
    (from ``$SDK_FRAMEWORK``, else its default) keeps its choice."""

    frameworks: list[str] = field(default_factory=list)
    """Build one package per framework in one command, such as ``["ubuntu-sdk-20.04",
    "ubuntu-touch-24.04-1.x"]`` (``-C click-build.frameworks=A,B``): each gets its
    framework in the manifest, its AppArmor ``policy_version``, the wheels of its Python
    and its own version (``1.2.0~2004``, ``1.2.0~2404``).  Empty: one package, for
    ``framework`` or the manifest's."""

    architectures: list[str] = field(default_factory=list)
    """With ``frameworks``: the architectures of a ``cmake`` or ``python`` app, one
    package each (``-C click-build.architectures=arm64,armhf``); ``qml`` and ``html5``
    apps are always one ``all`` package.  Empty: ``$ARCH`` (Clickable's), else the build
    host's for ``cmake`` and ``all`` for ``python``."""

    toolchains: dict[str, str] = field(default_factory=dict)
    """CMake toolchain file of each ``cmake`` target, keyed ``"FRAMEWORK/ARCH"`` (or
    ``"FRAMEWORK"``, ``"ARCH"``); ``"host"`` says this machine is that target's SDK;
    ``"sysroot"`` builds it against the phone's root (``sysroot``; ``qmake`` targets
    too, and ``custom`` ones, whose commands get the root's toolchain file in
    ``$CMAKE_TOOLCHAIN_FILE``), made the first time it is needed.  A target without one (nor a toolchain in ``cmake.args``) is built with this machine's
    compiler and libraries, which the build says, if it is this machine's architecture;
    for another, the build stops before compiling and names it."""

    source_dir: str = "."
    """Folder of the project that holds the app's files (``qml``, ``html5`` and
    the data files of ``python``); a folder outside the project is refused
    unless ``allow-external-sources`` is set."""

    allow_external_sources: bool = False
    """Let ``source-dir`` and ``manifest`` name something outside the project
    folder.  Off by default: settings may come from untrusted text (CI fills
    them from branch names), and a package would carry whatever they point at."""

    include: list[str] = field(default_factory=list)
    """Patterns of files to keep although an ignore rule drops them
    (``.gitignore``-less: a name like ``"*.so"``, or a path like ``"/dist"``), or
    although the source package leaves them out as likely secrets (``".env"``).  A
    path naming a link, or leading through one, gets what the link leads to inside the
    project, under the path's name (``"/vendor/libfoo.so"`` packs ``libfoo.so.1``);
    a link leading out of the project is refused."""

    exclude: list[str] = field(default_factory=list)
    """Extra patterns of files to leave out, like ``click build -I``: a name
    matches at any depth, a pattern with ``/`` matches the path from the top."""

    review: Literal["errors", "strict", "report", "off"] = "errors"
    """What the review of the built package decides: ``errors`` fail the build
    (as the stores reject such packages), ``strict`` fails on warnings too (the
    OpenStore rejects uploads with any), ``report`` only prints the findings,
    ``off`` skips the review."""

    build_dir: str = ""
    """Build folder, relative to the project; ``{arch}`` is replaced.  Empty:
    ``build/click-{arch}`` for ``cmake`` (kept, so the next build is incremental),
    a temporary folder for the other kinds.  click-build creates it and marks it
    (a ``.click-build-folder`` file inside); it refuses the project folder, its
    parents, and a folder holding files it did not create."""

    prebuild: list[str] = field(default_factory=list)
    """Shell commands run in the project folder before the app is built or staged, one
    after the other; a failing one stops the build.  They are the project's own code,
    run as CMake runs ``CMakeLists.txt``."""

    build: list[str] = field(default_factory=list)
    """The build of a ``custom`` project: shell commands run in its build folder, which
    install the app's files into ``$INSTALL_DIR`` (the staging folder)."""

    postbuild: list[str] = field(default_factory=list)
    """Shell commands run in the project folder once the app is staged, before it is
    checked and packed: what they change in ``$CLICK_BUILD_STAGE`` is what is packed."""

    env: dict[str, str] = field(default_factory=dict)
    """Environment variables of every build step (``prebuild``, CMake, qmake and make,
    ``build``, ``postbuild``, the libraries), beside Clickable's (``ARCH``,
    ``ARCH_TRIPLET``, ``INSTALL_DIR``...); Clickable's placeholders in the values
    (``${ROOT}``) are replaced."""

    libraries: dict[str, LibrarySettings] = field(default_factory=dict)
    """Sub-projects built before the app, in their order, each in a
    ``[tool.click-build.libraries.NAME]`` table: installed into their own prefix, which
    the app's build finds (``CMAKE_PREFIX_PATH``, ``PKG_CONFIG_PATH``,
    ``NAME_LIB_INSTALL_DIR``), their shared libraries packed into ``lib/<triplet>``."""

    python: PythonSettings = field(default_factory=PythonSettings)
    """Settings of the ``python`` kind."""

    cmake: CMakeSettings = field(default_factory=CMakeSettings)
    """Settings of the ``cmake`` kind."""

    qmake: QMakeSettings = field(default_factory=QMakeSettings)
    """Settings of the ``qmake`` kind."""

    precompiled: PrecompiledSettings = field(default_factory=PrecompiledSettings)
    """Settings of the ``precompiled`` kind."""

    sysroot: SysrootSettings = field(default_factory=SysrootSettings)
    """The phone's root of the targets built with ``toolchains = "sysroot"``."""


@dataclass(frozen=True)
class PrebuiltPython:
    """The app's Python packages, already built by the caller (``bdist_click``)."""

    build_lib: Path
    sources: tuple[str, ...] = ()  # patterns of the source folders it was built from


@dataclass(frozen=True)
class Project:
    """A project directory with its parsed pyproject.toml and merged settings."""

    root: Path
    pyproject: dict[str, object]
    settings: Settings
    metadata: dict[str, object]  # the [project] table (may be empty)
    prebuilt: PrebuiltPython | None = None  # the python kind then skips its build_py

    @property
    def name(self) -> str | None:
        name = self.metadata.get("name")
        return name if isinstance(name, str) else None

    @property
    def version(self) -> str | None:
        version = self.metadata.get("version")
        return version if isinstance(version, str) else None

    @property
    def dependencies(self) -> list[str]:
        deps = self.metadata.get("dependencies", [])
        return list(deps) if isinstance(deps, list) else []


def toml_name(name: str) -> str:
    return name.replace("_", "-")


def _fields(cls: type) -> dict[str, tuple[str, object]]:
    """TOML name -> (attribute, type) of a settings dataclass."""
    hints = get_type_hints(cls)
    return {toml_name(f.name): (f.name, hints[f.name]) for f in dataclasses.fields(cls)}


def _is_union(tp: object) -> bool:
    return get_origin(tp) in (Union, types.UnionType)


def _describe(tp: object) -> str:
    if tp is str:
        return "a string"
    if tp is bool:
        return "true or false"
    if get_origin(tp) is Literal:
        return "one of " + ", ".join(repr(a) for a in get_args(tp))
    if get_origin(tp) is list:
        return "a list of strings"
    if get_origin(tp) is dict:
        return "a table"
    if _is_union(tp):
        return " or ".join(_describe(a) for a in get_args(tp))
    return str(tp)


_TRUE = {"1", "true", "yes", "on"}
_FALSE = {"0", "false", "no", "off", ""}


def _from_string(value: str | list[str], tp: object, where: str) -> object:
    """A value from the environment or ``-C``: strings, ';'-separated lists."""
    if isinstance(value, list):
        if get_origin(tp) is list or (_is_union(tp) and list[str] in get_args(tp)):
            return [str(v) for v in value]
        value = value[-1]  # a repeated scalar key: the last one wins
    if tp is bool:
        if value.lower() in _TRUE | _FALSE:
            return value.lower() in _TRUE
        raise ConfigError(f"{where}: {value!r} is not true or false")
    if get_origin(tp) is list:
        return [v for v in value.split(";") if v]
    if _is_union(tp) and list[str] in get_args(tp) and any(c in value for c in ",;"):
        return [v.strip() for v in value.replace(";", ",").split(",") if v.strip()]
    return _check(value, tp, where)


def _check(value: object, tp: object, where: str) -> object:
    """Validate a TOML value against a settings type; return it (copied)."""
    if dataclasses.is_dataclass(tp):
        raise ConfigError(f"{where}: must be a table")
    if get_origin(tp) is Literal:
        if value not in get_args(tp):
            close = difflib.get_close_matches(str(value), [str(a) for a in get_args(tp)], 1)
            hint = f" (did you mean {close[0]!r}?)" if close else ""
            raise ConfigError(f"{where}: {value!r} is not {_describe(tp)}{hint}")
        return value
    if _is_union(tp):
        for option in get_args(tp):
            try:
                return _check(value, option, where)
            except ConfigError:
                continue
        raise ConfigError(f"{where}: must be {_describe(tp)}, not {_toml_type(value)}")
    if tp is str or tp is bool:
        if not isinstance(value, tp):
            raise ConfigError(f"{where}: must be {_describe(tp)}, not {_toml_type(value)}")
        return value
    if get_origin(tp) is list:
        if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
            raise ConfigError(f"{where}: must be {_describe(tp)}")
        return list(value)
    if get_origin(tp) is dict:
        if not isinstance(value, dict):
            raise ConfigError(f"{where}: must be a table, not {_toml_type(value)}")
        key_type, value_type = get_args(tp)
        if dataclasses.is_dataclass(value_type):  # [tool.click-build.libraries.NAME]
            return {str(k): _from_toml(v, value_type, f"{where}.{k}")  # type: ignore[arg-type]
                    for k, v in value.items()}
        if value_type is str:
            out = {}
            for k, v in value.items():
                if isinstance(v, bool):
                    v = "ON" if v else "OFF"
                if not isinstance(v, (str, int, float)):
                    raise ConfigError(f"{where}.{k}: must be a string, number or boolean")
                out[str(k)] = str(v)
            return out
        return dict(value)
    raise AssertionError(f"unhandled settings type {tp}")  # pragma: no cover


def _toml_type(value: object) -> str:
    return {
        str: "a string", bool: "a boolean", int: "a number", float: "a number",
        list: "a list", dict: "a table",
    }.get(type(value), type(value).__name__)


def _unknown(key: str, known: list[str], where: str) -> ConfigError:
    close = difflib.get_close_matches(key, known, 1)
    hint = f" (did you mean {close[0]!r}?)" if close else f"; known: {', '.join(known)}"
    return ConfigError(f"{where}: unknown setting{hint}")


def _from_toml(table: object, cls: type, where: str) -> dict[str, object]:
    if not isinstance(table, dict):
        raise ConfigError(f"{where}: must be a table")
    fields = _fields(cls)
    out: dict[str, object] = {}
    for key, value in table.items():
        if key not in fields:
            raise _unknown(key, list(fields), f"{where}.{key}")
        attr, tp = fields[key]
        if dataclasses.is_dataclass(tp):
            out[attr] = _from_toml(value, tp, f"{where}.{key}")  # type: ignore[arg-type]
        else:
            out[attr] = _check(value, tp, f"{where}.{key}")
    return out


def _leaves(cls: type, prefix: tuple[str, ...] = ()) -> dict[tuple[str, ...], object]:
    out: dict[tuple[str, ...], object] = {}
    for key, (_attr, tp) in _fields(cls).items():
        if dataclasses.is_dataclass(tp):
            out.update(_leaves(tp, (*prefix, key)))  # type: ignore[arg-type]
        else:
            out[prefix + (key,)] = tp
    return out


def _set(tree: dict[str, object], path: tuple[str, ...], value: object) -> None:
    node = tree
    for part in path[:-1]:
        attr = part.replace("-", "_")
        node = node.setdefault(attr, {})  # type: ignore[assignment]
    node[path[-1].replace("-", "_")] = value


def _defines(tree: dict[str, object]) -> dict[str, object]:
    """The ``cmake.define`` table of a settings tree, created on first use."""
    cmake = tree.setdefault("cmake", {})
    assert isinstance(cmake, dict)
    defines = cmake.setdefault("define", {})
    assert isinstance(defines, dict)
    return defines


#: ``CLICK_BUILD_*`` variables that other parts of click-build read (the deflate engine,
#: the phone of ``device`` and ``run``, the cache of vendored Python dependencies) or set
#: (the staging folder, for the build's steps): not backend settings, and not typos of one.
OTHER_VARIABLES: frozenset[str] = frozenset({
    "CLICK_BUILD_DEFLATE", "CLICK_BUILD_DEVICE", "CLICK_BUILD_PYTHON_CACHE", "CLICK_BUILD_STAGE",
    # click-build sysroot: where roots are kept, archive keys and mirrors (sysroot/keys.py,
    # sysroot/profiles.py: Archive.setting)
    "CLICK_BUILD_SYSROOT_CACHE", "CLICK_BUILD_KEYRING_DEBIAN", "CLICK_BUILD_KEYRING_UBUNTU",
    "CLICK_BUILD_KEYRING_UBPORTS", "CLICK_BUILD_MIRROR_DEBIAN", "CLICK_BUILD_MIRROR_UBUNTU_PORTS",
    "CLICK_BUILD_MIRROR_UBPORTS"})


def _overlay_env(tree: dict[str, object], environ: Mapping[str, str]) -> None:
    leaves = _leaves(Settings)
    names = {"CLICK_BUILD_" + "_".join(p).replace("-", "_").upper(): p for p in leaves}
    for var, value in sorted(environ.items()):
        if not var.startswith("CLICK_BUILD_") or var in OTHER_VARIABLES:
            continue
        if var in names:
            path = names[var]
            _set(tree, path, _from_string(value, leaves[path], f"environment: {var}"))
        elif var.startswith("CLICK_BUILD_CMAKE_DEFINE_"):
            _defines(tree)[var.removeprefix("CLICK_BUILD_CMAKE_DEFINE_")] = value
        else:
            from .. import _console

            close = difflib.get_close_matches(var, list(names), 1)
            hint = f" (did you mean {close[0]}?)" if close else ""
            _console.warn(f"environment: {var}: not a click-build setting; ignored{hint}")


def _overlay_config(tree: dict[str, object], config: ConfigSettings) -> None:
    leaves = _leaves(Settings)
    known = [".".join(p) for p in leaves]
    for key, value in sorted(config.items()):
        if not key.startswith("click-build."):
            if key.replace("_", "-") in known or key.split(".")[0] in {p[0] for p in leaves}:
                raise ConfigError(
                    f"-C {key}: click-build settings need the prefix: -C click-build.{key}=..."
                )
            continue  # another tool's setting
        dotted = key.removeprefix("click-build.").replace("_", "-")
        where = f"-C {key}"
        path = tuple(dotted.split("."))
        if path in leaves:
            _set(tree, path, _from_string(value, leaves[path], where))
        elif path[:2] == ("cmake", "define") and len(path) > 2:
            _defines(tree)[key.split(".", 3)[3]] = value if isinstance(value, str) else value[-1]
        elif path[0] == "toolchains" and len(path) > 1:  # framework names hold dots
            table = tree.setdefault("toolchains", {})
            assert isinstance(table, dict)
            table[key.split(".", 2)[2]] = value if isinstance(value, str) else value[-1]
        elif path[0] == "env" and len(path) == 2:
            table = tree.setdefault("env", {})
            assert isinstance(table, dict)
            table[key.split(".", 2)[2]] = value if isinstance(value, str) else value[-1]
        elif path[0] == "libraries" and len(path) == 3:
            lib_fields = _fields(LibrarySettings)
            if path[2] not in lib_fields:
                raise _unknown(path[2], list(lib_fields), where)
            attr, tp = lib_fields[path[2]]
            libraries = tree.setdefault("libraries", {})
            assert isinstance(libraries, dict)
            libraries.setdefault(path[1], {})[attr] = _from_string(value, tp, where)
        else:
            raise _unknown(dotted, known, where)


def _build(cls: type, tree: Mapping[str, object]) -> object:
    kwargs: dict[str, object] = {}
    hints = get_type_hints(cls)
    for f in dataclasses.fields(cls):
        if f.name not in tree:
            continue
        value = tree[f.name]
        tp = hints[f.name]
        if dataclasses.is_dataclass(tp):
            value = _build(tp, value)  # type: ignore[arg-type]
        elif get_origin(tp) is dict and dataclasses.is_dataclass(get_args(tp)[1]):
            assert isinstance(value, dict)
            value = {k: _build(get_args(tp)[1], v) for k, v in value.items()}
        kwargs[f.name] = value
    return cls(**kwargs)


def read_pyproject(root: Path, required: bool = True) -> dict[str, object]:
    path = root / "pyproject.toml"
    if not required and not path.exists():
        return {}
    try:
        with path.open("rb") as f:
            data: dict[str, object] = tomllib.load(f)
            return data
    except FileNotFoundError:
        raise ConfigError(f"{path}: not found; an app project needs a pyproject.toml") from None
    except tomllib.TOMLDecodeError as e:
        raise ConfigError(f"{path}: invalid TOML: {e}") from None
    except OSError as e:
        raise ConfigError(f"{path}: cannot be read: {e.strerror}") from None


def _check_metadata(metadata: object) -> dict[str, object]:
    if metadata is None:
        return {}
    if not isinstance(metadata, dict):
        raise ConfigError("pyproject.toml: project: must be a table")
    for key in ("name", "version", "description"):
        if key in metadata and not isinstance(metadata[key], str):
            raise ConfigError(f"pyproject.toml: project.{key}: must be a string")
    deps = metadata.get("dependencies", [])
    if not isinstance(deps, list) or not all(isinstance(d, str) for d in deps):
        raise ConfigError("pyproject.toml: project.dependencies: must be a list of strings")
    return metadata


def load_project(
    root: str | os.PathLike[str] = ".",
    config_settings: ConfigSettings | None = None,
    environ: Mapping[str, str] | None = None,
    overrides: Mapping[str, object] | None = None,
    require_pyproject: bool = True,
) -> Project:
    """Read pyproject.toml and merge: TOML < ``CLICK_BUILD_*`` < ``-C`` < ``overrides``."""
    root = Path(root).resolve()
    data = read_pyproject(root, require_pyproject)
    tool = data.get("tool", {})
    table = tool.get("click-build", {}) if isinstance(tool, dict) else {}
    tree = _from_toml(table, Settings, "pyproject.toml: tool.click-build")
    _overlay_env(tree, os.environ if environ is None else environ)
    _overlay_config(tree, config_settings or {})
    for key, value in (overrides or {}).items():
        _set(tree, tuple(key.split(".")), value)
    settings = _build(Settings, tree)
    assert isinstance(settings, Settings)
    _check_steps(settings)
    _check_sysroot(settings.sysroot)
    _check_paths(root, settings)
    return Project(root, data, settings, _check_metadata(data.get("project")))


def _inside(root: Path, path: Path) -> bool:
    real, top = os.path.realpath(path), os.path.realpath(root)
    return real == top or real.startswith(top.rstrip(os.sep) + os.sep)


def _check_paths(root: Path, settings: Settings) -> None:
    """Settings that name files must stay inside the project (unless allowed)."""
    where = "pyproject.toml: tool.click-build"
    fix = ("; the app's files belong in the project folder (set allow-external-sources "
           "= true if you really mean a folder outside it)")
    if not settings.allow_external_sources:
        if not _inside(root, root / settings.source_dir):
            raise ConfigError(f"{where}.source-dir: {settings.source_dir!r} is outside the "
                              f"project {root}{fix}")
        if isinstance(settings.manifest, str) and settings.manifest and \
                not _inside(root, root / settings.manifest):
            raise ConfigError(f"{where}.manifest: {settings.manifest!r} is outside the "
                              f"project {root}{fix}")
    named = [(f"libraries.{name}.source-dir", lib.source_dir or f"libs/{name}")
             for name, lib in settings.libraries.items()]
    named += [("qmake.project", settings.qmake.project)] if settings.qmake.project else []
    if settings.precompiled.dir:  # one architecture's folder stands for them all
        named.append(("precompiled.dir", settings.precompiled.dir.replace("{arch}", "arm64")
                      .replace("{triplet}", "aarch64-linux-gnu")))
    for key, folder in named:
        if not settings.allow_external_sources and not _inside(root, root / folder):
            shown = settings.precompiled.dir if key == "precompiled.dir" else folder
            raise ConfigError(f"{where}.{key}: {shown!r} is outside the project {root}{fix}")
    source = root / settings.source_dir
    for pattern in settings.include:
        if "/" in pattern and not _inside(source, source / pattern.strip("/")):
            raise ConfigError(f"{where}.include: {pattern!r} leaves the source folder; "
                              "includes name files inside it, such as '/dist'")


_ENV_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*\Z")
_LIBRARY_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.+-]*\Z")


def _check_steps(settings: Settings) -> None:
    """Names that become environment variables and folder names, and the text of steps
    that a shell runs, are checked before anything runs: an ``env`` key such as ``A=B``
    or a NUL in a command would otherwise fail deep in the operating system."""
    where = "pyproject.toml: tool.click-build"
    tables: list[tuple[str, dict[str, str], dict[str, list[str]]]] = [
        ("", settings.env, {"prebuild": settings.prebuild, "build": settings.build,
                            "postbuild": settings.postbuild})]
    for name, lib in settings.libraries.items():
        if not _LIBRARY_NAME.match(name):
            raise ConfigError(f"{where}.libraries.{name!r}: a library's name is letters, "
                              "digits and '_.+-', starting with a letter or digit (it names "
                              "its build folder and its NAME_LIB_INSTALL_DIR variable)")
        tables.append((f"libraries.{name}.", lib.env,
                       {"prebuild": lib.prebuild, "build": lib.build,
                        "postbuild": lib.postbuild, "args": lib.args,
                        "make-args": lib.make_args}))
    for prefix, env, steps in tables:
        for key, value in env.items():
            if not _ENV_NAME.match(key):
                raise ConfigError(f"{where}.{prefix}env.{key!r}: not an environment variable "
                                  "name (letters, digits and '_', not starting with a digit)")
            if "\0" in value:
                raise ConfigError(f"{where}.{prefix}env.{key}: holds a NUL character")
        for key, commands in steps.items():
            for i, command in enumerate(commands, 1):
                if "\0" in command:
                    raise ConfigError(f"{where}.{prefix}{key}: item {i} holds a NUL character")


def _check_sysroot(sysroot: SysrootSettings) -> None:
    """Package names go to apt and the resolver as data: anything but a Debian package
    name (an option such as ``-oDir=/``, a space, a path) is refused here."""
    from ..errors import SysrootError
    from ..sysroot.profiles import FAMILIES, check_packages

    where = "pyproject.toml: tool.click-build.sysroot"
    if sysroot.profile and sysroot.profile not in FAMILIES:
        close = difflib.get_close_matches(sysroot.profile, list(FAMILIES), 1)
        hint = f" (did you mean {close[0]!r}?)" if close else f"; the profiles are " \
            f"{', '.join(FAMILIES)}"
        raise ConfigError(f"{where}.profile: {sysroot.profile!r} is not a profile{hint}")
    for key, names in (("packages", sysroot.packages), ("bundle", sysroot.bundle)):
        try:
            check_packages(names, f"{where}.{key}")
        except SysrootError as e:
            raise ConfigError(str(e)) from None
