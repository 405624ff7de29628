"""Which keys a device trusts: ``--keyring`` files, else the configured keyrings.

Order of precedence (the first that applies wins):

1. ``--keyring FILE`` options;
2. ``$CLICK_KEYRINGS``: a ``:``-separated list of keyring files or
   directories of them (set but empty: trust no key);
3. every keyring in ``/etc/click/keyrings/`` plus the keyrings that
   debsig-verify would use for the signing key: the ``File=`` of the
   ``origin`` rules of the policies in ``/etc/debsig/policies/<KEYID>/``,
   under ``/usr/share/debsig/keyrings/<KEYID>/``.  One setup then serves
   both the original ``click`` (through debsig-verify) and click-build.

Key files may be binary (``gpg --export``), keybox or ASCII-armoured.
"""

from __future__ import annotations

import os
import xml.etree.ElementTree as ET
from collections.abc import Iterable, Sequence
from pathlib import Path

from ..errors import ConfigError

__all__ = [
    "CLICK_KEYRINGS_DIR",
    "DEBSIG_KEYRINGS_DIR",
    "DEBSIG_POLICIES_DIR",
    "ENV_KEYRINGS",
    "KEYRING_SUFFIXES",
    "debsig_keyrings",
    "describe_sources",
    "same_key",
    "trusted_keyrings",
]

ENV_KEYRINGS = "CLICK_KEYRINGS"
CLICK_KEYRINGS_DIR = Path("/etc/click/keyrings")
DEBSIG_POLICIES_DIR = Path("/etc/debsig/policies")
DEBSIG_KEYRINGS_DIR = Path("/usr/share/debsig/keyrings")
KEYRING_SUFFIXES = (".gpg", ".kbx", ".pgp", ".asc", ".pub")


def _keyrings_in(directory: Path) -> list[Path]:
    try:
        entries = sorted(directory.iterdir())
    except FileNotFoundError:
        return []
    except OSError as e:
        raise ConfigError(f"keyring directory {directory}: cannot list: {e.strerror}") from None
    # An empty file in a directory holds no key and is passed over; one named on its
    # own (--keyring, $CLICK_KEYRINGS) is refused as a mistake (gpg.check_keyring).
    return [p for p in entries
            if p.suffix in KEYRING_SUFFIXES and p.is_file() and p.stat().st_size > 0]


def _checked(paths: Iterable[Path], origin: str) -> list[Path]:
    out = []
    for path in paths:
        if path.is_dir():
            found = _keyrings_in(path)
            if not found and origin == "--keyring":
                # Named on purpose, unlike a device's configured folder that may be empty:
                # "no trusted keyring is configured" would blame the wrong thing.
                raise ConfigError(
                    f"keyring {path} (from {origin}) is a directory holding no keyring "
                    f"({', '.join('*' + s for s in KEYRING_SUFFIXES)}); name the keyring file"
                )
            out += found
        elif path.is_file():
            out.append(path)
        else:
            raise ConfigError(f"keyring {path} (from {origin}) does not exist or is not a file")
    return out


def same_key(a: str, b: str) -> bool:
    """debsig-verify's ``eqKeyID``: IDs and fingerprints match on their common suffix."""
    a, b = a.upper(), b.upper()
    n = min(len(a), len(b))
    return n > 0 and a[-n:] == b[-n:]


def debsig_keyrings(
    issuer_fpr: str,
    issuer_key_id: str,
    policies_dir: Path = DEBSIG_POLICIES_DIR,
    keyrings_dir: Path = DEBSIG_KEYRINGS_DIR,
) -> list[Path]:
    """The keyrings debsig-verify's policies name for this signing key.

    As debsig-verify, look for the policy directory named by the full
    fingerprint, then by the long key ID; read the ``File`` of every
    ``origin`` rule in its ``Verification`` group whose ``id`` (if any) is
    this key.  Other rules (maint, archive, MinOptional, Expiry) stay
    debsig-verify's business.
    """
    candidates = [i for i in (issuer_fpr, issuer_key_id) if i]
    for key in candidates:
        directory = policies_dir / key
        if directory.is_dir():
            break
    else:
        return []
    found: list[Path] = []
    for policy in sorted(directory.glob("*.pol")):
        try:
            root = ET.parse(policy).getroot()
        except (ET.ParseError, OSError):
            continue  # debsig-verify skips a policy it cannot parse, too
        for rule in root.iterfind("{*}Verification/*"):
            if rule.get("Type") != "origin" or not rule.get("File"):
                continue
            rule_id = rule.get("id")
            if rule_id and not any(same_key(rule_id, c) for c in candidates):
                continue
            path = keyrings_dir / key / str(rule.get("File"))
            if path.is_file() and path not in found:
                found.append(path)
    return found


def trusted_keyrings(
    explicit: Sequence[os.PathLike[str] | str], issuer_fpr: str = "", issuer_key_id: str = ""
) -> list[Path]:
    """The keyring files to hand gpgv for a signature by the given issuer."""
    if explicit:
        return _checked((Path(p) for p in explicit), "--keyring")
    env = os.environ.get(ENV_KEYRINGS)
    if env is not None:
        return _checked((Path(p) for p in env.split(os.pathsep) if p), f"${ENV_KEYRINGS}")
    found = _keyrings_in(CLICK_KEYRINGS_DIR)
    return found + debsig_keyrings(issuer_fpr, issuer_key_id)


def describe_sources(explicit: Sequence[object]) -> str:
    """Where keys were looked for, for an "unknown key" message."""
    if explicit:
        return "the --keyring files"
    if os.environ.get(ENV_KEYRINGS) is not None:
        return f"the keyrings in ${ENV_KEYRINGS}"
    return (
        f"{CLICK_KEYRINGS_DIR}/ or the debsig-verify policies in {DEBSIG_POLICIES_DIR}/"
    )
