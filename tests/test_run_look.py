"""`click-build run --lang/--dark-mode/--form-factor/--grid-unit`: the phone's look on
the desktop, read back from the real Lomiri toolkit (its theme, its grid unit) and the
real window under a private Xvfb; and `run` of a fresh template warns of nothing."""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest
from conftest import CLICK_BUILD, assert_clean_error, run, write_tree
from deadlines import seconds, wait_for
from run_support import LineReader, ended
from templates_support import new, project_of
from xdisplay import window_tree

from click_build.run.look import FORM_FACTORS, Look, parse_lang

X_ENV = {"LIBGL_ALWAYS_SOFTWARE": "1", "QT_QPA_PLATFORM": "xcb"}
#: A Lomiri app that says what the toolkit gave it, then stays open.
LOOK_QML = """import QtQuick 2.12
import QtQuick.Window 2.2
import Lomiri.Components 1.3
MainView {
    id: root
    width: units.gu(10); height: units.gu(10)
    Timer {
        interval: 100; running: true
        onTriggered: console.log("look: theme=" + theme.name + " gridUnit=" + units.gridUnit
                                 + " gu=" + units.gu(1) + " window="
                                 + root.Window.window.width + "x" + root.Window.window.height)
    }
    Binding { target: root.Window.window; property: "title"; value: "Look"
              when: root.Window.window !== null }
}
"""
_GEOMETRY = re.compile(r'"Look": \(.*\)\s+(\d+)x(\d+)\+')


def look_app(root: Path) -> Path:
    write_tree(root, {
        "manifest.json": json.dumps({
            "name": "com.example.look", "version": "1.0", "framework": "ubuntu-sdk-20.04",
            "maintainer": "Jane Doe <jane@example.com>", "title": "Look",
            "hooks": {"look": {"desktop": "look.desktop"}}}),
        "look.desktop": "[Desktop Entry]\nName=Look\nExec=qmlscene %U main.qml\n"
                        "Icon=icon.svg\nType=Application\nX-Lomiri-Touch=true\n",
        "main.qml": LOOK_QML,
        "icon.svg": "<svg xmlns='http://www.w3.org/2000/svg'/>\n",
    })
    return root


@contextmanager
def looking(app: Path, display: str, *args: str) -> Iterator[tuple[dict[str, str], str]]:
    """``run ARGS APP`` on ``display``: (what the app said, the window tree) once it shows."""
    with subprocess.Popen([*CLICK_BUILD, "run", *args, str(app)],
                          env={**os.environ, **X_ENV, "DISPLAY": display,
                               "CLICK_BUILD_REVIEW": "report"},
                          stdout=subprocess.DEVNULL, stderr=subprocess.PIPE) as proc:
        try:
            assert proc.stderr is not None
            line = LineReader(proc.stderr).until(lambda t: "look: theme=" in t)
            assert line, "the app said nothing"
            said = dict(word.split("=", 1) for word in line.split("look: ", 1)[1].split())
            tree = wait_for(lambda: '"Look": (' in window_tree(display) and window_tree(display),
                            "the window titled Look")
            yield said, tree
        finally:
            proc.send_signal(signal.SIGINT)
            ended(proc)


def window_size(tree: str) -> tuple[int, int]:
    found = _GEOMETRY.search(tree)
    assert found, tree
    return int(found.group(1)), int(found.group(2))


@pytest.mark.slow
def test_dark_mode_and_form_factors_reach_the_toolkit_and_the_window(
        public_tmp: Path, display: str) -> None:
    """The toolkit reads SuruDark from the theme file run writes (and Ambiance again
    without --dark-mode); its grid unit and the window are the device's, in pixels."""
    app = look_app(public_tmp / "look")
    with looking(app, display, "--dark-mode", "--form-factor", "phone") as (said, tree):
        assert said["theme"] == "Lomiri.Components.Themes.SuruDark"
        assert said["gridUnit"] == "14"  # the PinePhone's GRID_UNIT_PX
        width, height = window_size(tree)
        assert abs(width - 720) <= 1 and height == 1440, tree  # its screen, to Qt's rounding
    theme = app / "build" / "click-run" / "xdg" / "config" / "lomiri-ui-toolkit" / "theme.ini"
    assert theme.read_text() == "[General]\ntheme=Lomiri.Components.Themes.SuruDark\n"
    with looking(app, display, "--form-factor", "tablet") as (said, tree):
        assert said["theme"] == "Lomiri.Components.Themes.Ambiance"
        assert said["gridUnit"] == "9"
        assert window_size(tree) == (1280, 800)
    with looking(app, display, "--form-factor", "phone", "--grid-unit", "8") as (said, tree):
        assert said["gridUnit"] == "8"
        assert window_size(tree) == (411, 823)  # the phone's 51x103 grid units at 8 px
    with looking(app, display) as (said, _):
        assert said["gridUnit"] == "8" and said["gu"] == "8"  # the desktop's own


@pytest.mark.slow
def test_lang_shows_the_title_from_the_po_file(public_tmp: Path, display: str) -> None:
    from i18n_support import translate

    new(public_tmp / "src", "qml", {"title": "Tea Timer", "namespace": "jane"})
    project = project_of(public_tmp / "src")
    run([*CLICK_BUILD, "i18n", "init", "de"], cwd=project)
    translate(project / "po" / "de.po", {"Tea Timer": "Teekocher"})
    bare = {k: v for k, v in os.environ.items() if not k.startswith(("LANG", "LC_"))}
    with subprocess.Popen([*CLICK_BUILD, "run", "--lang", "de", str(project)],
                          env={**bare, **X_ENV, "DISPLAY": display, "LC_ALL": "C"},
                          stdout=subprocess.DEVNULL, stderr=subprocess.PIPE) as proc:
        try:
            wait_for(lambda: '"Teekocher": (' in window_tree(display), "the German title",
                     within=60)
        finally:
            proc.send_signal(signal.SIGINT)
            ended(proc)


