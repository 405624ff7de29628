"""manifest.json: the typed model, its validation rules and their JSON Schema.

The rules are those of the Click format (Click-Version 0.4) as the original
tool and the store's review tools apply them; one table of field rules feeds
both :func:`validate` and :func:`json_schema`, so the two cannot drift.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping

from . import _console, charpattern, jsontext
from ._record import Record
from .deb822 import whole_number
from .errors import ManifestError
from .versions import epochless, version_problem

TYPE_CHECKING = False  # not typing.TYPE_CHECKING: importing typing costs start-up time

if TYPE_CHECKING:
    from typing import Literal

    Purpose = Literal["build", "install"]

__all__ = [
    "ARCH_RE",
    "APP_NAME_RE",
    "FRAMEWORK_RE",
    "HOOK_NAME_RE",
    "NAME_RE",
    "Manifest",
    "Problems",
    "dump_manifest",
    "not_text_at",
    "hook_path_problem",
    "json_schema",
    "load_manifest",
    "parse_json_object",
    "validate",
]

# Patterns are written for JSON Schema (ECMA-262, where '$' ends the text); Python
# code matches them whole (charpattern, maintainer_ok), since Python's '$' also
# matches before a final newline.
NAME_RE = r"^[a-z0-9][a-z0-9+.-]+$"
APP_NAME_RE = r"^[A-Za-z0-9+.-]+$"
HOOK_NAME_RE = r"^[A-Za-z0-9][A-Za-z0-9+._-]*$"
FRAMEWORK_RE = r"^[a-z0-9][a-z0-9.+-]*$"
ARCH_RE = r"^[a-z0-9][a-z0-9-]*$"
MAINTAINER_RE = r"^[^<>\n]*[^<>\s] <[^<>@\s]+@[^<>\s]+>$"
# The naming rules, matched without compiling a regex per process (charpattern's note).
NAME_RULE = charpattern.compile(NAME_RE)
APP_NAME_RULE = charpattern.compile(APP_NAME_RE)
HOOK_NAME_RULE = charpattern.compile(HOOK_NAME_RE)
FRAMEWORK_RULE = charpattern.compile(FRAMEWORK_RE)
ARCH_RULE = charpattern.compile(ARCH_RE)
VERSION_PATTERN = r"^([0-9]+:)?[0-9][A-Za-z0-9.+~:-]*(-[A-Za-z0-9.+~]+)?$"

#: Keys the format defines; anything else is allowed but may be a typo.
KNOWN_KEYS = (
    "name",
    "version",
    "framework",
    "maintainer",
    "title",
    "description",
    "architecture",
    "hooks",
    "icon",
    "installed-size",
)


class Problems:
    """Errors and warnings found in a manifest, each prefixed by its field."""

    def __init__(self) -> None:
        self.errors: list[str] = []
        self.warnings: list[str] = []

    def error(self, where: str, what: str) -> None:
        self.errors.append(f"{where}: {what}")

    def warn(self, where: str, what: str) -> None:
        self.warnings.append(f"{where}: {what}")


def hook_path_problem(path: object) -> str | None:
    """Why a hook's file path is unacceptable, or None."""
    if not isinstance(path, str) or not path:
        return "must be a non-empty string (a path relative to the package root)"
    if path.startswith("/"):
        return f"{path!r} must be relative to the package root, not absolute"
    parts = path.split("/")
    if ".." in parts:
        return f"{path!r} must not contain '..'"
    if "\0" in path or "\n" in path:
        return f"{path!r} contains a control character"
    if parts[0] == ".click":
        return f"{path!r} points into the reserved .click directory"
    return None


def _check_name(value: object, p: Problems) -> None:
    if not isinstance(value, str):
        p.error("name", "must be a string")
    elif not NAME_RULE.fullmatch(value):
        p.error(
            "name",
            f"{value!r} is not a valid package name: use lower-case letters, digits, "
            "'.', '+' and '-', starting with a letter or digit "
            "(reverse domain style, e.g. 'myapp.yourname')",
        )


