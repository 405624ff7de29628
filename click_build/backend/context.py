"""What one build shares between the pipeline and the kinds: a leaf module.

:class:`Context` and :class:`Staged` travel from the pipeline to a kind and
back; the build folder helpers decide where a build writes.  Nothing here
imports the pipeline or the kinds, so they can all import it.
"""

from __future__ import annotations

import contextlib
import os
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from ..build import Entry
from ..errors import ConfigError
from ..framework_table import FrameworkFacts
from ..placeholders import ManifestSource
from .settings import Project

__all__ = ["Context", "Staged", "build_dir_patterns", "excluded_paths", "work_dir"]


@dataclass(frozen=True)
class Context:
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

    @property
    def source_root(self) -> Path:
        return self.project.root / self.project.settings.source_dir


@dataclass(frozen=True)
class Staged:
    entries: list[Entry]
    manifest: ManifestSource | None = None  # one found in the staged tree (CMake installs it)


def excluded_paths(ctx: Context) -> list[str]:
    """Files and folders left out by identity: the manifest and the output folder."""
    paths = [ctx.manifest.path] if ctx.manifest and ctx.manifest.path else []
    return paths + ([str(ctx.outdir)] if ctx.outdir else [])


def build_dir_patterns(project: Project) -> list[str]:
    """Ignore patterns that keep the backend's own build folders out of packages."""
    template = project.settings.build_dir or "build/click-{arch}"
    rel = template.replace("{arch}", "*").strip("/")
    if os.path.isabs(template) or rel.startswith(".."):
        return []
    patterns = ["/" + rel]
    parent = rel.split("/")[0]
    if "/" in rel and (project.root / parent).is_dir():
        import fnmatch

        children = [f"{parent}/{c.name}" for c in (project.root / parent).iterdir()]
        if all(fnmatch.fnmatchcase(c, rel) for c in children):
            patterns.append("/" + parent)  # nothing but our build folders in there
    return patterns


@contextlib.contextmanager
def work_dir(project: Project, kind: str, arch: str) -> Iterator[Path]:
    """The build folder: kept for cmake (incremental) or when set, else temporary."""
    template = project.settings.build_dir or ("build/click-{arch}" if kind == "cmake" else "")
    if template:
        path = (project.root / template.replace("{arch}", arch)).resolve()
        try:
            path.mkdir(parents=True, exist_ok=True)
        except OSError as e:
            raise ConfigError(
                f"pyproject.toml: tool.click-build.build-dir: cannot create {path}: {e.strerror}"
            ) from None
        yield path
        return
    with tempfile.TemporaryDirectory(prefix="click-build-") as tmp:
        yield Path(tmp)
