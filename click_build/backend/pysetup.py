"""Kind ``python``: the app's Python packages by setuptools, its dependencies by pip.

``build_py`` of the project (any setuptools configuration: pyproject.toml,
setup.cfg or setup.py) runs in a child process, with ``egg_info`` pointed at
the build folder so the checkout stays clean.  The dependencies in
``[project].dependencies`` are installed with ``pip install --target`` for the
*device*: its Python (from the framework) and its architecture's manylinux
wheels, never the build host's.  A vendored ``.so`` of another machine, or a
distribution that refuses the device's Python, stops the build.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

from .. import _console
from ..build import Entry, stage_tree
from ..elf import MANYLINUX_MACHINES, scan_elf
from ..errors import BuildError, ConfigError
from .context import Staging, build_dir_patterns, clean, excluded_paths

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

__all__ = [
    "pip_command", "python_requires_ok", "run_build_py", "source_excludes", "stage_python",
    "vendor",
]


def _echo(cmd: list[str]) -> None:
    _console.info("+ " + " ".join(cmd))


def run_build_py(root: Path, work: Path) -> tuple[Path, list[str]]:
    """Run setuptools' ``build_py``; return the build folder and the source paths to leave out."""
    build_lib = work / "python-lib"
    egg_base = work / "python-egg"
    clean(build_lib)
    clean(egg_base)
    egg_base.mkdir(parents=True)
    report = work / "python-build.json"
    cmd = [sys.executable, "-m", "click_build.backend.pysetup", str(root), str(build_lib),
           str(egg_base), str(report)]
    _echo(["setuptools", "build_py", "--build-lib", str(build_lib)])
    result = subprocess.run(cmd, cwd=root, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                            text=True)
    if result.returncode != 0:
        sys.stderr.write(result.stdout)
        raise BuildError(
            "pyproject.toml: setuptools could not build the app's Python packages "
            "(see its output above)")
    data = json.loads(report.read_text(encoding="utf-8"))
    return build_lib, list(data["exclude"])


_OPS = re.compile(r"^\s*(~=|==|!=|<=|>=|<|>)\s*([0-9][0-9.*]*)\s*$")


def _tuple(v: str) -> tuple[int, ...]:
    return tuple(int(p) for p in v.split(".") if p.isdigit())


def python_requires_ok(spec: str, version: str) -> bool:
    """Does Python ``version`` (major.minor) satisfy a Requires-Python specifier?

    Enough of PEP 440 for what distributions write there; unknown forms pass.
    """
    have = _tuple(version)
    for clause in filter(None, (c.strip() for c in spec.split(","))):
        m = _OPS.match(clause)
        if not m:
            continue
        op, raw = m.groups()
        want = _tuple(raw.rstrip(".*"))
        cut = have[: len(want)] if raw.endswith("*") or op == "~=" else have
        ok = {
            ">=": have >= want, ">": have > want, "<=": have <= want, "<": have < want,
            "==": cut == want if raw.endswith("*") else have[: len(want)] == want,
            "!=": not (have[: len(want)] == want),
            "~=": have >= want and have[: len(want) - 1] == want[:-1],
        }[op]
        if not ok:
            return False
    return True


def pip_command(target: Path, arch: str, python: str, glibc_minor: int | None,
                requirements: list[str]) -> list[str]:
    """``pip install`` for the device: its Python, and wheels of its architecture (or pure)."""
    cmd = [sys.executable, "-m", "pip", "install", "--target", str(target), "--no-compile",
           "--disable-pip-version-check", "--no-input", "--no-warn-script-location",
           "--only-binary=:all:", "--python-version", python, "--implementation", "cp"]
    if arch == "all":
        cmd += ["--platform", "any", "--abi", "none"]
    else:
        machine = MANYLINUX_MACHINES.get(arch)
        if machine is None:
            raise ConfigError(
                f"pyproject.toml: tool.click-build.architecture: no Python wheels exist for {arch!r}")
        for minor in range(glibc_minor or 17, 16, -1):
            cmd += ["--platform", f"manylinux_2_{minor}_{machine}"]
        cmd += ["--platform", f"manylinux2014_{machine}"]
    return [*cmd, *requirements]