def _check_version(value: object, p: Problems) -> None:
    problem = version_problem(value)  # type: ignore[arg-type]
    if problem:
        p.error("version", f"{value!r} is not a valid Debian version: {problem}")


def _check_framework(value: object, p: Problems) -> None:
    if not isinstance(value, str):
        p.error("framework", "must be a string such as 'ubuntu-sdk-20.04'")
        return
    if not value.strip():
        p.warn("framework", "is empty: the package does not say which system it needs")
        return
    for part in value.split(","):
        name = part.strip()
        if "|" in name:
            p.error("framework", f"alternatives ('|') are not allowed: {value!r}")
        elif "(" in name or ")" in name or " " in name:
            p.error("framework", f"version relations are not allowed: {name!r}")
        elif not FRAMEWORK_RULE.fullmatch(name):
            p.error("framework", f"{name!r} is not a valid framework name")


def _check_line(value: object, p: Problems, where: str) -> None:
    if not isinstance(value, str) or not value.strip():
        p.error(where, "must be a non-empty string")
    elif "\n" in value or "\r" in value:
        p.error(where, "must be a single line")


def maintainer_ok(value: str) -> bool:
    """Whether ``value`` matches :data:`MAINTAINER_RE` whole (``Full Name <local@domain>``),
    checked without compiling it (start-up cost): the one ``<`` after the name and a
    blank, the one ``>`` at the end, no newline in the name, no blank in the address."""
    head, lt, tail = value.partition("<")
    name, address = head[:-1], tail[:-1]
    local, at, domain = address.partition("@")
    return (bool(lt) and head.endswith(" ") and bool(name) and not name[-1].isspace()
            and "\n" not in name and ">" not in name
            and tail.endswith(">") and "<" not in tail and ">" not in address
            and bool(at) and bool(local) and bool(domain)
            and not any(c.isspace() for c in address))


def _check_maintainer(value: object, p: Problems) -> None:
    _check_line(value, p, "maintainer")
    if isinstance(value, str) and value.strip() and "\n" not in value:
        if not maintainer_ok(value):
            p.error("maintainer", f"{value!r} must look like 'Full Name <email@example.com>'")


def _check_description(value: object, p: Problems) -> None:
    if not isinstance(value, str):
        p.error("description", "must be a string")


def _check_icon(value: object, p: Problems) -> None:
    if not isinstance(value, str) or not value:
        p.error("icon", "must be a non-empty string (a file in the package or an icon name)")


def _check_architecture(value: object, p: Problems) -> None:
    if isinstance(value, str):
        if not ARCH_RULE.fullmatch(value) or value == "multi":
            p.error("architecture", f"{value!r} is not 'all' or a Debian architecture name")
        return
    if isinstance(value, list):
        if not value:
            p.error("architecture", "a list of architectures must not be empty")
        for i, arch in enumerate(value):
            if not isinstance(arch, str) or not ARCH_RULE.fullmatch(arch):
                p.error(f"architecture[{i}]", f"{arch!r} is not a Debian architecture name")
            elif arch in ("all", "multi"):
                p.error(f"architecture[{i}]", f"{arch!r} cannot appear in a list")
        if len(set(map(str, value))) != len(value):
            p.error("architecture", "lists an architecture twice")
        return
    p.error("architecture", "must be 'all', one architecture, or a list of architectures")


