"""What a build settles before its manifest is rendered: the framework, the declared
architecture, and then, from the compiled files, the architecture.

A route asks (:class:`Request`: its explicit settings); :func:`choose` settles the
framework and what was declared, once per package (:class:`Choice`), weighing the
request against the manifest as written and Clickable's environment variables; after
packing, :func:`decide_architecture` decides the architecture from the ELF headers
the packing read.  A value that contradicts the manifest is refused with the fix, never
silently preferred.

Standard library only, like the rest of the core.
"""

from __future__ import annotations

import os
import re

from . import _console
from ._record import Record
from .build import COMPRESS_LEVEL
from .elf import ARCH_TRIPLETS
from .errors import BuildError, ConfigError
from .framework_table import DEFAULT_FRAMEWORK, framework_facts
from .manifest import ARCH_RE, FRAMEWORK_RE
from .placeholders import ARCH_PLACEHOLDERS, FRAMEWORK_PLACEHOLDERS, ManifestSource, is_placeholder

TYPE_CHECKING = False  # not typing.TYPE_CHECKING: importing typing costs start-up time

if TYPE_CHECKING:
    from collections.abc import Mapping

    from .elf import ElfInfo
    from .framework_table import FrameworkFacts

    Arch = str | list[str]

__all__ = [
    "FRAMEWORK_VARIABLES",
    "Choice",
    "Request",
    "architecture_declaration",
    "choose",
    "choose_framework",
    "decide_architecture",
    "declared_architecture",
    "environment_architecture",
    "environment_framework",
    "tell",
]


class Request(Record):
    """What a build was asked for beyond its staged tree: the route's explicit values
    and options, the same for every route.

    Empty fields leave the choice to the manifest (and, for the architecture,
    to the compiled files).  An explicit value that contradicts a concrete
    manifest value is refused, never silently preferred.
    """

    framework: str = ""  # e.g. a [tool.click-build] framework setting
    architecture: str | list[str] | None = None  # "all", "arm64", [...]; None or "auto": decide
    version: str | None = None  # [project].version: fills a missing version, must agree
    name: str | None = None  # [project].name, for @PROJECT_NAME@
    review: str = "errors"  # one of REVIEW_MODES
    origin: str = "settings"  # how messages name where the explicit values came from
    review_switch: str = "--no-validate"  # how this route's user turns review errors off
    #: An architecture the route itself wrote into the manifest (the backend tells CMake
    #: the host's before anything is compiled): the compiled files decide instead.
    guessed_architecture: str = ""
    #: The framework replaces the manifest's own (a build for several frameworks, or
    #: ``click-build build --framework``), with the AppArmor policy_version that went with it.
    rewrite_framework: bool = False
    #: Appended to the final version (``~2004``): several frameworks, one version each.
    version_suffix: str = ""
    #: A folder whose ``LANG.po`` files are compiled into the package (see
    #: :func:`click_build.i18n.translate`); "" for none (CMake's click_translations() does it).
    po_dir: str = ""
    level: int = COMPRESS_LEVEL  # gzip level of the archives (0-9)


# ------------------------------------------------------------ framework ---

def choose_framework(explicit: str, manifest_value: object, label: str,
                     origin: str = "settings") -> FrameworkFacts:
    """The framework a build is for: the explicit one, else the manifest's.

    A manifest that leaves it to the build (``@CLICK_FRAMEWORK@``) takes the
    explicit value, then ``$CLICK_FRAMEWORK``/``$SDK_FRAMEWORK`` (what Clickable
    exports; :func:`environment_framework`), then the templates' default; an empty
    one stays empty when nothing names a framework (the original builds such packages).
    """
    concrete = None
    if isinstance(manifest_value, str) and not is_placeholder(manifest_value,
                                                              FRAMEWORK_PLACEHOLDERS):
        concrete = manifest_value.strip()
    if explicit:
        _check_framework_name(explicit, f"{origin}.framework")
        if concrete is not None and concrete != explicit.strip():
            raise ConfigError(
                f"{origin}.framework {explicit!r} differs from {label}: framework "
                f"{concrete!r}; remove one of them, or write \"framework\": "
                f"\"@CLICK_FRAMEWORK@\" in {label} to choose it at build time")
        return framework_facts(explicit)
    if concrete is not None:
        return framework_facts(concrete)
    found = environment_framework()
    if found is not None:
        value, var = found
        tell(f"* {label}: framework {value}, from the environment ({var}, as Clickable "
             "sets it)")
        return framework_facts(value)
    if isinstance(manifest_value, str) and not manifest_value.strip():
        return framework_facts("")  # "": no framework, as the original allows
    if manifest_value is not None:  # a placeholder; a missing field is the manifest's error
        tell(f"* {label}: the framework is left to the build; using {DEFAULT_FRAMEWORK} (set "
             "it in the manifest, [tool.click-build] framework or $CLICK_FRAMEWORK)")
    return framework_facts(DEFAULT_FRAMEWORK)


