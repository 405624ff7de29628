"""What one build shares between the pipeline and the kinds: a leaf module.

:class:`Staging` and :class:`Staged` travel from the pipeline to a kind and
back; the build folder helpers decide where a build writes.  Nothing here
imports the pipeline or the kinds, so they can all import it.
"""

from __future__ import annotations

import contextlib
import os
import re
import stat
import tempfile
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from ..build import Entry
from ..build_folders import DEFAULT_BUILD_DIR, clean, own_folder_patterns
from ..errors import ConfigError
from ..framework_table import FrameworkFacts
from ..placeholders import ManifestSource
from .settings import Project

if TYPE_CHECKING:
    from ..sysroot import Stored

__all__ = ["INSTALLING_KINDS", "MARK", "TOOL_BUILD_KINDS", "Staging", "Staged",
           "build_dir_patterns", "clean", "excluded_paths", "expand", "own_build_dir", "real_dir",
           "work_dir"]


@dataclass(frozen=True)
class Staging:
    """Everything a kind needs to stage one build."""

    project: Project
    kind: str
    work: Path  # folder for generated files; the build folder of cmake
    arch: str  # the architecture built for ("all" when nothing is compiled)
    triplet: str
    facts: FrameworkFacts
    manifest: ManifestSource | None
    outdir: Path | None = None  # left out of the package when it lies inside the tree
    arch_guessed: bool = False  # ``arch`` is the host's, as nothing declared one
    architectures: tuple[str, ...] = ()  # a fat package's list (``arch`` is then "all")
    arch_env: str = ""  # the environment variable that declared ``arch`` (Clickable's ARCH)
    #: Who chose ``facts``: "settings", "environment" (Clickable's variables), or "" when
    #: nobody did and ``facts`` are click-build's default: a CMake project then chooses.
    framework_chosen_by: str = "settings"
    #: Variables every build tool of the project runs with, beside Clickable's: the ``env``
    #: setting and the libraries' folders (``CMAKE_PREFIX_PATH``, ``NAME_LIB_INSTALL_DIR``).
    environment: dict[str, str] = field(default_factory=dict)
    #: The phone's root this target builds against (``toolchains = "sysroot"``), held
    #: for the build; None: this machine's compilers and libraries, or a toolchain file.
    sysroot: Stored | None = None
    #: Its CMake toolchain file, written (or found current) once for the target.
    sysroot_toolchain: Path | None = None

    @property
    def source_root(self) -> Path:
        return self.project.root / self.project.settings.source_dir


@dataclass(frozen=True)
class Staged:
    entries: list[Entry]
    manifest: ManifestSource | None = None  # one found in the staged tree (CMake installs it)
    folder: Path | None = None  # the staging folder the entries are, for kinds that install


_PLACEHOLDER = re.compile(r"\$\{([A-Za-z_][A-Za-z0-9_]*)\}")


def expand(text: str, values: Mapping[str, str]) -> str:
    """Clickable's placeholders (``${ARCH_TRIPLET}``) in a setting that no shell reads
    (arguments, ``env`` values), replaced by ``values``; others are left as written."""
    return _PLACEHOLDER.sub(lambda m: values.get(m.group(1), m.group(0)), text)


def excluded_paths(ctx: Staging) -> list[str]:
    """Files and folders left out by identity: the manifest, the output and build folders."""
    paths = [ctx.manifest.path] if ctx.manifest and ctx.manifest.path else []
    return paths + ([str(ctx.outdir)] if ctx.outdir else []) + [str(ctx.work)]


#: Kinds whose tools build in ``build/`` at the project's top (setuptools, CMake's
#: ``-B build``, qmake's shadow builds, Clickable's ``build/<triplet>/app``).
TOOL_BUILD_KINDS = ("python", "cmake", "qmake", "custom")
#: Kinds that build with the project's own tools and install into the staging folder: the
#: manifest may come from that install, the build folder is kept (the next build is
#: incremental), and without a declared architecture they build for this machine.
INSTALLING_KINDS = ("cmake", "qmake", "custom")


def build_dir_patterns(project: Project, kind: str, outdir: Path | None = None) -> list[str]:
    """Ignore patterns that keep the backend's own build folders out of packages.

    What :func:`~click_build.build_folders.own_folder_patterns` leaves out (the build
    folders, those of ``run`` and ``device run``, the output folder when it lies in the
    project, and folders holding nothing but those); for the kinds whose tools build in
    ``build/`` (setuptools; CMake's ``-B build``), that whole folder: it is never the
    app's source.
    """
    own = own_folder_patterns(project.root, project.settings.build_dir, outdir)
    if kind == "cmake":
        return ["/build", *cmake_build_folders(project.root), *own]
    if kind in TOOL_BUILD_KINDS:
        return ["/build", *own]
    return own


