"""The finishing stage: staged trees -> checked, written and reviewed ``.click`` files.

Every build route only stages a tree its own way (the backend's kinds,
``click-build build DIR``, the CMake module's install) and then hands it here as
a :class:`Job`, so the same tree gives the same package and the same findings
whichever route built it.  A single build is a list of one job; a build for
several targets (frameworks, architectures) a longer one, and each staged file is
read once for all of them.  :func:`finish_jobs` runs, in order:

1. :func:`prepare`, for each job: its choice (:func:`~click_build.choices.choose`:
   the framework and the declared architecture, made once, here or by the route
   before staging), its manifest rendered for the declared architecture (``all``
   while the compiled files have not decided), the files the build generates (the
   AppArmor ``policy_version`` filled in, ``po/LANG.po`` compiled:
   :mod:`click_build.i18n`) and the tree checks
   (:func:`~click_build.tree_checks.check_tree`: hook files, and every folder the
   desktop files, the hooks and the QML entry point name; a package that silently
   lost one is never written);
2. :class:`~click_build.build.Packing`: every job packed into a nameless file, each
   staged file read once for all of them; the files step 1 read are packed from the
   bytes it read;
3. :func:`final_manifest`, for each job: the architecture decided from the ELF
   headers the packing read (:func:`~click_build.choices.decide_architecture`) and
   the manifest rendered for it;
4. :func:`~click_build.targets.check_store_rules`: the stores' rules across the jobs
   of a build for several targets;
5. :func:`write_reviewed`, for each job: the package written
   (:func:`~click_build.build.write_package`) and reviewed (:func:`review_built`)
   complete but not yet under its name: errors fail the build, and nothing is left,
   unless the review mode is ``report``; ``strict`` fails on warnings too.

The same list is in docs/architecture.md; ``tests/test_architecture_steps.py`` holds
both to the order of the calls in :func:`finish_jobs`.

Standard library only, like the rest of the core.
"""

from __future__ import annotations

import os

from . import _console
from ._record import Record
from .build import Entry, Packing, check_output_dir, write_package
from .choices import Choice, Request, choose, decide_architecture
from .elf import ARCH_TRIPLETS
from .errors import BuildError, ClickError, ConfigError
from .manifest import Manifest, dump_manifest
from .placeholders import (
    ManifestSource,
    fill_apparmor,
    reconcile_version,
    resolve_manifest_fields,
    variables,
)
from .staging import open_staged, staged_code
from .targets import Candidate, arch_word, check_store_rules, target_label
from .timestamps import package_timestamp
from .tree_checks import check_tree

TYPE_CHECKING = False  # not typing.TYPE_CHECKING: importing typing costs start-up time

if TYPE_CHECKING:
    from collections.abc import Sequence

    from .build import Packed
    from .framework_table import FrameworkFacts
    from .review import Finding

    Arch = str | list[str]

__all__ = ["REVIEW_MODES", "Finished", "Job", "Prepared", "final_manifest", "finish",
           "finish_jobs", "prepare", "review_built", "summary_table", "write_reviewed"]

#: ``errors``: review errors fail the build (the default, as Clickable);
#: ``strict``: warnings fail it too (the OpenStore rejects uploads with any);
#: ``report``: findings are printed, the build never fails on them;
#: ``off``: no review at all (a later step reviews, or a benchmark compares like for like).
REVIEW_MODES = ("errors", "strict", "report", "off")


class Job(Record):
    """One package to make: its staged tree, its manifest as written, and what was asked."""

    source: ManifestSource
    entries: list[Entry]
    request: Request
    #: The choice, when the route made it before staging (the backend); None: made here.
    choice: Choice | None = None
    #: A folder the caller owns for the files the build generates (made afresh, removed
    #: afterwards); None: a temporary folder inside the output folder.
    scratch: str | None = None


