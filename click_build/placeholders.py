"""Placeholders as the existing Ubuntu Touch tooling writes them.

Manifests and apparmor files in real projects leave the architecture, the
framework and the apparmor policy to the build: ``""``, ``@CLICK_ARCH@``,
``$ENV{ARCH}`` and friends.  They are filled in after staging, from one table
that maps a framework to its base series, apparmor policy version, Python and
glibc (:mod:`click_build.framework_table`).  Every build route fills them
here, through :mod:`click_build.finish`.
"""

from __future__ import annotations

import json
import os
import re

from . import _console
from ._record import Record
from .errors import ConfigError, ManifestError
from .manifest import parse_json_object

TYPE_CHECKING = False  # not typing.TYPE_CHECKING: importing typing costs start-up time

if TYPE_CHECKING:
    from collections.abc import Mapping

    from .framework_table import FrameworkFacts

__all__ = [
    "ANY_PLACEHOLDER",
    "ARCH_PLACEHOLDERS",
    "FRAMEWORK_PLACEHOLDERS",
    "POLICY_PLACEHOLDERS",
    "ManifestSource",
    "fill_apparmor",
    "is_placeholder",
    "read_manifest_file",
    "reconcile_version",
    "resolve_manifest_fields",
    "substitute",
    "variables",
]

_AT = re.compile(r"@([A-Za-z_][A-Za-z0-9_]*)@")
_ENV = re.compile(r"\$ENV\{([A-Za-z_][A-Za-z0-9_]*)\}")
#: Any placeholder a build fills in: ``@VAR@`` or ``$ENV{VAR}``.
ANY_PLACEHOLDER = re.compile(r"@[A-Za-z_][A-Za-z0-9_]*@|\$ENV\{[A-Za-z_][A-Za-z0-9_]*\}")

ARCH_PLACEHOLDERS = ("", "@CLICK_ARCH@", "$ENV{ARCH}", "$ENV{CLICK_ARCH}")
FRAMEWORK_PLACEHOLDERS = ("", "@CLICK_FRAMEWORK@", "$ENV{CLICK_FRAMEWORK}", "$ENV{SDK_FRAMEWORK}")
POLICY_PLACEHOLDERS = ("", "@APPARMOR_POLICY@", "$ENV{APPARMOR_POLICY}", "@CLICK_APPARMOR_POLICY@")