def cmake_build_folders(root: Path) -> list[str]:
    """Ignore patterns for the CMake build folders at the project's top, whatever their
    names (``cmake -B build-arm64``, ``-B build-2404``, as docs/cmake.md suggests): a
    folder holding a ``CMakeCache.txt`` is a build, never the app's source."""
    import glob

    try:
        children = sorted(os.scandir(root), key=lambda e: e.name)
    except OSError:
        return []
    return ["/" + glob.escape(c.name) for c in children
            if c.name != "build" and c.is_dir(follow_symlinks=False)
            and os.path.isfile(os.path.join(c.path, "CMakeCache.txt"))]


@contextlib.contextmanager
def work_dir(project: Project, kind: str, arch: str) -> Iterator[Path]:
    """The build folder: kept for cmake (incremental) or when set, else temporary."""
    template = project.settings.build_dir or (
        DEFAULT_BUILD_DIR if kind in INSTALLING_KINDS or project.settings.libraries else "")
    if template:
        yield own_build_dir(project.root, template.replace("{arch}", arch))
        return
    with tempfile.TemporaryDirectory(prefix="click-build-") as tmp:
        yield Path(tmp)


#: The file that marks a folder as click-build's build folder.
MARK = ".click-build-folder"
_MARK_TEXT = ("click-build made this folder for its builds and may delete what it put "
              "inside; nothing else belongs here.\n")
#: What earlier click-build releases left in a build folder before it was marked.
_OURS = ("source", "stage", "cmake", "python-lib", "python-egg", "python-vendor",
         "python-build.json", "click-filled", "click-finish")


def own_build_dir(root: Path, setting: str) -> Path:
    """The build folder ``setting`` names, made and marked by click-build, or a refusal.

    Settings can come from untrusted text (CI fills them from branch names), and
    a build deletes and rewrites folders inside its build folder.  So the folder
    is never the project or a parent of it, and never one holding files
    click-build did not make: it must not exist yet (it is then created and
    marked), be marked already, or be empty and the user's own.
    """
    where = "pyproject.toml: tool.click-build.build-dir"
    path = Path(os.path.realpath(root / setting))
    project = Path(os.path.realpath(root))
    if path == project or path in project.parents:
        what = "the project folder" if path == project else "a parent of the project folder"
        raise ConfigError(
            f"{where}: {setting!r} is {what} ({path}); click-build deletes and rewrites what "
            "it builds there: use a folder of its own such as 'build/click-{arch}'")
    inside = project in path.parents
    try:
        st = os.lstat(path)
    except FileNotFoundError:
        try:
            path.mkdir(parents=True, mode=0o755 if inside else 0o700)
            (path / MARK).write_text(_MARK_TEXT, encoding="utf-8")
        except OSError as e:
            raise ConfigError(f"{where}: cannot create {path}: {e.strerror}") from None
        return path
    except OSError as e:
        raise ConfigError(f"{where}: {path}: {e.strerror}") from None
    if not stat.S_ISDIR(st.st_mode):
        raise ConfigError(f"{where}: {path} exists and is not a folder")
    if os.path.isfile(path / MARK) and not os.path.islink(path / MARK):
        return path
    try:
        names = sorted(os.listdir(path))
    except OSError as e:
        raise ConfigError(f"{where}: {path}: {e.strerror}") from None
    strangers = [n for n in names if n not in _OURS and not n.startswith("python-vendor-")]
    if strangers:
        shown = ", ".join(strangers[:3]) + (" ..." if len(strangers) > 3 else "")
        raise ConfigError(
            f"{where}: {path} holds files click-build did not create ({shown}); name a folder "
            "that does not exist yet (click-build creates and marks it) or empty this one")
    if st.st_uid != os.geteuid() or st.st_mode & 0o022:
        raise ConfigError(
            f"{where}: {path} belongs to another user or others may write into it; name a "
            "folder that does not exist yet (click-build creates it)")
    try:
        (path / MARK).write_text(_MARK_TEXT, encoding="utf-8")
    except OSError as e:
        raise ConfigError(f"{where}: cannot mark {path}: {e.strerror}") from None
    return path


def real_dir(path: Path) -> Path:
    """``path`` as a real folder (kept if it is one): a link or file there is removed first,
    so nothing written or deleted inside it can reach another place."""
    try:
        if not stat.S_ISDIR(os.lstat(path).st_mode):
            path.unlink()
    except FileNotFoundError:
        pass
    path.mkdir(exist_ok=True)
    return path
