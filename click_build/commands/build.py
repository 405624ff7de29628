"""``build`` and ``buildsource``: a directory with a manifest.json -> package.

``build`` stages the directory and hands it to the core's finishing stage
(:mod:`click_build.finish`), as the backend and the CMake module do; a
directory that is a click-build project (its pyproject.toml names the backend
or has ``[tool.click-build]``) is built as ``python -m build`` would.
"""

from __future__ import annotations

import argparse
import os

from ..errors import BuildError
from ..finish import REVIEW_MODES

TYPE_CHECKING = False

if TYPE_CHECKING:
    from ..build import Entry
    from ..choices import Request
    from ..placeholders import ManifestSource

__all__ = ["is_project", "register", "resolve_manifest"]


def resolve_manifest(directory: str, manifest: str | None) -> str:
    """Where ``-m`` points: relative to DIRECTORY first (as the original), then to the CWD."""
    if manifest is None:
        manifest = "manifest.json"
    candidates = [manifest] if os.path.isabs(manifest) else [
        os.path.join(directory, manifest), manifest]
    for candidate in candidates:
        if os.path.isdir(candidate):
            candidate = os.path.join(candidate, "manifest.json")
        if os.path.exists(candidate):
            return candidate
    template = os.path.join(directory, "manifest.json.in")
    if manifest == "manifest.json" and os.path.isfile(template):
        hint = "found manifest.json.in, as clickable projects have: build with -m manifest.json.in"
    else:
        hint = "every Click app needs a manifest.json; see 'click-build new' for a start"
    raise BuildError(f'directory "{directory}" does not contain manifest file "{manifest}" '
                     f"({hint})")


def make_output_dir(path: str) -> None:
    """``-o DIR``: made when missing, as ``mkdir -p``; a file there is refused by name."""
    if os.path.exists(path) and not os.path.isdir(path):
        raise BuildError(f"-o {path}: not a folder; give the folder to write the package into")
    if os.path.islink(path) and not os.path.exists(path):
        # mkdir would only say "File exists": the folder the link names is what is missing
        raise BuildError(f"-o {path}: a symbolic link to {os.readlink(path)}, which does not "
                         "exist; make that folder, or give another")
    os.makedirs(path, exist_ok=True)