def variables(arch: str, triplet: str, facts: FrameworkFacts,
              version: str | None = None, name: str | None = None) -> dict[str, str]:
    """The names a ``*.in`` file or a placeholder may use."""
    from .framework_table import framework_suffix

    out = {
        "CLICK_ARCH": arch, "ARCH": arch,
        "CLICK_ARCH_TRIPLET": triplet, "ARCH_TRIPLET": triplet,
        "CLICK_FRAMEWORK": facts.framework, "SDK_FRAMEWORK": facts.framework,
        "CLICK_FRAMEWORK_BASE": facts.base,
        "CLICK_FRAMEWORK_SUFFIX": framework_suffix(facts.framework),
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


class ManifestSource(Record):
    """The manifest before placeholders are filled: a file, a template or a table."""

    label: str  # how errors name it
    path: str | None  # the file, left out of the package's data
    text: str | None  # file contents; None for a table
    table: dict[str, object] | None = None
    #: Bytes of the manifest files in the staged tree, which Installed-Size counts as the
    #: original's du does; None: this file's own size (a template's or a table's rendering).
    counted: int | None = None

    @property
    def size(self) -> int | None:
        """Bytes of the manifest file, or None when it is a template or a table."""
        if self.path is None or self.template:
            return None
        try:
            return os.path.getsize(self.path)
        except OSError:
            return None

    @property
    def template(self) -> bool:
        return self.path is not None and self.path.endswith(".in")

    def peek(self, placeholders: bool = False) -> dict[str, object]:
        """The fields as written, for choices made before building.

        Placeholders are blanked, or with ``placeholders`` kept where they are
        quoted, so ``"@CLICK_FRAMEWORK@"`` stays distinct from an empty ``""``.
        """
        if self.table is not None:
            return dict(self.table)
        assert self.text is not None
        if placeholders:
            try:
                return parse_json_object(self.text, self.label)
            except ManifestError:
                pass  # unquoted placeholders: the blanked reading below
        try:
            return parse_json_object(ANY_PLACEHOLDER.sub("", self.text), self.label)
        except ManifestError:
            if self.template:
                return {}
            raise

    def render(self, values: Mapping[str, str]) -> dict[str, object]:
        """The manifest with ``@VAR@``/``$ENV{}`` in a template substituted."""
        if self.table is not None:
            copy: dict[str, object] = json.loads(json.dumps(self.table))  # deep, JSON-clean
            return copy
        assert self.text is not None
        text = substitute(self.text, values, self.label) if self.template else self.text
        return parse_json_object(text, self.label)


def read_manifest_file(path: str | os.PathLike[str], label: str) -> ManifestSource:
    path = os.fspath(path)
    try:
        with open(path, encoding="utf-8") as f:
            return ManifestSource(label, path, f.read())
    except UnicodeDecodeError:
        raise ManifestError(["is not valid UTF-8"], label) from None
    except FileNotFoundError:
        raise ManifestError(
            ["not found; every Click app needs a manifest.json at its top"], label) from None
    except IsADirectoryError:
        raise ManifestError(["is a directory, not a file"], label) from None
    except OSError as e:
        raise ManifestError([f"cannot be read: {e.strerror}"], label) from None


def reconcile_version(data: dict[str, object], version: str | None, label: str,
                      version_origin: str = "pyproject.toml: project.version") -> dict[str, object]:
    """Take the project's ``version`` when the manifest has none; refuse a contradiction."""
    out = dict(data)
    manifest_version = out.get("version")
    if manifest_version in (None, ""):
        if version is None:
            raise ManifestError(
                ["version: is missing; set it here or as [project].version in a pyproject.toml "
                 "beside the manifest"], label)
        out["version"] = version
    elif version is not None and manifest_version != version:
        raise ConfigError(
            f"{label}: version {manifest_version!r} differs from {version_origin} "
            f"{version!r}; keep the version in one place (remove 'version' from {label} to "
            "take it from pyproject.toml)")
    final = out["version"]
    if isinstance(final, str) and final.endswith("."):
        _console.warn(f"{label}: version {final!r} ends with '.'; it works, but looks unfinished")
    return out


def resolve_manifest_fields(
    data: dict[str, object], values: Mapping[str, str], architecture: str | list[str],
    source: str, framework_chosen: bool = False,
) -> dict[str, object]:
    """Fill ``architecture``, ``framework`` and placeholders inside ``version``.

    A manifest without ``architecture`` keeps none when the package is
    ``all`` (the format's default, as the original writes it); one without
    ``framework`` gets it only when the build was told one
    (``framework_chosen``), else the manifest check reports it missing.
    """
    out = dict(data)
    arch = out.get("architecture")
    if is_placeholder(arch, ARCH_PLACEHOLDERS) or (arch is None and architecture != "all"):
        out["architecture"] = architecture
    fw = out.get("framework")
    if is_placeholder(fw, FRAMEWORK_PLACEHOLDERS) or (fw is None and framework_chosen):
        out["framework"] = values["CLICK_FRAMEWORK"]
    version = out.get("version")
    if isinstance(version, str) and ("@" in version or "$ENV{" in version):
        out["version"] = substitute(version, values, source)
    return out


_POLICY_FIELD = re.compile(
    r'("policy_version"\s*:\s*)("(?:@[A-Z_]+@|\$ENV\{[A-Z_]+\})?"|@[A-Z_]+@|\$ENV\{[A-Z_]+\})'
)


def fill_apparmor(text: str, policy: str, framework: str, source: str,
                  replaces: str = "") -> str | None:
    """An AppArmor file with its ``policy_version`` filled in, or None when it needs nothing.

    A placeholder is replaced where it stands (the file keeps its layout); a
    missing ``policy_version`` is added.  A number that contradicts the
    framework is kept and warned about (the review reports it as an error), unless it is
    ``replaces``, the policy of the framework a build for another framework rewrote.
    """
    def repl(m: re.Match[str]) -> str:
        if not policy:
            raise ManifestError(
                [f"policy_version: is left to the build, but no AppArmor policy version is "
                 f"known for framework {framework!r}; write the number in"], source)
        return m.group(1) + policy

    filled = _POLICY_FIELD.sub(repl, text)
    data = parse_json_object(filled, source)
    problems = []
    groups = data.get("policy_groups", [])
    if not isinstance(groups, list) or not all(isinstance(g, str) for g in groups):
        problems.append("policy_groups: must be a list of policy group names")
    if "template" in data and not isinstance(data["template"], str):
        problems.append("template: must be a string such as 'ubuntu-sdk'")
    current = data.get("policy_version")
    if current is None:
        if not policy:
            problems.append(
                f"policy_version: missing, and no AppArmor policy version is known for "
                f"framework {framework!r}; add \"policy_version\" to this file")
        else:
            data["policy_version"] = _json_number(policy)
            filled = json.dumps(data, indent=4, ensure_ascii=False) + "\n"
    elif isinstance(current, bool) or not isinstance(current, (int, float)):
        problems.append(f"policy_version: {current!r} must be a number such as 20.04")
    elif policy and replaces and float(current) == float(replaces) != float(policy):
        filled = re.sub(r'("policy_version"\s*:\s*)[0-9.]+', lambda m: m.group(1) + policy,
                        filled, count=1)
    elif policy and float(current) != float(policy):
        _console.warn(
            f"{source}: policy_version {current} does not match framework {framework!r} "
            f"(which uses {policy}); the store's review rejects this: remove "
            "policy_version from the file to have it filled in")
    if problems:
        raise ManifestError(problems, source)
    return None if filled == text else filled


def _json_number(text: str) -> int | float:
    return int(text) if text.isdigit() else float(text)
