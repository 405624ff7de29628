"""Adding a debsigs signature member to a package, atomically.

The result is byte for byte what ``debsigs --sign=TYPE`` would write with a
strong digest: the members before the signatures are copied unchanged (so
earlier signatures stay valid), a ``_gpg<type>`` member holding a binary
detached signature over ``debian-binary`` + ``control.tar.*`` +
``data.tar.*`` replaces the old one of that type in place, as ``ar -r``
does, or is appended.  The new file is written beside the old one and
renamed over it, so a failure or a crash leaves the package as it was.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from typing import BinaryIO

from ..archive import AR_MAGIC, ArMember, copy_range, write_ar_member
from ..atomicfile import AtomicFile
from ..errors import ConfigError
from ..spec import SIGNATURE_PREFIX
from .gpg import detach_sign
from .layout import SIGNATURE_TYPES, send_members, signed_layout
from .openpgp import SignaturePacket, parse_signature

__all__ = ["DIGEST", "SignResult", "sign_file"]

#: debsigs lets gpg choose, which gives SHA-1 for old RSA keys; gpg refuses those now.
DIGEST = "SHA512"


@dataclass(frozen=True)
class SignResult:
    path: Path
    member: str
    fingerprint: str
    digest: str
    replaced: bool


def _copy_member(src: BinaryIO, out: BinaryIO, member: ArMember) -> None:
    """A member's header and data verbatim, then the padding byte ar wants."""
    os.lseek(src.fileno(), member.header_offset, os.SEEK_SET)  # copy_range works on the fd
    copy_range(src, out, member.offset + member.size - member.header_offset)
    if member.size % 2:
        out.write(b"\n")


def _write_signed(src: BinaryIO, out: BinaryIO, members: list[ArMember], name: str,
                  signature: bytes, mtime: int) -> bool:
    out.write(AR_MAGIC)
    replaced = False
    for member in members:
        if member.name == name:
            write_ar_member(out, name, signature, mtime)
            replaced = True
        else:
            _copy_member(src, out, member)
    if not replaced:
        write_ar_member(out, name, signature, mtime)
    return replaced


def sign_file(
    path: str | os.PathLike[str],
    key: str | None = None,
    gpg_homedir: str | os.PathLike[str] | None = None,
    sig_type: str = "origin",
) -> SignResult:
    """Add (or replace) the ``_gpg<sig_type>`` signature of the package at ``path``.

    Signs with ``gpg`` (``key``, or gpg's default key, from ``gpg_homedir`` or
    gpg's default home); raises a :class:`ClickError` and leaves the file
    untouched on any failure.
    """
    from ..package import open_click
    from ..pkgfile import open_regular

    if sig_type not in SIGNATURE_TYPES:
        raise ConfigError(
            f"signature type {sig_type!r} is not one of {', '.join(SIGNATURE_TYPES)}"
        )
    homedir = Path(gpg_homedir) if gpg_homedir is not None else None
    if homedir is not None and not homedir.is_dir():
        raise ConfigError(f"gpg home directory {homedir} does not exist")
    target = Path(os.path.realpath(path))
    name = SIGNATURE_PREFIX + sig_type
    src = open_regular(target)  # never waits on a FIFO
    with src:
        with open_click(src) as pkg:  # a real Click package: container and control checked
            members = pkg.members
        layout = signed_layout(members, str(path))
        signed = detach_sign(partial(send_members, f=src, members=layout.signed), key,
                             homedir, DIGEST)
        packet: SignaturePacket = parse_signature(signed.signature, f"the new {name}")
        mode = os.fstat(src.fileno()).st_mode & 0o7777
        with AtomicFile(target, mode, durable=True) as out:
            src.seek(0)
            replaced = _write_signed(src, out.file, members, name, signed.signature,
                                     packet.created)
            out.publish()
    return SignResult(Path(path), name, signed.fingerprint, packet.hash_name, replaced)

