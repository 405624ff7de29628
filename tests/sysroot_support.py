"""The suite's Debian 12 stand-in roots: where they are kept between runs, whether they
can be had, and what the tests that build against them share (the sysroot tests and the
sysroot benchmark's test)."""

from __future__ import annotations

import subprocess
import urllib.request
from pathlib import Path

import pytest
from conftest import CLICK_BUILD, KNOBS, machine_cache, run

from click_build.sysroot import find, profile_for
from click_build.sysroot.profiles import ARCHIVES, mirror_url
from click_build.sysroot.store import Stored

FRAMEWORK = "ubuntu-touch-24.04-1.x"


def test_cache() -> Path:
    named = KNOBS.get("CLICK_BUILD_TEST_SYSROOTS")
    if named:
        return Path(named)
    return machine_cache("sysroots")


test_cache.__test__ = False  # type: ignore[attr-defined]


def unreachable() -> str | None:
    url = mirror_url(ARCHIVES["debian"]) + "/dists/bookworm/InRelease"
    try:
        with urllib.request.urlopen(url, timeout=30) as response:
            response.read(64)
    except OSError as e:
        return f"{url}: {e}"
    return None


def unreachable_without_roots() -> str | None:
    """Why the debian-12 roots cannot be had (not made yet, and Debian's archive out of
    reach), or None."""
    for arch in ("arm64", "armhf"):
        if find(profile_for(FRAMEWORK, arch, "debian-12"), cache=test_cache()) is None:
            reason = unreachable()
            if reason:
                return f"Debian's archive cannot be reached, so no root is made: {reason}"
    return None


MACHINES = {"arm64": 183, "armhf": 40}


def cli(*args: str, env: dict[str, str] | None = None, cwd: Path | None = None,
        check: bool = True) -> subprocess.CompletedProcess[str]:
    return run([*CLICK_BUILD, *args], env={"CLICK_BUILD_SYSROOT_CACHE": str(test_cache()),
                                           **(env or {})}, cwd=cwd, check=check)


def made(arch: str, cache: Path | None = None, method: str = "auto",
         packages: tuple[str, ...] = ()) -> Stored:
    """The debian-12 root for ``arch`` (with ``packages``) in the test cache, made when
    missing."""
    cache = cache or test_cache()
    profile = profile_for(FRAMEWORK, arch, "debian-12", packages)
    stored = find(profile, cache=cache)
    if stored is None:
        reason = unreachable()
        if reason:
            pytest.skip(f"Debian's archive cannot be reached, so no root is made: {reason}")
        cache.mkdir(parents=True, exist_ok=True)
        cache.chmod(0o755)
        result = run([*CLICK_BUILD, "-q", "sysroot", "create", "--arch", arch, "--profile",
                      "debian-12", "--method", method,
                      *(f"--package={name}" for name in packages)],
                     env={"CLICK_BUILD_SYSROOT_CACHE": str(cache)})
        stored = find(profile, cache=cache)
        assert stored is not None and result.stdout.strip() == str(stored.root)
    return stored


def packed_program(click: Path, tmp: Path, name: str) -> Path:
    out = tmp / "unpacked"
    run(["dpkg-deb", "-x", str(click), str(out)])
    (program,) = out.glob(f"lib/*/bin/{name}")
    return program


def review_clean(click: Path) -> None:
    result = cli("review", str(click))
    assert result.stdout.strip() == f"{click}: no problems found", result.stdout


def new_cpp(where: Path) -> Path:
    where.mkdir(parents=True, exist_ok=True)
    cli("new", "cpp", "--no-input", "--set", "title=Tea Timer", cwd=where)
    return where / "tea-timer"