def _check_hooks(value: object, p: Problems) -> None:
    if not isinstance(value, dict):
        p.error("hooks", "must be an object mapping app names to their hooks")
        return
    for app, hooks in value.items():
        where = f"hooks.{_shown(app)}"
        if not APP_NAME_RULE.fullmatch(app):
            p.error(where, f"app name {app!r} may only contain letters, digits, '+', '.' and '-'")
        if not isinstance(hooks, dict):
            p.error(where, "must be an object mapping hook names to files")
            continue
        for hook, target in hooks.items():
            if not HOOK_NAME_RULE.fullmatch(hook):
                p.error(f"{where}.{_shown(hook)}", f"hook name {hook!r} is not valid")
            problem = hook_path_problem(target)
            if problem:
                p.error(f"{where}.{_shown(hook)}", problem)


def _shown(key: str) -> str:
    """A key as part of a field name in a message: quoted unless plainly printable,
    so that no manifest can put a line break (or a terminal escape) in an error."""
    return key if key.isprintable() and key.isascii() else ascii(key)


def _check_installed_size(value: object, p: Problems, purpose: Purpose) -> None:
    if purpose == "build":
        p.warn("installed-size", "is computed by the builder; the value given is replaced")
    elif not (isinstance(value, (str, int)) and whole_number(str(value)) is not None):
        p.error("installed-size", f"{value!r} is not a whole number of KiB")


# field -> (required for build, required for install, checker, schema)
_RULES: dict[str, tuple[bool, bool, Callable[[object, Problems], None], dict[str, object]]] = {
    "name": (True, True, _check_name, {
        "type": "string", "pattern": NAME_RE,
        "description": "Package name, reverse domain style (e.g. 'myapp.yourname').",
    }),
    "version": (True, True, _check_version, {
        "type": "string", "pattern": VERSION_PATTERN,
        "description": "Debian version: [epoch:]upstream[-revision], e.g. '1.0.2'.",
    }),
    "framework": (True, True, _check_framework, {
        "type": "string",
        "pattern": r"^\s*([a-z0-9][a-z0-9.+-]*\s*(,\s*[a-z0-9][a-z0-9.+-]*\s*)*)?$",
        "description": "The base system(s) the app needs, e.g. 'ubuntu-sdk-20.04'.",
    }),
    "maintainer": (True, False, _check_maintainer, {
        "type": "string", "pattern": MAINTAINER_RE,
        "description": "'Full Name <email@example.com>'.",
    }),
    "title": (True, False, lambda v, p: _check_line(v, p, "title"), {
        "type": "string", "minLength": 1, "pattern": r"^[^\n\r]+$",
        "description": "One-line title shown to users.",
    }),
    "description": (False, False, _check_description, {
        "type": "string", "description": "Longer description; may span paragraphs.",
    }),
    "architecture": (False, False, _check_architecture, {
        "description": "'all' (default), a Debian architecture, or a list of them.",
        "oneOf": [
            {"type": "string", "pattern": ARCH_RE, "not": {"const": "multi"}},
            {"type": "array", "minItems": 1, "uniqueItems": True,
             "items": {"type": "string", "pattern": ARCH_RE,
                       "not": {"enum": ["all", "multi"]}}},
        ],
    }),
    "hooks": (False, False, _check_hooks, {
        "type": "object",
        "description": "Apps in this package and the system hooks each attaches to.",
        "propertyNames": {"pattern": APP_NAME_RE},
        "additionalProperties": {
            "type": "object",
            "propertyNames": {"pattern": HOOK_NAME_RE},
            "additionalProperties": {
                "type": "string", "minLength": 1, "pattern": r"^(?!/)(?!(.*/)?\.\.(/|$)).+$",
                "description": "A file in the package, relative to its root.",
            },
        },
    }),
    "icon": (False, False, _check_icon, {
        "type": "string", "minLength": 1,
        "description": "Icon file relative to the package root, or an icon theme name.",
    }),
}


def _misspelt(key: str, data: Mapping[str, object]) -> str:
    """' (did you mean ...)' when an unknown key of ``data`` looks like ``key``."""
    import difflib  # only when a field is missing

    unknown = [k for k in data if k not in _RULES and isinstance(k, str)]
    close = difflib.get_close_matches(key, unknown, n=1, cutoff=0.75)
    return f" ({close[0]!r} is there: did you mean {key!r}?)" if close else ""


