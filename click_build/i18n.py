"""Translations with GNU gettext's tools: strings -> ``po/DOMAIN.pot`` -> ``po/LANG.po``
-> ``share/locale/LANG/LC_MESSAGES/DOMAIN.mo`` and translated launchers.

The text domain is the package name: Lomiri's ``MainView`` sets ``i18n.domain``
to its ``applicationName`` (the package name), and ``i18n.domain`` binds it to
``$APP_DIR/share/locale``, the folder the launcher gives each app.  The tools
are the ones Ubuntu Touch apps always used (``xgettext``, ``msginit``,
``msgmerge``, ``msgfmt``, ``msgfmt --desktop``); this module runs them with the
right languages and keywords, and writes UTF-8 everywhere: xgettext writes
``charset=CHARSET`` into a template whose strings are all ASCII, from which
``msginit`` makes an ASCII catalog that no translation with an "ü" survives.

Standard library only; nothing is imported or run when a project has no ``po/``.
"""

from __future__ import annotations

import contextlib
import os
import re

from .build import Entry
from .datatree import shown
from .errors import BuildError
from .i18n_files import link_refused, read_file, write_file

TYPE_CHECKING = False  # not typing.TYPE_CHECKING: importing typing costs start-up time

if TYPE_CHECKING:
    from collections.abc import Iterable, Iterator, Sequence

    from .manifest import Manifest

__all__ = [
    "LOCALE_DIR",
    "catalogs",
    "check_new_catalog",
    "extract",
    "find_sources",
    "init_language",
    "language_problem",
    "name_problem",
    "translate",
    "translated",
    "update_catalogs",
]

#: Where the compiled catalogs go in the package: ``APP_DIR/share/locale``.
LOCALE_DIR = "share/locale"
#: A catalog's file name is its language: ``de``, ``pt_BR``, ``sr@latin``, ``zh_Hant``.
_LANGUAGE = re.compile(r"[a-z]{2,3}(?:_[A-Za-z0-9]{2,8})*(?:@[A-Za-z0-9]+)?\Z")
#: Lomiri's i18n (``i18n.tr(text)``, ``tr(singular, plural, n)``, ``dtr(domain, ...)``,
#: ``ctr(context, text)``, ``dctr(domain, context, text)``, ``tag(...)``: told apart by
#: their number of arguments), Qt's markers and the usual ``_``/``N_``; xgettext adds
#: each language's own gettext functions (``gettext``, ``ngettext``, ``pgettext``...).
_UI_KEYWORDS = (
    "tr:1,1t", "tr:1,2,3t", "dtr:2,2t", "dtr:2,3,4t", "ctr:1c,2,2t", "dctr:2c,3,3t",
    "tag:1,1t", "tag:1c,2,2t", "qsTr:1", "qsTranslate:1c,2", "qsTrId:1", "QT_TR_NOOP:1",
    "QT_TRANSLATE_NOOP:1c,2", "_", "N_",
)
_PYTHON_KEYWORDS = ("_", "N_", "pgettext:1c,2", "npgettext:1c,2,3")
#: xgettext's language for each kind of source file.  QML goes through the JavaScript
#: parser, as Ubuntu Touch apps' Makefiles and the SDK templates do
#: (``xgettext --language=JavaScript --keyword=tr --keyword=tr:1,2``): it knows
#: template literals, regular expressions and ``'`` in text, which C++ mode misreads.
_LANGUAGES: dict[str, tuple[tuple[str, ...], tuple[str, ...]]] = {
    # language: (file name endings, extra arguments)
    "JavaScript": ((".qml", ".js", ".mjs"), tuple(f"--keyword={k}" for k in _UI_KEYWORDS)),
    "Python": ((".py",), tuple(f"--keyword={k}" for k in _PYTHON_KEYWORDS)),
    "C++": ((".cpp", ".cc", ".cxx", ".c", ".h", ".hh", ".hpp", ".hxx"),
            ("--qt", *(f"--keyword={k}" for k in _UI_KEYWORDS))),
    # Name, GenericName, Comment and Keywords: xgettext's defaults for desktop files.
    "Desktop": ((".desktop", ".desktop.in"), ()),
}
#: Folders ``extract`` never looks into: build output, other people's code, tests.
_SKIPPED_FOLDERS = frozenset({
    "build", "dist", "node_modules", "tests", "test", "po", "share", "venv", "__pycache__",
})
_CHARSET = re.compile(rb'"Content-Type: text/plain; charset=([^\\"]*)\\n"')
_NOT_UTF8 = {b"CHARSET", b"ASCII", b"US-ASCII", b"ANSI_X3.4-1968"}
#: The tools' closing count ("msgfmt: found 1 fatal error"): the lines before say it all.
_SUMMARY = re.compile(r"found \d+ fatal errors?$")


