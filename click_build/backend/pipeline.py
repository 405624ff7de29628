"""One build, from project to ``.click``: settings -> targets -> staged entries -> finish.

The build is planned once (:func:`~.plan.plan_build`: a list of targets, one for a
single build); each target is staged by its kind (a tree copied, setuptools and pip,
or CMake) in its own build folder; everything after that is the core's finishing
stage (:func:`click_build.finish.finish_jobs`), the very one ``click-build build`` and
the CMake module run, so the three routes cannot disagree.
"""

from __future__ import annotations

import contextlib
import os
from pathlib import Path

from .. import _console
from ..build import COMPRESS_LEVEL
from ..choices import Request
from ..elf import ARCH_TRIPLETS
from ..errors import BuildError, ManifestError
from ..finish import Job, finish_jobs
from .context import Staging, work_dir
from .crossroot import root_toolchain, use_root
from .kinds import stage
from .plan import SETTINGS, plan_build, with_toolchain
from .settings import Project

__all__ = ["build_package", "request_of"]

#: How a backend user switches review errors off.
REVIEW_SWITCH = ('review = "report" in [tool.click-build] (python -m build -C '
                 'click-build.review=report, click-build build --no-validate)')


def request_of(project: Project) -> Request:
    """What the project's settings ask of the finishing stage."""
    s = project.settings
    return Request(framework=s.framework, architecture=s.architecture, version=project.version,
                   name=project.name, review=s.review, origin=SETTINGS,
                   review_switch=REVIEW_SWITCH)


def build_package(project: Project, outdir: str | os.PathLike[str],
                  level: int = COMPRESS_LEVEL) -> Path:
    """Build ``project`` (from :func:`~.settings.load_project`) into ``outdir``; return the
    .click path (of a build for several targets, the first: what a PEP 517 frontend hears
    of).  ``level``: the gzip level (``click-build build -z``)."""
    from ..timestamps import source_date_epoch

    source_date_epoch()  # a bad value stops the build before anything is built or written
    plan = plan_build(project, request_of(project)._replace(level=level))
    jobs = []
    with contextlib.ExitStack() as stack:
        for target in plan.targets:
            built, root, root_file = with_toolchain(project, target.toolchain), None, None
            if target.root is not None:  # held until packed: bundled files are the root's
                root = stack.enter_context(use_root(target.root))
                root_file = root_toolchain(root)
                built = with_toolchain(project, f"-DCMAKE_TOOLCHAIN_FILE={root_file}")
            work = stack.enter_context(work_dir(built, plan.kind, target.folder))
            if plan.several:
                _console.info(f"* Staging {target.label}")
            staging = Staging(built, plan.kind, work, target.arch,
                              ARCH_TRIPLETS.get(target.arch, ""), target.facts, plan.source,
                              Path(outdir), arch_guessed=target.arch_guessed,
                              architectures=target.architectures, arch_env=target.arch_env,
                              framework_chosen_by=target.framework_chosen_by, sysroot=root,
                              sysroot_toolchain=root_file)
            staged = stage(staging)
            source = staged.manifest or plan.source
            if source is None:
                if plan.several:
                    raise BuildError("manifest.json: not found: neither the project nor the "
                                     "CMake install has a manifest.json")
                raise ManifestError(["not found: neither the project nor the CMake install "
                                     "has a manifest.json"], "manifest.json")
            choice = target.choice if staged.manifest is None else None
            jobs.append(Job(source, staged.entries, target.request, choice,
                            str(work / "click-finish")))
        done = finish_jobs(jobs, outdir, several=plan.several)
    paths = [Path(d.path) for d in done if d.path]
    if not plan.several:
        _console.info(f"* Built {paths[0].name}")
    return paths[0]
