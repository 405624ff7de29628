"""The finishing stage: a staged tree -> a checked, written and reviewed ``.click``.

Every build route only stages a tree its own way (the backend's kinds,
``click-build build DIR``, the CMake module's install) and then calls
:func:`finish`, so the same tree gives the same package and the same findings
whichever route built it.  In order:

1. choose the framework and the declared architecture, refusing settings
   that contradict the manifest (:func:`choose_framework`,
   :func:`declared_architecture`);
2. decide the architecture from the ELF files (:func:`decide_architecture`);
3. fill the manifest's placeholders and the AppArmor ``policy_version``;
   compile the translations (``po/LANG.po`` -> ``share/locale``, translated
   desktop files: :mod:`click_build.i18n`);
4. check the hook targets and every folder the desktop files, the hooks and
   the QML entry point refer to (:func:`~click_build.tree_checks.check_tree`):
   a package that silently lost one is never written;
5. write the archive (:func:`click_build.build.build_click`);
6. review it (:func:`review_built`), complete but not yet under its name:
   errors fail the build, and nothing is left, unless the review mode is
   ``report``; ``strict`` fails on warnings too.

Standard library only, like the rest of the core.
"""

from __future__ import annotations

import os
import re

from . import _console
from ._record import Record
from .build import COMPRESS_LEVEL, Entry, build_click, check_output_dir
from .elf import ARCH_TRIPLETS, scan_elf
from .errors import BuildError, ConfigError
from .framework_table import DEFAULT_FRAMEWORK, framework_facts
from .manifest import ARCH_RE, FRAMEWORK_RE, Manifest, dump_manifest
from .placeholders import (
    ARCH_PLACEHOLDERS,
    FRAMEWORK_PLACEHOLDERS,
    ManifestSource,
    fill_apparmor,
    is_placeholder,
    reconcile_version,
    resolve_manifest_fields,
    variables,
)
from .staging import open_staged
from .tree_checks import check_hooks, check_tree

TYPE_CHECKING = False  # not typing.TYPE_CHECKING: importing typing costs start-up time

if TYPE_CHECKING:
    from collections.abc import Callable, Mapping, Sequence

    from .elf import ElfInfo
    from .framework_table import FrameworkFacts
    from .review import Finding

    Arch = str | list[str]

__all__ = [
    "REVIEW_MODES",
    "Finished",
    "Prepared",
    "Target",
    "architecture_declaration",
    "check_hooks",
    "check_tree",
    "choose_framework",
    "decide_architecture",
    "declared_architecture",
    "environment_architecture",
    "environment_framework",
    "finish",
    "prepare",
    "review_built",
    "tell",
]

#: ``errors``: review errors fail the build (the default, as Clickable);
#: ``strict``: warnings fail it too (the OpenStore rejects uploads with any);
#: ``report``: findings are printed, the build never fails on them;
#: ``off``: no review at all (a later step reviews, or a benchmark compares like for like).
REVIEW_MODES = ("errors", "strict", "report", "off")