# ------------------------------------------------------------------ tools ---

def _tool(name: str) -> str:
    import shutil

    path = shutil.which(name)
    if path is None:
        raise BuildError(
            f"{name} was not found: translations need GNU gettext "
            "(Debian/Ubuntu package 'gettext': sudo apt install gettext)")
    return path


def _run(args: Sequence[str], what: str, cwd: str | None = None,
         warnings: bool = False, names: dict[str, str] | None = None) -> str:
    """Run a gettext tool; its complaint becomes one error line, and with ``warnings``
    what it says on success (xgettext: "unterminated string") becomes warnings.
    ``names``: the private copies the tool read, and the names they stand for."""
    import subprocess

    try:
        result = subprocess.run(list(args), cwd=cwd, capture_output=True, text=True,
                                errors="replace", check=False)
    except OSError as e:
        raise BuildError(f"{what}: cannot run {args[0]}: {e.strerror}") from None
    stderr = result.stderr
    for copy, name in (names or {}).items():
        stderr = stderr.replace(copy, name)
    lines = [line.strip().removeprefix(f"{args[0]}: ") for line in stderr.splitlines()
             if line.strip() and not _SUMMARY.search(line)]
    if result.returncode != 0:
        detail = " ".join(lines[:4]) or f"exit status {result.returncode}"
        raise BuildError(f"{what}: {os.path.basename(args[0])} failed: {detail}")
    if warnings and lines:
        from . import _console

        for line in dict.fromkeys(lines):  # xgettext says some things twice
            _console.warn(f"{what}: {os.path.basename(args[0])}: {line}")
    return result.stdout


def language_problem(language: str) -> str | None:
    """Why ``language`` cannot name a catalog (None when it can)."""
    if _LANGUAGE.match(language):
        return None
    return (f"{language!r} is not a language code such as de, pt_BR or sr@latin "
            "(gettext writes a region with '_', not '-')")


# --------------------------------------------------------------- the build ---

def catalogs(po_dir: str) -> list[tuple[str, str]]:
    """``(language, path)`` of every ``po_dir/LANG.po``, sorted; [] without ``po_dir``.
    A link as ``po_dir`` or as a catalog is refused (:mod:`.i18n_files`)."""
    if os.path.islink(po_dir):
        raise link_refused(po_dir, "folder")
    try:
        with os.scandir(po_dir) as it:
            found = sorted((e.name, e.is_symlink()) for e in it if e.name.endswith(".po")
                           and (e.is_symlink() or e.is_file(follow_symlinks=False)))
    except (FileNotFoundError, NotADirectoryError):
        return []
    except OSError as e:
        raise BuildError(f"{shown(po_dir)}: cannot list the translations: {e.strerror}") \
            from None
    out = []
    for name, link in found:
        path = os.path.join(po_dir, name)
        if link:
            raise link_refused(path, "file")
        language = name[:-3]
        problem = language_problem(language)
        if problem:
            raise BuildError(f"{shown(path)}: the file name says the language, "
                             f"and {problem}; rename it")
        out.append((language, path))
    return out


def _utf8_header(data: bytes) -> bytes | None:
    """``data`` declaring UTF-8, when its header says ASCII (or CHARSET, as a bare
    template does) but the text is UTF-8; None when there is nothing to fix."""
    m = _CHARSET.search(data, 0, 65536)  # the header entry comes first
    if m is None or m.group(1).upper() not in _NOT_UTF8:
        return None
    try:
        data.decode("utf-8")
    except UnicodeDecodeError:
        return None  # not UTF-8 either: msgfmt says what is wrong with it
    return data[:m.start(1)] + b"UTF-8" + data[m.end(1):]


