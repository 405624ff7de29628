"""An archive's signed index, read without apt: ``InRelease`` checked by ``gpgv``
against the pinned keys, then each ``Packages`` file checked against the SHA-256
the signed text gives it.

Only what ``gpgv`` says was signed is read (its ``--output``), never the
clear-signed file itself, so text an attacker puts around the signed part is never
seen.  A release whose ``Valid-Until`` has passed is refused (a mirror replaying an
old, vulnerable index), as apt refuses it.
"""

from __future__ import annotations

import bz2
import gzip
import lzma
import os
import shutil
import subprocess
import tempfile
import time
from dataclasses import dataclass
from email.utils import parsedate_to_datetime
from pathlib import Path

from .. import _console
from ..errors import SysrootError
from ..signing.gpg import parse_status
from .fetch import Missing, fetch_bytes
from .keys import KEYS
from .profiles import Archive

__all__ = ["Candidate", "Release", "read_packages", "read_release"]

#: Compressed forms of Packages, the smallest first.
_FORMS = ((".xz", lzma.decompress), (".gz", gzip.decompress), (".bz2", bz2.decompress),
          ("", bytes))
_FIELDS = {"Package", "Version", "Architecture", "Depends", "Pre-Depends", "Provides",
           "Filename", "Size", "SHA256", "Essential"}


@dataclass(frozen=True)
class Candidate:
    """One package of an index, as the resolver and the downloader need it."""

    name: str
    version: str
    arch: str
    filename: str  # its path on the archive (pool/...)
    size: int
    sha256: str
    depends: str
    pre_depends: str
    provides: str
    base_url: str  # the mirror it comes from
    archive: str  # its archive's name

    @property
    def deb_name(self) -> str:
        """The file name apt gives it in its cache (``name_version_arch.deb``, the
        epoch's ':' quoted), so both routes share one pool."""
        return f"{self.name}_{self.version.replace(':', '%3a')}_{self.arch}.deb"


@dataclass(frozen=True)
class Release:
    suite: str
    files: dict[str, tuple[int, str]]  # path -> (size, sha256)


def _verified_text(archive: Archive, data: bytes, keyring: bytes, where: str) -> str:
    gpgv = shutil.which("gpgv")
    if gpgv is None:
        raise SysrootError("gpgv is not installed: it checks the archive's signature "
                           "(install gnupg, or gpgv, with your system's package manager)")
    key = KEYS[archive.key]
    with tempfile.TemporaryDirectory(prefix="click-build-release.") as scratch:
        keys = Path(scratch, "keys.gpg")
        keys.write_bytes(keyring)
        signed = Path(scratch, "InRelease")
        signed.write_bytes(data)
        out = Path(scratch, "Release")
        result = subprocess.run(
            [gpgv, "--status-fd", "1", "--keyring", str(keys), "--output", str(out),
             str(signed)],
            capture_output=True, env={**os.environ, "LC_ALL": "C", "LANGUAGE": "C"})
        statuses = parse_status(result.stdout.decode("utf-8", "replace"))
        if any(s.result == "bad" for s in statuses):
            raise SysrootError(f"{where}: a signature of the {archive.name} archive's index "
                               "is BAD: the file was changed after it was signed")
        good = [s for s in statuses if s.result == "good" and key.matches(s.primary_fingerprint)]
        if not good or not out.is_file():
            raise SysrootError(
                f"{where}: not signed by a {archive.name} archive key click-build trusts "
                f"({', '.join(key.fingerprints)})")
        return out.read_text(encoding="utf-8", errors="replace")


def _fields(text: str) -> dict[str, str]:
    fields: dict[str, str] = {}
    current = ""
    for line in text.split("\n"):
        if line[:1] in (" ", "\t"):
            if current:
                fields[current] += "\n" + line.strip()
        elif ":" in line:
            current, _, value = line.partition(":")
            fields[current] = value.strip()
    return fields


def read_release(archive: Archive, url: str, suite: str, keyring: bytes) -> Release:
    where = f"{url}/dists/{suite}/InRelease"
    text = _verified_text(archive, fetch_bytes(archive, where, 16 << 20), keyring, where)
    fields = _fields(text)
    if suite not in (fields.get("Suite"), fields.get("Codename")):
        raise SysrootError(f"{where}: the signed index is of {fields.get('Codename')!r}, not "
                           f"{suite!r} (a mirror serving the wrong release?)")
    valid = fields.get("Valid-Until")
    if valid:
        try:
            until = parsedate_to_datetime(valid).timestamp()
        except (TypeError, ValueError):
            raise SysrootError(f"{where}: Valid-Until {valid!r} is not a date") from None
        if until < time.time():
            raise SysrootError(f"{where}: expired on {valid} (a stale mirror? try another)")
    files: dict[str, tuple[int, str]] = {}
    for line in fields.get("SHA256", "").split("\n"):
        parts = line.split()
        if len(parts) == 3 and parts[1].isdigit():
            files[parts[2]] = (int(parts[1]), parts[0])
    return Release(suite, files)


def _stanzas(text: str) -> list[dict[str, str]]:
    out = []
    for block in text.split("\n\n"):
        fields: dict[str, str] = {}
        for line in block.split("\n"):
            if not line or line[0] in " \t":
                continue
            name, _, value = line.partition(":")
            if name in _FIELDS:
                fields[name] = value.strip()
        if "Package" in fields:
            out.append(fields)
    return out


def read_packages(archive: Archive, url: str, release: Release, component: str, arch: str,
                  ) -> list[Candidate]:
    """The packages of one component for ``arch`` (``Architecture: all`` ones are in
    the same index); [] with a warning when the index cannot be had."""
    import hashlib

    base = f"{component}/binary-{arch}/Packages"
    for suffix, unpack in _FORMS:
        entry = release.files.get(base + suffix)
        if entry is None:
            continue
        size, sha256 = entry
        where = f"{url}/dists/{release.suite}/{base}{suffix}"
        try:
            data = fetch_bytes(archive, where, max(size, 1) + 1)
        except Missing:
            continue
        if len(data) != size or hashlib.sha256(data).hexdigest() != sha256:
            _console.warn(f"{where}: not the file the signed index names (a mirror in the "
                          "middle of a sync?); going on without it")
            return []
        text = unpack(data).decode("utf-8", "replace")
        found = []
        for f in _stanzas(text):
            if f.get("Architecture") not in (arch, "all"):
                continue
            try:
                found.append(Candidate(
                    f["Package"], f["Version"], f["Architecture"], f["Filename"],
                    int(f["Size"]), f["SHA256"], f.get("Depends", ""), f.get("Pre-Depends", ""),
                    f.get("Provides", ""), url, archive.name))
            except (KeyError, ValueError):
                continue  # a stanza without what a download needs
        return found
    if release.suite.endswith(("-updates", "-security")) or not release.files:
        return []
    _console.warn(f"{url}/dists/{release.suite}: no {base} index; going on without it")
    return []
