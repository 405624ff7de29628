"""Deciding whether a package's debsigs signatures make it trustworthy.

The rule, as debsig-verify with a generic policy and the original installer:

* the ``_gpgorigin`` signature must be a good signature, over this package's
  bytes, by a key in the trusted keyrings, neither expired nor revoked;
* an unsigned package, or one signed by a key we do not have, passes only
  with ``allow_unauthenticated`` (with a warning), as the original;
* anything that shows tampering always fails: a bad signature, a malformed
  signature member, members out of place, a signature of another type that
  the trusted keys show to be bad.

Every refusal starts with ``Signature verification error:`` (or, unsigned,
contains debsig-verify's "Origin Signature check failed" line), as the
original prints them, so scripts matching its messages keep working.
"""

from __future__ import annotations

import os
import time
from collections.abc import Sequence
from functools import partial

from ..arread import ArMember
from ..errors import SignatureError
from ..spec import SIGNATURE_PREFIX
from .layout import send_members, signed_layout
from .verdict import ERR as _ERR
from .verdict import NO_SIGNATURE, Verified, signature_members, unsigned
from .verdict import untrusted as _untrusted

TYPE_CHECKING = False  # not typing.TYPE_CHECKING: importing typing costs start-up time

if TYPE_CHECKING:  # the gpg plumbing loads only for packages that carry a signature
    from typing import BinaryIO

    from .gpg import SignatureStatus
    from .openpgp import SignaturePacket


__all__ = ["MAX_SIGNATURE_SIZE", "NO_SIGNATURE", "Verified", "verify_members"]

MAX_SIGNATURE_SIZE = 64 * 1024
ORIGIN = "origin"


def _date(ts: int) -> str:
    return time.strftime("%Y-%m-%d", time.gmtime(ts)) if ts else "an unknown date"


def _read_signature(f: BinaryIO, member: ArMember, where: str) -> tuple[bytes, SignaturePacket]:
    from .openpgp import parse_signature

    if member.size > MAX_SIGNATURE_SIZE:
        raise SignatureError(
            f"{_ERR}{where}: {member.name} is {member.size} bytes, far too large for a signature"
        )
    data = os.pread(f.fileno(), member.size, member.offset)
    return data, parse_signature(data, f"{where}: {member.name}")


def _judge_origin(st: SignatureStatus, packet: SignaturePacket, name: str, where: str,
                  sources: str, allow: bool) -> Verified:
    from .keyrings import same_key

    key = st.primary_fingerprint or st.fingerprint or packet.issuer or st.key_id
    who = f"key {key}" + (f" ({st.user_id})" if st.user_id else "")
    if st.result == "good":
        if packet.issuer and not any(
            same_key(packet.issuer, fpr) for fpr in (st.fingerprint, st.primary_fingerprint)
        ):
            raise SignatureError(
                f"{_ERR}{where}: {name} names key {packet.issuer} as its signer but was "
                f"made by {key}"
            )
        return Verified(True, key, st.user_id)
    if st.result == "no-key":
        return _untrusted(
            f"{_ERR}{where}: {name} was made by key {key}, which is not in {sources}", allow
        )
    if st.result == "bad":
        raise SignatureError(
            f"{_ERR}{where}: BAD signature in {name} from {who}: the signed members do not "
            "match it, the package was altered after it was signed"
        )
    if st.result == "expired-key":
        raise SignatureError(f"{_ERR}{where}: {name} was made by {who}, which expired on "
                             f"{_date(st.expires)}")
    if st.result == "revoked-key":
        raise SignatureError(f"{_ERR}{where}: {name} was made by {who}, which has been revoked")
    if st.result == "expired-sig":
        raise SignatureError(f"{_ERR}{where}: {name} by {who} expired on {_date(st.expires)}")
    detail = f" (gpgv error code {st.detail})" if st.detail else ""
    raise SignatureError(f"{_ERR}{where}: {name} by {who} cannot be checked{detail}")


def verify_members(
    f: BinaryIO,
    members: Sequence[ArMember],
    where: str,
    keyrings: Sequence[os.PathLike[str] | str] = (),
    allow_unauthenticated: bool = False,
) -> Verified:
    """Check the signatures of the ar ``members`` of the open package ``f``."""
    sigs = signature_members(members)
    origin_name = SIGNATURE_PREFIX + ORIGIN
    if not any(m.name == origin_name for m in sigs):
        others = f" (it has only {', '.join(m.name for m in sigs)})" if sigs else ""
        if sigs:
            signed_layout(members, where)  # tampering is refused even when unsigned is allowed
        return unsigned(where, allow_unauthenticated, others)
    from .gpg import gpgv_verify
    from .keyrings import describe_sources, trusted_keyrings

    layout = signed_layout(members, where)
    ordered = [layout.signatures[ORIGIN]] + [
        m for kind, m in layout.signatures.items() if kind != ORIGIN
    ]
    parsed = [_read_signature(f, m, where) for m in ordered]
    origin_packet = parsed[0][1]
    rings = trusted_keyrings(keyrings, origin_packet.issuer_fingerprint, origin_packet.issuer_key_id)
    sources = describe_sources(keyrings)
    if not rings:
        return _untrusted(
            f"{_ERR}{where}: {origin_name} was made by key {origin_packet.issuer}, and no "
            "trusted keyring is configured",
            allow_unauthenticated,
            f" (pass --keyring FILE or see {sources})",
        )
    statuses = gpgv_verify(
        b"".join(data for data, _ in parsed), partial(send_members, f=f, members=layout.signed),
        rings,
    )
    if len(statuses) != len(parsed):
        raise SignatureError(
            f"{_ERR}{where}: gpgv reported {len(statuses)} results for {len(parsed)} signatures"
        )
    for member, st in zip(ordered[1:], statuses[1:]):
        if st.result == "bad":  # other keys may be unknown here; a known one must match
            raise SignatureError(
                f"{_ERR}{where}: BAD signature in {member.name} from key {st.key_id}: the "
                "package was altered after it was signed"
            )
    return _judge_origin(statuses[0], origin_packet, origin_name, where, sources,
                         allow_unauthenticated)
