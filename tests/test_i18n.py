"""Translations: `click-build i18n` (xgettext, msginit, msgmerge) and the build's
compiled catalogs and translated desktop files (msgfmt), with the real GNU gettext."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
from conftest import Cli, assert_clean_error, need, run, write_tree
from i18n_support import APP_FILES, MANIFEST, catalog, entries, header, translate, unpacked


@pytest.fixture
def app(tmp_path: Path) -> Path:
    return write_tree(tmp_path / "app", APP_FILES)


def test_extract_reads_qml_js_python_cpp_and_desktop_files(cli: Cli, app: Path) -> None:
    write_tree(app, {
        "www/js/app.js": 'i18n.tr("From JS");\nconst x = _("Underscore in JS");\n',
        "src/dice/__init__.py": (
            "from gettext import gettext as _, ngettext, pgettext\n"
            "A = _('From Python {n}')\nB = ngettext('%d roll', '%d rolls', 2)\n"
            "C = pgettext('menu', 'Close')\n"),
        "src/main.cpp": '#include <libintl.h>\nconst char *a = gettext("From C++");\n'
                        'const char *b = _("Underscore in C++");\n',
        # never read: tests, build output, dependencies, hidden and generated folders
        "tests/tst_main.qml": 'Item { property string t: i18n.tr("Only in a test") }\n',
        "build/Main.qml": 'Item { property string t: i18n.tr("In build/") }\n',
        "build-arm64/Main.qml": 'Item { property string t: i18n.tr("In build-arm64/") }\n',
        "out/CMakeCache.txt": "# a CMake build folder\n",
        "out/Main.qml": 'Item { property string t: i18n.tr("In a CMake build folder") }\n',
        "node_modules/lib/index.js": 'i18n.tr("In node_modules");\n',
        ".hidden/Main.qml": 'Item { property string t: i18n.tr("Hidden") }\n',
        "po/old.qml": 'Item { property string t: i18n.tr("In po/") }\n',
    })
    outside = write_tree(app.parent / "outside", {"Main.qml": 'i18n.tr("Outside");\n'})
    (app / "linked").symlink_to(outside)
    result = cli("i18n", cwd=app)
    assert result.stdout.startswith("Wrote po/com.example.dice.pot: 18 strings from 5 files\n")
    pot = (app / "po" / "com.example.dice.pot").read_text(encoding="utf-8")
    assert entries(pot) == {
        ("", "Dice", ""), ("", "%1 die", "%1 dice"), ("", "Other", ""),
        ("", "%1 cup", "%1 cups"), ("verb", "Roll", ""), ("menu", "Quit", ""),
        ("", "Tagged", ""), ("", "Würfel", ""),
        ("", "From JS", ""), ("", "Underscore in JS", ""),
        ("", "From Python {n}", ""), ("", "%d roll", "%d rolls"), ("menu", "Close", ""),
        ("", "From C++", ""), ("", "Underscore in C++", ""),
        ("", "Dice game", ""), ("", "Rolls dice", ""), ("", "dice;game;", ""),
    }
    assert "#. TRANSLATORS: the app's name\n#: qml/Main.qml:5 dice.desktop:" in pot
    assert header(pot, "Content-Type") == "text/plain; charset=UTF-8"
    assert header(pot, "Project-Id-Version") == "com.example.dice 1.0"
    assert header(pot, "Report-Msgid-Bugs-To") == "jane@example.com"


def test_an_ascii_template_is_utf8_and_a_german_translation_survives(
        cli: Cli, app: Path, tmp_path: Path) -> None:
    """xgettext alone writes charset=CHARSET for ASCII strings, msginit then makes an
    ASCII catalog, and "Würfler" stops msgfmt; `click-build i18n` writes UTF-8."""
    (app / "qml/Main.qml").write_text('Item { property string a: i18n.tr("Dice") }\n')
    bare = run([need("xgettext"), "--language=JavaScript", "--keyword=tr", "-o", "-",
                "qml/Main.qml"], cwd=app).stdout
    assert header(bare, "Content-Type") == "text/plain; charset=CHARSET"  # what we fix

    cli("i18n", cwd=app)
    assert header((app / "po/com.example.dice.pot").read_text(), "Content-Type") \
        == "text/plain; charset=UTF-8"
    assert cli("i18n", "init", "de", cwd=app).stdout.startswith("Created po/de.po: ")
    po = app / "po" / "de.po"
    text = po.read_text(encoding="utf-8")
    assert header(text, "Content-Type") == "text/plain; charset=UTF-8"
    assert header(text, "Language") == "de"
    assert header(text, "Plural-Forms") == "nplurals=2; plural=(n != 1);"
    translate(po, {"Dice": "Würfler", "Rolls dice": "Würfelt für dich",
                   "dice;game;": "würfel;spiel;"})

    out = tmp_path / "out"
    result = cli("build", app, "-o", out, "-I", "po")
    assert ("* Translations (de): share/locale/*/LC_MESSAGES/com.example.dice.mo, "
            "dice.desktop\n") in result.stdout
    (click,) = out.glob("*.click")
    tree = unpacked(click, tmp_path / "x")
    mo = tree / "share/locale/de/LC_MESSAGES/com.example.dice.mo"
    assert 'msgid "Dice"\nmsgstr "Würfler"\n' in catalog(mo)
    desktop = (tree / "dice.desktop").read_text(encoding="utf-8")
    assert desktop.startswith("[Desktop Entry]\nName[de]=Würfler\nName=Dice\n")
    assert "Comment[de]=Würfelt für dich\n" in desktop
    assert "Keywords[de]=würfel;spiel;\n" in desktop
    assert "./po/" not in cli("contents", click).stdout
    run([need("click"), "verify", "--force-missing-framework", "--allow-unauthenticated",
         str(click)])


def test_builds_with_translations_are_reproducible(cli: Cli, app: Path, tmp_path: Path) -> None:
    write_tree(app, {"po/de.po": 'msgid ""\nmsgstr "Content-Type: text/plain; charset=UTF-8\\n"'
                                 '\n\nmsgid "Dice"\nmsgstr "Würfler"\n'})
    env = {"SOURCE_DATE_EPOCH": "1700000000"}
    first, second = tmp_path / "1", tmp_path / "2"
    cli("build", app, "-o", first, env=env)
    cli("build", app, "-o", second, env=env)
    (a,) = first.glob("*.click")
    (b,) = second.glob("*.click")
    assert a.read_bytes() == b.read_bytes()
    assert "./share/locale/de/LC_MESSAGES/com.example.dice.mo" in cli("contents", a).stdout


def test_the_file_name_is_the_language_with_region_and_script(
        cli: Cli, app: Path, tmp_path: Path) -> None:
    """docs/translations.md: pt_BR.po and sr@latin.po name their languages: each becomes
    share/locale/LANG/LC_MESSAGES/NAME.mo and Name[LANG]= in the desktop file."""
    head = 'msgid ""\nmsgstr "Content-Type: text/plain; charset=UTF-8\\n"\n\n'
    write_tree(app, {"po/pt_BR.po": head + 'msgid "Dice"\nmsgstr "Dados"\n',
                     "po/sr@latin.po": head + 'msgid "Dice"\nmsgstr "Kockice"\n'})
    out = tmp_path / "out"
    cli("build", app, "-o", out)
    (click,) = out.glob("*.click")
    tree = unpacked(click, tmp_path / "x")
    for lang, word in (("pt_BR", "Dados"), ("sr@latin", "Kockice")):
        mo = tree / "share/locale" / lang / "LC_MESSAGES/com.example.dice.mo"
        assert f'msgid "Dice"\nmsgstr "{word}"\n' in catalog(mo)
        assert f"\nName[{lang}]={word}\n" in (tree / "dice.desktop").read_text(encoding="utf-8")


def test_the_build_replaces_stale_catalogs_and_reads_ascii_labelled_utf8(
        cli: Cli, app: Path, tmp_path: Path) -> None:
    """A catalog msginit made from a CHARSET template says ASCII but holds UTF-8: it is
    compiled as UTF-8, with a warning; a .mo compiled by hand earlier is replaced."""
    write_tree(app, {
        "po/de.po": 'msgid ""\nmsgstr ""\n"Language: de\\n"\n'
                    '"Content-Type: text/plain; charset=ASCII\\n"\n\n'
                    'msgid "Dice"\nmsgstr "Würfler"\n',
        "share/locale/de/LC_MESSAGES/com.example.dice.mo": b"stale, compiled by hand",
    })
    out = tmp_path / "out"
    result = cli("build", app, "-o", out)
    assert (f"click-build: warning: {app / 'po' / 'de.po'}: declares an ASCII charset but "
            "holds UTF-8 text; compiled as UTF-8") in result.stderr
    (click,) = out.glob("*.click")
    tree = unpacked(click, tmp_path / "x")
    assert 'msgstr "Würfler"' in catalog(tree / "share/locale/de/LC_MESSAGES/com.example.dice.mo")
    assert (app / "po/de.po").read_text(encoding="utf-8").count("charset=ASCII") == 1  # untouched


def test_update_merges_new_strings_and_keeps_translations(cli: Cli, app: Path) -> None:
    cli("i18n", "init", "fr", cwd=app)
    translate(app / "po/fr.po", {"Dice": "Dés"})
    main = app / "qml/Main.qml"
    main.write_text(main.read_text().replace('i18n.tag("Tagged")', 'i18n.tr("New string")'))
    assert cli("i18n", "update", cwd=app).stdout.endswith("Updated po/fr.po\n")
    po = (app / "po/fr.po").read_text(encoding="utf-8")
    assert 'msgid "Dice"\nmsgstr "Dés"\n' in po
    assert 'msgid "New string"\nmsgstr ""\n' in po
    assert ("", "Tagged", "") not in entries(po.split("#~")[0])  # kept only as obsolete
    assert header(po, "Content-Type") == "text/plain; charset=UTF-8"


def test_a_broken_catalog_stops_update_before_any_catalog_is_written(
        cli: Cli, app: Path) -> None:
    """msgmerge reads private copies; its message names the project's file, and no
    catalog is written when one cannot be merged."""
    cli("i18n", "init", "de", cwd=app)
    cli("i18n", "init", "fr", cwd=app)
    (app / "po/fr.po").write_text('msgid "Dice"\nmsgstr "unterminated\n')
    before = {p.name: p.read_bytes() for p in (app / "po").glob("*.po")}
    main = app / "qml/Main.qml"
    main.write_text(main.read_text().replace('i18n.tag("Tagged")', 'i18n.tr("New string")'))
    result = cli("i18n", "update", cwd=app, check=False)
    assert_clean_error(result)
    assert result.stderr == ("click-build: error: po/fr.po: msgmerge failed: "
                             "./po/fr.po:3: end-of-line within string\n")
    assert {p.name: p.read_bytes() for p in (app / "po").glob("*.po")} == before


def test_changed_strings_are_fuzzy_and_left_out_until_checked(
        cli: Cli, app: Path, tmp_path: Path) -> None:
    cli("i18n", "init", "de", cwd=app)
    translate(app / "po/de.po", {"Dice": "Würfel", "Rolls dice": "Würfelt"})
    main = app / "qml/Main.qml"
    main.write_text(main.read_text().replace('i18n.tr("Dice")', 'i18n.tr("Dice!")'))
    cli("i18n", "update", cwd=app)
    assert '#, fuzzy\n#| msgid "Dice"\nmsgid "Dice!"\nmsgstr "Würfel"\n' in \
        (app / "po/de.po").read_text(encoding="utf-8")
    cli("build", app, "-o", tmp_path / "out")
    (click,) = (tmp_path / "out").glob("*.click")
    mo = catalog(unpacked(click, tmp_path / "x") / "share/locale/de/LC_MESSAGES/com.example.dice.mo")
    assert 'msgid "Rolls dice"\nmsgstr "Würfelt"\n' in mo
    assert "Dice!" not in mo  # fuzzy: left out ("Dice" itself stays: the launcher's name)


def test_project_option_and_domain(cli: Cli, app: Path, tmp_path: Path) -> None:
    """-p names the project; --domain overrides the manifest's name (or stands in for it)."""
    cli("i18n", "-p", app, "--domain", "dice")
    assert (app / "po/dice.pot").is_file()
    bare = write_tree(tmp_path / "bare", {"Main.qml": 'Item { property string a: i18n.tr("A") }'})
    assert_clean_error(cli("i18n", "extract", "-p", bare, check=False), "manifest.json")
    cli("i18n", "extract", "-p", bare, "--domain", "bare.jane", "-o", bare / "x.pot")
    assert entries((bare / "x.pot").read_text()) == {("", "A", "")}
    cli("i18n", "extract", "dice.desktop", cwd=app)  # only the files named
    assert entries((app / "po/com.example.dice.pot").read_text()) == {
        ("", "Dice", ""), ("", "Dice game", ""), ("", "Rolls dice", ""), ("", "dice;game;", "")}


