"""Making a root with a private apt: the host's apt resolves and downloads, as an
ordinary user, and changes nothing on the host.

Its own configuration (``APT_CONFIG``) keeps every folder apt uses inside the
root's work folder: an empty dpkg status ("nothing installed"), its own sources
(``signed-by`` the pinned keys), lists and logs; the downloaded ``.deb`` files go to
the pool all roots share.  ``APT::Architecture`` is the target's, so no
``dpkg --add-architecture`` is needed.  Then ``dpkg -x`` unpacks each package.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import urllib.parse
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from .. import _console
from ..atomicfile import AtomicFile
from ..errors import SysrootError
from .fetch import host_of
from .profiles import ARCHIVES, Profile

__all__ = ["apt_available", "make_root_apt"]

_INST = re.compile(r"^Inst (\S+) (?:\[\S+\] )?\((\S+) .*\[(\S+)\]\)", re.MULTILINE)
_FILE_OF = re.compile(r"(\d+) of (\d+)")
#: apt-get update's line for a release file it has: "Get:1 URI SUITE InRelease [...]".
_FETCHED = re.compile(r"^(?:Hit|Get):\d+ (\S+) (\S+) InRelease", re.MULTILINE)
#: What apt-get says when a host does not answer (its messages are English: LC_ALL=C).
_NETWORK = ("Could not resolve", "Temporary failure resolving", "Could not connect",
            "Connection failed", "Connection timed out", "No route to host",
            "Network is unreachable", "Unable to connect")
_ENV = {"LC_ALL": "C", "LANGUAGE": "C", "DEBIAN_FRONTEND": "noninteractive"}


def apt_available() -> bool:
    return all(shutil.which(t) for t in ("apt-get", "dpkg-deb", "gpgv"))


def _config(work: Path, pool: Path, arch: str) -> Path:
    etc = work / "etc"
    for sub in ("apt.conf.d", "preferences.d", "sources.list.d", "trusted.gpg.d", "keys"):
        (etc / sub).mkdir(parents=True, exist_ok=True)
    state = work / "state"
    (state / "lists" / "partial").mkdir(parents=True, exist_ok=True)
    (state / "status").write_text("")
    (pool / "partial").mkdir(parents=True, exist_ok=True)
    (work / "cache").mkdir(exist_ok=True)
    (work / "log").mkdir(exist_ok=True)
    text = f"""\
Dir::Etc "{etc}";
Dir::Etc::main "apt.conf";
Dir::Etc::parts "apt.conf.d";
Dir::Etc::sourcelist "sources.list";
Dir::Etc::sourceparts "sources.list.d";
Dir::Etc::preferences "preferences";
Dir::Etc::preferencesparts "preferences.d";
Dir::Etc::trusted "trusted.gpg";
Dir::Etc::trustedparts "trusted.gpg.d";
Dir::State "{state}";
Dir::State::lists "lists";
Dir::State::status "{state / 'status'}";
Dir::Cache "{work / 'cache'}";
Dir::Cache::archives "{pool}";
Dir::Cache::pkgcache "";
Dir::Cache::srcpkgcache "";
Dir::Log "{work / 'log'}";
APT::Architecture "{arch}";
APT::Architectures {{ "{arch}"; }};
APT::Install-Recommends "false";
APT::Install-Suggests "false";
APT::Get::AllowUnauthenticated "false";
Acquire::Languages "none";
Acquire::IndexTargets::deb::Contents-deb::DefaultEnabled "false";
Acquire::Retries "2";
Debug::NoLocking "true";
APT::Sandbox::User "";
"""
    conf = etc / "apt.conf.private"
    conf.write_text(text)
    return conf


def _sources(work: Path, profile: Profile, urls: dict[str, str],
             keyrings: dict[str, bytes]) -> None:
    lines = []
    for source in profile.sources:
        archive = ARCHIVES[source.archive]
        keyring = work / "etc" / "keys" / f"{archive.key}.gpg"
        keyring.write_bytes(keyrings[archive.key])
        for suite in source.suites:
            lines.append(f"deb [arch={profile.arch} signed-by={keyring}] "
                         f"{urls[source.archive]} {suite} {' '.join(source.components)}")
    (work / "etc" / "sources.list").write_text("\n".join(lines) + "\n")


def _apt(conf: Path, *args: str, status_fd: bool = False,
         progress: _console.Progress | None = None) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, **_ENV, "APT_CONFIG": str(conf)}
    cmd = ["apt-get", "-q", *args]
    if progress is None:
        return subprocess.run(cmd, env=env, capture_output=True, text=True)
    read_fd, write_fd = os.pipe()
    cmd[2:2] = ["-o", f"APT::Status-Fd={write_fd}"]
    with subprocess.Popen(cmd, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                          text=True, pass_fds=(write_fd,)) as proc:
        os.close(write_fd)
        with os.fdopen(read_fd, encoding="utf-8", errors="replace") as status:
            done = 0
            for line in status:  # dlstatus:ID:PERCENT:Retrieving file N of M
                m = _FILE_OF.search(line)
                if line.startswith("dlstatus:") and m:
                    n = int(m.group(1))
                    if n > done:
                        progress.advance(n - done)
                        done = n
        out, err = proc.communicate()
    return subprocess.CompletedProcess(cmd, proc.returncode, out, err)


def _bare(uri: str) -> str:
    """``http://host/path`` and ``file:/path`` as apt prints them, without the scheme."""
    return re.sub(r"^[a-z]+:/*", "", uri).rstrip("/")


