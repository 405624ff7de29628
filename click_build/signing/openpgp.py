"""Just enough OpenPGP (RFC 4880) to judge a debsigs signature before gpgv sees it.

gpgv checks the cryptography; this module checks the *shape*: a ``_gpg*``
member must hold exactly one binary, detached, document signature and nothing
else.  Anything more (a second signature, a literal-data packet that would let
gpgv verify embedded data instead of the package, armour, trailing bytes) is
refused here, so what gpgv verifies is always the package bytes.  It also
reads the issuer, which selects debsig-verify keyrings, and the digest, so a
weak one gets a precise message.  Key blocks are dearmoured for gpgv, which
reads only binary keyrings.
"""

from __future__ import annotations

import base64
from dataclasses import dataclass

from ..errors import SignatureError

__all__ = [
    "HASH_NAMES",
    "WEAK_HASHES",
    "SignaturePacket",
    "check_keyring",
    "dearmor",
    "is_armored",
    "parse_signature",
    "split_packets",
]

HASH_NAMES = {
    1: "MD5", 2: "SHA1", 3: "RIPEMD160", 8: "SHA256", 9: "SHA384", 10: "SHA512",
    11: "SHA224", 12: "SHA3-256", 14: "SHA3-512",
}
#: Digests gpg itself treats as broken for signatures over data.
WEAK_HASHES = frozenset({1, 2, 3})
PUBKEY_NAMES = {1: "RSA", 3: "RSA", 17: "DSA", 19: "ECDSA", 22: "EdDSA", 27: "Ed25519", 28: "Ed448"}
_SIGNATURE_TAG = 2
#: Packets a keyring starts with: a secret key (5, ``gpg --export-secret-keys``) or a
#: public key (6, ``gpg --export``).
_KEY_TAGS = frozenset({5, 6})
#: A GnuPG keybox (``pubring.kbx``) starts with a blob whose bytes 8..11 are this.
_KEYBOX_MAGIC = b"KBXf"
_BINARY_DOCUMENT = 0x00
_ARMOR_HEAD = b"-----BEGIN PGP "


@dataclass(frozen=True)
class SignaturePacket:
    """The facts of one signature packet that verification decisions need."""

    version: int
    sig_class: int
    pubkey_algo: int
    hash_algo: int
    created: int
    issuer_key_id: str  # 16 upper-case hex digits, "" when absent
    issuer_fingerprint: str  # 40 (v4) upper-case hex digits, "" when absent

    @property
    def hash_name(self) -> str:
        return HASH_NAMES.get(self.hash_algo, f"digest #{self.hash_algo}")

    @property
    def pubkey_name(self) -> str:
        return PUBKEY_NAMES.get(self.pubkey_algo, f"algorithm #{self.pubkey_algo}")

    @property
    def issuer(self) -> str:
        """The best name of the signing key: its fingerprint, else its key ID."""
        return self.issuer_fingerprint or self.issuer_key_id


class _Bad(Exception):
    """A structural problem; the caller adds which member it is in."""


def _length(buf: bytes, pos: int, two_octet_below: int) -> tuple[int, int]:
    """An RFC 4880 variable length at ``pos``: (length, position after it).

    Packets use 192..223 for two-octet lengths (224..254 are partial bodies),
    subpackets 192..254; both use 255 for a four-octet length.
    """
    if pos >= len(buf):
        raise _Bad("a length is truncated")
    first = buf[pos]
    if first < 192:
        return first, pos + 1
    if first < two_octet_below:
        if pos + 1 >= len(buf):
            raise _Bad("a length is truncated")
        return ((first - 192) << 8) + buf[pos + 1] + 192, pos + 2
    if first == 255:
        if pos + 5 > len(buf):
            raise _Bad("a length is truncated")
        return int.from_bytes(buf[pos + 1 : pos + 5], "big"), pos + 5
    raise _Bad("it uses partial body lengths, which a signature never needs")