class Prepared(Record):
    """A job ready to be packed (step 1): its choice, the manifest rendered for ``arch``
    and the entries with the generated files."""

    choice: Choice
    arch: Arch
    manifest: Manifest
    entries: list[Entry]
    kept: dict[str, bytes]  # what the checks read (source path -> bytes): packed from these


class Finished(Record):
    """A written package and what the review found in it."""

    path: str  # "" when the review removed it (a build for several targets goes on)
    manifest: Manifest
    findings: list[Finding]
    label: str = ""  # "FRAMEWORK/ARCH": the package's target
    size: int = 0
    error: str = ""  # why the review removed it


# ----------------------------------------------------------------- step 1 ---

class _Scratch:
    """A folder for generated files, made only when the first one is written."""

    def __init__(self, path: str | None, near: str | None) -> None:
        self._path = path
        self._near = near
        self.made: str | None = None

    def file(self, rel: str) -> str:
        dest = os.path.join(self.folder(), rel)
        os.makedirs(os.path.dirname(dest), exist_ok=True)
        return dest

    def folder(self) -> str:
        if self.made is None:
            # Imported here: most builds generate nothing, and shutil and tempfile
            # (with bz2, lzma, random...) would cost every build's start-up.
            import shutil
            import tempfile

            if self._path is None:
                self.made = tempfile.mkdtemp(prefix=".click-build-", dir=self._near)
            else:
                if os.path.islink(self._path):
                    os.unlink(self._path)  # never delete through a link
                shutil.rmtree(self._path, ignore_errors=True)
                os.makedirs(self._path)
                self.made = self._path
        return self.made

    def remove(self) -> None:
        if self.made is not None:
            import shutil

            shutil.rmtree(self.made, ignore_errors=True)


def _render(source: ManifestSource, request: Request, choice: Choice, arch: Arch) -> Manifest:
    """The package's manifest for the architecture ``arch``: placeholders filled, checked."""
    label = source.label
    single = arch if isinstance(arch, str) else ""
    values = variables(single, ARCH_TRIPLETS.get(single, ""), choice.facts, request.version,
                       request.name)
    data = source.render(values)
    data = reconcile_version(data, request.version, label)
    data = resolve_manifest_fields(data, values, arch, label, bool(request.framework))
    if choice.guessed:
        data["architecture"] = arch
    if request.rewrite_framework:
        data["framework"] = choice.facts.framework
    if request.version_suffix and isinstance(data.get("version"), str):
        data["version"] = f"{data['version']}{request.version_suffix}"
    return Manifest.from_dict(data, label)


def _names_the_architecture(source: ManifestSource, request: Request, choice: Choice) -> bool:
    """Do the manifest's name or hooks depend on the architecture (a template's
    ``@CLICK_ARCH_TRIPLET@`` in a hook path)?  Only a template's can."""
    if not source.template:
        return False
    seen = set()
    for arch in ("all", "armhf", ""):  # nothing compiled, one architecture, several
        data = source.render(variables(arch, ARCH_TRIPLETS.get(arch, ""), choice.facts,
                                       request.version, request.name))
        seen.add(repr((data.get("name"), data.get("hooks"))))
    return len(seen) > 1


def _fill_apparmor(entries: list[Entry], manifest: Manifest, facts: FrameworkFacts,
                   scratch: _Scratch, kept: dict[str, bytes], replaces: str = "") -> list[Entry]:
    """Entries whose AppArmor hook files got their policy_version filled in.  Each file
    read goes into ``kept``: one that needs nothing is packed from those bytes, and the
    other jobs of the build read them there.  ``replaces``: the policy of the framework a
    rewrite replaced (see :class:`~click_build.choices.Request`)."""
    named = {os.path.normpath(hooks["apparmor"]).strip("/")
             for hooks in manifest.hooks.values() if isinstance(hooks.get("apparmor"), str)}
    out = []
    for e in entries:
        if e.arcname in named and e.kind == "file" and e.source:
            try:
                raw = kept.get(e.source)
                if raw is None:
                    with open_staged(e) as f:  # the file the walk saw, or one error naming it
                        raw = kept[e.source] = f.read()
                text = raw.decode("utf-8").replace("\r\n", "\n").replace("\r", "\n")
            except (OSError, UnicodeDecodeError) as err:
                raise BuildError(f"{e.arcname}: cannot read the AppArmor file: {err}") from None
            new = fill_apparmor(text, facts.apparmor_policy, facts.framework, e.arcname,
                                replaces)
            if new is not None:
                dest = scratch.file(os.path.join("apparmor", e.arcname))
                with open(dest, "w", encoding="utf-8") as f:
                    f.write(new)
                e = Entry(e.arcname, "file", e.mode, os.stat(dest).st_size, e.mtime, dest)
        out.append(e)
    return out


