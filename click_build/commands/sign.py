"""``sign``: add a debsigs signature to a package (the original cannot sign)."""

from __future__ import annotations

import argparse

__all__ = ["register"]


def register(subparsers: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    p = subparsers.add_parser(
        "sign", help="sign a package (debsigs-compatible _gpgorigin)",
        description=(
            "Add a debsigs signature to PACKAGE-FILE in place: an ar member _gpg<TYPE> "
            "holding a detached OpenPGP signature (SHA-512) over debian-binary, "
            "control.tar.* and data.tar.*, as 'debsigs --sign=TYPE' writes it. An existing "
            "signature of the same type is replaced; the file is rewritten atomically. "
            "debsig-verify, the original 'click' and 'click-build verify/install' accept it "
            "when the key is trusted on the device (see docs/signing.md)."
        ),
    )
    p.add_argument("path", metavar="PACKAGE-FILE", help="a .click file")
    p.add_argument(
        "-k", "--key", metavar="KEYID",
        help="sign with this key (ID, fingerprint or user ID; default: gpg's default key)",
    )
    p.add_argument(
        "--gpg-homedir", metavar="DIR",
        help="use this GnuPG home directory (default: $GNUPGHOME or ~/.gnupg)",
    )
    p.add_argument(
        "--type", dest="sig_type", choices=("origin", "maint", "archive"), default="origin",
        help="signature type: origin (the distributor or store; what devices check, the "
             "default), maint (the package's maintainer) or archive",
    )
    p.set_defaults(func=run_sign)


def run_sign(args: argparse.Namespace) -> int:
    from .._console import info
    from ..sign import sign_package

    result = sign_package(args.path, args.key, args.gpg_homedir, args.sig_type)
    action = "replaced" if result.replaced else "added"
    info(f"{result.path}: {action} {result.member} signed by {result.fingerprint} "
         f"({result.digest})")
    return 0
