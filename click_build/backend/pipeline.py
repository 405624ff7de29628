"""One build, from project to ``.click``: settings -> kind -> entries -> archive.

The kind stages entries; this module then decides the architecture from the
settings, the manifest and the ELF headers of what was staged, fills the
placeholders, checks the hooks, and hands everything to the core's writer.
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import tempfile
from collections.abc import Iterator, Mapping
from pathlib import Path

from .. import _console
from ..build import Entry, build_click
from ..errors import BuildError, ConfigError, ManifestError
from ..manifest import Manifest
from .appmanifest import find_manifest, reconcile_version
from .elf import ARCH_TRIPLETS, host_architecture, scan_architectures
from .kinds import Context, resolve, stage
from .placeholders import (
    ARCH_PLACEHOLDERS,
    FRAMEWORK_PLACEHOLDERS,
    fix_apparmor,
    framework_facts,
    is_placeholder,
    resolve_manifest_fields,
    variables,
)
from .settings import ConfigSettings, Project, load_project

__all__ = ["build_package", "build_dir_patterns", "work_dir"]

Arch = str | list[str]


def _declared(value: object) -> Arch | None:
    """A concrete architecture from a manifest or setting; None for a placeholder/auto."""
    if isinstance(value, list):
        return [str(v) for v in value]
    if isinstance(value, str) and value != "auto" and not is_placeholder(value, ARCH_PLACEHOLDERS):
        return value
    return None


def _framework(project: Project, peek: Mapping[str, object]) -> str:
    if project.settings.framework:
        return project.settings.framework
    value = peek.get("framework")
    if isinstance(value, str) and not is_placeholder(value, FRAMEWORK_PLACEHOLDERS):
        return value
    return os.environ.get("SDK_FRAMEWORK") or os.environ.get("CLICK_FRAMEWORK") or ""


def _build_arch(project: Project, kind: str, declared: Arch | None) -> str:
    """What to compile for, before anything is built."""
    if isinstance(declared, str):
        return declared
    if isinstance(declared, list):
        if kind == "cmake":
            raise ConfigError(
                "pyproject.toml: tool.click-build.architecture: a cmake project builds one "
                "architecture at a time; build each with -C click-build.architecture=ARCH "
                "and join them with 'click-build merge'")
        return "all"
    return host_architecture() if kind == "cmake" else "all"


def build_dir_patterns(project: Project) -> list[str]:
    """Ignore patterns that keep the backend's own build folders out of packages."""
    template = project.settings.build_dir or "build/click-{arch}"
    rel = template.replace("{arch}", "*").strip("/")
    if os.path.isabs(template) or rel.startswith(".."):
        return []
    patterns = ["/" + rel]
    parent = rel.split("/")[0]
    if "/" in rel and (project.root / parent).is_dir():
        import fnmatch

        children = [f"{parent}/{c.name}" for c in (project.root / parent).iterdir()]
        if all(fnmatch.fnmatchcase(c, rel) for c in children):
            patterns.append("/" + parent)  # nothing but our build folders in there
    return patterns


@contextlib.contextmanager
def work_dir(project: Project, kind: str, arch: str) -> Iterator[Path]:
    """The build folder: kept for cmake (incremental) or when set, else temporary."""
    template = project.settings.build_dir or ("build/click-{arch}" if kind == "cmake" else "")
    if template:
        path = (project.root / template.replace("{arch}", arch)).resolve()
        try:
            path.mkdir(parents=True, exist_ok=True)
        except OSError as e:
            raise ConfigError(
                f"pyproject.toml: tool.click-build.build-dir: cannot create {path}: {e.strerror}"
            ) from None
        yield path
        return
    with tempfile.TemporaryDirectory(prefix="click-build-") as tmp:
        yield Path(tmp)


def _decide_arch(declared: Arch | None, staged: list[Entry], where: str) -> Arch:
    """The package's architecture from what was declared and what was compiled."""
    found = scan_architectures(e.source for e in staged if e.kind == "file" and e.source)
    by_file = {path: arch for arch, paths in found.items() for path in paths}
    arcname = {e.source: e.arcname for e in staged if e.source}

    def example(arch: str) -> str:
        first = next(p for p, a in by_file.items() if a == arch)
        return arcname.get(first, first)

    archs = sorted(found)
    if declared is None:
        if not archs:
            return "all"
        return archs[0] if len(archs) == 1 else archs
    allowed = declared if isinstance(declared, list) else [declared]
    for arch in archs:
        if arch not in allowed:
            said = "'all' (no compiled code)" if declared == "all" else repr(declared)
            raise BuildError(
                f"{where}: architecture is {said}, but {example(arch)} is compiled for {arch}; "
                f"declare {arch!r} or leave the architecture to the build")
    return declared


