"""Placeholders as the existing Ubuntu Touch tooling writes them.

Manifests and apparmor files in real projects leave the architecture, the
framework and the apparmor policy to the build: ``""``, ``@CLICK_ARCH@``,
``$ENV{ARCH}`` and friends.  They are filled in after staging, from one table
that maps a framework to its base series, apparmor policy version, Python and
glibc (:mod:`click_build.framework_table`).
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Mapping

from .errors import BuildError, ManifestError

TYPE_CHECKING = False  # not typing.TYPE_CHECKING: importing typing costs start-up time

if TYPE_CHECKING:
    from .framework_table import FrameworkFacts

__all__ = [
    "is_placeholder",
    "resolve_manifest_fields",
    "substitute",
    "fix_apparmor",
    "variables",
]

_AT = re.compile(r"@([A-Za-z_][A-Za-z0-9_]*)@")
_ENV = re.compile(r"\$ENV\{([A-Za-z_][A-Za-z0-9_]*)\}")

ARCH_PLACEHOLDERS = ("", "@CLICK_ARCH@", "$ENV{ARCH}", "$ENV{CLICK_ARCH}")
FRAMEWORK_PLACEHOLDERS = ("", "@CLICK_FRAMEWORK@", "$ENV{CLICK_FRAMEWORK}", "$ENV{SDK_FRAMEWORK}")
POLICY_PLACEHOLDERS = ("", "@APPARMOR_POLICY@", "$ENV{APPARMOR_POLICY}", "@CLICK_APPARMOR_POLICY@")


def variables(arch: str, triplet: str, facts: FrameworkFacts,
              version: str | None = None, name: str | None = None) -> dict[str, str]:
    """The names a ``*.in`` file or a placeholder may use."""
    out = {
        "CLICK_ARCH": arch, "ARCH": arch,
        "CLICK_ARCH_TRIPLET": triplet, "ARCH_TRIPLET": triplet,
        "CLICK_FRAMEWORK": facts.framework, "SDK_FRAMEWORK": facts.framework,
        "CLICK_FRAMEWORK_BASE": facts.base,
        "APPARMOR_POLICY": facts.apparmor_policy,
        "CLICK_APPARMOR_POLICY": facts.apparmor_policy,
    }
    if version:
        out["PROJECT_VERSION"] = out["CLICK_VERSION"] = version
    if name:
        out["PROJECT_NAME"] = name
    return out


def is_placeholder(value: object, placeholders: tuple[str, ...]) -> bool:
    return isinstance(value, str) and value.strip() in placeholders


def substitute(text: str, values: Mapping[str, str], source: str,
               environ: Mapping[str, str] | None = None) -> str:
    """Replace ``@VAR@`` and ``$ENV{VAR}``; an unknown ``@VAR@`` is an error."""
    env = os.environ if environ is None else environ

    def at(m: re.Match[str]) -> str:
        if m.group(1) in values:
            return values[m.group(1)]
        raise ManifestError(
            [f"@{m.group(1)}@ is not a variable click-build fills in "
             f"(known: {', '.join('@' + k + '@' for k in sorted(values))})"], source)

    def envvar(m: re.Match[str]) -> str:
        name = m.group(1)
        if name in values:  # the build's own answer beats the caller's environment
            return values[name]
        return env.get(name, "")

    return _ENV.sub(envvar, _AT.sub(at, text))


def resolve_manifest_fields(
    data: dict[str, object], values: Mapping[str, str], architecture: str | list[str],
    source: str,
) -> dict[str, object]:
    """Fill ``architecture``, ``framework`` and placeholders inside ``version``."""
    out = dict(data)
    arch = out.get("architecture")
    if arch is None or is_placeholder(arch, ARCH_PLACEHOLDERS):
        out["architecture"] = architecture
    fw = out.get("framework")
    if fw is None or is_placeholder(fw, FRAMEWORK_PLACEHOLDERS):
        if not values.get("CLICK_FRAMEWORK"):
            raise ManifestError(
                ["framework: is left to the build, but no framework is known; set "
                 "[tool.click-build] framework = \"ubuntu-sdk-20.04\" or $SDK_FRAMEWORK"], source)
        out["framework"] = values["CLICK_FRAMEWORK"]
    version = out.get("version")
    if isinstance(version, str) and ("@" in version or "$ENV{" in version):
        out["version"] = substitute(version, values, source)
    return out


_POLICY_FIELD = re.compile(
    r'("policy_version"\s*:\s*)("(?:@[A-Z_]+@|\$ENV\{[A-Z_]+\})?"|@[A-Z_]+@|\$ENV\{[A-Z_]+\})'
)


def fix_apparmor(text: str, policy: str, source: str) -> str | None:
    """An apparmor file with its ``policy_version`` placeholder filled, or None if unchanged."""

    def repl(m: re.Match[str]) -> str:
        if not policy:
            raise BuildError(
                f"{source}: policy_version is left to the build, but the framework "
                "does not say which apparmor policy it has; write the number in")
        return m.group(1) + policy

    new = _POLICY_FIELD.sub(repl, text)
    if new == text:
        return None
    try:
        json.loads(new)
    except ValueError as e:
        raise BuildError(f"{source}: not valid JSON after filling policy_version: {e}") from None
    return new
