"""Fat packages: merge per-architecture builds of one app into one ``.click``.

The format allows a manifest ``architecture`` list (control says ``multi``);
each architecture's compiled files live in their own ``lib/<triplet>``
folders, and everything else must be the same in every input.  Inputs are
audited first, unpacked into one temporary folder beside the output (paths
checked, never through a symlink), then packed again by the core builder.
"""

from __future__ import annotations

import hashlib
import os
import tempfile
from collections.abc import Iterator, Sequence
from pathlib import Path

from . import _console
from .atomicfile import AtomicFile
from .build import build_click, stage_tree
from .errors import BuildError, PackageError
from .frameworks import frameworks_dir
from .manifest import Manifest
from .package import DataEntry, audit, open_click

__all__ = ["merge_packages"]

_PER_BUILD_KEYS = ("architecture", "installed-size")


class _Unpacker:
    """A DataSink that writes one package's tree into a shared folder, refusing conflicts."""

    def __init__(self, root: Path, seen: dict[str, tuple[str, str, str]], label: str) -> None:
        self.root = root
        self.seen = seen  # path -> (kind, md5 or target, first package)
        self.label = label

    def _target(self, path: str) -> Path:
        parts = path.split("/")
        for i in range(1, len(parts)):
            prefix = "/".join(parts[:i])
            if self.seen.get(prefix, ("dir",))[0] != "dir":
                raise PackageError(f"{self.label}: {path} lies under {prefix}, which is not a folder")
        return self.root / path

    def _claim(self, entry: DataEntry, key: str) -> bool:
        """True when the path is new; False when an identical one is already there."""
        have = self.seen.get(entry.path)
        if have is None:
            self.seen[entry.path] = (entry.kind, key, self.label)
            return True
        if have[:2] != (entry.kind, key):
            raise BuildError(
                f"{entry.path} differs between {have[2]} and {self.label}; files that depend "
                "on the architecture belong in lib/<triplet>/")
        return False

    def directory(self, entry: DataEntry) -> None:
        if entry.path and self._claim(entry, ""):
            self._target(entry.path).mkdir(mode=0o755)

    def file(self, entry: DataEntry, chunks: Iterator[bytes]) -> None:
        digest = hashlib.md5()
        with AtomicFile(self._target(entry.path), entry.mode) as out:
            for chunk in chunks:
                digest.update(chunk)
                out.file.write(chunk)
            if self._claim(entry, digest.hexdigest()):
                out.publish()

    def symlink(self, entry: DataEntry) -> None:
        if self._claim(entry, entry.target):
            self._target(entry.path).symlink_to(entry.target)

    def hardlink(self, entry: DataEntry) -> None:
        source = self.root / entry.target
        with open(source, "rb") as f:
            self.file(DataEntry(entry.path, "file", entry.mode, entry.size, entry.mtime),
                      iter(lambda: f.read(1 << 20), b""))


def _common(manifests: list[tuple[str, Manifest]]) -> dict[str, object]:
    first_label, first = manifests[0]
    base = {k: v for k, v in first.data.items() if k not in _PER_BUILD_KEYS}
    for label, manifest in manifests[1:]:
        other = {k: v for k, v in manifest.data.items() if k not in _PER_BUILD_KEYS}
        for key in sorted(set(base) | set(other)):
            if base.get(key) != other.get(key):
                raise BuildError(
                    f"{label}: manifest {key} {other.get(key)!r} differs from {first_label}'s "
                    f"{base.get(key)!r}; only the architecture may differ between merged builds")
    return base


def _architectures(manifests: list[tuple[str, Manifest]]) -> list[str]:
    archs: list[str] = []
    for label, manifest in manifests:
        arch = manifest.architecture
        for a in (list(arch) if isinstance(arch, tuple) else [arch]):
            if a == "all":
                continue
            if a in archs:
                raise BuildError(f"{label}: {a} is already in another input")
            archs.append(a)
    if not archs:
        raise BuildError("every input is 'all': there is nothing architecture-specific to merge")
    return sorted(archs)


def merge_packages(paths: Sequence[str | os.PathLike[str]], outdir: str | os.PathLike[str],
                   frameworks: str | os.PathLike[str] | None = None) -> Path:
    """Audit and merge ``paths`` into ``outdir``/NAME_VERSION_multi.click."""
    if len(paths) < 2:
        raise BuildError("merge needs at least two packages")
    outdir = Path(outdir)
    if not outdir.is_dir():
        raise BuildError(f"output directory {outdir} does not exist")
    fw_dir = frameworks_dir(frameworks)
    with tempfile.TemporaryDirectory(dir=outdir, prefix=".merge-") as tmp:
        root = Path(tmp)
        seen: dict[str, tuple[str, str, str]] = {}
        manifests: list[tuple[str, Manifest]] = []
        for path in paths:
            label = os.path.basename(os.fspath(path))
            with open_click(path) as pkg, _console.expecting("missing-framework"):
                manifest, _ = audit(pkg, fw_dir, force_missing_framework=True,
                                    sink=_Unpacker(root, seen, label))
            manifests.append((label, manifest))
        data = _common(manifests)
        data["architecture"] = _architectures(manifests)
        merged = Manifest.from_dict(data, "merged manifest")
        return Path(build_click(merged, stage_tree(root, default_ignores=()), outdir))