def _check_update(result: subprocess.CompletedProcess[str], profile: Profile,
                  urls: dict[str, str]) -> None:
    text = result.stdout + result.stderr
    fetched = {(_bare(m.group(1)), m.group(2)) for m in _FETCHED.finditer(text)}
    for source in profile.sources:
        archive = ARCHIVES[source.archive]
        url = urls[source.archive]
        host = host_of(url)
        have = [suite for suite in source.suites if (_bare(url), suite) in fetched]
        if not have:
            trouble = [line for line in text.splitlines()
                       if host in line and any(n in line for n in _NETWORK)]
            if trouble or host not in text:
                from .fetch import unreachable

                reason = trouble[0].split(host, 1)[-1].strip(" ':") if trouble else ""
                raise unreachable(archive, url, reason or "no answer")
            mine = [line.strip() for line in text.splitlines() if host in line]
            raise SysrootError(f"the {archive.name} archive at {url} gave no valid index: "
                               + " ".join(mine[-3:]))
    bad = [line for line in text.splitlines()
           if "NO_PUBKEY" in line or "BADSIG" in line or "is not signed" in line]
    if bad:
        raise SysrootError("an archive's index is not signed by a key click-build trusts: "
                           + bad[0].strip())
    failed = [line for line in text.splitlines()
              if line.startswith(("E: Failed to fetch", "W: Failed to fetch"))]
    if len(failed) > 1:
        raise SysrootError(f"{len(failed)} of the archives' indexes could not be read: "
                           + failed[0][3:].strip())
    if failed:  # one index may fail (a mirror in the middle of a sync): apt goes on
        _console.warn(f"going on without one index: {failed[0][3:].strip()}")
    elif result.returncode != 0:
        last = [l for l in result.stderr.splitlines() if l.startswith("E:")]
        raise SysrootError("apt-get update failed: " + (last[0] if last else result.stderr[-300:]))


def _copy_local(conf: Path, chosen: list[tuple[str, str, str]], local: list[str],
                pool: Path) -> None:
    """apt uses a ``file://`` mirror's packages in place, never copying them to its
    cache: copy them into the pool (checked against the index's SHA-256)."""
    import hashlib

    shown = subprocess.run(
        ["apt-cache", "--no-all-versions", "show", *[f"{n}={v}" for n, v, _ in chosen]],
        env={**os.environ, **_ENV, "APT_CONFIG": str(conf)}, capture_output=True, text=True)
    for stanza in shown.stdout.split("\n\n"):
        fields = dict(line.split(": ", 1) for line in stanza.splitlines()
                      if ": " in line and not line.startswith(" "))
        try:
            name = f"{fields['Package']}_{fields['Version'].replace(':', '%3a')}_" \
                   f"{fields['Architecture']}.deb"
            filename, sha256 = fields["Filename"], fields["SHA256"]
        except KeyError:
            continue
        if (pool / name).is_file() or "/../" in f"/{filename}/":
            continue
        for base in local:
            folder = "/" + urllib.parse.unquote(base.split(":", 1)[1]).lstrip("/")
            source = Path(folder) / filename
            if source.is_file() and hashlib.sha256(source.read_bytes()).hexdigest() == sha256:
                with open(source, "rb") as data, AtomicFile(pool / name) as out:
                    shutil.copyfileobj(data, out.file)
                    out.publish()
                break


def make_root_apt(profile: Profile, urls: dict[str, str], keyrings: dict[str, bytes],
                  pool: Path, work: Path, root: Path) -> list[tuple[str, str]]:
    """Resolve and download with apt, unpack with ``dpkg -x``; the packages, as
    (name, version)."""
    conf = _config(work, pool, profile.arch)
    _sources(work, profile, urls, keyrings)
    _check_update(_apt(conf, "update"), profile, urls)
    packages = list(profile.packages)
    plan = _apt(conf, "install", "-s", "-y", *packages)
    if plan.returncode != 0:
        problems = [l for l in plan.stdout.splitlines() + plan.stderr.splitlines()
                    if l.startswith("E:") or "but it is not" in l or "Depends:" in l]
        raise SysrootError(f"apt cannot pick the packages of {profile.label}: "
                           + " ".join(p.strip() for p in problems[:3]))
    chosen = [(n, v, a) for n, v, a in _INST.findall(plan.stdout)]
    label = f"downloading {len(chosen)} packages for {profile.name} {profile.arch}"
    with _console.Progress(label, len(chosen)) as progress:
        got = _apt(conf, "install", "-d", "-y", *packages, progress=progress)
    if got.returncode != 0:
        network = [l for l in got.stderr.splitlines() if any(n in l for n in _NETWORK)]
        if network:
            from .fetch import unreachable

            source = profile.sources[0]
            raise unreachable(ARCHIVES[source.archive], urls[source.archive], network[0])
        raise SysrootError("apt-get could not download the packages: "
                           + " ".join(got.stderr.strip().splitlines()[-2:]))
    debs = [pool / f"{n}_{v.replace(':', '%3a')}_{a}.deb" for n, v, a in chosen]
    local = [u for u in urls.values() if u.startswith("file:")]
    if local and any(not d.is_file() for d in debs):
        _copy_local(conf, chosen, local, pool)
    missing = [d.name for d in debs if not d.is_file()]
    if missing:
        raise SysrootError(f"apt-get did not download {missing[0]} into {pool}")
    root.mkdir(parents=True, exist_ok=True)

    def unpack(deb: Path) -> None:
        result = subprocess.run(["dpkg-deb", "-x", str(deb), str(root)], capture_output=True,
                                text=True, env={**os.environ, **_ENV})
        if result.returncode != 0:
            raise SysrootError(f"dpkg-deb -x {deb.name}: {result.stderr.strip()}")

    with ThreadPoolExecutor(os.cpu_count() or 2) as threads, \
            _console.Progress(f"unpacking into {root}", len(debs)) as progress:
        for _ in threads.map(unpack, debs):
            progress.advance()
    return [(n, v) for n, v, _ in chosen]
