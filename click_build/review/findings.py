"""Findings, the catalogue of check ids, and the context the checks share.

Every check id is declared once in :data:`CHECKS` with its severity and a
one-line summary; ``docs/review.md`` documents each one (a test keeps the two
in step), so an id is a stable name a developer can look up.
"""

from __future__ import annotations

from .._record import Record

TYPE_CHECKING = False  # not typing.TYPE_CHECKING: importing typing costs start-up time

if TYPE_CHECKING:
    from typing import Literal

    from ..package import ClickPackage
    from ._collect import Collected

__all__ = ["CHECKS", "Check", "Context", "Finding", "Report", "Severity", "SEVERITY_ORDER"]

if TYPE_CHECKING:
    Severity = Literal["error", "warning", "info"]
else:
    Severity = str  # the alias is for the type checker; at run time any str
SEVERITY_ORDER: dict[str, int] = {"error": 0, "warning": 1, "info": 2}


class Check(Record):
    severity: Severity
    summary: str


def _c(severity: Severity, summary: str) -> Check:
    return Check(severity, summary)


#: Every check id, its severity and what it catches.
CHECKS: dict[str, Check] = {
    # lint: the package as a whole
    "lint.package-invalid": _c("error", "the data archive fails the installer's audit"),
    "lint.control": _c("error", "control data is malformed or has forbidden parts"),
    "lint.control-mismatch": _c("error", "a control field disagrees with the manifest"),
    "lint.manifest-field": _c("error", "a manifest field is missing or malformed"),
    "lint.manifest-key": _c("error", "a manifest key the stores do not accept"),
    "lint.maintainer": _c("error", "maintainer is missing or has no e-mail address"),
    "lint.description-missing": _c("error", "the manifest has no description"),
    "lint.description-short": _c("warning", "the description is shorter than the app's name"),
    "lint.installed-size": _c("error", "installed-size is missing, malformed or inconsistent"),
    "lint.framework-unknown": _c("error", "the framework is not an Ubuntu Touch framework"),
    "lint.framework-obsolete": _c("error", "the framework is obsolete"),
    "lint.framework-deprecated": _c("warning", "the framework is deprecated"),
    "lint.framework-prerelease": _c("warning", "the framework is not released yet"),
    "lint.framework-local": _c("info", "the framework is known only from this system"),
    "lint.framework-variant": _c("info", "no compiled code and no Python: the framework's "
                                         "-qml variant is enough"),
    "lint.arch-unsupported": _c("error", "an architecture Ubuntu Touch devices do not use"),
    "lint.arch-all-compiled": _c("error", "architecture 'all' but compiled code inside"),
    "lint.arch-mismatch": _c("error", "compiled code for another architecture"),
    "lint.arch-unneeded": _c("warning", "an architecture is set but nothing is compiled"),
    "lint.qt-version": _c("error", "compiled code needs a newer Qt than the framework has"),
    "lint.abi-glibc": _c("error", "compiled code needs a newer C or C++ runtime than the "
                                  "framework has"),
    "lint.abi-soname": _c("error", "compiled code needs a library that neither the package "
                                   "nor the framework provides"),
    "lint.abi-unreadable": _c("warning", "compiled code whose dynamic tables cannot be read"),
    "lint.setuid": _c("error", "a file has the setuid or setgid bit"),
    "lint.world-writable": _c("error", "a file or folder is writable by everyone"),
    "lint.symlink-external": _c("error", "a symbolic link points outside the package"),
    "lint.symlink-dangling": _c("warning", "a symbolic link points to nothing"),
    "lint.no-apps": _c("warning", "the manifest declares no apps (no hooks)"),
    "lint.hook-target-missing": _c("error", "a hook names a file the package lacks"),
    "lint.hook-missing-apparmor": _c("error", "an app has no apparmor hook"),
    "lint.hook-missing-desktop": _c("error", "a graphical app has no desktop hook"),
    "lint.hook-unknown": _c("error", "a hook name no system knows"),
    "lint.hook-review": _c("error", "a hook the stores review by hand"),
    "lint.hook-exclusive": _c("error", "one app uses hooks that exclude each other"),
    "lint.vcs": _c("warning", "version-control files are inside the package"),
    "lint.build-leftover": _c("warning", "build leftovers are inside the package"),
    # desktop: the .desktop file of each app
    "desktop.unreadable": _c("error", "the desktop file cannot be parsed"),
    "desktop.missing-key": _c("error", "a required desktop key is missing or empty"),
    "desktop.type": _c("error", "Type is not Application"),
    "desktop.touch": _c("error", "X-Lomiri-Touch is not true"),
    "desktop.path-key": _c("error", "the desktop file sets Path"),
    "desktop.exec-absolute": _c("error", "Exec names an absolute path"),
    "desktop.exec-missing": _c("warning", "Exec names a program that is neither in the package "
                                        "nor a known launcher"),
    "desktop.exec-not-executable": _c("error", "Exec names a file without execute permission"),
    "desktop.exec-arg-missing": _c("error", "a file Exec passes to its launcher is missing"),
    "desktop.launcher-obsolete": _c("error", "the launcher is not available on the framework"),
    "desktop.webapp-args": _c("error", "webapp-container arguments the stores reject"),
    "desktop.icon": _c("error", "Icon names a file the package lacks"),
    # security: the AppArmor JSON of each app
    "security.unreadable": _c("error", "the AppArmor file is not a JSON object"),
    "security.field": _c("error", "an AppArmor field is unknown, mistyped or missing"),
    "security.policy-version": _c("error", "the policy version or vendor does not exist"),
    "security.policy-mismatch": _c("error", "the policy version does not match the framework"),
    "security.policy-group-unknown": _c("error", "a policy group the policy version lacks"),
    "security.policy-group-duplicate": _c("error", "a policy group is listed twice"),
    "security.policy-group-reserved": _c("error", "a reserved policy group (manual review)"),
    "security.debug": _c("error", "the 'debug' policy group"),
    "security.template-unknown": _c("error", "a template the policy version lacks"),
    "security.template-unconfined": _c("error", "the 'unconfined' template (manual review)"),
    "security.template-redundant": _c("warning", "a template that is the default anyway"),
    "security.template-groups": _c("error", "policy groups the template does not allow"),
    "security.redflag-field": _c("error", "a field the stores review by hand"),
    "security.ignored-field": _c("warning", "a field AppArmor ignores"),
    # qml: the app's QML files
    "qml.lomiri-framework": _c("error", "Lomiri QML modules on a framework without them"),
    "qml.application-name": _c("warning", "the MainView's applicationName is not the package "
                                          "name"),
    # hooks: url-dispatcher, content-hub, push-helper and accounts JSON
    "hooks.unreadable": _c("error", "a hook's JSON file cannot be parsed"),
    "hooks.missing-key": _c("error", "a hook's JSON lacks a required key"),
    "hooks.bad-value": _c("error", "a hook's JSON has a value of the wrong kind"),
    "hooks.unknown-key": _c("warning", "a hook's JSON has a key its service ignores"),
    "hooks.push-helper-peers": _c("error", "a push helper shares its app with other hooks"),
}


