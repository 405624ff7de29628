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


def raw_header(name: bytes, kind: bytes = b"0", size: int = 0, *, mode: bytes | None = None,
               size_field: bytes | None = None, linkname: bytes = b"", magic: bytes = b"ustar  \0",
               prefix: bytes = b"", checksum: bytes | None = None, mtime: int = 0) -> bytes:
    """One 512-byte tar header with every field chosen by the caller (GNU layout,
    root:root); ``checksum`` overrides the correct one."""
    head = bytearray(512)
    head[0:len(name[:100])] = name[:100]
    head[100:108] = mode if mode is not None else b"0000644\0"
    head[108:116] = head[116:124] = b"0000000\0"
    head[124:136] = size_field if size_field is not None else b"%011o\0" % size
    head[136:148] = b"%011o\0" % mtime
    head[156:157] = kind
    head[157:157 + len(linkname)] = linkname
    head[257:257 + len(magic)] = magic
    if magic.startswith(b"ustar\0"):
        head[263:265] = b"00"
        head[345:345 + len(prefix)] = prefix
    head[265:269] = head[297:301] = b"root"
    head[148:156] = b" " * 8
    head[148:156] = checksum if checksum is not None else b"%06o\0 " % sum(head)
    return bytes(head)


def patched(header: bytes, start: int, value: bytes) -> bytes:
    """``header`` with ``value`` written at ``start`` and its checksum made right again."""
    head = bytearray(header)
    head[start:start + len(value)] = value
    head[148:156] = b" " * 8
    head[148:156] = b"%06o\0 " % sum(head)
    return bytes(head)


def raw_member(name: bytes, data: bytes = b"", kind: bytes = b"0", **fields: object) -> bytes:
    """A header and its data, padded to whole blocks."""
    header = raw_header(name, kind, len(data), **fields)  # type: ignore[arg-type]
    return header + data + b"\0" * (-len(data) % 512)


def pax_record(records: dict[bytes, bytes], kind: bytes = b"x") -> bytes:
    """A pax extended header (``x``, or ``g`` for a global one) holding ``records``."""
    body = b""
    for key, value in records.items():
        payload = b" " + key + b"=" + value + b"\n"
        length = len(payload) + 1
        while len(str(length).encode() + payload) != length:
            length += 1
        body += str(length).encode() + payload
    return raw_member(b"././@PaxHeader", body, kind)


def raw_tar(*blocks: bytes, end: bool = True) -> bytes:
    """Gzip of the blocks given, with the end-of-archive marker unless ``end`` is False."""
    return gzip.compress(b"".join(blocks) + (b"\0" * 1024 if end else b""), mtime=0)


ROOT_MEMBER = raw_member(b"./", kind=b"5", mode=b"0000755\0")
DESKTOP_MEMBER = raw_member(b"./app.desktop", b"[Desktop Entry]\n")


def with_data_tar(data_tar: bytes, md5sums: str | None = None, **crafted: object) -> Crafted:
    """A package whose data.tar.gz is the bytes given (its control made as usual)."""
    base = Crafted(md5sums=md5sums, **crafted)  # type: ignore[arg-type]
    parts = base.parts()
    parts[3] = ("data.tar.gz", data_tar)
    return Crafted(members=parts)


def write_many_members(path: Path, dirs: int, files_per_dir: int,
                       manifest: dict[str, object] | None = None, empty: bool = False) -> Path:
    """A valid package of ``dirs`` folders of ``files_per_dir`` tiny files (or empty ones:
    cheaper to install), streamed to disk: a million members without a million of
    anything in memory.

    Laid out as the builder lays it out (sorted, GNU headers, md5sums in archive
    order), each file with its own content so that md5sums does not compress away.
    Headers are patched from a template: writing a million takes seconds.
    """
    import tempfile
    import zlib

    from click_build.archive import TAR_RECORD, tar_header, write_ar_header

    mtime = 1700000000
    template = bytearray(tar_header("./d0000/f0000.qml", b"0", 0o644, 0, mtime))
    template[148:156] = b" " * 8
    template[124:136] = bytes(12)
    template[0:17] = bytes(17)
    base_sum = sum(template)
    comp = zlib.compressobj(1, zlib.DEFLATED, 31)
    written = 0
    with tempfile.TemporaryFile(dir=path.parent) as data_gz, \
            tempfile.TemporaryFile(dir=path.parent) as sums:
        pieces: list[bytes] = []

        def emit(block: bytes) -> None:
            nonlocal written
            pieces.append(block)
            written += len(block)
            if len(pieces) >= 8192:
                data_gz.write(comp.compress(b"".join(pieces)))
                pieces.clear()

        emit(tar_header("./", b"5", 0o755, 0, mtime))
        total = 4096
        for d in range(dirs):
            emit(tar_header(f"./d{d:04d}/", b"5", 0o755, 0, mtime))
            total += 4096
            lines = []
            for f in range(files_per_dir):
                name = b"./d%04d/f%04d.qml" % (d, f)
                body = b"" if empty else b"%d.%d\n" % (d, f)
                size = b"%011o\0" % len(body)
                header = template[:]
                header[0:17] = name
                header[124:136] = size
                header[148:156] = b"%06o\0 " % (base_sum + sum(name) + sum(size))
                emit(bytes(header) + body + bytes(-len(body) % 512))
                total += len(body)
                lines.append(b"%s  %s\n" % (hashlib.md5(body).hexdigest().encode(), name[2:]))
            sums.write(b"".join(lines))
        emit(bytes(1024))
        emit(bytes(-written % TAR_RECORD))
        data_gz.write(comp.compress(b"".join(pieces)) + comp.flush())
        crafted = Crafted(manifest=dict(manifest or MANIFEST), installed_size=-(-total // 1024))
        files = crafted.control_files()
        sums.seek(0)
        files["md5sums"] = sums.read()
        control = tar_bytes([Member("./", kind="dir", mode=0o755)] + [
            Member(f"./{name}", data) for name, data in files.items()])
        data_size = data_gz.tell()
        with open(path, "wb") as out:
            out.write(b"!<arch>\n")
            write_ar_member(out, "debian-binary", b"2.0\n", 0)
            write_ar_member(out, "_click-binary", b"0.4\n", 0)
            write_ar_member(out, "control.tar.gz", control, 0)
            write_ar_header(out, "data.tar.gz", data_size, 0)
            data_gz.seek(0)
            while chunk := data_gz.read(1 << 20):
                out.write(chunk)
            if data_size % 2:
                out.write(b"\n")
    return path