def _common(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("directory", metavar="DIRECTORY", help="the app's directory tree")
    parser.add_argument(
        "-m", "--manifest", metavar="PATH",
        help="read the manifest from PATH (default: DIRECTORY/manifest.json); "
             "a relative PATH is looked up in DIRECTORY first",
    )
    parser.add_argument(
        "-I", "--ignore", metavar="PATTERN", action="append", default=[],
        help="leave out files whose name matches the shell PATTERN (repeatable); "
             "a PATTERN with a '/' matches the path relative to DIRECTORY",
    )
    parser.add_argument(
        "-o", "--output-dir", metavar="DIR", default=".",
        help="write the result into DIR, made if missing (default: the current directory)",
    )
    parser.add_argument(
        "-z", "--compression-level", metavar="N", type=_level, default=None,
        help="gzip level from 0 (no compression, fastest) to 9 (smallest, the default, "
             "as dpkg-deb -Zgzip); the output stays reproducible at every level",
    )


def _level(text: str) -> int:
    if not (text.isdigit() and text.isascii() and 0 <= int(text) <= 9):
        raise argparse.ArgumentTypeError(
            f"{text!r} is not a compression level: use a whole number from 0 to 9")
    return int(text)


def register(subparsers: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    p = subparsers.add_parser(
        "build", help="build a .click package from a directory",
        description=(
            "Build NAME_VERSION_ARCH.click from DIRECTORY, which must hold a manifest.json "
            "(placeholders such as @CLICK_ARCH@ are filled). VCS folders, editor backups and "
            "*.click files are left out. A DIRECTORY that is a click-build project (its "
            "pyproject.toml names click_build.backend or has [tool.click-build]) is built as "
            "'python -m build --wheel' builds it. The package is then reviewed as the app "
            "stores do, and review errors fail the build. The output is reproducible: set "
            "SOURCE_DATE_EPOCH to stamp it with your commit's time. Data past a package's first "
            "256 KiB is deflated with zlib-ng where it is installed (x86-64 and ARM64), or with "
            "Python's zlib: CLICK_BUILD_DEFLATE=zlib or =zlib-ng chooses (other bytes, same contents)."
        ),
    )
    _common(p)
    p.add_argument(
        "--framework", metavar="FRAMEWORK", action="append", default=[],
        help="build for FRAMEWORK instead of the manifest's, rewriting its framework and "
             "the AppArmor policy_version that goes with it; repeat it (or give A,B) for one "
             "package per framework, each with its own version (1.2.0~2004, 1.2.0~2404)",
    )
    review = p.add_mutually_exclusive_group()
    review.add_argument(
        "--no-validate", dest="review", action="store_const", const="report",
        help="print the review's findings but never fail the build on them "
             "(by default review errors fail it, as the stores reject such packages)",
    )
    review.add_argument(
        "--strict", dest="review", action="store_const", const="strict",
        help="fail the build on review warnings too (the OpenStore rejects uploads with any)",
    )
    review.add_argument(
        "--review", dest="review", choices=REVIEW_MODES, metavar="MODE",
        help="the same as a word: errors (the default; $CLICK_BUILD_REVIEW changes it), "
             "strict, report, or off (no review at all)",
    )
    p.set_defaults(func=run_build, review=None)
    p = subparsers.add_parser(
        "buildsource", help="build a source tarball from a directory",
        description=(
            "Build NAME_VERSION.tar.gz holding DIRECTORY and its manifest.json, for "
            "distributing the source of a package that contains compiled code."
        ),
    )
    _common(p)
    p.set_defaults(func=run_buildsource)


def _check_directory(directory: str) -> None:
    if not os.path.isdir(directory):
        raise BuildError(f'directory "{directory}" does not exist')


def run_build(args: argparse.Namespace) -> int:
    from .. import _console
    from ..build import COMPRESS_LEVEL, stage_tree
    from ..choices import Request
    from ..finish import finish
    from ..placeholders import read_manifest_file
    from ..timestamps import source_date_epoch

    _check_directory(args.directory)
    source_date_epoch()  # a bad value stops the build before anything is written
    level = COMPRESS_LEVEL if args.compression_level is None else args.compression_level
    if is_project(args.directory):
        paths = [_build_project(args, level)]
    else:
        manifest_path = resolve_manifest(args.directory, args.manifest)
        source = read_manifest_file(manifest_path, manifest_path)
        source = source._replace(counted=_manifests_in_tree(args.directory, manifest_path))
        make_output_dir(args.output_dir)
        from ..build_folders import own_folder_patterns

        entries = stage_tree(  # click-build's own build/click-* (run's database) stay out
            args.directory, [*args.ignore, *own_folder_patterns(args.directory)],
            exclude=[manifest_path, os.path.join(args.directory, "manifest.json")],
        )
        review = args.review or os.environ.get("CLICK_BUILD_REVIEW") or "errors"
        request = Request(review=review, origin="click-build build", level=level,
                          po_dir=os.path.join(args.directory, "po"))  # DIRECTORY/po/*.po
        if args.framework:
            paths = _build_frameworks(args, source, entries, request)
        else:
            paths = [finish(source, entries, args.output_dir, request).path]
    for path in paths:  # one line per package, as the original prints for its one
        shown = os.path.join(args.output_dir, os.path.basename(path))
        _console.info(f"Successfully built package in '{shown}'.")
    return 0


def _build_frameworks(args: argparse.Namespace, source: ManifestSource, entries: list[Entry],
                      request: Request) -> list[str]:
    """One package per ``--framework`` of the one staged tree: a build for several targets."""
    import re

    from ..errors import ConfigError
    from ..finish import Job, finish_jobs
    from ..manifest import FRAMEWORK_RE
    from ..targets import expand_names, suffix_for

    frameworks = expand_names(args.framework)
    for fw in frameworks:
        if not re.match(FRAMEWORK_RE, fw):
            raise ConfigError(f"--framework: {fw!r} is not a framework name such as "
                              "'ubuntu-sdk-20.04'")
    version = source.peek(placeholders=True).get("version")
    jobs = []
    for fw in frameworks:
        wanted = request._replace(framework=fw, rewrite_framework=True,
                                  origin="click-build build --framework",
                                  version_suffix=suffix_for(fw, frameworks, version))
        jobs.append(Job(source, entries, wanted))
    return [b.path for b in finish_jobs(jobs, args.output_dir, several=True)]


def _manifests_in_tree(directory: str, manifest_path: str) -> int:
    """Bytes of the manifest files the original's copy of DIRECTORY holds when it runs du:
    DIRECTORY/manifest.json, and the -m file when it lies inside DIRECTORY."""
    top = os.path.realpath(directory).rstrip(os.sep) + os.sep
    sizes = {}
    for path in (os.path.join(directory, "manifest.json"), manifest_path):
        real = os.path.realpath(path)
        if real.startswith(top) and os.path.isfile(real):
            sizes[real] = os.path.getsize(real)
    return sum(sizes.values())


def is_project(directory: str) -> bool:
    """Is ``directory`` a click-build project (and not just an app tree)?"""
    path = os.path.join(directory, "pyproject.toml")
    if not os.path.isfile(path):
        return False
    from pathlib import Path

    from ..backend.settings import read_pyproject

    data = read_pyproject(Path(directory))
    system = data.get("build-system")
    backend = system.get("build-backend") if isinstance(system, dict) else None
    tool = data.get("tool")
    return backend == "click_build.backend" or (isinstance(tool, dict) and "click-build" in tool)


def _build_project(args: argparse.Namespace, level: int) -> str:
    """``python -m build --wheel`` of the project, with the command's options as settings."""
    from dataclasses import replace

    from ..backend.pipeline import build_package
    from ..backend.settings import load_project

    project = load_project(args.directory)
    changes: dict[str, object] = {}
    if args.ignore:
        changes["exclude"] = [*project.settings.exclude, *args.ignore]
    if args.manifest:
        changes["manifest"] = args.manifest
    if args.review:
        changes["review"] = args.review
    if args.framework:
        changes["frameworks"] = args.framework
        changes["framework"] = ""
    if changes:
        project = replace(project, settings=replace(project.settings, **changes))  # type: ignore[arg-type]
    make_output_dir(args.output_dir)
    return str(build_package(project, args.output_dir, level))


def run_buildsource(args: argparse.Namespace) -> int:
    from .. import _console
    from ..build import COMPRESS_LEVEL, SOURCE_IGNORES, build_source, stage_tree
    from ..timestamps import source_date_epoch

    _check_directory(args.directory)
    source_date_epoch()  # a bad value stops the build before anything is written
    manifest_path, name, version = _source_manifest(args.directory, args.manifest)
    entries = stage_tree(args.directory, args.ignore, default_ignores=SOURCE_IGNORES)
    make_output_dir(args.output_dir)
    level = COMPRESS_LEVEL if args.compression_level is None else args.compression_level
    path = build_source(name, version, manifest_path, entries, args.output_dir, level=level)
    _console.info(
        f"Successfully built source package in '{os.path.join(args.output_dir, os.path.basename(path))}'."
    )
    return 0


def _source_manifest(directory: str, manifest: str | None) -> tuple[str, str, str]:
    """The manifest file ``buildsource`` packs as ./manifest.json, and the NAME and VERSION
    of ``NAME_VERSION.tar.gz``.

    A click-build project's manifest is found as ``build`` finds it (manifest.json, else
    manifest.json.in), and its ``[project].version`` is taken when the manifest has none.
    Fields a build fills in (``"architecture": "@CLICK_ARCH@"``) are not checked: the
    source package needs only the name and the version.
    """
    import json
    import re

    from .. import _console
    from ..errors import ManifestError
    from ..manifest import validate
    from ..placeholders import (
        ANY_PLACEHOLDER,
        ARCH_PLACEHOLDERS,
        FRAMEWORK_PLACEHOLDERS,
        is_placeholder,
        read_manifest_file,
        reconcile_version,
    )

    project = None
    if is_project(directory):
        from ..backend.settings import load_project

        project = load_project(directory)
    if manifest is None and project is not None:
        from ..backend.appmanifest import find_manifest
        from ..backend.kinds import resolve

        found = find_manifest(project, resolve(project))
        if found is None or found.path is None:
            raise BuildError(
                f'directory "{directory}" has no manifest file to pack as manifest.json '
                "(its manifest is a [tool.click-build.manifest] table or comes from CMake's "
                "install step): give one with -m, or make the source package with "
                "'python -m build --sdist'")
        path = found.path
        label = os.path.join(directory, os.path.relpath(path, project.root))
    else:
        path = label = resolve_manifest(directory, manifest)
    data = read_manifest_file(path, label).peek(placeholders=True)
    project_version = project.version if project is not None else None
    for key in ("name", "version"):
        value = data.get(key)
        if key == "version" and isinstance(value, str) and project_version is not None:
            value = data[key] = re.sub(r"@(PROJECT|CLICK)_VERSION@", project_version, value)
        if isinstance(value, str) and ANY_PLACEHOLDER.search(value):
            raise ManifestError(
                [f"{key}: {value!r} is left to the build, but buildsource names the source "
                 f"package NAME_VERSION.tar.gz: write the {key} in"
                 + (" (or as [project].version in pyproject.toml)" if key == "version"
                    else "")], label)
    data = reconcile_version(data, project_version, label)
    filled = {k for k, v in data.items() if ANY_PLACEHOLDER.search(json.dumps(v))}
    for key, placeholders in (("architecture", ARCH_PLACEHOLDERS),
                              ("framework", FRAMEWORK_PLACEHOLDERS)):
        if is_placeholder(data.get(key), placeholders):  # "" too: the build fills it
            filled.add(key)
    problems = validate(data)

    def mine(problem: str) -> bool:  # not about a field the build fills in
        return re.split(r"[:.\[]", problem, maxsplit=1)[0] not in filled

    errors = [e for e in problems.errors if mine(e)]
    if errors:
        raise ManifestError(errors, label)
    for warning in problems.warnings:
        if mine(warning):
            _console.warn(f"{label}: {warning}")
    return path, str(data["name"]), str(data["version"])
