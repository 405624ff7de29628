"""Kind ``qmake``: ``qmake``, ``make``, ``make INSTALL_ROOT=<stage> install``, as Clickable.

What existing Ubuntu Touch qmake projects do, and how it is handled here:

- they install with ``INSTALLS`` to absolute paths (``target.path = /``,
  ``$${UBUNTU_CLICK_BINARY_PATH}``): ``make install`` runs with ``INSTALL_ROOT`` set to the
  staging folder, so nothing lands in the build host's root;
- they ``load(ubuntu-click)``, a feature of the old Ubuntu SDK that no distribution
  ships: click-build gives qmake its own (``UBUNTU_CLICK_ARCH``,
  ``UBUNTU_CLICK_BINARY_PATH``, ``UBUNTU_CLICK_PLUGIN_PATH``) through ``QMAKEFEATURES``;
- they ask ``dpkg-architecture -qDEB_HOST_ARCH`` for the manifest's ``@CLICK_ARCH@``
  (a ``sed`` in the ``.pro``): ``DEB_HOST_ARCH`` (and ``DEB_HOST_MULTIARCH``) hold the
  build's architecture, so the answer is the package's, ``all`` for a pure-QML app;
- they read Clickable's environment (``$$(ARCH_TRIPLET)``): it is set, with this build's
  folders;
- their builds may write into the source tree (``lrelease`` beside the ``.ts`` files):
  qmake runs on the same mirror of the sources as CMake does, and the build folder is
  kept, so the next build only recompiles what changed.

A build for the phone (``toolchains = "sysroot"``) runs this machine's qmake with the
root's ``qt.conf`` and mkspec (:mod:`click_build.sysroot.qmakespec`): the root's Qt, the
cross compilers; :func:`spec_args` is the only place that knows how qmake is pointed at
a target.  Another architecture without a root stops before anything runs.
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path

from .. import _console
from ..build import package_timestamp
from ..errors import BuildError, ConfigError
from ..hostarch import host_architecture
from .context import Staged, Staging, build_dir_patterns, clean, expand, real_dir
from .steps import SETTINGS, run_tool, stage_folder, staged_folder, step_environment

__all__ = ["project_file", "qmake_environment", "qmake_install", "spec_args", "stage_qmake"]

#: The Ubuntu SDK's ``ubuntu-click`` qmake feature, with this build's values.
_UBUNTU_CLICK = """\
# click-build's stand-in for the Ubuntu SDK's ubuntu-click feature (load(ubuntu-click))
UBUNTU_CLICK_ARCH = {arch}
UBUNTU_CLICK_PLUGIN_PATH = {lib}
UBUNTU_CLICK_BINARY_PATH = {bin}
"""


def _tool(name: str, package: str) -> str:
    found = shutil.which(name)
    if found is None:
        raise BuildError(f"{SETTINGS}.kind: 'qmake' needs {name}, which is not installed "
                         f"(apt install {package})")
    return found


def project_file(root: Path, setting: str) -> str:
    """The ``.pro`` file to build, relative to ``root``: the setting, else the only one at
    the top, else the one named after the folder."""
    where = f"{SETTINGS}.qmake.project"
    if setting:
        path = root / setting
        real, top = os.path.realpath(path), os.path.realpath(root)
        if not real.startswith(top.rstrip(os.sep) + os.sep):
            raise ConfigError(f"{where}: {setting!r} is outside the project {root}")
        if not path.is_file():
            raise ConfigError(f"{where}: {setting!r} does not exist in {root}")
        return Path(setting).as_posix()
    found = sorted(p.name for p in root.glob("*.pro") if p.is_file())
    if len(found) == 1:
        return found[0]
    if f"{root.name}.pro" in found:
        return f"{root.name}.pro"
    if not found:
        raise ConfigError(f"{where}: no *.pro file at the top of {root}; name the project "
                          "file (qmake.project = \"app/app.pro\")")
    raise ConfigError(f"{where}: {', '.join(found)} are all at the top of {root}; name the "
                      "one to build (qmake.project = \"...\")")


def spec_args(ctx: Staging) -> list[str]:
    """The qmake arguments that choose the target: none for this machine; the root's
    ``qt.conf`` and mkspec for a target built against the phone's root.  Another
    architecture without a root is refused."""
    if ctx.sysroot is not None:
        from ..sysroot.qmakespec import qmake_args

        return qmake_args(ctx.work / "qmake-sysroot", ctx.sysroot.root, ctx.arch,
                          ctx.sysroot.get("label"))
    host = host_architecture()
    if ctx.arch in ("all", host):
        return []
    raise BuildError(
        f"{SETTINGS}.kind: a qmake project is built for this machine ({host}), not "
        f"{ctx.arch}, unless it builds against the phone's root: toolchains = "
        f"{{\"{ctx.arch}\" = \"sysroot\"}} in [tool.click-build] (python -m build -C "
        f"click-build.toolchains.{ctx.arch}=sysroot; docs/phone.md)")


def _real_qmake(qmake: str, env: dict[str, str]) -> str:
    """Qt's own qmake behind a chooser (qtchooser's ``/usr/bin/qmake``): the one in the
    folder it says holds Qt's tools, else ``qmake`` itself."""
    import subprocess

    try:
        result = subprocess.run([qmake, "-query", "QT_HOST_BINS"], env=env, text=True,
                                capture_output=True, stdin=subprocess.DEVNULL, timeout=60)
    except (OSError, subprocess.TimeoutExpired):
        return qmake
    real = Path(result.stdout.strip() or "/nonexistent", "qmake")
    return str(real) if result.returncode == 0 and real.is_absolute() and \
        os.access(real, os.X_OK) else qmake