class Target(Record):
    """What a build was asked for beyond its staged tree.

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


class Prepared(Record):
    """A package ready to be written: its manifest and its final entries."""

    manifest: Manifest
    entries: list[Entry]
    facts: FrameworkFacts
    manifest_size: int  # bytes of the manifest.json the tree had (for Installed-Size)


class Finished(Record):
    """A written package and what the review found in it."""

    path: str
    manifest: Manifest
    findings: list[Finding]


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
    """Print a line about a choice once per process: the backend makes its choices
    before staging, and the finishing stage makes them again."""
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


def decide_architecture(declared: Arch | None, entries: Sequence[Entry], where: str,
                        one: bool = False, code: Mapping[str, ElfInfo] | None = None,
                        env_var: str = "") -> Arch:
    """The package's architecture from what was declared and what was compiled.

    The one place that decides it.  An ARM file without a float ABI fits
    armhf and armel; undeclared, it is armhf, the ARM architecture of Ubuntu
    Touch devices.  A machine the ELF table does not know is reported, never
    guessed.  ``one``: code for several architectures is refused (a build
    that compiled for one architecture and staged another's code), not made
    a fat package.  ``code``: the ELF code among the entries (arcname -> header)
    when the caller has read it already; else their headers are read here.
    ``env_var``: the environment variable that declared it, named in the refusal.
    """
    if code is None:
        arcname = {e.source: e.arcname for e in entries if e.source}
        code = {arcname[path]: info for path, info in scan_elf(
            e.source for e in entries if e.kind == "file" and e.source).items()}
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


# --------------------------------------------------------------- stages ---

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


def _fill_apparmor_entries(entries: list[Entry], manifest: Manifest, facts: FrameworkFacts,
                           scratch: _Scratch, kept: dict[str, bytes] | None,
                           replaces: str = "") -> list[Entry]:
    """Entries whose AppArmor hook files got their policy_version filled in; the
    bytes of those that need nothing go into ``kept`` (packed without another read).
    ``replaces``: the policy of the framework a rewrite replaced (see :class:`Target`)."""
    targets = {os.path.normpath(hooks["apparmor"]).strip("/")
               for hooks in manifest.hooks.values() if isinstance(hooks.get("apparmor"), str)}
    out = []
    for e in entries:
        if e.arcname in targets and e.kind == "file" and e.source:
            try:
                with open_staged(e) as f:  # the file the walk saw, or one error naming it
                    raw = f.read()
                text = raw.decode("utf-8").replace("\r\n", "\n").replace("\r", "\n")
            except (OSError, UnicodeDecodeError) as err:
                raise BuildError(f"{e.arcname}: cannot read the AppArmor file: {err}") from None
            new = fill_apparmor(text, facts.apparmor_policy, facts.framework, e.arcname,
                                replaces)
            if new is None and kept is not None:
                kept[e.source] = raw
            if new is not None:
                dest = scratch.file(os.path.join("apparmor", e.arcname))
                with open(dest, "w", encoding="utf-8") as f:
                    f.write(new)
                e = Entry(e.arcname, "file", e.mode, os.stat(dest).st_size, e.mtime, dest)
        out.append(e)
    return out


def prepare(source: ManifestSource, entries: Sequence[Entry], target: Target, scratch: str,
            place: str = "the package", fix: str = "") -> Prepared:
    """Everything before writing: choices, placeholders, AppArmor and the tree checks.

    ``scratch`` is a folder the caller owns for the files this step generates
    (filled AppArmor files): emptied and made when the first one is written, it
    must outlive the write.  ``place``/``fix``: see :func:`check_hooks`.
    """
    return _prepare(source, entries, target, _Scratch(scratch, ""), place, fix)


class _Choice(Record):
    """What the build settles before the manifest is rendered."""

    facts: FrameworkFacts
    declared: Arch | None  # None: the compiled files decide
    guessed: bool  # the manifest holds the route's own guess (see Target)
    replaces: str = ""  # the AppArmor policy of the manifest's framework a rewrite replaced
    env_var: str = ""  # the environment variable that declared the architecture, if one did


def _choose(source: ManifestSource, target: Target) -> _Choice:
    peek = source.peek(placeholders=True)
    label = source.label
    written_fw = peek.get("framework")
    facts = choose_framework(target.framework, "@CLICK_FRAMEWORK@" if target.rewrite_framework
                             else written_fw, label, target.origin)
    replaces = ""
    if target.rewrite_framework and isinstance(written_fw, str) and written_fw.strip():
        replaces = framework_facts(written_fw).apparmor_policy
    written = peek.get("architecture")
    guessed = (bool(target.guessed_architecture) and written == target.guessed_architecture
               and _concrete_architecture(target.architecture) is None)
    # A guess of the route's own leaves the architecture to the compiled files, not to the
    # environment of a later step (the CMake click target runs long after its configure).
    declared, env_var = architecture_declaration(
        target.architecture, None if guessed else written, label, target.origin,
        environ=not guessed)
    return _Choice(facts, declared, guessed, replaces, env_var)


def _render(source: ManifestSource, target: Target, choice: _Choice, final: Arch) -> Manifest:
    """The package's manifest for the architecture ``final``: placeholders filled, checked."""
    label = source.label
    single = final if isinstance(final, str) else ""
    values = variables(single, ARCH_TRIPLETS.get(single, ""), choice.facts, target.version,
                       target.name)
    data = source.render(values)
    data = reconcile_version(data, target.version, label)
    data = resolve_manifest_fields(data, values, final, label, bool(target.framework))
    if choice.guessed:
        data["architecture"] = final
    if target.rewrite_framework:
        data["framework"] = choice.facts.framework
    if target.version_suffix and isinstance(data.get("version"), str):
        data["version"] = f"{data['version']}{target.version_suffix}"
    return Manifest.from_dict(data, label)


def _generated(entries: Sequence[Entry], manifest: Manifest, facts: FrameworkFacts,
               target: Target, scratch: _Scratch, kept: dict[str, bytes] | None,
               replaces: str = "") -> list[Entry]:
    """The entries with the files the build generates: AppArmor filled, translations."""
    filled = _fill_apparmor_entries(list(entries), manifest, facts, scratch, kept, replaces)
    if target.po_dir and os.path.isdir(target.po_dir):  # the module only when it has work
        from .i18n import catalogs, translate

        if catalogs(target.po_dir):  # gettext's tools and a folder only when there are some
            filled = translate(filled, manifest, target.po_dir, scratch.folder())
    return filled


def _manifest_size(source: ManifestSource, manifest: Manifest) -> int:
    size = source.counted if source.counted is not None else source.size
    if size is None:  # a template or a table: the manifest.json it stands for
        size = len(dump_manifest(manifest.data).encode("utf-8"))
    return size


def _prepare(source: ManifestSource, entries: Sequence[Entry], target: Target,
             scratch: _Scratch, place: str, fix: str, final: Arch | None = None) -> Prepared:
    """Steps 1-4 with the architecture decided first (``final``: already decided)."""
    choice = _choose(source, target)
    if final is None:
        final = decide_architecture(choice.declared, entries, source.label, one=choice.guessed,
                                    env_var=choice.env_var)
    manifest = _render(source, target, choice, final)
    for warning in manifest.warnings:
        _console.warn(warning)
    filled = _generated(entries, manifest, choice.facts, target, scratch, None, choice.replaces)
    check_tree(manifest, filled, source.label, place, fix)
    return Prepared(manifest, filled, choice.facts, _manifest_size(source, manifest))


class _Again(Exception):
    """The manifest's name or hooks depend on the architecture: prepare and pack again."""

    def __init__(self, final: Arch) -> None:
        super().__init__()
        self.final = final


def _write(source: ManifestSource, entries: Sequence[Entry], outdir: str, target: Target,
           scratch: _Scratch, place: str = "the package", fix: str = "",
           check: Callable[[str, str], object] | None = None) -> tuple[str, Manifest]:
    """Steps 1-6 reading each file once: the architecture is decided from the ELF
    headers the archive writer reads anyway, and the files the checks read are
    packed from those bytes.

    The tree is checked and packed for the declared architecture (``all`` when
    the code decides); afterwards the manifest is rendered for the decided one.
    Only a manifest whose name or hooks name the architecture (a template's
    ``@CLICK_ARCH_TRIPLET@`` in a hook path) is prepared and packed again.
    ``place``/``fix``: see :func:`check_hooks`; ``check``: see :func:`build_click`.
    """
    label = source.label
    choice = _choose(source, target)
    provisional: Arch = choice.declared if choice.declared is not None else "all"
    first = _render(source, target, choice, provisional)
    kept: dict[str, bytes] = {}
    staged = _generated(entries, first, choice.facts, target, scratch, kept, choice.replaces)
    check_tree(first, staged, label, place, fix, kept)

    decided: list[Manifest] = []

    def decide(code: dict[str, ElfInfo]) -> tuple[Manifest, int]:
        final = decide_architecture(choice.declared, staged, label, one=choice.guessed,
                                    code=code, env_var=choice.env_var)
        manifest = first if final == provisional else _render(source, target, choice, final)
        if (manifest.name, manifest.hooks) != (first.name, first.hooks):
            raise _Again(final)
        for warning in manifest.warnings:
            _console.warn(warning)
        decided.append(manifest)
        return manifest, _manifest_size(source, manifest)

    try:
        path = build_click(first, staged, outdir, level=target.level, decide=decide, kept=kept,
                           check=check)
        return path, decided[0]
    except _Again as again:
        prepared = _prepare(source, entries, target, scratch, place, fix, again.final)
        path = build_click(prepared.manifest, prepared.entries, outdir,
                           manifest_size=prepared.manifest_size, level=target.level,
                           check=check)
        return path, prepared.manifest


def review_built(path: str, mode: str = "errors", switch: str = "--no-validate",
                 final: str | None = None) -> list[Finding]:
    """Review a written package, print its findings, and fail the build as ``mode`` says.

    On failure the package is removed, so nothing that looks built is left
    behind, and one error line says how to build it anyway.  ``final``: the
    name the package gets once it passes, for messages (the review runs on
    the package before it is named: see :func:`build_click`'s ``check``).
    """
    shown = path if final is None else final
    from .errors import ClickError
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


def finish(source: ManifestSource, entries: Sequence[Entry], outdir: str | os.PathLike[str],
           target: Target | None = None, scratch: str | None = None,
           place: str = "the package", fix: str = "") -> Finished:
    """Fill, check, write and review one package; return where it is and the findings.

    ``scratch``: a folder the caller owns for generated files (made afresh and
    removed afterwards); default: a temporary folder inside ``outdir``.
    ``place``/``fix``: how a missing hook file's message names the tree and its
    remedy (see :func:`check_hooks`), e.g. the CMake install tree and ``install()``.
    """
    target = target or Target()
    if target.review not in REVIEW_MODES:
        raise ConfigError(f"{target.origin}.review: {target.review!r} is not one of "
                          f"{', '.join(REVIEW_MODES)}")
    outdir = os.fspath(outdir)
    check_output_dir(outdir)
    generated = _Scratch(scratch, outdir)
    findings: list[Finding] = []

    def review(path: str, final: str) -> None:  # before the package gets its name
        findings.extend(review_built(path, target.review, target.review_switch, final))

    try:
        path, manifest = _write(source, entries, outdir, target, generated, place, fix,
                                check=review)
    finally:
        generated.remove()
    return Finished(path, manifest, findings)
