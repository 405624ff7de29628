"""Every template, translated as its README says: `click-build new`, `click-build i18n`
(which extracts what the shipped po/*.pot lists), `i18n init de`, German msgstr lines,
a build. The package holds share/locale/de/LC_MESSAGES/NAME.mo and a launcher with
Name[de]=, and the QML apps, started as the launcher starts them (APP_DIR, its working
folder) with LANGUAGE=de under Xvfb, show their German window title."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

import pytest
from conftest import CLICK_BUILD, ROOT, need, run
from i18n_support import catalog, entries, header, translate, unpacked
from templates_support import new, project_of, section
from user_env import UserEnv, shell_blocks
from xdisplay import showing, window_tree

TRIPLET = run(["dpkg-architecture", "-qDEB_HOST_MULTIARCH"]).stdout.strip()
NAME = "tea-timer.jane"
#: What a German translator writes, per template (the title and description are everyone's).
GERMAN = {"Tea Timer": "Teekocher",
          "A new app for Ubuntu Touch": "Eine neue App für Ubuntu Touch"}
GREETINGS = {
    "qml": {"Hello World!": "Hallo Welt!"},
    "html5": {"Hello World!": "Hallo Welt!", "Tap me": "Tipp mich"},
    "python": {"Hello from Python {version}!": "Hallo aus Python {version}!"},
    "cpp": {"Hello from C++!": "Hallo aus C++!"},
}
def scaffold(kind: str, tmp_path: Path) -> Path:
    """A new project of ``kind``, whose shipped po/*.pot `click-build i18n` reproduces."""
    new(tmp_path / "src", kind, {"title": "Tea Timer", "namespace": "jane"})
    project = project_of(tmp_path / "src")
    pot = project / "po" / f"{NAME}.pot"
    shipped = pot.read_text(encoding="utf-8")
    run([*CLICK_BUILD, "i18n"], cwd=project)
    extracted = pot.read_text(encoding="utf-8")
    assert entries(extracted) == entries(shipped)
    assert header(extracted, "Content-Type") == "text/plain; charset=UTF-8"
    return project


def start_german(kind: str, project: Path) -> None:
    run([*CLICK_BUILD, "i18n", "init", "de"], cwd=project)
    translate(project / "po" / "de.po", {**GERMAN, **GREETINGS[kind]})


def check_package(tree: Path) -> None:
    mo = catalog(tree / f"share/locale/de/LC_MESSAGES/{NAME}.mo")
    assert 'msgid "Tea Timer"\nmsgstr "Teekocher"\n' in mo
    desktop = (tree / "tea-timer.desktop").read_text(encoding="utf-8")
    assert "Name[de]=Teekocher\nName=Tea Timer\n" in desktop
    assert "Comment[de]=Eine neue App für Ubuntu Touch\n" in desktop


def windows(command: list[str], cwd: Path, env: dict[str, str], expect: str,
            tmp_path: Path) -> str:
    """The X window tree (xwininfo) once ``command``, run from ``cwd`` on a private Xvfb,
    shows a window titled ``expect``; the app's output goes to ``tmp_path/app.log``."""
    env = {**env, "LIBGL_ALWAYS_SOFTWARE": "1", "QT_QPA_PLATFORM": "xcb"}
    with showing(command, expect, env, tmp_path / "app.log", cwd=cwd) as (_app, display):
        return window_tree(display)


def window_titles(command: list[str], app_dir: Path, expect: str, language: str,
                  tmp_path: Path) -> str:
    """The X window tree while ``command`` runs from the installed app's folder with the
    launcher's environment (APP_ID, APP_DIR, its folder first in the search paths)."""
    env = {
        "APP_ID": f"{NAME}_tea-timer_1.0.0", "APP_DIR": str(app_dir), "LANGUAGE": language,
        "LANG": "C.UTF-8", "XDG_DATA_DIRS": f"{app_dir}:/usr/local/share:/usr/share",
        "PATH": f"{app_dir}:{os.environ['PATH']}",
    }
    shown = windows(command, app_dir, env, expect, tmp_path)
    log = (tmp_path / "app.log").read_text(errors="replace")
    assert "qml/Main.qml:" not in log, log  # the app's QML loaded without errors
    return shown


def assert_german_title(command: list[str], app_dir: Path, tmp_path: Path) -> None:
    assert '"Teekocher": (' in window_titles(command, app_dir, "Teekocher", "de", tmp_path)
    english = window_titles(command, app_dir, "Tea Timer", "", tmp_path)
    assert '"Tea Timer": (' in english and "Teekocher" not in english


@pytest.mark.slow
@pytest.mark.parametrize("kind", ["qml", "python", "html5"])
def test_template_app_in_german_through_the_backend(kind: str, tmp_path: Path) -> None:
    project = scaffold(kind, tmp_path)
    start_german(kind, project)
    result = run([sys.executable, "-m", "build", "--wheel", "-n", "-x", "-o",
                  str(tmp_path / "dist")], cwd=project)
    assert f"* Translations (de): share/locale/*/LC_MESSAGES/{NAME}.mo, " \
           "tea-timer.desktop\n" in result.stdout
    (click,) = (tmp_path / "dist").glob("*.click")
    tree = unpacked(click, tmp_path / "app")
    check_package(tree)
    if kind in ("qml", "python"):
        assert_german_title([need("qmlscene"), "qml/Main.qml"], tree, tmp_path)
    if kind == "python":  # the Python side: gettext on $APP_DIR/share/locale
        code = ("import sys; sys.path.insert(0, 'lib/python3/dist-packages'); "
                "import tea_timer; print(tea_timer.greeting())")
        said = run([sys.executable, "-c", code], cwd=tree,
                   env={"APP_DIR": str(tree), "LANGUAGE": "de"}).stdout
        assert said == f"Hallo aus Python {sys.version.split()[0]}!\n"
    if kind == "html5":  # www/js/i18n.js reads the packaged catalog
        code = f"""
            const i18n = require({json.dumps(str(tree / 'www/js/i18n.js'))});
            const mo = require("fs").readFileSync(
                {json.dumps(str(tree / f'share/locale/de/LC_MESSAGES/{NAME}.mo'))});
            const english = [i18n.tr("Hello World!"), i18n.tr("a", "b", 2)];
            i18n.use(mo.buffer.slice(mo.byteOffset, mo.byteOffset + mo.length));
            globalThis.navigator = {{languages: ["de-AT", "fr", "en-US", "de"]}};
            console.log(JSON.stringify([...english, i18n.tr("Hello World!"),
                i18n.tr("Tea Timer"), i18n.tr("Not translated"),
                i18n.tr("You tapped %1 time", "You tapped %1 times", 2), i18n.languages()]));
        """
        said = json.loads(run([need("node"), "-e", code]).stdout)
        assert said == ["Hello World!", "b", "Hallo Welt!", "Teekocher", "Not translated",
                        "You tapped %1 times", ["de_AT", "de", "fr"]]