def vendor(ctx: Staging, target: Path) -> None:
    """Install ``[project].dependencies`` into ``target`` for the device.

    The device's Python comes from the framework (20.04: 3.8, 24.04: 3.12) and the
    wheels from its architecture.  A fat package (a list of architectures) gets the
    wheels of each; as it has one packages folder for all of them, they must be the
    same files (pure Python), else the build stops and says what to do.
    """
    project = ctx.project
    python = project.settings.python.version or ctx.facts.python
    if not python:
        raise ConfigError(
            f"pyproject.toml: tool.click-build.python.version: the framework "
            f"{ctx.facts.framework or '(none)'} does not say which Python the device has; "
            "set it, e.g. version = \"3.8\"")
    if not ctx.architectures:
        _vendor_for(ctx, target, ctx.arch, python)
        return
    trees = {}
    for arch in ctx.architectures:
        trees[arch] = target.with_name(f"{target.name}-{arch}")
        _vendor_for(ctx, trees[arch], arch, python)
    first, *others = ctx.architectures
    reference = _digest(trees[first])
    for arch in others:
        differ = sorted(set(reference.items()) ^ set(_digest(trees[arch]).items()))
        if differ:
            raise BuildError(
                f"pyproject.toml: project.dependencies: the wheels for {first} and {arch} differ "
                f"({differ[0][0]}); a fat package has one "
                f"{project.settings.python.packages_dir} for all its architectures, so its "
                "dependencies must be pure Python. Build one package per architecture "
                "(-C click-build.architecture=ARCH) instead")
    clean(target)
    trees[first].rename(target)


def _vendor_for(ctx: Staging, target: Path, arch: str, python: str) -> None:
    """pip's install for one architecture, or the same tree from the cache (which
    :mod:`.vendor_cache` checks as it copies); what pip installed is kept there."""
    from .vendor_cache import entry_key, open_cache

    clean(target)
    cmd = pip_command(target, arch, python, ctx.facts.glibc_minor, ctx.project.dependencies)
    request = [arg if arg != str(target) else "TARGET" for arg in cmd[3:]]
    key = entry_key(request)
    cache = open_cache()
    if cache is not None:
        target.mkdir(parents=True)
        if cache.fetch(key, target):
            _console.info(f"+ {' '.join(ctx.project.dependencies)} for Python {python} "
                          f"({arch}): from the cache, {cache.entry(key)}")
            _check_vendored(target, arch, python)
            return
        clean(target)
    _echo(cmd[2:])
    result = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    if result.returncode != 0:
        sys.stderr.write(result.stdout)
        what = "pure-Python wheels only, as the package is 'all'" if arch == "all" \
            else f"wheels for {arch}"
        raise BuildError(
            f"pyproject.toml: project.dependencies: pip could not install them for Python "
            f"{python} ({what}); see pip's output above. A dependency with compiled code "
            "needs an explicit architecture: -C click-build.architecture=arm64")
    clean(target / "bin")  # host-specific launcher scripts
    _check_vendored(target, arch, python)
    if cache is not None:
        cache.store(key, target, request)


def _digest(tree: Path) -> dict[str, str]:
    """Relative path -> content hash (or link target) of every file in ``tree``."""
    import hashlib

    out = {}
    for path in sorted(tree.rglob("*")):
        rel = path.relative_to(tree).as_posix()
        if path.is_symlink():
            out[rel] = "-> " + os.readlink(path)
        elif path.is_file():
            out[rel] = hashlib.sha256(path.read_bytes()).hexdigest()
    return out


def _check_vendored(target: Path, arch: str, python: str) -> None:
    for meta in sorted(target.glob("*.dist-info/METADATA")):
        for line in meta.read_text(encoding="utf-8", errors="replace").splitlines():
            if not line.strip():
                break
            if line.lower().startswith("requires-python:"):
                spec = line.split(":", 1)[1].strip()
                if not python_requires_ok(spec, python):
                    dist = meta.parent.name.removesuffix(".dist-info")
                    raise BuildError(
                        f"pyproject.toml: project.dependencies: {dist} needs Python {spec}, "
                        f"but the device has {python}; pin an older release")
    files = [str(p) for p in sorted(target.rglob("*")) if p.is_file() and not p.is_symlink()]
    for path, info in scan_elf(files).items():
        if arch not in info.arches:
            rel = os.path.relpath(path, target)
            raise BuildError(
                f"pyproject.toml: project.dependencies: vendored {rel} is compiled for "
                f"{info.description}, but the package is for {arch}")


def stage_python(ctx: Staging) -> list[Entry]:
    """Data files of the tree + the app's packages + vendored dependencies."""
    from .files import prefixed, stage_files

    settings = ctx.project.settings
    prefix = settings.python.packages_dir.strip("/")
    if not prefix or ".." in prefix.split("/"):
        raise ConfigError("pyproject.toml: tool.click-build.python.packages-dir: must be a "
                          "relative folder inside the package")
    prebuilt = ctx.project.prebuilt
    if prebuilt is not None:
        build_lib, sources = prebuilt.build_lib, list(prebuilt.sources)
    else:
        build_lib, sources = run_build_py(ctx.project.root, ctx.work)
    modules = _relative_to(sources, ctx.project.root, ctx.source_root)
    ignores = [*settings.exclude, *build_dir_patterns(ctx.project, "python", ctx.outdir)]
    entries = stage_files(ctx.source_root, ignores, settings.include, excluded_paths(ctx))
    entries = _without(entries, modules)
    if build_lib.is_dir():
        entries += [prefixed(e, prefix) for e in stage_tree(build_lib)]
    if settings.python.vendor and ctx.project.dependencies:
        target = ctx.work / "python-vendor"
        vendor(ctx, target)
        entries += [prefixed(e, prefix) for e in stage_tree(target)]
    return entries


