"""The app's source package as a Python sdist (PEP 517 ``build_sdist``).

Frontends insist on PEP 625: ``{name}-{version}.tar.gz`` with a normalised
name, a PEP 440 version, one top folder of the same name and a ``PKG-INFO``.
Click versions are Debian versions, so ``1.0~rc1`` is mapped (``1.0rc1``)
and anything without a PEP 440 spelling stops with a hint to use ``--wheel``.
The archive is reproducible: sorted, root-owned, pax format, fixed mtimes.
"""

from __future__ import annotations

import gzip
import io
import os
import re
import tarfile
from contextlib import ExitStack
from pathlib import Path

from .. import _console
from ..atomicfile import AtomicFile
from ..build import Entry, package_timestamp
from ..datatree import shown
from ..errors import BuildError
from ..staging import Folders, changed, open_staged
from .appmanifest import find_manifest
from .context import build_dir_patterns
from .files import BACKEND_IGNORES, stage_with_includes
from .kinds import resolve
from .secret_files import HEAD, SecretFiles
from .settings import ConfigSettings, load_project

__all__ = ["build_sdist", "normalise_name", "pep440_version"]

# PEP 440, appendix B (the canonical public + local version pattern).
_PEP440 = re.compile(
    r"""^v?(?:(?P<epoch>[0-9]+)!)?(?P<release>[0-9]+(?:\.[0-9]+)*)
    (?P<pre>[-_.]?(?P<pre_l>alpha|a|beta|b|preview|pre|c|rc)[-_.]?(?P<pre_n>[0-9]+)?)?
    (?P<post>(?:-(?P<post_n1>[0-9]+))|(?:[-_.]?(?P<post_l>post|rev|r)[-_.]?(?P<post_n2>[0-9]+)?))?
    (?P<dev>[-_.]?(?P<dev_l>dev)[-_.]?(?P<dev_n>[0-9]+)?)?
    (?:\+(?P<local>[a-z0-9]+(?:[-_.][a-z0-9]+)*))?$""",
    re.VERBOSE | re.IGNORECASE,
)
_PRE = {"alpha": "a", "a": "a", "beta": "b", "b": "b", "c": "rc", "pre": "rc",
        "preview": "rc", "rc": "rc"}


def pep440_version(debian: str) -> str | None:
    """The normalised PEP 440 spelling of a Debian version, or None if there is none.

    ``2:1.0`` -> ``2!1.0``; ``1.0~rc1`` -> ``1.0rc1``; ``1.0-2`` -> ``1.0.post2``.
    """
    text = debian
    m = re.match(r"^(\d+):", text)
    if m:
        text = f"{m.group(1)}!{text[m.end():]}"
    text = re.sub(r"~(?=(alpha|a|beta|b|preview|pre|c|rc|dev)\.?\d*\b)", "", text, flags=re.I)
    v = _PEP440.match(text)
    if not v:
        return None
    out = f"{int(v['epoch'])}!" if v["epoch"] and int(v["epoch"]) else ""
    out += ".".join(str(int(part)) for part in v["release"].split("."))
    if v["pre"]:
        out += _PRE[v["pre_l"].lower()] + str(int(v["pre_n"] or 0))
    if v["post"]:
        out += f".post{int(v['post_n1'] or v['post_n2'] or 0)}"
    if v["dev"]:
        out += f".dev{int(v['dev_n'] or 0)}"
    if v["local"]:
        out += "+" + ".".join(
            str(int(p)) if p.isdigit() else p.lower() for p in re.split(r"[-_.]", v["local"]))
    return out


def normalise_name(name: str) -> str:
    """PEP 625 / binary distribution format escaping of a project name."""
    return re.sub(r"[-_.]+", "_", name).lower()


def _pkg_info(name: str, version: str, summary: str) -> bytes:
    lines = ["Metadata-Version: 2.1", f"Name: {name}", f"Version: {version}"]
    if summary:
        lines.append("Summary: " + " ".join(summary.split()))
    return ("\n".join(lines) + "\n").encode("utf-8")


def _name_and_version(root: Path, outdir: Path, config_settings: ConfigSettings | None
                      ) -> tuple[str, str, str, list[Entry], SecretFiles]:
    project = load_project(root, config_settings)
    kind = resolve(project)
    source = find_manifest(project, kind)
    peek = source.peek() if source else {}
    label = source.label if source else "manifest.json"
    name = project.name or peek.get("name")
    version = project.version or peek.get("version")
    if project.version and peek.get("version") and peek["version"] != project.version:
        raise BuildError(
            f"{label}: version {peek['version']!r} differs from pyproject.toml: "
            f"project.version {project.version!r}; keep the version in one place")
    if not isinstance(name, str) or not name or not isinstance(version, str) or not version:
        raise BuildError(
            "pyproject.toml: project: the source package needs [project] name and version "
            f"(or both in {label}); or build only the .click with 'python -m build --wheel'")
    summary = project.metadata.get("description") or peek.get("title") or ""
    # The files a --wheel build reads, not buildsource's (which leaves out *.so and
    # *.o): the .click built from this source package must be the one --wheel builds,
    # prebuilt QML plugins and vendored libraries included.
    ignores = [*BACKEND_IGNORES, "/PKG-INFO", *build_dir_patterns(project, kind, outdir)]
    entries = stage_with_includes(project.root, ignores, project.settings.include,
                                  exclude=[outdir])
    secrets = SecretFiles(project.settings.include)
    entries = secrets.filter(entries)
    _check_links(entries)
    return name, version, str(summary), entries, secrets