@pytest.mark.slow
def test_cpp_template_wurfler_survives_pot_msginit_and_build(tmp_path: Path) -> None:
    """CMake alone: the `pot` target writes UTF-8, so plain msginit makes a UTF-8
    catalog and "Würfler" reaches the package, its launcher and its window."""
    project = scaffold("cpp", tmp_path)
    pot = project / "po" / f"{NAME}.pot"
    extracted = entries(pot.read_text(encoding="utf-8"))
    pot.unlink()
    build = tmp_path / "build"
    cmake_dir = run([*CLICK_BUILD, "--cmake-dir"]).stdout.strip()
    run([need("cmake"), "-S", str(project), "-B", str(build), f"-DClickBuild_DIR={cmake_dir}",
         f"-DPython3_EXECUTABLE={sys.executable}"])
    run([need("cmake"), "--build", str(build), "--target", "pot"])
    text = pot.read_text(encoding="utf-8")
    assert header(text, "Content-Type") == "text/plain; charset=UTF-8"
    assert entries(text) == extracted  # the same extraction as `click-build i18n`
    po = project / "po" / "de.po"
    run([need("msginit"), "--no-translator", "-i", str(pot), "-o", str(po), "-l", "de"],
        env={"LANG": "C", "LC_ALL": "C"})
    assert header(po.read_text(encoding="utf-8"), "Content-Type") == "text/plain; charset=UTF-8"
    translate(po, {"Tea Timer": "Würfler", **GREETINGS["cpp"]})
    run([*CLICK_BUILD, "i18n", "init", "fr"], cwd=project)  # also in a CMake project
    assert header((project / "po/fr.po").read_text(), "Plural-Forms") \
        == "nplurals=2; plural=(n > 1);"
    run([need("cmake"), "--build", str(build), "-j2"])
    run([need("cmake"), "--build", str(build), "--target", "click"])
    (click,) = build.glob("*.click")
    tree = unpacked(click, tmp_path / "app")
    assert 'msgstr "Würfler"' in catalog(tree / f"share/locale/de/LC_MESSAGES/{NAME}.mo")
    desktop = (tree / "tea-timer.desktop").read_text(encoding="utf-8")
    assert "Name[de]=Würfler\nName=Tea Timer\n" in desktop
    binary = tree / "lib" / TRIPLET / "bin" / "tea-timer"
    assert '"Würfler": (' in window_titles([str(binary)], tree, "Würfler", "de", tmp_path)


