"""``i18n``: extract an app's strings into po/DOMAIN.pot, start and update po/LANG.po."""

from __future__ import annotations

import argparse
import os

__all__ = ["register"]

_DESCRIPTION = """\
Translate an app with GNU gettext (Debian/Ubuntu package 'gettext'), as Ubuntu Touch
apps do. The text domain is the package name from the manifest (MainView's
applicationName sets QML's i18n.domain to it), and every build compiles po/LANG.po
into share/locale/LANG/LC_MESSAGES/DOMAIN.mo and translates the launcher's Name,
Comment and Keywords (Name[de]=...) in the desktop file.

Without ACTION, 'click-build i18n' extracts: it reads the project's QML, JavaScript and
C/C++ (Lomiri's i18n.tr(text), i18n.tr(singular, plural, n), i18n.dtr, i18n.ctr,
i18n.dctr and i18n.tag, Qt's qsTr and QT_TR_NOOP, gettext's _, gettext, ngettext),
Python (_, gettext, ngettext, pgettext) and desktop files (Name, GenericName, Comment,
Keywords), skipping hidden folders, tests/, po/, build output and node_modules/, and
writes po/DOMAIN.pot in UTF-8. A comment 'TRANSLATORS: ...' before a string reaches
the translators."""

_EPILOG = """\
examples (in the project folder):
  click-build i18n              write po/DOMAIN.pot from the sources
  click-build i18n init de      start po/de.po (German); translate its msgstr lines
  click-build i18n update       after changing the sources: new strings into every po/*.po
  python -m build --wheel --no-isolation
                                the package has share/locale/de/LC_MESSAGES/DOMAIN.mo
"""