def test_lang_and_form_factor_in_the_launch(public_tmp: Path) -> None:
    """--print-env shows what the look sets: LANGUAGE as given, a locale this computer
    has, Qt's scale and the window's size."""
    app = look_app(public_tmp / "look")
    script = subprocess.run([*CLICK_BUILD, "run", "--print-env", "--lang", "pt-br",
                             "--form-factor", "phone", str(app)], capture_output=True,
                            text=True, timeout=seconds(60),
                            env={**os.environ, "CLICK_BUILD_REVIEW": "report"})
    assert script.returncode == 0, script.stderr
    lines = script.stdout.splitlines()
    assert "export LANGUAGE=pt_BR" in lines
    locale = next(line for line in lines if line.startswith("export LC_ALL="))
    assert f"export LANG={locale.split('=', 1)[1]}" in lines
    assert locale in ("export LC_ALL=pt_BR.UTF-8", "export LC_ALL=C.UTF-8")
    assert "export GRID_UNIT_PX=14" in lines and "export QT_SCALE_FACTOR=1.75" in lines
    assert lines[-1] == "exec qmlscene main.qml -qwindowgeometry 411x823"


@pytest.mark.parametrize(("value", "expected"), [
    ("de", "de"), ("pt_BR", "pt_BR"), ("pt-br", "pt_BR"), ("sr@latin", "sr@latin"),
    ("zh_Hant", "zh_Hant"), ("es_419", "es_419")])
def test_lang_values(value: str, expected: str) -> None:
    assert parse_lang(value) == expected


@pytest.mark.parametrize(("args", "fragment"), [
    (["--lang", "de;rm -rf /"], "argument --lang: give a language code such as de, pt_BR or "
                                "sr@latin"),
    (["--lang", ""], "argument --lang: give a language code"),
    (["--grid-unit", "8"], "--grid-unit scales a --form-factor: give one (phone or tablet)"),
    (["--form-factor", "phone", "--grid-unit", "-1"], "'-1': give a positive number"),
    (["--form-factor", "phone", "--grid-unit", "1e9"], "'1e9': give pixels per grid unit"),
    (["--form-factor", "watch"], "argument --form-factor: invalid choice: 'watch'"),
])
def test_bad_look_options_are_one_line(public_tmp: Path, args: list[str], fragment: str) -> None:
    app = look_app(public_tmp / "look")
    result = subprocess.run([*CLICK_BUILD, "run", *args, str(app)], capture_output=True,
                            text=True, timeout=seconds(60))
    assert_clean_error(result, fragment)


def test_the_devices_are_real_ones() -> None:
    """The form factors' grid units are UBports' deviceinfo values for these devices."""
    assert {k: (f.device, f.width, f.height, f.grid_unit) for k, f in FORM_FACTORS.items()} == {
        "phone": ("PinePhone", 720, 1440, 14), "tablet": ("PineTab", 1280, 800, 9)}
    assert Look(form_factor="tablet").arguments() == ["-qwindowgeometry", "1138x711"]
    assert Look().environment() == {} and Look().arguments() == []


def test_the_theme_file_is_written_never_through_a_link(public_tmp: Path) -> None:
    """The app may leave a link where run writes its theme file: the link is replaced,
    what it points at is untouched."""
    app = look_app(public_tmp / "look")
    first = subprocess.run([*CLICK_BUILD, "run", "--print-env", str(app)], capture_output=True,
                           text=True, timeout=seconds(60),
                           env={**os.environ, "CLICK_BUILD_REVIEW": "report"})
    assert first.returncode == 0, first.stderr
    folder = app / "build" / "click-run" / "xdg" / "config" / "lomiri-ui-toolkit"
    victim = public_tmp / "victim"
    victim.write_text("mine\n")
    (folder / "theme.ini").unlink()
    (folder / "theme.ini").symlink_to(victim)
    again = subprocess.run([*CLICK_BUILD, "run", "--print-env", "--dark-mode", str(app)],
                           capture_output=True, text=True, timeout=seconds(60),
                           env={**os.environ, "CLICK_BUILD_REVIEW": "report"})
    assert again.returncode == 0, again.stderr
    assert victim.read_text() == "mine\n"
    assert not (folder / "theme.ini").is_symlink()
    assert "SuruDark" in (folder / "theme.ini").read_text()


@pytest.mark.slow
@pytest.mark.parametrize("kind", ["qml", "html5"])
def test_a_fresh_template_runs_without_a_warning(public_tmp: Path, display: str,
                                                 kind: str) -> None:
    """Unsigned, no framework files, a fallback for the web runner: run's own choices,
    so none is a warning."""
    new(public_tmp / "src", kind, {"title": "Tea Timer", "namespace": "jane"})
    project = project_of(public_tmp / "src")
    result = subprocess.run([*CLICK_BUILD, "run", "--timeout", "3", str(project)],
                            env={**os.environ, **X_ENV, "DISPLAY": display},
                            capture_output=True, text=True, timeout=seconds(120))
    assert result.returncode == 0, result.stderr
    assert "stopped" in result.stdout
    assert "click-build: warning" not in result.stderr, result.stderr
