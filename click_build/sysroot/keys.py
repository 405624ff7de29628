"""The archive keys a root is made with: pinned fingerprints, shipped public keys.

Each archive's index (``InRelease``) is trusted only when signed by a key whose
primary fingerprint click-build pins here.  The public keys of Debian's and
Ubuntu's archives ship with click-build (``keys/*.asc``): hosts without apt
(Fedora, Arch, macOS) have no Debian or Ubuntu keyring, and a Debian host has no
Ubuntu one.  A key file is used only for the keys in it whose fingerprints are
pinned, so a keyring that also holds other keys (the system's, or one a user
names) lends them no trust.

Where the fingerprints come from:

- Debian: ``/usr/share/keyrings/debian-archive-keyring.gpg`` of Debian 12
  (``debian-archive-keyring`` 2023.3+deb12u2): the bookworm archive key, the trixie archive
  key (bookworm's ``InRelease`` carries both signatures) and the bookworm stable
  release key.
- Ubuntu: ``ubuntu-archive-keyring.gpg`` of Debian's ``ubuntu-keyring``
  2023.11.28.1: the 2018 archive key (focal and noble) and the 2012 one (focal's
  older signatures).
- UBports: the repository's key, "UBports build <infra@ubports.com>", is known
  here by its long key ID only (apt's NO_PUBKEY message in ubports/ubuntu-touch
  issue 390); this machine cannot reach repo.ubports.com to read the full
  fingerprint or the key, so it is not shipped: the user names the keyring file
  (``repo.ubports.com/keyring.gpg``) and its key must carry that key ID.
"""

from __future__ import annotations

import hashlib
import os
from dataclasses import dataclass
from pathlib import Path

from ..errors import SysrootError
from ..signing.openpgp import dearmor, is_armored, split_packets

__all__ = ["KEYS", "ArchiveKey", "key_packets", "pinned_keyring", "primary_fingerprints"]

_KEYS_DIR = Path(__file__).resolve().parent / "keys"
_PUBLIC_KEY = 6


@dataclass(frozen=True)
class ArchiveKey:
    """The keys one archive signs with, and where click-build finds them."""

    name: str
    #: Pinned primary keys: 40 hex digits (a v4 fingerprint), or 16 (a long key ID)
    #: where the full fingerprint could not be confirmed.
    fingerprints: tuple[str, ...]
    #: A key file shipped with click-build (in ``keys/``), or None.
    shipped: str | None
    #: The setting that names a keyring file instead (an environment variable).
    setting: str
    #: Keyring files other systems keep these keys in, tried when nothing is set.
    system_paths: tuple[str, ...] = ()

    def matches(self, fingerprint: str) -> bool:
        return any(fingerprint.endswith(pin) for pin in self.fingerprints)


KEYS = {
    "debian": ArchiveKey(
        "debian",
        ("B8B80B5B623EAB6AD8775C45B7C5D7D6350947F8",  # archive key 12/bookworm
         "04B54C3CDCA79751B16BC6B5225629DF75B188BD",  # archive key 13/trixie
         "4D64FEC119C2029067D6E791F8D2585B8783D481"),  # stable release key 12/bookworm
        "debian-archive.asc", "CLICK_BUILD_KEYRING_DEBIAN",
        ("/usr/share/keyrings/debian-archive-keyring.gpg",)),
    "ubuntu": ArchiveKey(
        "ubuntu",
        ("F6ECB3762474EDA9D21B7022871920D1991BC93C",  # archive key 2018
         "790BC7277767219C42C86F933B4FE6ACC0B21F32"),  # archive key 2012
        "ubuntu-archive.asc", "CLICK_BUILD_KEYRING_UBUNTU",
        ("/usr/share/keyrings/ubuntu-archive-keyring.gpg",)),
    "ubports": ArchiveKey(
        "ubports",
        ("4BD4B4D6DBB583F1",),  # "UBports build <infra@ubports.com>": long key ID only
        None, "CLICK_BUILD_KEYRING_UBPORTS",
        ("/usr/share/keyrings/ubports-keyring.gpg", "/etc/apt/trusted.gpg.d/ubports.gpg",
         "/etc/apt/keyrings/ubports.gpg")),
}


def _fingerprint(body: bytes) -> str:
    if not body or body[0] != 4:
        return ""  # v3 keys have no SHA-1 fingerprint; none is pinned
    return hashlib.sha1(b"\x99" + len(body).to_bytes(2, "big") + body).hexdigest().upper()


def key_packets(data: bytes, what: str) -> list[tuple[str, bytes]]:
    """Each transferable public key in ``data`` (binary or armoured) as (primary
    fingerprint, its packets)."""
    if is_armored(data[:64]):
        data = dearmor(data, what)
    try:
        packets = split_packets(data)
    except ValueError as e:
        raise SysrootError(f"{what} is not an OpenPGP keyring ({e})") from None
    keys: list[tuple[str, bytearray]] = []
    for tag, header, start, end in packets:
        if tag == _PUBLIC_KEY:
            keys.append((_fingerprint(data[start:end]), bytearray()))
        if keys:
            keys[-1][1].extend(data[header:end])
    return [(fpr, bytes(raw)) for fpr, raw in keys]


def primary_fingerprints(data: bytes, what: str) -> list[str]:
    return [fpr for fpr, _ in key_packets(data, what)]


def _source(key: ArchiveKey, environ: dict[str, str] | os._Environ[str]) -> tuple[str, bytes]:
    named = environ.get(key.setting, "")
    if named:
        path = named
    elif key.shipped:
        path = str(_KEYS_DIR / key.shipped)
    else:
        path = next((p for p in key.system_paths if os.path.isfile(p)), "")
        if not path:
            raise SysrootError(
                f"no keyring for the {key.name} archive: download its key "
                f"(for UBports: http://repo.ubports.com/keyring.gpg) and set {key.setting}=FILE")
    try:
        with open(path, "rb") as f:
            return path, f.read(1 << 20)
    except OSError as e:
        raise SysrootError(f"{path}: cannot read the {key.name} keyring ({e.strerror}); "
                           f"set {key.setting}=FILE to another") from None


def pinned_keyring(key: ArchiveKey, environ: dict[str, str] | os._Environ[str] = os.environ,
                   ) -> bytes:
    """A binary keyring with exactly the pinned keys of ``key`` found in its key file;
    an error naming the file and the setting when it holds none of them."""
    path, data = _source(key, environ)
    found = [(fpr, raw) for fpr, raw in key_packets(data, path) if key.matches(fpr)]
    if not found:
        pins = ", ".join(key.fingerprints)
        raise SysrootError(f"{path} holds none of the {key.name} archive keys click-build "
                           f"trusts ({pins}); set {key.setting}=FILE to a keyring that does")
    return b"".join(raw for _, raw in found)
