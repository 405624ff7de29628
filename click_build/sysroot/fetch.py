"""Downloads from an archive or its mirror, with the one error line a user can act on.

An archive that cannot be reached is named by its host and by the setting that
points click-build at a mirror (people sit behind proxies and local mirrors);
``http_proxy``/``https_proxy`` are honoured as everywhere else.
"""

from __future__ import annotations

import hashlib
import urllib.error
import urllib.parse
import urllib.request
from pathlib import Path

from .. import __version__
from ..atomicfile import AtomicFile
from ..errors import SysrootError
from .profiles import Archive

__all__ = ["Unreachable", "download", "fetch_bytes", "host_of", "unreachable"]

TIMEOUT = 60
_CHUNK = 1 << 18


class Unreachable(SysrootError):
    """The archive's host did not answer (name, connection, timeout)."""


class Missing(SysrootError):
    """The archive answered that a file is not there (HTTP 404)."""


def host_of(url: str) -> str:
    return urllib.parse.urlsplit(url).hostname or url


def unreachable(archive: Archive, url: str, reason: str) -> Unreachable:
    return Unreachable(
        f"cannot reach {host_of(url)} ({reason}) for the {archive.name} archive; point "
        f"click-build at a mirror you can reach: {archive.setting}=URL (or --mirror "
        f"{archive.name}=URL)")


def _open(archive: Archive, url: str) -> urllib.response.addinfourl:
    request = urllib.request.Request(url, headers={"User-Agent": f"click-build/{__version__}"})
    try:
        return urllib.request.urlopen(request, timeout=TIMEOUT)  # type: ignore[no-any-return]
    except urllib.error.HTTPError as e:
        if e.code in (403, 404, 410):
            raise Missing(f"{url}: not on the {archive.name} archive ({e.code} {e.reason})") \
                from None
        raise unreachable(archive, url, f"{e.code} {e.reason}") from None
    except urllib.error.URLError as e:
        reason = e.reason
        text = getattr(reason, "strerror", None) or str(reason)
        if isinstance(reason, FileNotFoundError):
            raise Missing(f"{url}: not on the {archive.name} mirror") from None
        raise unreachable(archive, url, text) from None
    except (OSError, ValueError) as e:  # a timeout, a reset connection, a bad URL
        raise unreachable(archive, url, str(e) or type(e).__name__) from None


def fetch_bytes(archive: Archive, url: str, limit: int = 64 << 20) -> bytes:
    """A small file (an index), whole; refused beyond ``limit`` bytes."""
    with _open(archive, url) as response:
        data = response.read(limit + 1)
    if len(data) > limit:
        raise SysrootError(f"{url}: larger than {limit} bytes; not an archive index")
    return data


def download(archive: Archive, url: str, dest: Path, size: int, sha256: str) -> None:
    """``url`` into ``dest`` (atomically), checked against the size and SHA-256 the
    signed index gives; a file already there with that hash is kept."""
    if dest.is_file() and dest.stat().st_size == size and _sha256(dest) == sha256:
        return
    digest = hashlib.sha256()
    got = 0
    with _open(archive, url) as response, AtomicFile(dest) as out:
        while got <= size:
            chunk = response.read(_CHUNK)
            if not chunk:
                break
            got += len(chunk)
            digest.update(chunk)
            out.file.write(chunk)
        if got != size or digest.hexdigest() != sha256:
            raise SysrootError(f"{url}: {got} bytes with SHA-256 {digest.hexdigest()[:16]}..., "
                               f"not the {size} bytes the signed index names (a mirror in "
                               "the middle of a sync? try again, or another mirror)")
        out.publish()


def _sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as f:
        while chunk := f.read(1 << 20):
            digest.update(chunk)
    return digest.hexdigest()