def _generated(entries: Sequence[Entry], manifest: Manifest, choice: Choice, request: Request,
               scratch: _Scratch, kept: dict[str, bytes]) -> list[Entry]:
    """The entries with the files the build generates: AppArmor filled, translations."""
    filled = _fill_apparmor(list(entries), manifest, choice.facts, scratch, kept,
                            choice.replaces)
    if request.po_dir and os.path.isdir(request.po_dir):  # the module only when it has work
        from .i18n import catalogs, translate

        if catalogs(request.po_dir):  # gettext's tools and a folder only when there are some
            filled = translate(filled, manifest, request.po_dir, scratch.folder(), kept)
    return filled


def prepare(job: Job, kept: dict[str, bytes] | None = None, place: str = "the package",
            fix: str = "", scratch: _Scratch | None = None) -> Prepared:
    """Step 1 of one job: its choice, its manifest, the generated files, the tree checks.

    The manifest is rendered for the declared architecture, ``all`` when the compiled
    files decide; one whose name or hooks depend on the architecture has the headers
    of its compiled files read first, so that it is rendered for the one they give.
    ``kept``: the bytes read so far (shared by the jobs of a build).  ``place``/``fix``:
    see :func:`~click_build.tree_checks.check_hooks`.
    """
    kept = {} if kept is None else kept
    scratch = scratch or _Scratch(job.scratch, None)
    choice = job.choice or choose(job.source, job.request)
    label = job.source.label
    arch: Arch = choice.declared if choice.declared is not None else "all"
    if choice.declared is None and _names_the_architecture(job.source, job.request, choice):
        arch = decide_architecture(None, staged_code(job.entries), label,
                                   one=choice.guessed, env_var=choice.env_var)
    manifest = _render(job.source, job.request, choice, arch)
    entries = _generated(job.entries, manifest, choice, job.request, scratch, kept)
    check_tree(manifest, entries, label, place, fix, kept)
    return Prepared(choice, arch, manifest, entries, kept)


# -------------------------------------------------------------- steps 3-5 ---

def final_manifest(job: Job, prepared: Prepared, packed: Packed) -> Manifest:
    """Step 3 of one job: its manifest for the architecture the packed ELF headers give."""
    choice = prepared.choice
    arch = decide_architecture(choice.declared, packed.code, job.source.label,
                               one=choice.guessed, env_var=choice.env_var)
    manifest = (prepared.manifest if arch == prepared.arch
                else _render(job.source, job.request, choice, arch))
    # What step 1 generated and checked holds for it: see _names_the_architecture.
    assert (manifest.name, manifest.hooks) == (prepared.manifest.name, prepared.manifest.hooks)
    for warning in manifest.warnings:
        _console.warn(warning)
    return manifest


def _manifest_size(source: ManifestSource, manifest: Manifest) -> int:
    size = source.counted if source.counted is not None else source.size
    if size is None:  # a template or a table: the manifest.json it stands for
        size = len(dump_manifest(manifest.data).encode("utf-8"))
    return size


