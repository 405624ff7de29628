"""qml: what the stores' functional review reads in an app's QML files.

Two checks of click-reviewers-tools (cr_functional.py), with its patterns:

- ``functional:qml_application_uses_lomiri`` (error): a QML file imports
  ``Lomiri.*`` but a framework is older than ``ubuntu-sdk-20.04``, whose
  devices have only the ``Ubuntu.Components`` names.
- ``functional:qml_applicationName_matches_manifest`` (warning for apps
  without compiled code): the ``applicationName`` of the ``MainView`` is not
  the package name, so the app's settings and data land in folders its
  AppArmor profile does not allow.

Each QML file is read line by line as the one pass streams it
(:class:`QmlScanner`); only these facts are kept, never the text.
"""

from __future__ import annotations

import re

from ..versions import compare_versions
from .findings import Context

__all__ = ["LOMIRI_SINCE", "SHOWN_NAME", "QmlFacts", "QmlScanner", "check"]

#: The first framework with Lomiri's QML modules (the store's cut-off).
LOMIRI_SINCE = "ubuntu-sdk-20.04"
#: A longer line is matched on its first bytes only (the patterns are anchored).
MAX_LINE = 4096
_LOMIRI = re.compile(rb"\s*import\s+Lomiri")
_MAINVIEW = re.compile(rb"\s*MainView")
_APPNAME = re.compile(rb"\s*applicationName\s*:\s*[\"']")
#: ``MainView { applicationName: "x"`` on one line, which the store's pattern misses.
_APPNAME_INLINE = re.compile(rb"\bapplicationName\s*:\s*[\"']")
#: Compiled code using QSettings picks its own folder names (the store's exception).
QSETTINGS = b"QSettings"


#: The part of an ``applicationName`` kept to show in a finding.
SHOWN_NAME = 256


class QmlFacts:
    """What one QML file says, in constant space whatever its size: of the
    ``applicationName`` lines, how many, whether one names the package, and the
    last (the one the store shows)."""

    def __init__(self) -> None:
        self.imports_lomiri = False
        self.has_mainview = False  # a MainView line after the first line, as the store finds it
        self.application_names = 0  # lines setting it in the MainView
        self.application_name = ""  # the last, cut to SHOWN_NAME characters
        self.names_package = False  # one of them is the package name
        self.inline_name = False  # set on the MainView line itself, unseen by the store


class QmlScanner:
    """Feeds one QML file's chunks through the store's line patterns; ``package``
    is the name an ``applicationName`` should be."""

    def __init__(self, package: str = "") -> None:
        self.facts = QmlFacts()
        self._package = package
        self._pending = b""
        self._line_no = 0
        self._in_mainview = False

    def feed(self, chunk: bytes) -> None:
        lines = (self._pending + chunk).split(b"\n")
        self._pending = lines.pop()[:MAX_LINE]
        for line in lines:
            self._line(line[:MAX_LINE])

    def close(self) -> QmlFacts:
        if self._pending:
            self._line(self._pending)
            self._pending = b""
        return self.facts

    def _line(self, line: bytes) -> None:
        facts = self.facts
        if _LOMIRI.match(line):
            facts.imports_lomiri = True
        if self._in_mainview and _APPNAME.match(line):
            name = line.split(b":", 1)[1].decode("utf-8", "replace").strip("\"' \t\n\r\f\v;")
            facts.application_names += 1
            facts.application_name = name[:SHOWN_NAME]
            facts.names_package = facts.names_package or name == self._package
        elif _MAINVIEW.match(line):
            self._in_mainview = True
            facts.inline_name = facts.inline_name or bool(_APPNAME_INLINE.search(line))
            if self._line_no > 0:
                facts.has_mainview = True
        self._line_no += 1


def _old_frameworks(frameworks: list[str]) -> list[str]:
    return [fw for fw in frameworks if compare_versions(fw, LOMIRI_SINCE) < 0]


def check(ctx: Context) -> None:
    """The QML files of the package, against the manifest."""
    assert ctx.data is not None
    lomiri = ctx.data.lomiri
    old = _old_frameworks(ctx.frameworks)
    if lomiri and old:
        ctx.report.add(
            "qml.lomiri-framework", lomiri.paths[0],
            f"imports Lomiri modules, which framework {', '.join(old)} does not have: "
            f"{lomiri.listing()}",
            f"declare framework '{LOMIRI_SINCE}' or newer (and its AppArmor policy_version), "
            "or import the Ubuntu.Components names that framework has")
    _check_application_name(ctx)


def _check_application_name(ctx: Context) -> None:
    assert ctx.data is not None
    data = ctx.data
    if data.uses_qsettings or not data.mainviews:
        return  # the store skips the check without a MainView
    if data.code:
        return  # the store only notes it: compiled apps may set the name in C++
    if data.name_matches:
        return
    name = ctx.manifest.get("name")
    if data.named:
        first = data.named_paths.paths[0]
        message = (f"the MainView's applicationName is not the package name {name!r}: "
                   f"{data.named.listing()}")
    elif data.inline_named:
        # The store's check reads applicationName only on a line of its own: it warns.
        first = data.inline_named.paths[0]
        ctx.report.add("qml.application-name", first,
                       "the MainView sets applicationName on its own first line "
                       f"({data.inline_named.listing()}), where the stores' check does not "
                       "read it: they warn that the app may not write its settings and data",
                       f"put applicationName: \"{name}\" on a line of its own in the MainView")
        return
    else:
        first = data.mainviews.paths[0]
        message = f"the MainView sets no applicationName: {data.mainviews.listing()}"
    ctx.report.add("qml.application-name", first,
                   f"{message}; confined, the app cannot write its settings and data",
                   f"set applicationName: \"{name}\" in the MainView")
