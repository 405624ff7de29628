"""debsigs-compatible package signatures (``_gpgorigin`` and friends).

A signed Click package carries, after its ``data.tar.*`` member, one
``_gpg<type>`` member per signature (debsigs' format): a binary detached
OpenPGP signature over ``debian-binary`` + ``control.tar.*`` +
``data.tar.*``.  :func:`sign_package` writes them (with SHA-512, which
current gpg accepts where debsigs' default SHA-1 no longer is);
:func:`check_package_signature` and :func:`check_file_signature` decide
whether a package may be trusted, with ``gpgv`` and the trusted keyrings
(see :mod:`click_build.signing.keyrings`).  Only the standard library and
the system's ``gpg``/``gpgv`` are used.
"""

from __future__ import annotations

import io
import os
from collections.abc import Sequence

from .arread import AR_MAGIC, read_ar_members
from .errors import ArchiveError, PackageError, SignatureError
from .signing.verdict import NO_SIGNATURE, Verified, signature_members, unsigned

TYPE_CHECKING = False  # not typing.TYPE_CHECKING: importing typing costs start-up time

if TYPE_CHECKING:
    from typing import BinaryIO

    from .package import ClickPackage
    from .signing.signer import SignResult
    from .signing.signer import sign_file as sign_package


__all__ = [
    "NO_SIGNATURE",
    "SignResult",
    "Verified",
    "check_file_signature",
    "check_package_signature",
    "sign_package",
]


def check_package_signature(
    pkg: ClickPackage,
    keyrings: Sequence[str | os.PathLike[str]] = (),
    allow_unauthenticated: bool = False,
) -> None:
    """Raise :class:`SignatureError` unless ``pkg`` may be trusted.

    ``pkg`` has passed :func:`~click_build.package.open_click`.  It must carry
    a good ``_gpgorigin`` signature by a key in ``keyrings`` (or, without
    them, the configured keyrings).  With ``allow_unauthenticated`` an
    unsigned package, or one signed by an unknown key, passes with a warning,
    as in the original; a bad or tampered signature never does.
    """
    from .signing.verify import verify_members

    verify_members(pkg.file, pkg.members, pkg.path, keyrings, allow_unauthenticated)


def check_file_signature(
    source: str | os.PathLike[str] | BinaryIO,
    keyrings: Sequence[str | os.PathLike[str]] = (),
    allow_unauthenticated: bool = False,
) -> Verified:
    """As :func:`check_package_signature`, on a file not yet opened as a package.

    Run it *before* :func:`~click_build.package.open_click` on the same open
    file: a signed package whose members were moved, injected or replaced is
    then reported as a signature error (as debsig-verify runs first in the
    original) instead of a format error, and the bytes checked are the bytes
    later unpacked.
    """
    if isinstance(source, (str, os.PathLike)):
        where = os.fspath(source)
        try:
            with open(where, "rb") as f:
                return _check_open(f, where, keyrings, allow_unauthenticated)
        except OSError as e:
            raise SignatureError(f"{where}: cannot read: {e.strerror}") from None
    return _check_open(source, str(getattr(source, "name", "<stream>")), keyrings,
                       allow_unauthenticated)


def _check_open(f: BinaryIO, where: str, keyrings: Sequence[str | os.PathLike[str]], allow: bool) -> Verified:
    try:
        members = read_ar_members(f, f.seek(0, io.SEEK_END))
    except ArchiveError as e:
        f.seek(0)
        if f.read(len(AR_MAGIC)) != AR_MAGIC:
            raise PackageError(f"{where}: {e}") from None
        raise SignatureError(
            f"Signature verification error: {where}: {e}: trailing or damaged data, the "
            "file is not the package that was built or signed"
        ) from None
    if not signature_members(members):
        return unsigned(where, allow)  # the signature machinery is loaded only when needed
    from .signing.verify import verify_members

    return verify_members(f, members, where, keyrings, allow)


def __getattr__(name: str) -> object:
    # Signing needs gpg plumbing that verifying an unsigned package never does:
    # load it on first use so `install` and `verify` start fast.
    if name in ("sign_package", "SignResult"):
        from .signing import signer

        return signer.sign_file if name == "sign_package" else signer.SignResult
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
