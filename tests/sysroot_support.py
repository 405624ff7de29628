"""The suite's Debian 12 stand-in roots: where they are kept between runs, and whether
they can be had (shared by the sysroot tests and the sysroot benchmark's test)."""

from __future__ import annotations

import os
import urllib.request
from pathlib import Path

from click_build.sysroot import find, profile_for
from click_build.sysroot.profiles import ARCHIVES, mirror_url

FRAMEWORK = "ubuntu-touch-24.04-1.x"


def test_cache() -> Path:
    named = os.environ.get("CLICK_BUILD_TEST_SYSROOTS")
    if named:
        return Path(named)
    if os.geteuid() == 0:
        return Path("/var/cache/click-build-tests/sysroots")
    return Path(os.path.expanduser("~/.cache/click-build-tests/sysroots"))


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