#: The variables Clickable sets for the framework, in the order they are read
#: (``SDK_FRAMEWORK`` is its older name for ``CLICK_FRAMEWORK``).
FRAMEWORK_VARIABLES = ("CLICK_FRAMEWORK", "SDK_FRAMEWORK")


def environment_framework() -> tuple[str, str] | None:
    """The framework the environment names, and the variable that names it."""
    for var in FRAMEWORK_VARIABLES:
        value = os.environ.get(var, "").strip()
        if value:
            _check_framework_name(value, f"environment: {var}")
            return value, var
    return None


_told: set[str] = set()


def tell(message: str) -> None:
    """Print a line about a choice once per process: a CMake build learns from the
    environment what to tell CMake before staging, and then chooses on the manifest
    CMake wrote; a build for several targets chooses once per target."""
    if message not in _told:
        _told.add(message)
        _console.info(message)


def _check_framework_name(value: str, where: str) -> None:
    for part in value.split(","):
        if not re.match(FRAMEWORK_RE, part.strip()):
            raise ConfigError(f"{where}: {value!r} is not a framework name such as "
                              f"{DEFAULT_FRAMEWORK!r}")


# --------------------------------------------------------- architecture ---

def _concrete_architecture(value: object) -> Arch | None:
    if isinstance(value, list):
        return [str(v) for v in value]
    if isinstance(value, str) and value != "auto" and not is_placeholder(value,
                                                                          ARCH_PLACEHOLDERS):
        return value
    return None


def _check_architecture_names(value: Arch, where: str) -> None:
    names = value if isinstance(value, list) else [value]
    ok = bool(names) and all(isinstance(n, str) and re.match(ARCH_RE, n) and n != "multi"
                             for n in names)
    if isinstance(value, list) and ("all" in names or len(set(names)) != len(names)):
        ok = False
    if not ok:
        raise ConfigError(f"{where}: {value!r} is not 'all', a Debian architecture such as "
                          "'arm64', or a list of different architectures")


def declared_architecture(explicit: object, manifest_value: object, label: str,
                          origin: str = "settings", environ: bool = True) -> Arch | None:
    """The architecture declared by a setting, the manifest or (``environ``) the
    environment (:func:`environment_architecture`); None leaves it to the build."""
    return architecture_declaration(explicit, manifest_value, label, origin, environ)[0]


def architecture_declaration(explicit: object, manifest_value: object, label: str,
                             origin: str = "settings",
                             environ: bool = True) -> tuple[Arch | None, str]:
    """:func:`declared_architecture`, and the environment variable that declared it ("" when
    a setting or the manifest did, or nothing)."""
    setting = _concrete_architecture(explicit)
    if setting is not None:
        _check_architecture_names(setting, f"{origin}.architecture")
    from_manifest = _concrete_architecture(manifest_value)
    if setting is not None and from_manifest is not None and setting != from_manifest:
        raise ConfigError(
            f"{origin}.architecture {setting!r} differs from {label}: architecture "
            f"{from_manifest!r}; remove one of them, or write \"architecture\": "
            f"\"@CLICK_ARCH@\" in {label} to choose it at build time")
    if setting is not None or from_manifest is not None:
        return (setting if setting is not None else from_manifest), ""
    found = environment_architecture() if environ else None
    if found is None:
        return None, ""
    value, var = found
    tell(f"* {label}: architecture {value}, from the environment ({var}, as Clickable "
         "sets it)")
    return value, var


#: What the environment may say for the package's architecture: Debian's names, and the
#: processor names of ``uname -m`` that have one meaning (as ClickBuild maps them).
_ENV_ARCHES = {**{a: a for a in ARCH_TRIPLETS}, "all": "all", "x86_64": "amd64",
               "aarch64": "arm64"}


def environment_architecture() -> tuple[str, str] | None:
    """The architecture the environment names (Clickable's ``ARCH``, else the one of its
    ``ARCH_TRIPLET``; both are ``all`` for QML-only and Python apps), and the variable."""
    value = os.environ.get("ARCH", "").strip()
    if value:
        arch = _ENV_ARCHES.get(value.lower())
        if arch is None:
            raise ConfigError(
                f"environment: ARCH {value!r} is not 'all' or a Debian architecture such as "
                "'arm64' (Clickable sets it to the package's architecture); unset ARCH, or "
                "declare the architecture in the manifest or [tool.click-build] architecture")
        return arch, "ARCH"
    value = os.environ.get("ARCH_TRIPLET", "").strip()
    if value:
        by_triplet = {t: a for a, t in ARCH_TRIPLETS.items()}
        arch = "all" if value == "all" else by_triplet.get(value)
        if arch is None:
            raise ConfigError(
                f"environment: ARCH_TRIPLET {value!r} is not 'all' or a multiarch triplet "
                "such as 'aarch64-linux-gnu'; unset it, or set ARCH to the package's "
                "architecture")
        return arch, "ARCH_TRIPLET"
    return None


