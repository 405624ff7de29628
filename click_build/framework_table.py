"""Ubuntu Touch frameworks and the AppArmor policy each one ships.

A built-in table, so a review gives the same answer on a developer's laptop
(which has no frameworks installed) as on the store's server.  Frameworks
described by ``*.framework`` files in the system frameworks directory are
known too, which lets a device or an SDK image add its own.

The facts mirror the store's review tools (click-reviewers-tools, as UBports
and clickable maintain them): each framework's state, the policy version its
AppArmor policy has, and the templates and policy groups of each version.
"""

from __future__ import annotations

import os
import re

from ._record import Record
from .frameworks import list_frameworks

TYPE_CHECKING = False  # not typing.TYPE_CHECKING: importing typing costs start-up time

if TYPE_CHECKING:
    from typing import Literal

__all__ = [
    "DEFAULT_FRAMEWORK",
    "FRAMEWORKS",
    "POLICIES",
    "POLICY_BY_PREFIX",
    "QT_MIN_FRAMEWORK",
    "TEMPLATE_FRAMEWORKS",
    "FrameworkFacts",
    "FrameworkState",
    "Policy",
    "framework_facts",
    "framework_state",
    "framework_suffix",
    "known_frameworks",
    "policy",
    "policy_key",
    "policy_version_for",
    "qml_variant",
]

if TYPE_CHECKING:
    FrameworkState = Literal["available", "deprecated", "obsolete", "prereleased", "system"]
else:
    FrameworkState = str  # the alias is for the type checker; at run time any str


def _family(base: str, flavours: tuple[str, ...], points: range | tuple[int, ...] = ()) -> list[str]:
    names = [base + f for f in flavours]
    for point in points:
        names += [f"{base}.{point}{f}" for f in flavours]
    return names


_PLAIN = ("", "-html", "-papi", "-qml")

_OBSOLETE = [
    "ubuntu-sdk-13.10",
    *_family("ubuntu-sdk-14.04", ("", "-dev1", "-html", "-html-dev1", "-papi", "-papi-dev1",
                                  "-qml", "-qml-dev1")),
    *_family("ubuntu-sdk-14.10", ("", "-dev1", "-dev2", "-dev3", "-html", "-html-dev1",
                                  "-html-dev2", "-html-dev3", "-papi", "-papi-dev1",
                                  "-papi-dev2", "-papi-dev3", "-qml", "-qml-dev1",
                                  "-qml-dev2", "-qml-dev3")),
    *_family("ubuntu-sdk-15.04", _PLAIN, range(1, 8)),
]
_DEPRECATED = _family("ubuntu-sdk-16.04", _PLAIN, range(1, 9))
_AVAILABLE = [
    "ubuntu-sdk-20.04", "ubuntu-sdk-20.04-qml", "ubuntu-sdk-20.04.1", "ubuntu-sdk-20.04.1-qml",
    *_family("ubuntu-touch-24.04-1.x", ("", "-papi", "-qml")),
    *_family("ubuntu-touch-24.04-2.x", ("", "-papi", "-qml")),
]
_PRERELEASED = [*_family("ubuntu-touch-26.04-1.x", ("", "-papi", "-qml")),
                "ubuntu-touch-next-internal"]

#: Every framework the stores know, with its state.
FRAMEWORKS: dict[str, FrameworkState] = {
    **{name: "obsolete" for name in _OBSOLETE},
    **{name: "deprecated" for name in _DEPRECATED},
    **{name: "available" for name in _AVAILABLE},
    **{name: "prereleased" for name in _PRERELEASED},
}

#: Framework name prefix -> the AppArmor policy version its apps must declare.
POLICY_BY_PREFIX: tuple[tuple[str, float], ...] = (
    ("ubuntu-sdk-13.10", 1.0),
    ("ubuntu-sdk-14.04", 1.1),
    ("ubuntu-sdk-14.10", 1.2),
    ("ubuntu-sdk-15.04", 1.3),
    ("ubuntu-sdk-16.04", 16.04),
    ("ubuntu-sdk-20.04", 20.04),
    ("ubuntu-touch-24.04-1.x", 2404.1),
    ("ubuntu-touch-24.04-2.x", 2404.2),
    ("ubuntu-touch-26.04-1.x", 2604.1),
    ("ubuntu-touch-next", 9999.0),
)