class Finding(Record):
    """One problem: a stable check id, its severity, where, what, and how to fix it."""

    check: str
    severity: Severity
    file: str  # path inside the package, or 'control' / 'manifest'; '' for the whole package
    message: str
    hint: str

    def as_dict(self) -> dict[str, str]:
        return {"check": self.check, "severity": self.severity, "file": self.file,
                "message": self.message, "hint": self.hint}

    def line(self) -> str:
        """One line for a terminal or a build log."""
        where = f"{self.file}: " if self.file else ""
        return f"{where}{self.message} [{self.check}]"

    def sort_key(self) -> tuple[int, str, str, str]:
        return (SEVERITY_ORDER[self.severity], self.file, self.check, self.message)


class Report:
    def __init__(self) -> None:
        self.findings: list[Finding] = []

    def add(self, check: str, file: str, message: str, hint: str) -> None:
        info = CHECKS[check]  # an unknown id is a bug, not a finding
        finding = Finding(check, info.severity, file, message, hint)
        if finding not in self.findings:
            self.findings.append(finding)


class Context:
    """What every check group reads, and the report they write to."""

    def __init__(
        self,
        pkg: ClickPackage,
        manifest: dict[str, object],
        hooks: dict[str, dict[str, str]],  # the well-formed part of manifest['hooks']
        frameworks: list[str],
        frameworks_dir: str | None,
        report: Report,
        data: Collected | None = None,  # None when the data archive could not be read
    ) -> None:
        self.pkg = pkg
        self.manifest = manifest
        self.hooks = hooks
        self.frameworks = frameworks
        self.frameworks_dir = frameworks_dir
        self.report = report
        self.data = data

    @property
    def architectures(self) -> list[str]:
        arch = self.manifest.get("architecture", "all")
        if isinstance(arch, list):
            return [a for a in arch if isinstance(a, str)]
        return [arch] if isinstance(arch, str) else []

    @property
    def framework(self) -> str:
        value = self.manifest.get("framework")
        return value if isinstance(value, str) else ""