def review_built(path: str, mode: str = "errors", switch: str = "--no-validate",
                 final: str | None = None) -> list[Finding]:
    """Review a written package, print its findings, and fail the build as ``mode`` says.

    On failure the package is removed, so nothing that looks built is left
    behind, and one error line says how to build it anyway.  ``final``: the
    name the package gets once it passes, for messages (the review runs on
    the package before it is named: see :func:`~click_build.build.write_package`).
    """
    shown = path if final is None else final
    from .review import count, review_package, summary

    if mode not in REVIEW_MODES:
        raise ConfigError(f"review: {mode!r} is not one of {', '.join(REVIEW_MODES)}")
    if mode == "off":
        return []
    try:
        findings = review_package(path)
    except ClickError as e:  # the package we just wrote does not read back: a bug
        _remove(path)
        raise BuildError(f"review: could not read {shown}: {e}") from None
    for finding in findings:
        if finding.severity == "info":  # advice: a line, and its fix below it
            _console.info(f"review: {finding.line()}\n    fix: {finding.hint}")
        else:
            _console.warn(f"review: {finding.severity}: {finding.line()} - {finding.hint}")
    counts = count(findings)
    failing = counts["error"] + (counts["warning"] if mode == "strict" else 0)
    if failing and mode != "report":
        _remove(path)
        what = "errors and warnings" if mode == "strict" else "errors"
        raise BuildError(
            f"review: {summary(findings)} in {os.path.basename(shown)} (listed above); the "
            f"stores reject packages with {what}, so none was written: fix them, or build "
            f"anyway with {switch}")
    if counts["error"] or counts["warning"]:
        _console.warn(f"review: {summary(findings)} (details: 'click-build review {shown}')")
    return findings


def _remove(path: str) -> None:
    try:
        os.unlink(path)
    except FileNotFoundError:
        pass  # gone already


def write_reviewed(job: Job, manifest: Manifest, packed: Packed, outdir: str, stamp: int,
                   several: bool = False, done: Sequence[Finished] = ()) -> Finished:
    """Step 5 of one job: its package written and reviewed before it gets its name
    (see :func:`finish_jobs` for ``several``; ``done``: the packages written so far)."""
    request = job.request
    label = target_label(manifest.framework, arch_word(manifest))
    findings: list[Finding] = []
    size = 0
    failed: list[str] = []  # why the review removed it, in a build for several targets

    def review(path: str, final: str) -> None:  # before the package gets its name
        nonlocal size
        size = os.path.getsize(path)
        try:
            findings.extend(review_built(path, request.review, request.review_switch, final))
        except ClickError as e:
            failed.append(str(e))
            raise

    try:
        path = write_package(manifest, packed, outdir, stamp,
                             _manifest_size(job.source, manifest), request.level, review)
    except ClickError as e:
        if not several:
            raise
        if failed:  # removed; the others go on
            return Finished("", manifest, [], label, size, failed[0])
        raise BuildError(f"{label}: {e} ({_written(outdir, done)})") from None
    return Finished(path, manifest, findings, label, size)


