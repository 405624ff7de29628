"""Which root a build for the phone uses (``toolchains = "sysroot"``), decided before
anything is built.

The root ``click-build sysroot create`` made for the target's framework and
architecture (with the project's packages) when there is one, whatever mirror it came
from; else a new one from the profile the settings name, or the framework's default
profile.  A profile named in the settings narrows the search to its roots.  Choosing
only reads the cache; :func:`~click_build.sysroot.hold` then makes the root when
missing and holds it while the build uses it.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from .profiles import FAMILIES, Profile, base_framework, check_packages, profile_for
from .store import Stored, cache_home, stored_roots

__all__ = ["RootChoice", "choose_root"]


@dataclass(frozen=True)
class RootChoice:
    """The root of one target: an existing one (``stored``) or one to make."""

    profile: Profile
    stored: Stored | None

    @property
    def label(self) -> str:
        """How messages name it: ``debian-12 arm64 (approximate: ...)``."""
        return self.profile.label

    @property
    def describe(self) -> str:
        if self.stored is not None:
            return f"the {self.label} root ({self.stored.root})"
        return f"a new {self.label} root (made now, once)"


def _packages(stored: Stored) -> tuple[str, ...]:
    extra = stored.meta.get("extra_packages")
    names = [n for n in extra if isinstance(n, str)] if isinstance(extra, list) else []
    return tuple(sorted(set(names)))


def choose_root(framework: str, arch: str, profile: str | None = None,
                packages: tuple[str, ...] | list[str] = (),
                cache: Path | None = None) -> RootChoice:
    """The root to build ``framework`` x ``arch`` against; errors (an unknown profile, one
    for another framework, a bad package name) are one line."""
    wanted = profile_for(framework, arch, profile, check_packages(packages, "sysroot packages"))
    base = base_framework(framework)
    found = [s for s in stored_roots(cache or cache_home())
             if s.get("framework") == base and s.get("arch") == arch
             and s.get("profile") in FAMILIES and _packages(s) == wanted.extra_packages
             and (profile is None or s.get("profile") == profile)]
    if not found:
        return RootChoice(wanted, None)
    # the framework's default profile first (the phone's own), then by name
    found.sort(key=lambda s: (not FAMILIES[s.get("profile")].default, s.get("profile"),
                              s.ident))
    best = found[0]
    return RootChoice(profile_for(framework, arch, best.get("profile"), wanted.extra_packages),
                      best)
