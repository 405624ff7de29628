"""What a signature check concludes, and the verdict on a package without signatures.

Apart from :mod:`click_build.signing.verify` so that an install of an unsigned
package, the common case when developing, does not load the signature machinery.
"""

from __future__ import annotations

from collections.abc import Sequence

from .. import _console
from .._record import Record
from ..arread import ArMember
from ..errors import SignatureError
from ..spec import SIGNATURE_PREFIX

__all__ = ["ERR", "NO_SIGNATURE", "Verified", "signature_members", "unsigned", "untrusted"]

NO_SIGNATURE = "debsig: Origin Signature check failed. This deb might not be signed."
ERR = "Signature verification error: "


class Verified(Record):
    """The outcome of a check that did not fail."""

    trusted: bool  # False: accepted only because unauthenticated packages were allowed
    fingerprint: str = ""
    user_id: str = ""
    reason: str = ""  # why an accepted package is not trusted


def signature_members(members: Sequence[ArMember]) -> list[ArMember]:
    """The debsigs signature members (``_gpg*``), wherever they stand."""
    return [m for m in members if m.name.startswith(SIGNATURE_PREFIX)]


def untrusted(reason: str, allow: bool, fix: str = "", topic: str = "") -> Verified:
    """Refuse (saying how to fix it), or accept with a short warning when allowed
    (``topic``: the warning's, see ``_console.expecting``)."""
    if not allow:
        raise SignatureError(reason + fix)
    _console.warn(f"{reason.removeprefix(ERR).removeprefix(NO_SIGNATURE + ' ')}; "
                  "accepted (--allow-unauthenticated)", topic=topic)
    return Verified(False, reason=reason)


def unsigned(where: str, allow: bool, others: str = "") -> Verified:
    """The verdict on a package with no ``_gpgorigin`` member (``others``: the
    signature members it has instead, already checked for tampering)."""
    return untrusted(f"{ERR}{NO_SIGNATURE} {where} has no _gpgorigin signature{others}", allow,
                     "; sign it with 'click-build sign' or pass --allow-unauthenticated",
                     topic="unsigned")
