"""Clickable's project config (``clickable.yaml``, ``.yml``, ``.json``) as click-build
settings: what each key becomes in ``[tool.click-build]``, or why it is left out.

The file is read as data, never run: YAML through PyYAML's ``safe_load`` (plain values
only; PyYAML is the optional ``clickable`` extra, and Clickable reads the file with it
too), JSON through :mod:`json`.  It is someone else's file: every value is checked for
its type before it is used, and anything wrong is one error naming the key.  The steps
it names (``prebuild``...) become settings, run only when the project is built.
"""

from __future__ import annotations

import json
import os
import re
import stat
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from types import ModuleType

from ..errors import ConfigError
from . import clickable_keys as keys
from .clickable_keys import Note

__all__ = ["CONFIG_NAMES", "Imported", "Note", "convert", "find_config", "read_config"]

CONFIG_NAMES = ("clickable.yaml", "clickable.yml", "clickable.json")
MAX_BYTES = 1 << 20  # Clickable's files are a few hundred bytes


@dataclass
class Imported:
    """The settings a Clickable config makes, and what became of each key."""

    label: str
    table: dict[str, object] = field(default_factory=dict)  # [tool.click-build]
    carried: list[Note] = field(default_factory=list)
    left_out: list[Note] = field(default_factory=list)

    @property
    def needs_cmake(self) -> bool:
        libraries = self.table.get("libraries", {})
        return self.table.get("kind") == "cmake" or (isinstance(libraries, dict) and any(
            isinstance(lib, dict) and lib.get("kind", "cmake") == "cmake"
            for lib in libraries.values()))


def find_config(folder: Path, name: str | None = None) -> Path:
    """The config file: ``name``, else the first of Clickable's names that exists."""
    candidates = [folder / name] if name else [folder / n for n in CONFIG_NAMES]
    for path in candidates:
        if os.path.lexists(path):
            return path
    if name:
        raise ConfigError(f"{folder / name}: not found")
    raise ConfigError(f"{folder}: no {', '.join(CONFIG_NAMES)} (Clickable's project config) "
                      "here; give the project folder, or the file with --config")


def read_config(path: Path, folder: Path) -> dict[str, object]:
    """The file's top-level mapping, read as data."""
    label = path.name
    real, top = os.path.realpath(path), os.path.realpath(folder)
    if not real.startswith(top.rstrip(os.sep) + os.sep):
        raise ConfigError(f"{label}: a link out of the project ({real}); import the file "
                          "itself, from inside the project")
    try:  # O_NONBLOCK: a FIFO planted under the name must not hang the import
        fd = os.open(real, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0))
    except OSError as e:
        raise ConfigError(f"{label}: cannot be read: {e.strerror}") from None
    if not stat.S_ISREG(os.fstat(fd).st_mode):
        os.close(fd)
        raise ConfigError(f"{label}: not a regular file")
    with os.fdopen(fd, "rb") as f:
        try:
            raw = f.read(MAX_BYTES + 1)
        except OSError as e:
            raise ConfigError(f"{label}: cannot be read: {e.strerror}") from None
    if len(raw) > MAX_BYTES:
        raise ConfigError(f"{label}: larger than {MAX_BYTES >> 20} MiB; not a Clickable "
                          "project config")
    try:
        text = raw.decode("utf-8-sig")
    except UnicodeDecodeError as e:
        raise ConfigError(f"{label}: not UTF-8 text (byte {e.start})") from None
    data = _parse(text, label, path.suffix == ".json")
    if data is None:
        raise ConfigError(f"{label}: empty; nothing to import")
    if not isinstance(data, dict):
        raise ConfigError(f"{label}: must be a mapping of settings (key: value), not "
                          f"{keys.type_name(data)}")
    for k in data:
        if not isinstance(k, str):
            raise ConfigError(f"{label}: a key is {keys.type_name(k)} ({k!r:.40}); keys are "
                              "names such as builder")
    return data


def _yaml() -> ModuleType | None:
    try:
        import yaml  # type: ignore[import-untyped, unused-ignore]
    except ImportError:
        return None
    return yaml  # type: ignore[no-any-return, unused-ignore]


def _parse(text: str, label: str, is_json: bool) -> object:
    yaml = _yaml()
    if is_json:
        try:
            return json.loads(text)
        except RecursionError:
            raise ConfigError(f"{label}: nested too deeply") from None
        except ValueError as e:
            if yaml is None:
                raise ConfigError(f"{label}: not valid JSON: {e}") from None
        # Clickable reads .json files as YAML (tabs first made spaces): JSON with a
        # trailing comma, say, is YAML it accepts.
        text = re.sub(r"(?m)^\t+", lambda m: "  " * len(m.group(0)), text)
    if yaml is None:
        raise ConfigError(f"{label}: reading YAML needs PyYAML: pip install "
                          "'click-build[clickable]' (or write the file as clickable.json)")
    try:
        return yaml.safe_load(text)
    except yaml.YAMLError as e:
        first = str(e).split("\n", 1)[0].strip()
        mark = getattr(e, "problem_mark", None)
        where = f" (line {mark.line + 1}, column {mark.column + 1})" if mark else ""
        raise ConfigError(f"{label}: not valid YAML{where}: {first}") from None
    except RecursionError:
        raise ConfigError(f"{label}: nested too deeply") from None


# ----------------------------------------------------------------- mapping ---

def convert(data: dict[str, object], project: Path, label: str) -> Imported:
    """``[tool.click-build]`` settings for ``data``, Clickable's config of ``project``."""
    out = Imported(label)
    conv = keys.Converter(data, project, label, out.table, out.carried, out.left_out)
    handlers: dict[str, Callable[[str, object], None]] = {
        "builder": conv.builder, "template": conv.builder,
        "framework": conv.framework, "qt_version": conv.qt_version,
        "restrict_arch": conv.architecture, "arch": conv.architecture,
        "prebuild": conv.steps, "build": conv.steps, "postbuild": conv.steps,
        "env_vars": conv.env_vars, "build_args": conv.build_args,
        "make_args": conv.make_args, "src_dir": conv.src_dir, "ignore": conv.ignore,
        "install_root_data": conv.install_root_data, "install_data": conv.install_data,
        "install_lib": conv.install_from_host, "install_bin": conv.install_from_host,
        "install_qml": conv.install_from_host, "libraries": conv.libraries,
        "skip_review": conv.review, "ignore_review_errors": conv.review,
        "ignore_review_warnings": conv.review,
    }
    conv.start()
    for name in sorted(data, key=keys.order):
        handler = handlers.get(name)
        if handler is not None:
            handler(name, data[name])
        else:
            conv.left(name, data[name], keys.reason(name))
    conv.finish()
    return out