#: Qt release linked by compiled code -> the oldest framework that ships it
#: (compared in dpkg version order, as the stores do).
QT_MIN_FRAMEWORK: dict[str, str] = {
    "5.9": "ubuntu-sdk-16.04",
    "5.12": "ubuntu-sdk-16.04.5",
    "5.15": "ubuntu-touch-24.04-1.x",
    "6.10": "ubuntu-touch-26.04-1.x",
}


class Policy(Record):
    """The templates and policy groups of one AppArmor policy version."""

    templates: frozenset[str]
    reserved_templates: frozenset[str]
    groups: frozenset[str]
    reserved_groups: frozenset[str]

    def knows_group(self, group: str) -> bool:
        return group in self.groups or group in self.reserved_groups

    def knows_template(self, template: str) -> bool:
        return template in self.templates or template in self.reserved_templates


def _policy(templates: str, groups: str, reserved: str) -> Policy:
    return Policy(frozenset(templates.split()), frozenset({"unconfined"}),
                  frozenset(groups.split()), frozenset(reserved.split()))


_G10 = ("audio camera connectivity content_exchange content_exchange_source keep-display-on "
        "location microphone networking sensors usermetrics video")
_R10 = ("accounts calendar contacts friends history music_files music_files_read picture_files "
        "picture_files_read video_files video_files_read")
_R12 = ("calendar contacts debug history music_files music_files_read picture_files "
        "picture_files_read video_files video_files_read")
_T10 = "default ubuntu-sdk ubuntu-webapp"
_T12 = "default ubuntu-account-plugin ubuntu-push-helper ubuntu-scope-network ubuntu-sdk ubuntu-webapp"
_T20 = "default ubuntu-account-plugin ubuntu-push-helper ubuntu-sdk ubuntu-webapp"
_T26 = "default ubuntu-push-helper ubuntu-sdk ubuntu-webapp"
_G12 = _G10 + " accounts push-notification-client webview"
_G13 = _G12 + " in-app-purchases"
_G20 = _G12 + " fm_radio nfc"

#: vendor -> policy version (as :func:`policy_key` spells it) -> policy.
POLICIES: dict[str, dict[str, Policy]] = {
    "ubuntu": {
        "1.0": _policy(_T10, _G10, _R10),
        "1.1": _policy(_T10, _G10 + " webview", _R10 + " debug"),
        "1.2": _policy(_T12, _G12, _R12),
        "1.3": _policy(_T12, _G13, _R12 + " bluetooth"),
        "15.10": _policy(_T12, _G13, _R12 + " bluetooth"),
        "16.04": _policy(_T12, _G13 + " fm_radio nfc", _R12 + " bluetooth"),
        "20.04": _policy(_T20, _G20, _R12 + " bluetooth"),
        "2404.1": _policy(_T20, _G20, _R12 + " bluetooth"),
        "2404.2": _policy(_T20, _G20, _R12 + " bluetooth"),
        "2604.1": _policy(_T26, _G20, _R12 + " bluetooth"),
        "9999.0": _policy(_T20, _G20, _R12 + " bluetooth"),
    },
}


def policy_key(version: float) -> str:
    """The table key of a JSON policy_version: 20.04 -> '20.04', 1 -> '1.0'."""
    return str(float(version))


def policy(vendor: str, version: float) -> Policy | None:
    return POLICIES.get(vendor, {}).get(policy_key(version))


def policy_version_for(frameworks: list[str]) -> tuple[str, float] | None:
    """The (framework, policy version) that the package's AppArmor files must use."""
    for name in frameworks:
        for prefix, version in POLICY_BY_PREFIX:
            if name.startswith(prefix):
                return name, version
    return None


