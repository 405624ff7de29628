"""The `click` target of a build folder used again and again packs what a fresh one packs.

docs/cmake.md promises that every route packs the same bytes. A build folder lives
through many edits: languages and folders come and go between two
`cmake --build build --target click`. After each edit here, the package of the
build folder used all along is compared, byte for byte, with the one of a new build
folder for the same sources. Real cmake, ninja and msgfmt; the packages are read by
dpkg-deb.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from backend_helpers import data_members, member_text, only_click
from cmake_support import build, configure, qml_app
from conftest import need

pytestmark = [pytest.mark.slow, pytest.mark.oracle]

#: Every build here stamps its package with the same time.
EPOCH = {"SOURCE_DATE_EPOCH": "1700000000"}
BODY = """
find_package(ClickBuild CONFIG REQUIRED)
install(FILES Main.qml icon.svg DESTINATION ${CLICK_INSTALL_DATADIR})
install(DIRECTORY assets DESTINATION ${CLICK_INSTALL_DATADIR})
install(CODE "file(MAKE_DIRECTORY \\"\\$ENV{DESTDIR}\\${CMAKE_INSTALL_PREFIX}/cache\\")")
click_manifest(NAME qmlapp.example TITLE "QML app" DESCRIPTION "A QML app for the tests"
               MAINTAINER "Jane Doe <jane@example.com>")
click_add_hook(qmlapp DESKTOP qmlapp.desktop APPARMOR qmlapp.apparmor)
click_translations(DOMAIN qmlapp.example SOURCES Main.qml)
click_package()
"""
TITLES = {"de": "QML-Anwendung", "fr": "Appli QML"}


def po(lang: str) -> str:
    return ('msgid ""\nmsgstr ""\n"Content-Type: text/plain; charset=UTF-8\\n"\n'
            f'"Language: {lang}\\n"\n\nmsgid "QML app"\nmsgstr "{TITLES[lang]}"\n')


@pytest.fixture(autouse=True)
def _tools() -> None:
    need("cmake")
    need("ninja")
    need("msgfmt")
    need("dpkg-deb")


def project(tmp_path: Path) -> Path:
    src = qml_app(tmp_path / "app", BODY, files={
        "po/de.po": po("de"), "po/fr.po": po("fr"),
        "assets/extra/readme.txt": "extra\n", "assets/extra/deep/more.txt": "more\n",
        "assets/logo.txt": "logo\n",
    })
    (src / "assets" / "empty").mkdir()  # an empty folder that install(DIRECTORY) copies
    return src


def assert_fresh(src: Path, binary: Path, scratch: Path) -> Path:
    """Rebuild ``binary``; its package must be that of a new build folder. Returns it."""
    build(binary, env=EPOCH)
    again = only_click(binary)
    if scratch.exists():
        shutil.rmtree(scratch)
    configure(src, scratch)
    build(scratch, env=EPOCH)
    fresh = only_click(scratch)
    assert data_members(again) == data_members(fresh)
    assert member_text(again, "./qmlapp.desktop") == member_text(fresh, "./qmlapp.desktop")
    assert again.read_bytes() == fresh.read_bytes()
    return again


def test_languages_and_folders_that_go_leave_nothing_behind(tmp_path: Path) -> None:
    src = project(tmp_path)
    binary = tmp_path / "build"
    configure(src, binary)
    build(binary, env=EPOCH)
    first = only_click(binary)
    members = data_members(first)
    desktop = member_text(first, "./qmlapp.desktop")
    assert "Name[de]=QML-Anwendung\n" in desktop and "Name[fr]=Appli QML\n" in desktop
    assert {"./share/locale/de/LC_MESSAGES/", "./assets/extra/deep/", "./assets/empty/",
            "./cache/"} <= set(members)

    # German goes, and a folder of assets with a folder inside it.
    (src / "po" / "de.po").unlink()
    shutil.rmtree(src / "assets" / "extra")
    click = assert_fresh(src, binary, tmp_path / "fresh")
    desktop = member_text(click, "./qmlapp.desktop")
    assert "Name[de]" not in desktop and "Name[fr]=Appli QML\n" in desktop
    members = data_members(click)
    assert not [m for m in members if m.startswith(("./assets/extra", "./share/locale/de"))]
    # What an install rule makes stays, empty or not: the empty folder install(DIRECTORY)
    # copies, and the one install(CODE) makes.
    assert {"./share/locale/fr/LC_MESSAGES/qmlapp.example.mo", "./assets/empty/",
            "./cache/"} <= set(members)

    # The last language goes: the desktop file is the project's own again.
    (src / "po" / "fr.po").unlink()
    click = assert_fresh(src, binary, tmp_path / "fresh")
    assert member_text(click, "./qmlapp.desktop") == (src / "qmlapp.desktop").read_text()
    assert not [m for m in data_members(click) if m.startswith("./share")]

    # And one comes back.
    (src / "po" / "de.po").write_text(po("de"))
    click = assert_fresh(src, binary, tmp_path / "fresh")
    assert "Name[de]=QML-Anwendung\n" in member_text(click, "./qmlapp.desktop")


def test_an_empty_folder_goes_with_the_folder_it_was_copied_from(tmp_path: Path) -> None:
    """A folder with no file in it leaves no stale file to notice: the folders the last
    install wrote are what tells that it is gone."""
    src = project(tmp_path)
    binary = tmp_path / "build"
    configure(src, binary)
    build(binary, env=EPOCH)

    # The files of assets/extra go, its folders stay: they are still copied, empty.
    for name in ("readme.txt", "deep/more.txt"):
        (src / "assets" / "extra" / name).unlink()
    members = data_members(assert_fresh(src, binary, tmp_path / "fresh"))
    assert {"./assets/extra/", "./assets/extra/deep/"} <= set(members)

    # Then the folders go too.
    shutil.rmtree(src / "assets" / "extra")
    (src / "assets" / "empty").rmdir()
    members = data_members(assert_fresh(src, binary, tmp_path / "fresh"))
    assert not [m for m in members if m.startswith(("./assets/extra", "./assets/empty"))]
    assert "./cache/" in members