def fill_in(po: Path, snippet: str) -> None:
    """Write a page's example translations into a catalog, as a translator would."""
    text = po.read_text(encoding="utf-8")
    for block in snippet.strip().split("\n\n"):
        lines = block.splitlines()
        where = next(line for line in lines if line.startswith("#: "))
        ids = [line for line in lines if line.startswith("msgid")]
        strs = [line for line in lines if line.startswith("msgstr")]
        empty = [line.split(" ", 1)[0] + ' ""' for line in strs]
        old = "\n".join([where, *ids, *empty]) + "\n"
        assert old in text, (old, text)  # the page shows the catalog as it is
        text = text.replace(old, "\n".join([where, *ids, *strs]) + "\n")
    po.write_text(text, encoding="utf-8")


@pytest.mark.slow
def test_translations_page_runs_as_pasted(user_env: UserEnv, tmp_path: Path) -> None:
    """docs/translations.md, pasted block by block from the wheel, in a user's home."""
    page = (ROOT / "docs" / "translations.md").read_text(encoding="utf-8")
    blocks = shell_blocks(page)
    assert len(blocks) == 4
    home = tmp_path / "home"
    home.mkdir()
    cache = os.path.expanduser("~/.cache/pip")

    def paste(block: str, cwd: Path) -> str:
        return user_env.sh(block, cwd, HOME=str(home), PIP_CACHE_DIR=cache).stdout

    paste("pip install build", home)
    paste(blocks[0], home)
    project = home / "tea-timer"
    snippet = page.split("```po\n", 1)[1].split("```", 1)[0]
    fill_in(project / "po" / "de.po", snippet)

    out = paste(blocks[1], project)
    assert 'msgid "Tea Timer"\nmsgstr "Teekocher"\n' in out
    assert 'msgstr[0] "%1-mal getippt"' in out
    assert "Name[de]=Teekocher\n" in out

    shown = windows(["bash", "-c", blocks[2]], project, user_env.env(HOME=str(home)),
                    "Teekocher", tmp_path)
    assert '"Teekocher": (' in shown, shown

    main = project / "qml" / "Main.qml"
    main.write_text(main.read_text().replace('i18n.tr("Tap me")', 'i18n.tr("Tap here")'))
    paste(blocks[3], tmp_path)
    po = (project / "po" / "de.po").read_text(encoding="utf-8")
    assert 'msgid "Tap here"\nmsgstr ""\n' in po and 'msgstr "Teekocher"' in po


@pytest.mark.slow
@pytest.mark.parametrize("kind", ["qml", "html5", "python", "cpp"])
def test_readme_translate_section_runs_as_pasted(user_env: UserEnv, tmp_path: Path,
                                                 kind: str) -> None:
    """Each template README's "Translate it" commands, from the wheel, in order; the QML
    ones end by starting the installed app in German (after the README's build and
    install)."""
    home = tmp_path / "home"
    home.mkdir()
    cache = os.path.expanduser("~/.cache/pip")

    def paste(block: str, cwd: Path) -> str:
        return user_env.sh(block, cwd, HOME=str(home), PIP_CACHE_DIR=cache).stdout

    paste(f"click-build new {kind} --no-input --set title='Tea Timer'", home)
    project = home / "tea-timer"
    readme = (project / "README.md").read_text(encoding="utf-8")
    blocks = shell_blocks(section(readme, "Translate it"))
    assert [b.split("#")[0].strip() for b in blocks[:2]] == [
        "click-build i18n init de", "click-build i18n update"]
    paste(blocks[0], project)
    po = project / "po" / "de.po"
    translate(po, {"Tea Timer": "Teekocher"})
    paste(blocks[1], project)
    assert 'msgid "Tea Timer"\nmsgstr "Teekocher"\n' in po.read_text(encoding="utf-8")
    if kind not in ("qml", "python"):
        assert len(blocks) == 2
        return
    paste(shell_blocks(section(readme, "Build the package"))[0], project)
    paste(shell_blocks(section(readme, "Check and install it"))[0], project)
    shown = windows(["bash", "-c", blocks[2]], project, user_env.env(HOME=str(home)),
                    "Teekocher", tmp_path)
    assert '"Teekocher": (' in shown, shown