@pytest.mark.parametrize(("args", "files", "fragments"), [
    (["init", "de-DE"], {}, ["'de-DE' is not a language code such as de, pt_BR or sr@latin"]),
    (["init", "../x"], {}, ["is not a language code"]),
    (["init", "de"], {"po/de.po": ""}, ["po/de.po exists; 'click-build i18n update' adds new"]),
    (["extract", "README.md"], {"README.md": "hi"},
     ["README.md: not a QML, JavaScript, Python, C/C++ or desktop file"]),
    (["extract", "missing.qml"], {}, ["missing.qml: no such file in"]),
    (["--domain", "../evil"], {}, ["--domain: '../evil' is not a package name"]),
    (["extract", "src/bad.py"], {"src/bad.py": b'x = _("\xff")\n'},
     [("po/com.example.dice.pot: xgettext failed: src/bad.py:1: Invalid multibyte sequence. "
       "Please specify the correct source encoding")]),
])
def test_mistakes_get_one_clear_line(cli: Cli, app: Path, args: list[str],
                                     files: dict[str, str | bytes], fragments: list[str]) -> None:
    write_tree(app, files)
    assert_clean_error(cli("i18n", *args, cwd=app, check=False), *fragments)
    assert not (app / "po/de-DE.po").exists()


def test_nothing_to_translate_and_xgettext_warnings(cli: Cli, tmp_path: Path) -> None:
    bare = write_tree(tmp_path / "bare", {"README.md": "no code\n"})
    assert_clean_error(cli("i18n", "--domain", "bare", cwd=bare, check=False),
                       "nothing to translate: no QML, JavaScript, Python, C/C++ or desktop files")
    write_tree(bare, {"Main.qml": 'Item { property string a: i18n.tr("open\n }\n'})
    result = cli("i18n", "--domain", "bare", cwd=bare)
    assert "click-build: warning: po/bare.pot: xgettext: Main.qml:2: warning: unterminated " \
        "string\n" in result.stderr