def _check_links(entries: list[Entry]) -> None:
    """Refuse a link that leads outside the tree once unpacked, alone or through other
    links of the tree (``a -> b/c/..`` with ``b/c`` a link to a folder higher up), and
    an entry that would be unpacked through a link."""
    tree = {e.arcname: e for e in entries}
    links = {e.arcname for e in entries if e.kind == "symlink"}
    for e in entries:
        parts = e.arcname.split("/")
        above = next((p for p in ("/".join(parts[:n]) for n in range(1, len(parts)))
                      if p in links), None)
        if above is not None:
            raise BuildError(f"{shown(e.arcname)}: below the link {shown(above)}, so "
                             "unpacking would write through that link; leave one of them "
                             "out (tool.click-build.exclude)")
        if e.kind == "symlink":
            via = _escape(e, tree)
            if via is not None:
                chain = "" if via is e else f", through the link {shown(via.arcname)} -> " \
                    f"{via.target!r}"
                raise BuildError(
                    f"{shown(e.arcname)}: a link to {e.target!r}, which leads outside the "
                    f"project once unpacked{chain}, cannot go into a source package "
                    "(Python's build tools refuse to unpack it); make it a relative link "
                    "that stays inside the project, or build only the .click with "
                    "'python -m build --wheel'")


def _escape(link: Entry, tree: dict[str, Entry]) -> Entry | None:
    """The link (``link`` or one it passes through) that takes the path of ``link``
    above the top of the tree, following links as the kernel does once the tree is
    unpacked; None when it stays inside.  A name the tree lacks is taken as a folder
    (stricter than the kernel, which would stop there); too many links count as leaving,
    as the kernel gives up (ELOOP) where a longer path might not."""
    where = link.arcname.split("/")[:-1]  # the folder holding the link
    pending = list(reversed(link.target.split("/")))
    current, hops = link, 0
    if link.target.startswith("/"):
        return link
    while pending:
        part = pending.pop()
        if part in ("", "."):
            continue
        if part == "..":
            if not where:
                return current
            where.pop()
            continue
        found = tree.get("/".join([*where, part]))
        if found is not None and found.kind == "symlink":
            hops += 1
            if hops > 40 or found.target.startswith("/"):
                return found
            current = found
            pending.extend(reversed(found.target.split("/")))
            continue
        where.append(part)
    return None


def build_sdist(root: str | os.PathLike[str], outdir: str | os.PathLike[str],
                config_settings: ConfigSettings | None = None) -> str:
    """Write ``{name}-{version}.tar.gz`` into ``outdir``; return its file name."""
    outdir = Path(outdir)
    outdir.mkdir(parents=True, exist_ok=True)
    name, debian_version, summary, entries, secrets = _name_and_version(
        Path(root), outdir, config_settings)
    version = pep440_version(debian_version)
    if version is None:
        raise BuildError(
            f"version {debian_version!r} has no PEP 440 spelling, which a Python source "
            "package needs; build only the .click with 'python -m build --wheel'")
    top = f"{normalise_name(name)}-{version}"
    stamp = package_timestamp()
    target = outdir / f"{top}.tar.gz"
    with AtomicFile(target, 0o644) as out:
        with ExitStack() as stack, \
                gzip.GzipFile(filename="", mode="wb", fileobj=out.file, mtime=stamp) as gz, \
                tarfile.open(fileobj=gz, mode="w", format=tarfile.PAX_FORMAT) as tar:
            tar.addfile(_info(top, "dir", 0o755, 0, stamp))
            info = _info(f"{top}/PKG-INFO", "file", 0o644, 0, stamp)
            data = _pkg_info(name, version, summary)
            info.size = len(data)
            tar.addfile(info, io.BytesIO(data))
            folders = stack.enter_context(Folders())
            for e in sorted(entries, key=lambda e: e.arcname.split("/")):
                info = _info(f"{top}/{e.arcname}", e.kind, e.mode, e.size, e.mtime, e.target)
                if e.kind == "file":
                    # The file the walk saw, opened in its folder without following a link
                    # (a file or folder swapped for one since stops the build, naming it),
                    # still of its size: tarfile copies the size the header says.
                    with open_staged(e, folders) as f:
                        if os.fstat(f.fileno()).st_size != e.size:
                            raise changed(e.source or e.arcname)
                        if secrets.is_private_key(e.arcname, f.read(HEAD)):
                            continue
                        f.seek(0)
                        tar.addfile(info, f)
                else:
                    tar.addfile(info)
        out.publish()
    summary_line = secrets.summary()
    if summary_line:
        _console.warn(summary_line)
    return target.name


def _info(name: str, kind: str, mode: int, size: int, mtime: int, target: str = "") -> tarfile.TarInfo:
    info = tarfile.TarInfo(name)
    info.type = {"dir": tarfile.DIRTYPE, "symlink": tarfile.SYMTYPE}.get(kind, tarfile.REGTYPE)
    info.mode, info.size, info.mtime = mode, size, mtime
    info.linkname = target
    info.uid = info.gid = 0
    info.uname = info.gname = "root"
    return info