def _save(path: str, data: bytes) -> None:
    """Write a file of click-build's private folder (the tools' copies)."""
    with open(path, "wb") as f:
        f.write(data)


def _copy_utf8(path: str, dest: str) -> None:
    """Copy the catalog ``path`` (read without following a link) to ``dest``, declaring
    UTF-8 when the file says ASCII but holds UTF-8 text (a catalog msginit made from a
    CHARSET template): msgfmt stops on those with 'invalid multibyte sequence'."""
    data = read_file(path)
    fixed = None if data.isascii() else _utf8_header(data)
    if fixed is not None:
        from . import _console

        _console.warn(f"{shown(path)}: declares an ASCII charset but holds UTF-8 text; "
                      "compiled as UTF-8 (write 'charset=UTF-8' in its Content-Type line)")
    _save(dest, data if fixed is None else fixed)


def translate(entries: Sequence[Entry], manifest: Manifest, po_dir: str,
              work: str, kept: dict[str, bytes] | None = None) -> list[Entry]:
    """``entries`` with the project's translations added: every ``po_dir/LANG.po``
    compiled into ``share/locale/LANG/LC_MESSAGES/NAME.mo`` (NAME: the package name,
    the text domain) and every desktop hook file given the translated ``Name``,
    ``Comment`` and ``Keywords`` (``Name[de]=...``).  Generated files go under
    ``work``, which must outlive the archive writer.  Without ``po_dir/*.po`` the
    entries come back unchanged and no gettext tool is needed.  ``kept``: what the
    build has read (source path -> bytes): a desktop file is taken from there, or read
    once and added, so the build's other packages do not read it again."""
    languages = catalogs(po_dir)
    if not languages:
        return list(entries)
    import shutil

    from . import _console
    from .build import package_timestamp
    from .staging import open_staged

    msgfmt = _tool("msgfmt")
    root = os.path.join(work, "click-i18n")
    shutil.rmtree(root, ignore_errors=True)
    linguas = os.path.join(root, "po")  # what msgfmt --desktop reads: LINGUAS + LANG.po
    os.makedirs(linguas)
    mtime = package_timestamp()
    generated: dict[str, Entry] = {}

    def add(arcname: str, path: str, mode: int) -> None:
        generated[arcname] = Entry(arcname, "file", mode, os.path.getsize(path), mtime, path)

    # The tools read private copies, taken without following a link; "--" ends the
    # options, and their messages name the project's files, not the copies.
    for language, po in languages:
        source = os.path.join(linguas, f"{language}.po")
        _copy_utf8(po, source)
        arcname = f"{LOCALE_DIR}/{language}/LC_MESSAGES/{manifest.name}.mo"
        mo = os.path.join(root, arcname)
        os.makedirs(os.path.dirname(mo))
        _run([msgfmt, "--check-format", "-o", mo, "--", source], shown(po), warnings=True,
             names={source: po})
        add(arcname, mo, 0o644)
    with open(os.path.join(linguas, "LINGUAS"), "w", encoding="utf-8") as f:
        f.write("".join(f"{language}\n" for language, _ in languages))

    by_name = {e.arcname: e for e in entries}
    desktops = sorted({os.path.normpath(hooks["desktop"]).strip("/")
                       for hooks in manifest.hooks.values() if "desktop" in hooks})
    for arcname in desktops:
        entry = by_name.get(arcname)
        if entry is None or entry.kind != "file" or entry.source is None:
            continue  # the hook checks report a missing desktop file
        out = os.path.join(root, "desktop", arcname)
        template = os.path.join(root, "desktop-in", arcname)
        for folder in (out, template):
            os.makedirs(os.path.dirname(folder), exist_ok=True)
        data = kept.get(entry.source) if kept is not None else None
        if data is None:
            with open_staged(entry) as desktop:  # the file the walk saw, or one error naming it
                data = desktop.read()
            if kept is not None:
                kept[entry.source] = data  # the build's other packages read it here
        _save(template, data)
        _run([msgfmt, "--desktop", f"--template={template}", "-d", linguas, "-o", out],
             shown(arcname), warnings=True, names={template: arcname})
        add(arcname, out, entry.mode)
    _console.info(f"* Translations ({', '.join(lang for lang, _ in languages)}): "
                  f"{LOCALE_DIR}/*/LC_MESSAGES/{manifest.name}.mo"
                  + (f", {', '.join(desktops)}" if desktops else ""))
    unchanged = [e for e in entries if e.arcname not in generated]
    return unchanged + [generated[name] for name in sorted(generated)]