def _features(ctx: Staging, folder: Path) -> Path:
    """A folder of qmake features for this build (``ubuntu-click.prf``)."""
    real_dir(folder)
    lib = f"/lib/{ctx.triplet}" if ctx.triplet else "/lib"
    text = _UBUNTU_CLICK.format(arch=ctx.arch, lib=lib, bin=f"{lib}/bin")
    path = folder / "ubuntu-click.prf"
    try:
        have = path.read_text(encoding="utf-8") if not path.is_symlink() else None
    except OSError:
        have = None
    if have != text:  # unchanged, it keeps its time: make sees no new dependency
        clean(path)
        path.write_text(text, encoding="utf-8")
    return folder


def qmake_environment(ctx: Staging, env: dict[str, str]) -> dict[str, str]:
    """``env`` with what qmake runs with: the ``ubuntu-click`` feature, the architecture
    ``dpkg-architecture`` answers, Qt 5."""
    out = dict(env)
    out["QMAKEFEATURES"] = os.pathsep.join(
        [str(_features(ctx, ctx.work / "qmake-features")),
         *filter(None, [os.environ.get("QMAKEFEATURES")])])
    out["DEB_HOST_ARCH"] = ctx.arch
    if ctx.triplet:
        out["DEB_HOST_MULTIARCH"] = ctx.triplet
    if ctx.sysroot is not None:  # pkg-config inside the root only
        from ..sysroot.qmakespec import qmake_environment as root_environment

        out.update(root_environment(ctx.sysroot.root, ctx.arch))
    out.setdefault("QT_SELECT", "qt5")  # Debian's qmake is qtchooser's: Qt 5, as the phone
    # rcc embeds file times: the package's one time, as for CMake (the sdist route and
    # --wheel then give the same bytes)
    out.setdefault("SOURCE_DATE_EPOCH", str(package_timestamp()))
    out.setdefault("QT_RCC_SOURCE_DATE_OVERRIDE", out["SOURCE_DATE_EPOCH"])
    return out


def qmake_install(ctx: Staging, pro: Path, build: Path, install_root: Path,
                  env: dict[str, str], args: list[str], make_args: list[str],
                  label: str) -> None:
    """qmake, make, ``make INSTALL_ROOT=install_root install`` for ``pro`` in ``build``
    (``install_root`` is emptied first); ``label`` names the project in messages."""
    qmake = _tool("qmake", "qtbase5-dev-tools qt5-qmake")
    spec = spec_args(ctx)
    if spec:  # Debian's qmake is qtchooser's, which takes -qtconf for its own -qt option
        qmake = _real_qmake(qmake, env)
    make = _tool("make", "make")
    variables = [f"CLICK_ARCH={ctx.arch}", f"CLICK_FRAMEWORK={ctx.facts.framework}"]
    if ctx.triplet:
        variables.append(f"CLICK_ARCH_TRIPLET={ctx.triplet}")
    _console.info(f"* qmake {label}")
    run_tool([qmake, *spec, *(expand(a, env) for a in args), *variables, str(pro)],
             build, env, f"qmake ({label})")
    jobs = env.get("NUM_PROCS") or str(os.cpu_count() or 1)
    run_tool([make, f"-j{jobs}", *(expand(a, env) for a in make_args)], build, env,
             f"make ({label}, build folder {build})")
    clean(install_root)
    install_root.mkdir(parents=True)
    run_tool([make, f"INSTALL_ROOT={install_root}", "install"], build, env,
             f"make install ({label}, build folder {build})")


def stage_qmake(ctx: Staging) -> Staged:
    """Configure with qmake, build with make, install into ``<build>/stage``; stage that."""
    from .mirror import mirror_sources

    project = ctx.project
    settings = project.settings.qmake
    pro = project_file(project.root, settings.project)
    spec_args(ctx)  # another architecture stops the build before anything is mirrored
    source = real_dir(ctx.work / "source")
    ignores = [*build_dir_patterns(project, "qmake", ctx.outdir), "/dist", ".venv"]
    copied = mirror_sources(project.root, source, ignores, [ctx.outdir] if ctx.outdir else [])
    _console.info(f"* Sources mirrored into {source} ({copied} changed)")
    build = real_dir(ctx.work / "qmake")
    stage = stage_folder(ctx)
    env = qmake_environment(ctx, step_environment(ctx, build, source))
    args = [*(f"CONFIG+={word}" for word in settings.config), *settings.args]
    qmake_install(ctx, source / pro, build, stage, env, args, settings.make_args, pro)
    staged = staged_folder(ctx, stage, None, "installed by make install")
    if not staged.entries:
        raise BuildError(f"{pro}: 'make install' installed nothing; add INSTALLS for the "
                         "app's files (target.path = /, config_files.path = /, ...)")
    return staged
