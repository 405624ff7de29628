"""Hand-made packages for tests: every part can be wrong on purpose.

The builder refuses to write bad packages, so hostile ones are assembled here
from raw parts with tarfile and our ar writer.
"""

from __future__ import annotations

import gzip
import hashlib
import io
import json
import tarfile
from dataclasses import dataclass, field
from pathlib import Path

from click_build.archive import write_ar_member
from click_build.spec import STATIC_PREINST

MANIFEST: dict[str, object] = {
    "name": "com.example.crafted",
    "version": "1.0",
    "framework": "ubuntu-sdk-20.04",
    "maintainer": "Jane Doe <jane@example.com>",
    "title": "Crafted",
    "hooks": {"app": {"desktop": "app.desktop"}},
}


@dataclass
class Member:
    """One data tar member; kind is file, dir, symlink, hardlink, fifo, chr."""

    name: str
    data: bytes = b""
    kind: str = "file"
    mode: int = 0o644
    target: str = ""


def tar_bytes(members: list[Member], compress: bool = True) -> bytes:
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w", format=tarfile.GNU_FORMAT) as tar:
        for m in members:
            info = tarfile.TarInfo(m.name)
            info.mode = m.mode
            info.uname = info.gname = "root"
            if m.kind == "file":
                info.size = len(m.data)
                tar.addfile(info, io.BytesIO(m.data))
                continue
            info.type = {"dir": tarfile.DIRTYPE, "symlink": tarfile.SYMTYPE,
                         "hardlink": tarfile.LNKTYPE, "fifo": tarfile.FIFOTYPE,
                         "chr": tarfile.CHRTYPE}[m.kind]
            info.linkname = m.target
            tar.addfile(info)
    raw = buf.getvalue()
    return gzip.compress(raw, mtime=0) if compress else raw


@dataclass
class Crafted:
    manifest: dict[str, object] = field(default_factory=lambda: dict(MANIFEST))
    data: list[Member] = field(default_factory=lambda: [
        Member("./", kind="dir", mode=0o755), Member("./app.desktop", b"[Desktop Entry]\n")])
    control_fields: dict[str, str] | None = None  # None: derived from the manifest
    extra_control: dict[str, bytes] = field(default_factory=dict)
    preinst: bytes | None = STATIC_PREINST
    md5sums: str | None = None  # None: computed from the data files
    members: list[tuple[str, bytes]] | None = None  # override the ar members entirely
    installed_size: int = 10

    def control_files(self) -> dict[str, bytes]:
        manifest = dict(self.manifest)
        manifest.setdefault("installed-size", str(self.installed_size))
        fields = self.control_fields
        if fields is None:
            arch = manifest.get("architecture", "all")
            fields = {
                "Package": str(manifest.get("name")), "Version": str(manifest.get("version")),
                "Click-Version": "0.4", "Architecture": "multi" if isinstance(arch, list) else str(arch),
                "Maintainer": str(manifest.get("maintainer")),
                "Installed-Size": str(self.installed_size), "Description": str(manifest.get("title")),
            }
        md5sums = self.md5sums
        if md5sums is None:
            md5sums = "".join(
                f"{hashlib.md5(m.data).hexdigest()}  {m.name.removeprefix('./')}\n"
                for m in self.data if m.kind == "file")
        files = {
            "control": "".join(f"{k}: {v}\n" for k, v in fields.items()).encode(),
            "manifest": json.dumps(manifest).encode(),
            "md5sums": md5sums.encode(),
        }
        if self.preinst is not None:
            files["preinst"] = self.preinst
        files.update(self.extra_control)
        return files

    def parts(self) -> list[tuple[str, bytes]]:
        if self.members is not None:
            return self.members
        control = tar_bytes([Member("./", kind="dir", mode=0o755)] + [
            Member(f"./{name}", data) for name, data in self.control_files().items()])
        return [("debian-binary", b"2.0\n"), ("_click-binary", b"0.4\n"),
                ("control.tar.gz", control), ("data.tar.gz", tar_bytes(self.data))]

    def bytes(self) -> bytes:
        out = io.BytesIO()
        out.write(b"!<arch>\n")
        for name, data in self.parts():
            write_ar_member(out, name, data, 0)
        return out.getvalue()

    def write(self, path: Path) -> Path:
        path.write_bytes(self.bytes())
        return path