@contextlib.contextmanager
def translated(entries: Sequence[Entry], manifest: Manifest,
               po_dir: str) -> Iterator[list[Entry]]:
    """:func:`translate` with a temporary work folder that lasts as long as the
    ``with`` block (made only when there is something to translate)."""
    if not catalogs(po_dir):
        yield list(entries)
        return
    import tempfile

    with tempfile.TemporaryDirectory(prefix="click-build-i18n-") as work:
        yield translate(entries, manifest, po_dir, work)


# ------------------------------------------------------- the source side ---

def find_sources(root: str) -> list[str]:
    """Files under ``root`` (relative, sorted) that may hold strings to translate.

    Hidden folders, build output (``build*``, ``dist``, a CMake build folder),
    ``node_modules``, virtual environments, ``tests`` and ``po``/``share`` are skipped;
    symbolic links are not followed."""
    endings = tuple(e for ends, _ in _LANGUAGES.values() for e in ends)
    found: list[str] = []

    def walk(folder: str, prefix: str) -> None:
        try:
            with os.scandir(folder) as it:
                children = sorted(it, key=lambda e: e.name)
        except OSError as e:
            raise BuildError(f"{folder}: cannot list: {e.strerror}") from None
        if any(c.name == "CMakeCache.txt" for c in children):
            return  # a CMake build folder, whatever its name
        for child in children:
            if child.name.startswith(".") or child.is_symlink():
                continue
            if child.is_dir():
                name = child.name
                if name in _SKIPPED_FOLDERS or name.startswith("build") or name.endswith(
                        ".egg-info"):
                    continue
                walk(child.path, prefix + name + "/")
            elif child.is_file() and child.name.endswith(endings) \
                    and not child.name.endswith(".min.js"):
                found.append(prefix + child.name)

    walk(root, "")
    return found


def _language_of(path: str) -> str | None:
    for language, (endings, _) in _LANGUAGES.items():
        if path.endswith(endings):
            return language
    return None


def _utf8(data: bytes) -> bytes:
    """``data`` declaring UTF-8 in its header when it says CHARSET or ASCII (xgettext's
    template of ASCII strings, msginit's catalog from one)."""
    fixed = _utf8_header(data)
    return data if fixed is None else fixed


def name_problem(path: str) -> str | None:
    """Why the file name ``path`` cannot be handed to xgettext, or None.

    xgettext writes each name into the template's ``#:`` lines: a line break there
    would forge lines of the .pot (and a ``--files-from`` list would read it as two
    names), other control characters would reach translators' tools and terminals."""
    if any(ord(c) < 32 or 127 <= ord(c) < 160 for c in path):
        return f"{shown(path)}: a file name with a control character cannot be named in a " \
               "translation template; rename the file"
    if any(0xDC80 <= ord(c) <= 0xDCFF for c in path):
        return f"{shown(path)}: a file name that is not UTF-8 cannot be named in a " \
               "translation template (written in UTF-8); rename the file"
    return None


def _batches(paths: list[str], budget: int = 100_000) -> Iterator[list[str]]:
    """``paths`` in runs of at most ``budget`` characters: one command line each, well
    under the kernel's limit (ARG_MAX) however many files a project has."""
    batch: list[str] = []
    size = 0
    for path in paths:
        if batch and size + len(path) > budget:
            yield batch
            batch, size = [], 0
        batch.append(path)
        size += len(path) + 1
    if batch:
        yield batch