def _packet(data: bytes, pos: int) -> tuple[int, int, int]:
    """(tag, body start, body end) of the packet at ``pos``."""
    if pos >= len(data):
        raise _Bad("it ends where a packet header was expected")
    ctb = data[pos]
    if not ctb & 0x80:
        raise _Bad(f"byte {pos} is not an OpenPGP packet header")
    if ctb & 0x40:  # new format
        tag = ctb & 0x3F
        length, start = _length(data, pos + 1, two_octet_below=224)
    else:
        tag = (ctb >> 2) & 0x0F
        width = {0: 1, 1: 2, 2: 4}.get(ctb & 3)
        if width is None:
            raise _Bad("it uses an indeterminate packet length")
        length = int.from_bytes(data[pos + 1 : pos + 1 + width], "big")
        start = pos + 1 + width
    end = start + length
    if end > len(data) or start > len(data):
        raise _Bad("a packet is truncated")
    return tag, start, end


def split_packets(data: bytes) -> list[tuple[int, int, int, int]]:
    """(tag, header start, body start, body end) of each packet of ``data``; ValueError
    when it is not a sequence of whole packets."""
    out = []
    pos = 0
    try:
        while pos < len(data):
            tag, start, end = _packet(data, pos)
            out.append((tag, pos, start, end))
            pos = end
    except _Bad as e:
        raise ValueError(str(e)) from None
    return out


def _subpackets(area: bytes) -> dict[int, bytes]:
    found: dict[int, bytes] = {}
    pos = 0
    while pos < len(area):
        length, pos = _length(area, pos, two_octet_below=255)
        if length < 1 or pos + length > len(area):
            raise _Bad("a subpacket is truncated")
        kind = area[pos] & 0x7F
        found.setdefault(kind, area[pos + 1 : pos + length])
        pos += length
    return found


def _parse_body(body: bytes) -> SignaturePacket:
    if not body:
        raise _Bad("the signature packet is empty")
    version = body[0]
    if version == 3:
        if len(body) < 19 or body[1] != 5:
            raise _Bad("the version 3 signature packet is malformed")
        return SignaturePacket(
            3, body[2], body[15], body[16], int.from_bytes(body[3:7], "big"),
            body[7:15].hex().upper(), "",
        )
    if version != 4:
        raise _Bad(f"it is a version {version} signature; only versions 3 and 4 are supported")
    if len(body) < 6:
        raise _Bad("the signature packet is truncated")
    hashed_len = int.from_bytes(body[4:6], "big")
    hashed_end = 6 + hashed_len
    if hashed_end + 2 > len(body):
        raise _Bad("the signature packet is truncated")
    unhashed_len = int.from_bytes(body[hashed_end : hashed_end + 2], "big")
    unhashed_end = hashed_end + 2 + unhashed_len
    if unhashed_end + 2 > len(body):
        raise _Bad("the signature packet is truncated")
    hashed = _subpackets(body[6:hashed_end])
    unhashed = _subpackets(body[hashed_end + 2 : unhashed_end])
    created = hashed.get(2, b"")
    if len(created) != 4:
        raise _Bad("the signature has no creation time")
    key_id = hashed.get(16) or unhashed.get(16) or b""
    fpr = hashed.get(33) or unhashed.get(33) or b""
    fingerprint = fpr[1:].hex().upper() if len(fpr) > 1 else ""
    issuer_key_id = key_id.hex().upper() if len(key_id) == 8 else fingerprint[-16:]
    return SignaturePacket(
        4, body[1], body[2], body[3], int.from_bytes(created, "big"), issuer_key_id, fingerprint,
    )