#: Frameworks a new app may target, the newest (the default) first.
TEMPLATE_FRAMEWORKS: tuple[str, ...] = ("ubuntu-touch-24.04-1.x", "ubuntu-sdk-20.04")
#: The framework of new apps, and of builds that name none.
DEFAULT_FRAMEWORK = TEMPLATE_FRAMEWORKS[0]

#: Series -> (Python of the device, glibc minor version).
_SERIES_FACTS = {
    "15.04": ("3.4", 21), "15.10": ("3.4", 21), "16.04": ("3.5", 23),
    "20.04": ("3.8", 31), "24.04": ("3.12", 39),
}
_SERIES = re.compile(r"(\d\d)\.(\d\d)(?:\.\d+)?(?:-(\d+)\.(?:x|\d+))?")


class FrameworkFacts(Record):
    """What a framework name tells about the device it stands for."""

    framework: str
    base: str  # the series, e.g. "20.04"
    apparmor_policy: str  # e.g. "20.04", "2404.1"
    python: str | None
    glibc_minor: int | None


def framework_facts(framework: str) -> FrameworkFacts:
    """Facts of the first framework in a (comma-separated) framework field."""
    first = framework.split(",")[0].strip()
    m = _SERIES.search(first)
    if not m:
        return FrameworkFacts(first, "", "", None, None)
    series = f"{m.group(1)}.{m.group(2)}"
    known = policy_version_for([first])  # as the stores have it
    if known is not None:
        policy = policy_key(known[1])
    elif m.group(3):  # a newer ubuntu-touch-YY.MM-N.x -> YYMM.N
        policy = f"{m.group(1)}{m.group(2)}.{m.group(3)}"
    else:
        policy = series
    python, glibc = _SERIES_FACTS.get(series, (None, None))
    return FrameworkFacts(first, series, policy, python, glibc)


def qml_variant(framework: str) -> str | None:
    """The smaller ``-qml`` variant of a current framework (``ubuntu-touch-24.04-1.x`` ->
    ``ubuntu-touch-24.04-1.x-qml``), for apps with no compiled code and no Python; None when
    the table has none, or the framework is one to move away from (deprecated, obsolete)."""
    variant = f"{framework}-qml"
    if FRAMEWORKS.get(framework) in ("available", "prereleased") and variant in FRAMEWORKS:
        return variant
    return None


def known_frameworks(system_dir: str | os.PathLike[str] | None) -> dict[str, FrameworkState]:
    """The built-in table plus the frameworks installed in ``system_dir``."""
    known = dict(FRAMEWORKS)
    if system_dir is not None:
        for fw in list_frameworks(system_dir):
            known.setdefault(fw.name, "system")
    return known


def framework_state(name: str, system_dir: str | os.PathLike[str] | None) -> FrameworkState | None:
    state = FRAMEWORKS.get(name)
    if state is None and system_dir is not None:
        if any(fw.name == name for fw in list_frameworks(system_dir)):
            return "system"
    return state


def framework_suffix(framework: str) -> str:
    """The version suffix of a framework in a several-frameworks build: ``~`` and its series
    without the dot (``ubuntu-sdk-20.04`` -> ``~2004``, ``ubuntu-touch-24.04-1.x`` ->
    ``~2404``), and ``.N`` for a later release line of the series (``-2.x`` -> ``~2404.2``).

    ``~`` sorts below nothing at all, so ``1.2.0~2004`` < ``1.2.0~2404`` < ``1.2.0~2404.2``
    < ``1.2.0``: a newer framework's package always sorts higher, and a later plain ``1.2.0``
    higher still.  Empty for a framework without a series.
    """
    m = _SERIES.search(framework.split(",")[0].strip())
    if not m:
        return ""
    line = f".{m.group(3)}" if m.group(3) and m.group(3) != "1" else ""
    return f"~{m.group(1)}{m.group(2)}{line}"
