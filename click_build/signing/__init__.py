"""debsigs-compatible signatures, split by job; :mod:`click_build.sign` is the public face.

``openpgp`` reads signature packets, ``layout`` knows which members are
signed, ``gpg`` runs gpg/gpgv, ``keyrings`` finds the trusted keys,
``verify`` decides, ``signer`` writes signatures.
"""

from __future__ import annotations

__all__: list[str] = []
