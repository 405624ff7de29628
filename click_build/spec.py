"""Fixed facts of the Click package format (Click-Version 0.4), in one place.

The builder writes them and the reader, the review and the signer check
them; keeping them here means the two sides cannot drift apart.
"""

from __future__ import annotations

__all__ = [
    "ACCEPTED_PREINSTS",
    "CLICK_VERSION",
    "FORBIDDEN_FIELDS",
    "MAINTAINER_SCRIPTS",
    "SIGNATURE_PREFIX",
    "STATIC_PREINST",
    "click_version_ok",
]

#: The format version this tool writes and the newest it reads.
CLICK_VERSION = "0.4"

#: Dependency fields a Click package may not declare (apps are self-contained).
FORBIDDEN_FIELDS = (
    "Pre-Depends", "Depends", "Recommends", "Suggests", "Enhances", "Conflicts",
    "Breaks", "Provides",
)

#: dpkg's maintainer scripts; only the static ``preinst`` below is allowed.
MAINTAINER_SCRIPTS = ("preinst", "postinst", "prerm", "postrm", "config")

_PREINST_HEAD = b'#! /bin/sh\necho "Click packages may not be installed directly using dpkg."\n'
#: The preinst every package carries: it stops ``dpkg -i`` with a hint.
STATIC_PREINST = _PREINST_HEAD + b"echo \"Use 'click install' instead.\"\nexit 1\n"
#: The current text and the two older wordings the original still accepts.
ACCEPTED_PREINSTS = (
    STATIC_PREINST,
    _PREINST_HEAD + b"echo \"Use 'click-package install' instead.\"\nexit 1\n",
    _PREINST_HEAD + b'echo "Use click-install instead."\nexit 1\n',
)

#: debsigs signature members: ``_gpgorigin``, ``_gpgmaint``, ``_gpgarchive``...
SIGNATURE_PREFIX = "_gpg"


def click_version_ok(value: str) -> bool:
    """Is ``value`` a format version this tool reads (dotted digits, at most CLICK_VERSION)?"""
    from .versions import compare_versions  # only readers need it

    parts = value.split(".")
    return (all(p.isdigit() and p.isascii() for p in parts)
            and compare_versions(value, CLICK_VERSION) <= 0)
