"""The one exception tree of click-build.

Every error a user can cause (a bad manifest, a hostile package, a bad
argument) is a :class:`ClickError`.  Its ``str()`` is one line that says what
failed, where, and when possible how to fix it.  Only the CLI and the PEP 517
hook decorator turn these into exit codes; anything else that escapes is a bug.
"""

from __future__ import annotations

__all__ = [
    "ArchiveError",
    "BuildError",
    "ClickError",
    "ConfigError",
    "DeviceError",
    "ElfError",
    "FrameworkError",
    "HookError",
    "InstallError",
    "ManifestError",
    "PackageError",
    "RunError",
    "SignatureError",
    "SysrootError",
]


class ClickError(Exception):
    """Root of every error click-build reports to its user."""

    def lines(self) -> list[str]:
        """The message as error lines: one (several problems share it, ``; ``-joined),
        or one per package when a command worked through several."""
        return [str(self)]


class ManifestError(ClickError):
    """manifest.json is missing, unreadable or breaks the format's rules.

    Carries every problem found, so the user can fix them all in one go; they are
    reported on one line, ``; ``-separated.
    """

    def __init__(self, problems: list[str], source: str = "manifest.json") -> None:
        self.problems = list(problems)
        self.source = source
        super().__init__(f"{source}: " + "; ".join(self.problems))


class ArchiveError(ClickError):
    """An ar/tar/gzip stream is malformed (format level only)."""


class PackageError(ClickError):
    """A .click file fails the audit (structure, control data, contents)."""


class ElfError(ClickError):
    """Compiled code's dynamic tables cannot be read (truncated, inconsistent, too large)."""


class BuildError(ClickError):
    """A source tree cannot be turned into a package."""


class ConfigError(ClickError):
    """Settings, configuration files or command-line values are invalid."""


class FrameworkError(ClickError):
    """A framework declaration is invalid or names a missing framework."""


class InstallError(ClickError):
    """A database operation (install, register, gc...) cannot be done."""


class HookError(ClickError):
    """A hook file is invalid or its Exec command failed."""


class SignatureError(ClickError):
    """A package signature is missing, invalid or untrusted."""


class RunError(ClickError):
    """An installed app cannot be started on this machine (``click-build run``)."""


class DeviceError(ClickError):
    """A phone cannot be reached or refused a step (``click-build device``)."""


class SysrootError(ClickError):
    """A target root file system cannot be made or used (``click-build sysroot``)."""