def register(subparsers: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    p = subparsers.add_parser(
        "i18n", help="extract strings to translate (po/*.pot), start and update po/*.po",
        description=_DESCRIPTION, epilog=_EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    _common(p, None)
    p.set_defaults(func=run_extract, files=[], output=None)
    actions = p.add_subparsers(dest="action", metavar="ACTION", parser_class=type(p))
    e = actions.add_parser(
        "extract", help="write po/DOMAIN.pot from the sources (the default action)",
        description="Write the strings of the project's sources (or of FILE...) to "
                    "po/DOMAIN.pot with xgettext, in UTF-8.")
    e.add_argument("files", metavar="FILE", nargs="*",
                   help="read only these files (relative to the project folder)")
    e.add_argument("-o", "--output", metavar="POT",
                   help="write here instead (default: po/DOMAIN.pot)")
    _common(e, argparse.SUPPRESS)
    e.set_defaults(func=run_extract)
    i = actions.add_parser(
        "init", help="start po/LANG.po for a new language",
        description="Start po/LANG.po from po/DOMAIN.pot (extracted first when missing) "
                    "with msginit, in UTF-8: its plural rule set, its msgstr lines empty "
                    "for you to fill in.")
    i.add_argument("language", metavar="LANG",
                   help="the language: de, fr, pt_BR, sr@latin ('_' before a region)")
    _common(i, argparse.SUPPRESS)
    i.set_defaults(func=run_init)
    u = actions.add_parser(
        "update", help="extract, then merge the new strings into every po/LANG.po",
        description="Extract po/DOMAIN.pot, then merge it into every po/LANG.po with "
                    "msgmerge: new strings are added untranslated, changed ones are "
                    "marked fuzzy (msgfmt skips those until you check them), and no "
                    "translation is lost.")
    _common(u, argparse.SUPPRESS)
    u.set_defaults(func=run_update)


def _common(p: argparse.ArgumentParser, default: str | None) -> None:
    """Options of 'i18n' and of each action; an action's own default never hides a
    value given before the action name."""
    p.add_argument("-p", "--project", metavar="DIR", default=default or ".",
                   help="the app's project folder, holding its manifest and po/ "
                        "(default: the current folder)")
    p.add_argument("--domain", metavar="NAME", default=default,
                   help="the text domain (default: the package name in the manifest)")


class _Project:
    """The folder, its text domain and what xgettext puts into the template's header."""

    def __init__(self, args: argparse.Namespace) -> None:
        from ..errors import ConfigError

        self.root = args.project
        if not os.path.isdir(self.root):
            raise ConfigError(f"{self.root}: no such folder (--project)")
        fields = self._manifest_fields(args.domain is not None)
        self.domain = args.domain or _text(fields.get("name"))
        if not self.domain:
            raise ConfigError(
                f"{self.root}: the manifest's name is filled in at build time, so the text "
                "domain is not known here; pass --domain NAME (the package name)")
        if not _safe_name(self.domain):
            raise ConfigError(f"--domain: {self.domain!r} is not a package name such as "
                              "tea-timer.jane")
        self.version = _text(fields.get("version"))
        maintainer = _text(fields.get("maintainer"))
        self.email = maintainer.partition("<")[2].rstrip(">").strip()

    def _manifest_fields(self, optional: bool) -> dict[str, object]:
        from ..backend.appmanifest import find_manifest
        from ..backend.kinds import resolve
        from ..backend.settings import load_project
        from ..errors import ClickError

        try:
            project = load_project(self.root, require_pyproject=False)
            source = find_manifest(project, resolve(project))
            fields = source.peek() if source else {}
            if project.version and not fields.get("version"):
                fields["version"] = project.version
        except ClickError:
            if optional:
                return {}
            raise
        return fields

    @property
    def po_dir(self) -> str:
        return os.path.join(self.root, "po")

    @property
    def pot(self) -> str:
        return os.path.join(self.po_dir, f"{self.domain}.pot")

    def shown(self, path: str) -> str:
        return os.path.relpath(path) if not os.path.isabs(self.root) else path


def _text(value: object) -> str:
    return value.strip() if isinstance(value, str) else ""


def _safe_name(name: str) -> bool:
    import re

    return re.fullmatch(r"[A-Za-z0-9][A-Za-z0-9+._-]*", name) is not None and ".." not in name


def _extract(project: _Project, files: list[str], output: str | None) -> str:
    from .. import _console
    from ..i18n import extract

    pot = output or project.pot
    count, read = extract(project.root, pot, project.domain, files, project.version,
                          project.email)
    _console.info(f"Wrote {project.shown(pot)}: {count} string{'s' * (count != 1)} from "
                  f"{read} file{'s' * (read != 1)}")
    return pot


def run_extract(args: argparse.Namespace) -> int:
    from .. import _console

    project = _Project(args)
    _extract(project, args.files, args.output)
    _console.info("Next: 'click-build i18n init LANG' starts a language, "
                  "'click-build i18n update' brings new strings into po/*.po")
    return 0


def run_init(args: argparse.Namespace) -> int:
    from .. import _console
    from ..errors import ConfigError
    from ..i18n import check_new_catalog, init_language, language_problem

    problem = language_problem(args.language)
    if problem:
        raise ConfigError(problem)
    project = _Project(args)
    po = os.path.join(project.po_dir, f"{args.language}.po")
    check_new_catalog(po)  # before the template is written
    if not os.path.lexists(project.pot):
        _extract(project, [], None)
    init_language(project.root, project.pot, args.language, po)
    _console.info(f"Created {project.shown(po)}: translate its msgstr lines; the next "
                  "build compiles it into the package")
    return 0


def run_update(args: argparse.Namespace) -> int:
    from .. import _console
    from ..i18n import catalogs, update_catalogs

    project = _Project(args)
    found = [path for _, path in catalogs(project.po_dir)]  # a link refused before any write
    pot = _extract(project, [], None)
    update_catalogs(project.root, pot, found)
    if found:
        _console.info("Updated " + ", ".join(project.shown(p) for p in found))
    else:
        _console.info("No po/LANG.po yet: 'click-build i18n init LANG' starts one")
    return 0