def validate(data: Mapping[str, object], purpose: Purpose = "build") -> Problems:
    """Check every field of a manifest; collect all problems, not just the first."""
    p = Problems()
    for key, (need_build, need_install, check, _schema) in _RULES.items():
        if key in data:
            check(data[key], p)
        elif need_build if purpose == "build" else need_install:
            p.error(key, "is required but missing" + _misspelt(key, data))
    for key in data:
        if key in _RULES:
            continue
        if key == "installed-size":
            _check_installed_size(data[key], p, purpose)
        elif key.startswith("_"):
            p.warn(_shown(key), "keys starting with '_' are reserved; ignored")
        elif not key.startswith("x-"):
            import difflib  # only for unknown keys

            close = difflib.get_close_matches(key, KNOWN_KEYS, n=1, cutoff=0.75)
            if close:
                p.warn(_shown(key), f"unknown key (did you mean {close[0]!r}?)")
    return p


def json_schema() -> dict[str, object]:
    """The rules as a JSON Schema (draft 2020-12) for editors."""
    return {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "$id": "https://click-build.example/manifest.schema.json",
        "title": "Click package manifest (manifest.json)",
        "type": "object",
        "required": [k for k, rule in _RULES.items() if rule[0]],
        "properties": {k: rule[3] for k, rule in _RULES.items()},
        "patternProperties": {
            "^x-": {"description": "Local extension; never interpreted by click."},
            "^_": {"description": "Reserved for the installer; dropped at build time."},
        },
    }


class _DuplicateKey(ValueError):
    pass


def _no_duplicates(pairs: list[tuple[str, object]]) -> dict[str, object]:
    out: dict[str, object] = {}
    for key, value in pairs:
        if key in out:
            raise _DuplicateKey(f"duplicate key {key!r}")
        out[key] = value
    return out


def _no_constant(name: str) -> object:
    raise ValueError(f"{name} is not valid JSON")


def _finite(text: str) -> float:
    """A JSON number as a float, refused when it is too large for one (``1e400``):
    Python would make it infinity, which JSON cannot write back (``Infinity``), and
    the original tool could then not read the manifest stored in the database."""
    value = float(text)
    if value in (float("inf"), float("-inf")):
        raise ValueError(f"the number {text[:40]} is too large")
    return value


def parse_json_object(text: str | bytes, source: str) -> dict[str, object]:
    """Strict JSON: an object, no duplicate keys, no NaN; errors name ``source``."""
    try:
        if isinstance(text, bytes):
            text = text.decode("utf-8")
        text = text.removeprefix("\ufeff")  # a BOM some editors write
        data = jsontext.loads(text, object_pairs_hook=_no_duplicates,
                              parse_constant=_no_constant, parse_float=_finite)
    except UnicodeDecodeError as e:
        raise ManifestError([f"is not valid UTF-8 ({e.reason})"], source) from None
    except jsontext.JSONError as e:
        raise ManifestError(
            [f"invalid JSON at line {e.lineno} column {e.colno}: {e.msg}"], source
        ) from None
    except (ValueError, RecursionError) as e:
        raise ManifestError([f"invalid JSON: {e}"], source) from None
    if not isinstance(data, dict):
        raise ManifestError(["must be a JSON object ({...})"], source)
    where = not_text_at(data)
    if where is not None:
        problem = (f"{where}: an escape such as \\ud800 stands for half of a UTF-16 pair "
                   "(a lone surrogate), which is not text; write the character itself")
        raise ManifestError([problem], source)
    return data