def decide_architecture(declared: Arch | None, code: Mapping[str, ElfInfo], where: str,
                        one: bool = False, env_var: str = "") -> Arch:
    """The package's architecture from what was declared and what was compiled.

    The one place that decides it.  An ARM file without a float ABI fits
    armhf and armel; undeclared, it is armhf, the ARM architecture of Ubuntu
    Touch devices.  A machine the ELF table does not know is reported, never
    guessed.  ``one``: code for several architectures is refused (a build
    that compiled for one architecture and staged another's code), not made
    a fat package.  ``code``: the compiled files (arcname -> ELF header), as the
    packing read them (``Packed.code``) or :func:`~click_build.staging.staged_code`.
    ``env_var``: the environment variable that declared it, named in the refusal.
    """
    if declared is None:
        unknown = sorted(path for path, info in code.items() if not info.arches)
        if unknown:
            raise BuildError(
                f"{where}: {unknown[0]} is compiled for {code[unknown[0]].description}, which "
                "click-build cannot name; declare the architecture (\"architecture\" in the "
                "manifest or [tool.click-build] architecture)")
        definite = {a for info in code.values() if len(info.arches) == 1 for a in info.arches}
        for info in code.values():
            if len(info.arches) > 1 and not info.arches & definite:
                definite.add("armhf" if "armhf" in info.arches else sorted(info.arches)[0])
        archs = sorted(definite)
        if not archs:
            return "all"
        if one and len(archs) > 1:
            examples = ", ".join(
                f"{min(path for path, info in code.items() if arch in info.arches)} ({arch})"
                for arch in archs)
            raise BuildError(f"{where}: architecture: the tree holds code for several "
                             f"architectures: {examples}; install the code of one")
        return archs[0] if len(archs) == 1 else archs
    allowed = set(declared if isinstance(declared, list) else [declared])
    for path, info in sorted(code.items()):
        if info.arches and not info.arches & allowed:
            said = "'all' (no compiled code)" if declared == "all" else repr(declared)
            fits = "armhf" if "armhf" in info.arches else sorted(info.arches)[0]
            if env_var:
                raise BuildError(
                    f"{where}: architecture is {said}, from the environment ({env_var}), but "
                    f"{path} is compiled for {info.description}; unset {env_var} to leave the "
                    f"architecture to the build, or set ARCH={fits}")
            raise BuildError(
                f"{where}: architecture is {said}, but {path} is compiled for "
                f"{info.description}; declare {fits!r} or leave the architecture to the build")
        if not info.arches:
            _console.warn(f"{where}: {path} is compiled for {info.description}, which "
                          f"click-build cannot name; trusting the declared {declared!r}")
    return declared


class Choice(Record):
    """What a package's build settles before its manifest is rendered: made once
    (:func:`choose`), by the route before staging or by the finishing stage."""

    facts: FrameworkFacts
    declared: Arch | None  # None: the compiled files decide
    guessed: bool  # the manifest holds the route's own guess (see Request)
    replaces: str = ""  # the AppArmor policy of the manifest's framework a rewrite replaced
    env_var: str = ""  # the environment variable that declared the architecture, if one did


def choose(source: ManifestSource, request: Request) -> Choice:
    """The framework and the declared architecture of the package of ``source`` that
    ``request`` asks for (see :func:`choose_framework` and :func:`architecture_declaration`)."""
    peek = source.peek(placeholders=True)
    label = source.label
    written_fw = peek.get("framework")
    facts = choose_framework(request.framework, "@CLICK_FRAMEWORK@" if request.rewrite_framework
                             else written_fw, label, request.origin)
    replaces = ""
    if request.rewrite_framework and isinstance(written_fw, str) and written_fw.strip():
        replaces = framework_facts(written_fw).apparmor_policy
    written = peek.get("architecture")
    guessed = (bool(request.guessed_architecture) and written == request.guessed_architecture
               and _concrete_architecture(request.architecture) is None)
    # A guess of the route's own leaves the architecture to the compiled files, not to the
    # environment of a later step (the CMake click target runs long after its configure).
    declared, env_var = architecture_declaration(
        request.architecture, None if guessed else written, label, request.origin,
        environ=not guessed)
    return Choice(facts, declared, guessed, replaces, env_var)