def _relative_to(patterns: list[str], root: Path, source_root: Path) -> set[str]:
    """Project-relative ``/path`` patterns as paths inside the source folder."""
    out = set()
    for pattern in patterns:
        path = os.path.relpath(root / pattern.lstrip("/"), source_root).replace(os.sep, "/")
        if path != ".." and not path.startswith("../"):
            out.add(path)
    return out


def _without(entries: list[Entry], modules: set[str]) -> list[Entry]:
    """``entries`` less the module files, and less the folders only those filled."""
    kept = [e for e in entries if e.arcname not in modules]
    emptied = {m.rpartition("/")[0] for m in modules}
    emptied |= {p for m in list(emptied) for p in _parents(m)}
    needed = {p for e in kept if e.kind != "dir" for p in _parents(e.arcname)}
    return [e for e in kept if not (e.kind == "dir" and e.arcname in emptied
                                    and e.arcname not in needed)]


def _parents(path: str) -> list[str]:
    parts = path.split("/")
    return ["/".join(parts[:i]) for i in range(1, len(parts))] + [path]


def _main(argv: list[str]) -> int:
    """Child process: ``egg_info`` + ``build_py`` and a report of the source folders."""
    root, build_lib, egg_base, report = argv
    os.chdir(root)
    sys.path.insert(0, root)
    import setuptools  # type: ignore[import-untyped, unused-ignore]  # noqa: F401

    # isort: split
    from distutils.core import run_setup  # setuptools' copy, which needs setuptools first

    script = os.path.join(root, "setup.py")
    if not os.path.isfile(script):
        script = os.path.join(egg_base, "setup_shim.py")
        with open(script, "w", encoding="utf-8") as f:
            f.write("from setuptools import setup\nsetup()\n")
    failures = _record_setup_exits(setuptools)
    dist = run_setup(script, ["egg_info", "--egg-base", egg_base,
                              "build_py", "--build-lib", build_lib], stop_after="run")
    # run_setup() swallows the SystemExit setuptools turns its errors into (a flat
    # layout with several top-level packages, say): without this the build went on
    # with none of the app's modules.
    if failures or "build_py" not in dist.have_run:
        if not _has_modules(root):  # discovery took qml/ or assets/ for packages: none
            with open(report, "w", encoding="utf-8") as f:
                json.dump({"exclude": []}, f)
            return 0
        sys.stderr.write(f"{failures[0] if failures else 'setup() ran no build_py'}\n")
        return 1
    with open(report, "w", encoding="utf-8") as f:
        json.dump({"exclude": source_excludes(dist)}, f)
    return 0


def _has_modules(root: str) -> bool:
    """Does the project hold Python code of its own (beyond setup.py and tests)?"""
    skip = {"build", "dist", "tests", "test", "node_modules", "__pycache__"}
    for folder, dirs, files in os.walk(root):
        dirs[:] = [d for d in dirs if d not in skip and not d.startswith(".")]
        if any(f.endswith(".py") and not (folder == root and f == "setup.py") for f in files):
            return True
    return False


def _record_setup_exits(setuptools: Any) -> list[object]:
    """Make ``setuptools.setup`` note the failure it exits with; the list fills as it does."""
    failures: list[object] = []
    real_setup = setuptools.setup

    def setup(**attrs: object) -> object:
        try:
            return real_setup(**attrs)
        except SystemExit as e:
            if e.code not in (None, 0):
                failures.append(e.code)
            raise

    setuptools.setup = setup
    return failures


def source_excludes(dist: object) -> list[str]:
    """Patterns (``/path`` from the project folder) of the modules setuptools built.

    Those land in packages-dir, so they are not data, and neither are the package
    data files of a package with modules.  Never whole folders, nor the files of
    a folder without modules: setuptools' discovery takes folders such as qml/ or
    assets/ for (namespace) packages, and their QML and images must stay in the app.
    """
    cmd = dist.get_command_obj("build_py")  # type: ignore[attr-defined]
    cmd.ensure_finalized()
    modules = [os.path.normpath(path) for path in cmd.get_source_files()]
    with_modules = {os.path.dirname(path) for path in modules}
    package_data = [os.path.normpath(os.path.join(src_dir, name))
                    for _package, src_dir, _build_dir, names in cmd.data_files
                    if os.path.normpath(src_dir) in with_modules for name in names]
    return sorted({"/" + path.replace(os.sep, "/") for path in modules + package_data})


if __name__ == "__main__":
    sys.exit(_main(sys.argv[1:]))