def _fill_apparmor(entries: list[Entry], data: Mapping[str, object], policy: str,
                   work: Path) -> list[Entry]:
    """Entries whose apparmor hook files got their policy_version filled in."""
    hooks = data.get("hooks")
    targets = set()
    if isinstance(hooks, dict):
        for app_hooks in hooks.values():
            if isinstance(app_hooks, dict) and isinstance(app_hooks.get("apparmor"), str):
                targets.add(app_hooks["apparmor"].strip("/"))
    out = []
    for e in entries:
        if e.arcname in targets and e.kind == "file" and e.source:
            try:
                text = Path(e.source).read_text(encoding="utf-8")
            except (OSError, UnicodeDecodeError) as err:
                raise BuildError(f"{e.arcname}: cannot read the apparmor file: {err}") from None
            new = fix_apparmor(text, policy, e.arcname)
            if new is not None:
                dest = work / "click-filled" / e.arcname
                dest.parent.mkdir(parents=True, exist_ok=True)
                dest.write_text(new, encoding="utf-8")
                e = Entry(e.arcname, "file", e.mode, dest.stat().st_size, e.mtime, str(dest))
        out.append(e)
    return out


def _check_hooks(manifest: Manifest, entries: list[Entry], label: str) -> None:
    """Hook files must exist; real-world oddities only warn."""
    present = {e.arcname: e for e in entries}
    for app, hooks in sorted(manifest.hooks.items()):
        for hook, target in sorted(hooks.items()):
            rel = os.path.normpath(target).strip("/")
            if rel not in present:
                raise BuildError(
                    f"{label}: hooks.{app}.{hook}: {target!r} is not in the package "
                    f"(expected a file at {rel} in the staged tree)")
            if hook == "apparmor":
                _check_apparmor(present[rel], f"{label}: hooks.{app}.apparmor")
                if rel.endswith(".json"):
                    _console.warn(f"{label}: hooks.{app}.apparmor: {target!r} is named *.json; "
                                  "it works, but review tools expect *.apparmor")
        if "desktop" not in hooks and "push-helper" not in hooks and "scope" not in hooks:
            _console.warn(f"{label}: hooks.{app}: has no desktop file; it will not show "
                          "in the app drawer")
    icon = manifest.data.get("icon")
    if isinstance(icon, str) and ("/" in icon or "." in icon) and icon.strip("/") not in present:
        _console.warn(f"{label}: icon: {icon!r} is not in the package (an icon theme name "
                      "has no extension)")


def _check_apparmor(entry: Entry, where: str) -> None:
    if entry.kind != "file" or not entry.source:
        return
    try:
        data = json.loads(Path(entry.source).read_text(encoding="utf-8"))
    except (OSError, ValueError) as e:
        raise BuildError(f"{where}: {entry.arcname} is not valid JSON: {e}") from None
    if isinstance(data, dict) and data.get("template") == "unconfined":
        _console.warn(f"{where}: uses the 'unconfined' template; stores review such "
                      "apps by hand")


def build_package(
    root: str | os.PathLike[str],
    outdir: str | os.PathLike[str],
    config_settings: ConfigSettings | None = None,
    overrides: Mapping[str, object] | None = None,
    python_build_lib: Path | None = None,
    python_sources: tuple[str, ...] = (),
    require_pyproject: bool = True,
) -> Path:
    """Build the project in ``root`` into ``outdir``; return the .click path."""
    project = load_project(root, config_settings, overrides=overrides,
                           require_pyproject=require_pyproject)
    kind = resolve(project)
    source = find_manifest(project, kind)
    peek = source.peek() if source else {}
    setting = _declared(project.settings.architecture)
    from_manifest = _declared(peek.get("architecture"))
    if setting is not None and from_manifest is not None and setting != from_manifest:
        raise ConfigError(
            f"pyproject.toml: tool.click-build.architecture {setting!r} differs from "
            f"{source.label if source else 'manifest'}: architecture {from_manifest!r}")
    declared = setting if setting is not None else from_manifest
    facts = framework_facts(_framework(project, peek))
    arch = _build_arch(project, kind, declared)
    _console.info(f"* Building {kind} app for {arch}"
                  + (f" ({facts.framework})" if facts.framework else ""))
    with work_dir(project, kind, arch) as work:
        shutil.rmtree(work / "click-filled", ignore_errors=True)
        ctx = Context(project, kind, work, arch, ARCH_TRIPLETS.get(arch, ""), facts, source,
                      Path(outdir), python_build_lib, python_sources)
        staged = stage(ctx)
        source = staged.manifest or source
        if source is None:
            raise ManifestError(
                ["not found: neither the project nor the CMake install has a manifest.json"],
                "manifest.json")
        entries = staged.entries
        if staged.manifest is not None and declared is None:
            declared = _declared(source.peek().get("architecture"))
        final = _decide_arch(declared, entries, source.label)
        single = final if isinstance(final, str) else ""
        values = variables(single, ARCH_TRIPLETS.get(single, ""), facts,
                           project.version, project.name)
        data = source.render(values)
        data = reconcile_version(data, project, source.label)
        data = resolve_manifest_fields(data, values, final, source.label)
        manifest = Manifest.from_dict(data, source.label)
        for warning in manifest.warnings:
            _console.warn(warning)
        entries = _fill_apparmor(entries, manifest.data, facts.apparmor_policy, work)
        # i18n: po/*.po -> .mo files and translated desktop files (CMake projects do it with
        # click_translations()). Moves into the finishing stage (finish.py) when it merges.
        if kind != "cmake":
            from ..i18n import translate

            entries = translate(entries, manifest, str(project.root / "po"), str(work))
        _check_hooks(manifest, entries, source.label)
        path = Path(build_click(manifest, entries, outdir))
    _console.info(f"* Built {path.name}")
    return path