def not_text_at(data: object) -> str | None:
    """Where the first string that cannot be written as UTF-8 is (JSON escapes can
    decode to lone surrogates); None when every key and value is text.  A loop,
    not recursion: the nesting is the attacker's choice."""
    stack: list[tuple[str, object]] = [("", data)]
    while stack:
        where, value = stack.pop()
        if isinstance(value, str):
            if not value.isascii() and not _is_text(value):
                return where or "the document"
        elif isinstance(value, dict):
            for key, item in value.items():
                name = f"{where}.{_shown(key)}" if where else _shown(key)
                if not key.isascii() and not _is_text(key):
                    return f"key {name}"
                stack.append((name, item))
        elif isinstance(value, list):
            stack.extend((f"{where}[{i}]", item) for i, item in enumerate(value))
    return None


def _is_text(value: str) -> bool:
    try:
        value.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


class Manifest(Record):
    """A validated manifest.  ``data`` keeps every key to write back verbatim."""

    name: str
    version: str
    framework: str
    maintainer: str
    title: str
    architecture: str | tuple[str, ...]
    hooks: Mapping[str, Mapping[str, str]]
    data: Mapping[str, object]
    warnings: tuple[str, ...] = ()

    @classmethod
    def from_dict(
        cls,
        data: Mapping[str, object],
        source: str = "manifest.json",
        purpose: Purpose = "build",
    ) -> Manifest:
        problems = validate(data, purpose)
        if problems.errors:
            raise ManifestError(problems.errors, source)
        clean = {k: v for k, v in data.items() if not k.startswith("_")}
        if purpose == "build":
            clean.pop("installed-size", None)
        arch = clean.get("architecture", "all")
        return cls(
            name=str(clean["name"]),
            version=str(clean["version"]),
            framework=str(clean.get("framework", "")),
            maintainer=str(clean.get("maintainer", "")),
            title=str(clean.get("title", "")),
            architecture=tuple(arch) if isinstance(arch, list) else str(arch),
            hooks=clean.get("hooks") or {},  # type: ignore[arg-type]
            data=clean,
            warnings=tuple(f"{source}: {w}" for w in problems.warnings),
        )

    @property
    def frameworks(self) -> list[str]:
        return [f.strip() for f in self.framework.split(",") if f.strip()]

    @property
    def control_architecture(self) -> str:
        """The control file's Architecture: a list becomes 'multi'."""
        return "multi" if isinstance(self.architecture, tuple) else self.architecture

    @property
    def epochless_version(self) -> str:
        return epochless(self.version)

    @property
    def filename(self) -> str:
        return f"{self.name}_{self.epochless_version}_{self.control_architecture}.click"

    def with_installed_size(self, kib: int) -> dict[str, object]:
        """The control manifest: the source keys plus installed-size (a string)."""
        out = dict(self.data)
        out["installed-size"] = str(kib)
        return out

    def control_manifest_bytes(self, kib: int) -> bytes:
        return dump_manifest(self.with_installed_size(kib)).encode("utf-8")


def dump_manifest(data: Mapping[str, object]) -> str:
    """The original's JSON layout: sorted keys, 4-space indent, final newline."""
    return jsontext.dumps_indented(data, 4) + "\n"


def load_manifest(path: str | os.PathLike[str], purpose: Purpose = "build") -> Manifest:
    """Read and validate a manifest.json file."""
    path = os.fspath(path)
    try:
        with open(path, "rb") as f:
            raw = f.read()
    except FileNotFoundError:
        raise ManifestError(
            ["not found; every Click app needs a manifest.json at its top"], str(path)
        ) from None
    except IsADirectoryError:
        raise ManifestError(["is a directory, not a file"], str(path)) from None
    except OSError as e:
        raise ManifestError([f"cannot be read: {e.strerror}"], str(path)) from None
    manifest = Manifest.from_dict(parse_json_object(raw, str(path)), str(path), purpose)
    for warning in manifest.warnings:
        _console.warn(warning)
    return manifest


if __name__ == "__main__":  # pragma: no cover - maintenance helper
    import json

    print(json.dumps(json_schema(), indent=2, sort_keys=True))
