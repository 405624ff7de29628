"""The QML scanner of the review's one pass: what a QML file says, line by line.

:class:`QmlScanner` feeds each QML file's chunks, as the pass streams them, through
the store's line patterns (click-reviewers-tools' cr_functional.py) and keeps only
:class:`QmlFacts`, never the text.  The checks on those facts are :mod:`.qml`'s; this
module imports nothing of the review, so the pass (:mod:`._collect`) can use it.
"""

from __future__ import annotations

import re

__all__ = ["MAX_LINE", "QSETTINGS", "SHOWN_NAME", "QmlFacts", "QmlScanner"]

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
