"""Making a root without apt (Fedora, Arch, macOS, or on request): click-build reads
the signed indexes, resolves the packages, downloads them in parallel and unpacks
them with its own readers."""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from .. import _console
from ..errors import SysrootError
from .extract import _Root, extract_deb
from .fetch import Missing, download, unreachable
from .index import Candidate, read_packages, read_release
from .profiles import ARCHIVES, Profile
from .resolve import Index, resolve

__all__ = ["make_root_builtin"]

_DOWNLOADS = 6  # parallel connections: most of a download is waiting on the network


def _candidates(profile: Profile, urls: dict[str, str], keyrings: dict[str, bytes],
                ) -> list[Candidate]:
    found: list[Candidate] = []
    failed: list[str] = []
    for source in profile.sources:
        archive = ARCHIVES[source.archive]
        url = urls[source.archive]
        had = 0
        for suite in source.suites:
            try:
                release = read_release(archive, url, suite, keyrings[archive.key])
            except Missing as e:
                failed.append(f"{suite}: {e}")
                continue
            for component in source.components:
                got = read_packages(archive, url, release, component, profile.arch)
                had += len(got)
                found += got
        if not had:
            raise unreachable(archive, url, "no index of its suites could be read: "
                              + "; ".join(failed)) if failed else SysrootError(
                f"{url} has no packages for {profile.arch}")
    if len(failed) > 1:
        raise SysrootError("indexes missing: " + "; ".join(failed))
    for failure in failed:  # one index that failed: a warning, as apt gives
        _console.warn(f"going on without {failure}")
    return found


def make_root_builtin(profile: Profile, urls: dict[str, str], keyrings: dict[str, bytes],
                      pool: Path, root: Path) -> list[Candidate]:
    """Resolve, download into ``pool`` and unpack into ``root``; the packages used."""
    chosen = resolve(profile.packages, Index(_candidates(profile, urls, keyrings)))
    pool.mkdir(parents=True, exist_ok=True)

    def fetch(c: Candidate) -> Path:
        dest = pool / c.deb_name
        download(ARCHIVES[c.archive], f"{c.base_url}/{c.filename}", dest, c.size, c.sha256)
        return dest

    label = f"downloading {len(chosen)} packages for {profile.name} {profile.arch}"
    threads = ThreadPoolExecutor(_DOWNLOADS)
    debs = []
    try:
        with _console.Progress(label, len(chosen)) as progress:
            for deb in threads.map(fetch, chosen):
                debs.append(deb)
                progress.advance()
    finally:  # on a failure, the downloads not yet started are dropped, not waited for
        threads.shutdown(wait=True, cancel_futures=True)
    places = _Root(root)
    with _console.Progress(f"unpacking into {root}", len(debs)) as progress:
        for deb in debs:
            for _ in extract_deb(deb, root, places):
                pass
            progress.advance()
    return chosen
