"""debsigs-compatible package signatures (``_gpgorigin`` and friends).

INTERIM: this module is being written (issue 7).  The function below is the
contract the installer and ``verify`` call; today it enforces only the
"unsigned needs --allow-unauthenticated" rule and refuses signed packages it
cannot yet check.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from .errors import SignatureError
from .package import ClickPackage

__all__ = ["check_package_signature"]


def check_package_signature(
    pkg: ClickPackage,
    keyrings: Sequence[Path] = (),
    allow_unauthenticated: bool = False,
) -> None:
    """Raise :class:`SignatureError` unless ``pkg`` may be trusted.

    An unsigned package passes only with ``allow_unauthenticated`` (as the
    original); a signed one must verify against ``keyrings``.
    """
    if allow_unauthenticated:
        return
    if not pkg.signatures:
        raise SignatureError(
            "debsig: Origin Signature check failed. This deb might not be signed. "
            "(use --allow-unauthenticated to accept unsigned packages)"
        )
    raise SignatureError("Signature verification error: signature checking is not available yet")
