"""Hand-made packages for the review tests.

The builder refuses or repairs many of the mistakes the review must catch
(setuid bits, world-writable files, bad manifests, control data that
disagrees), so these packages are written from raw parts: a data tar, a
control tar and the ar container, each exactly as described.
"""

from __future__ import annotations

import copy
import gzip
import hashlib
import io
import json
import struct
import tarfile
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from click_build.archive import write_ar_member
from click_build.spec import STATIC_PREINST

__all__ = ["GOOD_FILES", "GOOD_MANIFEST", "D", "F", "L", "craft", "elf_bytes"]

DESKTOP = (
    "[Desktop Entry]\nName=Hello\nExec=qmlscene %u qml/Main.qml\nIcon=assets/logo.svg\n"
    "Type=Application\nX-Lomiri-Touch=true\n"
)
APPARMOR = {"policy_groups": ["networking"], "policy_version": 20.04}

GOOD_MANIFEST: dict[str, object] = {
    "name": "com.example.hello",
    "version": "1.0",
    "framework": "ubuntu-sdk-20.04-qml",  # a pure-QML app: the -qml variant is enough
    "maintainer": "Jane Doe <jane@example.com>",
    "title": "Hello",
    "description": "A friendly app",
    "hooks": {"hello": {"desktop": "hello.desktop", "apparmor": "hello.apparmor"}},
}


@dataclass(frozen=True)
class F:
    """A regular file; its data may be made on first use (a program compiled for it)."""

    data: bytes | str | Callable[[], bytes] = b""
    mode: int = 0o644

    @property
    def raw(self) -> bytes:
        if callable(self.data):
            return self.data()
        return self.data.encode() if isinstance(self.data, str) else self.data


@dataclass(frozen=True)
class L:
    """A symbolic link."""

    target: str


@dataclass(frozen=True)
class D:
    """A directory (parents are added as 0755 directories anyway)."""

    mode: int = 0o755


Member = F | L | D

GOOD_FILES: dict[str, Member] = {
    "hello.desktop": F(DESKTOP),
    "hello.apparmor": F(json.dumps(APPARMOR)),
    "qml/Main.qml": F("import QtQuick 2.7\nRectangle {}\n"),
    "assets/logo.svg": F("<svg xmlns='http://www.w3.org/2000/svg'/>\n"),
}


def elf_bytes(machine: int, bits: int = 64, little: bool = True, kind: int = 3,
              flags: int = 0) -> bytes:
    """A minimal ELF header (and a little padding) for the given machine."""
    order = "<" if little else ">"
    ident = b"\x7fELF" + bytes([1 if bits == 32 else 2, 1 if little else 2, 1]) + bytes(9)
    if bits == 32:
        rest = struct.pack(order + "HHIIIIIHHHHHH", kind, machine, 1, 0, 52, 0, flags,
                           52, 32, 0, 40, 0, 0)
    else:
        rest = struct.pack(order + "HHIQQQIHHHHHH", kind, machine, 1, 0, 64, 0, flags,
                           64, 56, 0, 64, 0, 0)
    return ident + rest + bytes(64)


def _tar(members: list[tuple[str, Member]]) -> bytes:
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w", format=tarfile.GNU_FORMAT) as tar:
        for name, m in members:
            info = tarfile.TarInfo(name)
            info.uname = info.gname = "root"
            info.mtime = 315532800
            if isinstance(m, F):
                info.mode, info.size = m.mode, len(m.raw)
                tar.addfile(info, io.BytesIO(m.raw))
            elif isinstance(m, L):
                info.type, info.linkname, info.mode = tarfile.SYMTYPE, m.target, 0o777
                tar.addfile(info)
            else:
                info.type, info.mode = tarfile.DIRTYPE, m.mode
                tar.addfile(info)
    return gzip.compress(buf.getvalue(), mtime=0)


def craft(
    out: Path,
    manifest: dict[str, object] | None = None,
    files: dict[str, Member] | None = None,
    control: dict[str, str | None] | None = None,
    md5sums: str | None = None,
    preinst: bytes | None = STATIC_PREINST,
    installed_size: str | None = None,
) -> Path:
    """Write a package to ``out``: the good app unless told otherwise.

    ``manifest``/``files`` replace the good ones entirely; ``control`` changes
    (value) or drops (None) single control fields.
    """
    manifest = copy.deepcopy(GOOD_MANIFEST if manifest is None else manifest)
    files = dict(GOOD_FILES if files is None else files)
    tree: dict[str, Member] = {}
    for path in sorted(files):
        parts = path.split("/")
        for i in range(1, len(parts)):
            tree.setdefault("/".join(parts[:i]), D())
        tree[path] = files[path]
    members = [("./", D())] + [(f"./{p}", m) for p, m in sorted(tree.items())]
    size = sum(len(m.raw) for m in files.values() if isinstance(m, F))
    kib = str(size // 1024 + 4)
    manifest.setdefault("installed-size", kib if installed_size is None else installed_size)
    arch = manifest.get("architecture", "all")
    fields: dict[str, str | None] = {
        "Package": str(manifest.get("name")),
        "Version": str(manifest.get("version")),
        "Click-Version": "0.4",
        "Architecture": "multi" if isinstance(arch, list) else str(arch),
        "Maintainer": str(manifest.get("maintainer", "")),
        "Installed-Size": kib,
        "Description": str(manifest.get("title", "")),
    }
    fields.update(control or {})
    control_text = "".join(f"{k}: {v}\n" for k, v in fields.items() if v is not None)
    if md5sums is None:
        md5sums = "".join(
            f"{hashlib.md5(m.raw).hexdigest()}  {p}\n"
            for p, m in sorted(files.items()) if isinstance(m, F)
        )
    control_files: list[tuple[str, Member]] = [
        ("./", D()),
        ("./control", F(control_text)),
        ("./manifest", F(json.dumps(manifest, indent=4, sort_keys=True) + "\n")),
        ("./md5sums", F(md5sums)),
    ]
    if preinst is not None:
        control_files.append(("./preinst", F(preinst)))
    with open(out, "wb") as f:
        f.write(b"!<arch>\n")
        write_ar_member(f, "debian-binary", b"2.0\n", 0)
        write_ar_member(f, "_click-binary", b"0.4\n", 0)
        write_ar_member(f, "control.tar.gz", _tar(control_files), 0)
        write_ar_member(f, "data.tar.gz", _tar(members), 0)
    return out