def test_without_gettext_one_line_names_the_debian_package(
        cli: Cli, app: Path, tmp_path: Path) -> None:
    empty = tmp_path / "bin"
    empty.mkdir()
    env = {"PATH": str(empty)}
    result = cli("i18n", cwd=app, env=env, check=False)
    assert_clean_error(result)
    assert result.stderr == ("click-build: error: xgettext was not found: translations need "
                             "GNU gettext (Debian/Ubuntu package 'gettext': sudo apt install "
                             "gettext)\n")
    # A build needs gettext only when there is something to compile.
    cli("build", app, "-o", tmp_path / "plain", env=env)
    write_tree(app, {"po/de.po": 'msgid "Dice"\nmsgstr "Würfler"\n'})
    assert_clean_error(cli("build", app, "-o", tmp_path / "out", env=env, check=False),
                       "msgfmt was not found", "package 'gettext'")


@pytest.mark.parametrize(("files", "fragments"), [
    ({"po/de-DE.po": ""}, [("de-DE.po: the file name says the language, and 'de-DE' is not "
                           "a language code"), "rename it"]),
    ({"po/de.po": 'msgid ""\nmsgstr "Content-Type: text/plain; charset=UTF-8\\n"\n\n'
                  '#, python-brace-format\nmsgid "{n} dice"\nmsgstr "{m} Würfel"\n'},
     ["po/de.po: msgfmt failed: ", "a format specification for argument 'm' doesn't exist"]),
    ({"po/de.po": "msgid \"Dice\"\nmsgstr \"unterminated\n"}, ["po/de.po: msgfmt failed: "]),
])
def test_broken_catalogs_stop_the_build_with_one_line(
        cli: Cli, app: Path, tmp_path: Path, files: dict[str, str | bytes],
        fragments: list[str]) -> None:
    write_tree(app, files)
    result = cli("build", app, "-o", tmp_path / "out", check=False)
    assert_clean_error(result, *fragments)
    assert "click-i18n" not in result.stderr  # msgfmt's copy is named as the catalog
    assert not list((tmp_path / "out").glob("*.click"))


def test_help_says_what_it_reads_and_where_the_build_puts_it(cli: Cli) -> None:
    text = cli("i18n", "--help").stdout
    for needed in ("i18n.tr", "share/locale/LANG/LC_MESSAGES/DOMAIN.mo", "Name[de]",
                   "init de", "update", "'gettext'", "--project", "--domain"):
        assert needed in text, needed
    for action in ("extract", "init", "update"):
        assert "usage: click-build i18n " + action in cli("i18n", action, "--help").stdout


def test_only_a_project_with_catalogs_pays_for_gettext() -> None:
    """Building a tree without po/ imports no subprocess/tempfile for translations."""
    code = ("import sys, click_build.i18n as i; from click_build.manifest import Manifest;"
            "m = Manifest.from_dict(" + repr(MANIFEST) + ");"
            "e = i.translate([], m, '/nonexistent/po', '/nonexistent');"
            "print(e, [n for n in ('subprocess', 'tempfile', 'shutil') if n in sys.modules])")
    result = run([sys.executable, "-c", code])
    assert result.stdout == "[] []\n"
