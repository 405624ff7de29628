"""Which bytes a debsigs signature covers, and streaming them without loading them.

debsigs signs ``debian-binary``, ``control.tar.*`` and ``data.tar.*``
concatenated (``ar p PKG debian-binary control.tar.gz data.tar.gz``); Click's
``_click-binary`` member is *not* covered.  debsig-verify rebuilds the same
stream by looking the members up by name, wherever they are.  We are
stricter: the members must be in the one order a Click package has, with the
``_gpg<type>`` signatures after them, so a member injected, replaced or
moved after signing is refused before any cryptography is run.
"""

from __future__ import annotations

import errno
import os
from collections.abc import Sequence

from .._record import Record
from ..arread import ArMember
from ..errors import ArchiveError, SignatureError
from ..spec import SIGNATURE_PREFIX
from ..tarread import COMPRESSIONS
from .verdict import signature_members

TYPE_CHECKING = False  # not typing.TYPE_CHECKING: importing typing costs start-up time

if TYPE_CHECKING:
    from typing import BinaryIO

__all__ = [
    "SIGNATURE_TYPES",
    "SignedLayout",
    "send_members",
    "signature_members",
    "signed_layout",
]

#: The types debsigs documents; debsigs itself allows any name of up to 10 characters.
SIGNATURE_TYPES = ("origin", "maint", "archive")
# Every compression the reader knows (which control ones dpkg takes is the audit's rule).
_CONTROL = tuple("control.tar" + ext for ext in COMPRESSIONS)
_DATA = tuple("data.tar" + ext for ext in COMPRESSIONS)
_TAMPERED = "the package was altered after it was signed"


class SignedLayout(Record):
    """The signed members, in signing order, and the signatures by type."""

    signed: tuple[ArMember, ArMember, ArMember]
    signatures: dict[str, ArMember]

    @property
    def signed_size(self) -> int:
        return sum(m.size for m in self.signed)


def signed_layout(members: Sequence[ArMember], where: str) -> SignedLayout:
    """Check the member order of a (possibly) signed package; ``where`` names it."""
    names = [m.name for m in members]
    listing = ", ".join(names) or "none"
    signed = bool(signature_members(members))

    def refuse(problem: str) -> SignatureError:
        prefix = "Signature verification error: " if signed else ""
        hint = f": {_TAMPERED}" if signed else ""
        return SignatureError(f"{prefix}{where}: {problem} (members: {listing}){hint}")

    expected = (("debian-binary",), ("_click-binary",), _CONTROL, _DATA)
    for i, choices in enumerate(expected):
        if i >= len(members):
            raise refuse(f"member {choices[0]}* is missing")
        if names[i] not in choices:
            want = choices[0] + ("*" if len(choices) > 1 else "")
            raise refuse(f"member {i + 1} is {names[i]!r} where {want} was expected")
    signatures: dict[str, ArMember] = {}
    for m in members[4:]:
        if not m.name.startswith(SIGNATURE_PREFIX):
            raise refuse(f"unexpected member {m.name!r} after {names[3]}")
        kind = m.name[len(SIGNATURE_PREFIX):]
        if not kind or len(kind) > 10:
            raise refuse(f"{m.name!r} is not a debsigs signature member name")
        if kind in signatures:
            raise refuse(f"signature member {m.name!r} appears twice")
        signatures[kind] = m
    return SignedLayout((members[0], members[2], members[3]), signatures)


def _send_range(fd_out: int, fd_in: int, offset: int, size: int) -> None:
    """Copy a file range to a pipe or file, in the kernel when it can."""
    use_sendfile = hasattr(os, "sendfile")
    while size:
        chunk = min(size, 1 << 20)
        if use_sendfile:
            try:
                n = os.sendfile(fd_out, fd_in, offset, chunk)
            except OSError as e:
                if e.errno not in (errno.EINVAL, errno.ENOSYS, errno.EOPNOTSUPP):
                    raise
                use_sendfile = False
                continue
        else:
            data = os.pread(fd_in, chunk, offset)
            n = len(data)
            view = memoryview(data)
            while view:
                view = view[os.write(fd_out, view):]
        if n == 0:
            raise ArchiveError("the package shrank while it was being read")
        offset += n
        size -= n


def send_members(fd_out: int, f: BinaryIO, members: Sequence[ArMember]) -> None:
    """Write the members' contents, concatenated, to ``fd_out`` (a pipe)."""
    fd_in = f.fileno()
    for m in members:
        _send_range(fd_out, fd_in, m.offset, m.size)