def parse_signature(data: bytes, what: str) -> SignaturePacket:
    """The single detached binary-document signature in ``data``, or an error.

    ``what`` names the member (``_gpgorigin``) in the error message.
    """
    prefix = f"Signature verification error: {what}"
    if data.lstrip().startswith(_ARMOR_HEAD):
        raise SignatureError(
            f"{prefix} is an ASCII-armoured signature; debsigs signatures are binary "
            "(sign again with 'click-build sign')"
        )
    try:
        packets = []
        pos = 0
        while pos < len(data):
            tag, start, end = _packet(data, pos)
            packets.append((tag, data[start:end]))
            pos = end
        if not packets:
            raise _Bad("it is empty")
        tags = [tag for tag, _ in packets]
        if tags.count(_SIGNATURE_TAG) > 1:
            raise _Bad(
                f"it holds {tags.count(_SIGNATURE_TAG)} signatures where debsigs writes exactly one"
            )
        if tags != [_SIGNATURE_TAG]:
            raise _Bad(f"it holds OpenPGP packets of types {tags}, not just one signature")
        packet = _parse_body(packets[0][1])
    except _Bad as e:
        raise SignatureError(f"{prefix} is not a valid detached OpenPGP signature: {e}") from None
    if packet.sig_class != _BINARY_DOCUMENT:
        raise SignatureError(
            f"{prefix} is a signature of class 0x{packet.sig_class:02x}; a package "
            "signature must be a binary document signature (class 0x00)"
        )
    if packet.hash_algo in WEAK_HASHES:
        raise SignatureError(
            f"{prefix} uses the {packet.hash_name} digest, which gpg no longer accepts "
            "for signatures; sign the package again with 'click-build sign'"
        )
    return packet


def is_armored(head: bytes) -> bool:
    return head.lstrip().startswith(_ARMOR_HEAD)


def dearmor(text: bytes, what: str) -> bytes:
    """The binary packets of every armoured block in ``text`` (``gpg --dearmor``)."""
    out = bytearray()
    lines = text.decode("ascii", "replace").splitlines()
    i = 0
    while i < len(lines):
        line = lines[i].strip()
        i += 1
        if not (line.startswith("-----BEGIN PGP ") and line.endswith("-----")):
            continue
        while i < len(lines) and lines[i].strip():  # armour headers
            if ":" not in lines[i]:
                break  # no header block: the body starts at once
            i += 1
        body: list[str] = []
        while i < len(lines) and not lines[i].strip().startswith("-----END PGP "):
            part = lines[i].strip()
            if part and not (part.startswith("=") and len(part) == 5):  # CRC24 line: optional
                body.append(part)
            i += 1
        if i >= len(lines):
            raise SignatureError(f"{what}: an armoured block has no END line")
        i += 1
        try:
            out += base64.b64decode("".join(body), validate=True)
        except ValueError:  # binascii.Error, or a non-ASCII byte (read as U+FFFD)
            raise SignatureError(f"{what}: an armoured block is not valid base64") from None
    if not out:
        raise SignatureError(f"{what}: no armoured OpenPGP block found")
    return bytes(out)


def check_keyring(data: bytes, what: str) -> None:
    """Refuse ``data`` unless it is a keybox or a stream of OpenPGP packets that starts
    with a key.

    gpgv takes anything as a keyring and, at the first byte that is no packet, stops
    searching every keyring, the good ones after it too: the signer would be reported
    missing from keyrings that hold it, and an empty file (``gpg --export`` of a
    wrong name) as simply not holding it.  ``what`` names the file in the message.
    """
    prefix = f"Signature verification error: {what}"
    if data[8:12] == _KEYBOX_MAGIC:
        return
    if not data:
        raise SignatureError(f"{prefix} is empty: it holds no key (did 'gpg --export' "
                             "find the key you named?)")
    try:
        tag, _, pos = _packet(data, 0)
        if tag not in _KEY_TAGS:
            raise _Bad(f"its first packet is of type {tag}, not a key")
        while pos < len(data):
            _, _, pos = _packet(data, pos)
    except _Bad as e:
        raise SignatureError(f"{prefix} is not an OpenPGP keyring ({e}); give one made by "
                             "'gpg --export' (binary or --armor) or a keybox") from None