def finish_jobs(jobs: Sequence[Job], outdir: str | os.PathLike[str],
                place: str = "the package", fix: str = "",
                several: bool = False) -> list[Finished]:
    """Fill, check, pack, write and review the packages of ``jobs`` (steps 1-5).

    ``several``: a build for several targets: the stores' rules are checked across
    them before anything is written, a package whose review fails is removed while the
    others are kept, a table sums them up, and then the build fails naming the removed
    ones and the files written.  ``place``/``fix``: how a missing hook file's message
    names the tree and its remedy (see :func:`~click_build.tree_checks.check_hooks`),
    e.g. the CMake install tree and ``install()``.
    """
    for job in jobs:
        if job.request.review not in REVIEW_MODES:
            raise ConfigError(f"{job.request.origin}.review: {job.request.review!r} is not "
                              f"one of {', '.join(REVIEW_MODES)}")
    levels = {job.request.level for job in jobs}
    assert len(levels) == 1, "the packages of one build share a gzip level"
    outdir = os.fspath(outdir)
    check_output_dir(outdir)
    scratches = [_Scratch(job.scratch, outdir) for job in jobs]
    try:
        kept: dict[str, bytes] = {}
        prepared = [prepare(job, kept, place, fix, scratch)
                    for job, scratch in zip(jobs, scratches)]
        stamp = package_timestamp()
        with Packing([p.entries for p in prepared], outdir, stamp, levels.pop(), kept,
                     _label(prepared)) as packed:
            manifests = [final_manifest(job, p, data)
                         for job, p, data in zip(jobs, prepared, packed)]
            if several:
                check_store_rules([Candidate(target_label(m.framework, arch_word(m)), m,
                                             p.entries, kept)
                                   for p, m in zip(prepared, manifests)])
            done: list[Finished] = []
            for job, manifest, data in zip(jobs, manifests, packed):
                done.append(write_reviewed(job, manifest, data, outdir, stamp, several, done))
    finally:
        for scratch in scratches:
            scratch.remove()
    if several:
        _sum_up(jobs, done, outdir)
    return done


def _label(prepared: Sequence[Prepared]) -> str:
    if len(prepared) == 1:
        return f"packing {prepared[0].manifest.name} {prepared[0].manifest.version}"
    return f"packing {len(prepared)} packages"


def finish(source: ManifestSource, entries: Sequence[Entry], outdir: str | os.PathLike[str],
           request: Request | None = None, scratch: str | None = None,
           place: str = "the package", fix: str = "", choice: Choice | None = None) -> Finished:
    """One package (a list of one job, see :func:`finish_jobs`): where it is and the findings.

    ``scratch``: a folder the caller owns for generated files (made afresh and
    removed afterwards); default: a temporary folder inside ``outdir``.
    """
    job = Job(source, list(entries), request or Request(), choice, scratch)
    return finish_jobs([job], outdir, place, fix)[0]


# ------------------------------------------------------- several targets ---

def _sum_up(jobs: Sequence[Job], done: Sequence[Finished], outdir: str) -> None:
    """The table of a build for several targets, and its failure if a review removed one."""
    for line in summary_table(done):
        _console.info(line)
    failed = [b for b in done if b.error]
    if failed:
        request = jobs[0].request
        what = "errors and warnings" if request.review == "strict" else "errors"
        reasons = "; ".join(f"{b.label}: {_reason(b.error)}" for b in failed)
        raise BuildError(
            f"{len(failed)} of {len(done)} packages failed the review and "
            f"{'was' if len(failed) == 1 else 'were'} removed ({reasons}); "
            f"{_written(outdir, done)}; the stores reject packages with {what}: fix them, "
            f"or build anyway with {request.review_switch}")


def _reason(error: str) -> str:
    """What a review failure found (\"review: 1 error in NAME.click (listed above)\")."""
    return error.split(";")[0].removeprefix("review: ")


def _written(outdir: str, done: Sequence[Finished]) -> str:
    """Which packages a build for several targets wrote, and kept, so far."""
    kept = [os.path.join(outdir, os.path.basename(b.path)) for b in done if b.path]
    return f"written: {', '.join(kept)}" if kept else "no package was written"


def summary_table(done: Sequence[Finished]) -> list[str]:
    """The lines of the table printed at the end: target, file, size, findings."""
    from .review import summary

    rows = [("target", "file", "size", "findings")]
    for b in done:
        name = os.path.basename(b.path) if b.path else "(removed)"
        said = f"failed: {b.error.split(';')[0]}" if b.error else summary(b.findings)
        rows.append((b.label, name, f"{(b.size + 1023) // 1024} KiB", said))
    widths = [max(len(r[i]) for r in rows) for i in range(3)]
    return [f"{r[0]:<{widths[0]}}  {r[1]:<{widths[1]}}  {r[2]:>{widths[2]}}  {r[3]}"
            for r in rows]