def extract(root: str, pot: str, domain: str, files: Iterable[str] = (),
            version: str = "", bugs_address: str = "") -> tuple[int, int]:
    """Write the strings of ``files`` (paths relative to ``root``; default: all of
    :func:`find_sources`) to ``pot`` with xgettext, declared UTF-8.  Returns the
    number of strings and of files read.

    The names go to xgettext as arguments after ``--`` (never as a ``--files-from``
    list, one name a line); a name with a control character is refused.  xgettext
    writes into a private folder; ``pot`` is then written without following a link
    (:func:`.i18n_files.write_file`)."""
    import tempfile

    files = list(files) or find_sources(root)
    by_language: dict[str, list[str]] = {}
    for path in files:
        problem = name_problem(path)
        if problem:
            raise BuildError(problem)
        language = _language_of(path)
        if language is None:
            raise BuildError(f"{path}: not a QML, JavaScript, Python, C/C++ or desktop file; "
                             "xgettext cannot read it")
        if not os.path.isfile(os.path.join(root, path)):
            raise BuildError(f"{path}: no such file in {shown(root)}")
        by_language.setdefault(language, []).append(path)
    if not by_language:
        raise BuildError(f"{shown(root)}: nothing to translate: no QML, JavaScript, Python, "
                         "C/C++ or desktop files (tests/, build/ and po/ are not read)")
    xgettext = _tool("xgettext")
    what = shown(os.path.relpath(pot))
    with tempfile.TemporaryDirectory(prefix="click-build-i18n-") as private:
        out = os.path.join(private, "template.pot")
        common = [xgettext, "--from-code=UTF-8", "--add-comments=TRANSLATORS", "--force-po",
                  f"--output={out}", f"--package-name={domain}"]
        if version:
            common.append(f"--package-version={version}")
        if bugs_address:
            common.append(f"--msgid-bugs-address={bugs_address}")
        joined = False
        for language in _LANGUAGES:  # a fixed order: the same sources give the same file
            for batch in _batches(by_language.get(language, [])):
                args = [*common, f"--language={language}", *_LANGUAGES[language][1]]
                if joined:
                    args.append("--join-existing")
                _run([*args, "--", *batch], what, root, warnings=True)
                joined = True
        with open(out, "rb") as f:
            data = _utf8(f.read())
    write_file(root, pot, data)
    count = sum(1 for line in data.splitlines() if line.startswith(b'msgid "')) - 1  # header
    return count, len(files)


def check_new_catalog(po: str) -> None:
    """Refuse to start ``po`` when the name is taken (a link, even dangling, included)."""
    if os.path.islink(po):
        raise link_refused(po, "file")
    if os.path.lexists(po):
        raise BuildError(f"{shown(po)} exists; 'click-build i18n update' adds new strings "
                         "to it")


def init_language(root: str, pot: str, language: str, po: str) -> None:
    """Start ``po`` for ``language`` from ``pot`` (msginit), in UTF-8 whatever the
    template or the current locale say; a name that exists, a link included, is
    refused."""
    import tempfile

    problem = language_problem(language)
    if problem:
        from .errors import ConfigError

        raise ConfigError(problem)
    check_new_catalog(po)
    msginit = _tool("msginit")
    with tempfile.TemporaryDirectory(prefix="click-build-i18n-") as private:
        template = os.path.join(private, "template.pot")
        _save(template, _utf8(read_file(pot)))  # a CHARSET template: an ASCII catalog
        out = os.path.join(private, "new.po")
        _run([msginit, "--no-translator", f"--locale={language}", f"--input={template}",
              f"--output-file={out}"], shown(os.path.relpath(po)), names={template: pot})
        with open(out, "rb") as f:
            data = _utf8(f.read())
    write_file(root, po, data, new=True)


def update_catalogs(root: str, pot: str, po_files: Sequence[str]) -> list[str]:
    """Merge the strings of ``pot`` into each catalog (msgmerge): new ones are added
    untranslated, changed ones marked fuzzy, and nothing translated is lost.  Every
    catalog is merged before any is written; one that is a link is refused, and an
    unchanged one is left untouched.  Returns the catalogs that changed."""
    import tempfile

    msgmerge = _tool("msgmerge")
    merged: list[tuple[str, bytes]] = []
    with tempfile.TemporaryDirectory(prefix="click-build-i18n-") as private:
        template = os.path.join(private, "template.pot")
        _save(template, read_file(pot))
        for n, po in enumerate(po_files):
            copy, out = os.path.join(private, f"{n}.po"), os.path.join(private, f"{n}.new.po")
            _save(copy, read_file(po))
            _run([msgmerge, "--quiet", "--previous", f"--output-file={out}", "--", copy,
                  template], shown(os.path.relpath(po)), names={copy: po, template: pot})
            with open(out, "rb") as f:
                merged.append((po, _utf8(f.read())))
    return [po for po, data in merged if write_file(root, po, data)]
