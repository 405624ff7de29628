"""Where `click-build run` keeps its state, and that no package takes it along.

`run` keeps its private database and the app's XDG folders in PROJECT/build/click-run
(docs/run.md), from one run to the next. `click-build build` of the same folder, a
plain one (a manifest.json, no pyproject.toml) included, leaves click-build's own
build/click-* folders out (docs/building.md): the package is the one built before `run`.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path

import pytest
from conftest import CLICK_BUILD, assert_clean_error, need, write_tree
from deadlines import seconds

#: The app remembers how often it ran in its data folder and leaves a cache file, as a
#: Qt app does; it prints what it found.
APP_SH = """#!/bin/sh
runs=$(cat "$XDG_DATA_HOME/runs" 2>/dev/null || echo 0)
runs=$((runs + 1))
echo "$runs" > "$XDG_DATA_HOME/runs"
mkdir -p "$XDG_CACHE_HOME/QtProject" && echo cached > "$XDG_CACHE_HOME/QtProject/qmlcache"
echo "runs=$runs"
echo "data=$XDG_DATA_HOME"
"""
#: These apps are about run's state, not store-ready: builds report the review's findings.
ENV = {"CLICK_BUILD_REVIEW": "report"}


def plain_app(root: Path) -> Path:
    """An app folder as docs/building.md describes: a manifest, a desktop file, the app."""
    write_tree(root, {
        "manifest.json": json.dumps({
            "name": "com.example.state", "version": "1.0", "framework": "ubuntu-sdk-20.04",
            "maintainer": "Jane Doe <jane@example.com>", "title": "State",
            "hooks": {"state": {"desktop": "state.desktop"}}}),
        "state.desktop": "[Desktop Entry]\nName=State\nExec=app.sh\nIcon=icon.svg\n"
                         "Type=Application\nX-Lomiri-Touch=true\n",
        "app.sh": APP_SH,
        "icon.svg": "<svg xmlns='http://www.w3.org/2000/svg'/>\n",
    })
    (root / "app.sh").chmod(0o755)
    return root


def cb(*args: str | Path, env: dict[str, str] | None = None,
       within: float = 120) -> subprocess.CompletedProcess[str]:
    return subprocess.run([*CLICK_BUILD, *map(str, args)], env={**os.environ, **ENV, **(env or {})},
                          capture_output=True, text=True, timeout=seconds(within))


def build(folder: Path, out: Path) -> Path:
    """``click-build build FOLDER -o OUT``: the one package it wrote."""
    result = cb("build", folder, "-o", out)
    assert result.returncode == 0, result.stderr
    (package,) = out.glob("*.click")
    return package


def contents(package: Path) -> list[str]:
    result = cb("contents", package)
    assert result.returncode == 0, result.stderr
    return [line.split()[-1] for line in result.stdout.splitlines()]


def run_app(folder: Path, env: dict[str, str] | None = None) -> dict[str, str]:
    """``click-build run FOLDER``: what the app printed."""
    result = cb("run", folder, env=env)
    assert result.returncode == 0, result.stderr
    return dict(line.split("=", 1) for line in result.stdout.splitlines() if "=" in line)


def test_a_plain_folder_packs_the_same_after_run(public_tmp: Path) -> None:
    app = plain_app(public_tmp / "app")
    before = build(app, public_tmp / "before")
    state = app / "build" / "click-run"
    # the state is where docs/run.md says, and the second run finds the first one's
    assert run_app(app) == {"runs": "1", "data": str(state / "xdg" / "data")}
    assert run_app(app) == {"runs": "2", "data": str(state / "xdg" / "data")}
    assert (state / "xdg" / "cache" / "QtProject" / "qmlcache").is_file()
    listed = cb("list", "--root", state / "db")
    assert listed.stdout == "com.example.state\t1.0\n", listed.stderr
    after = build(app, public_tmp / "after")
    packed = contents(after)
    assert "./app.sh" in packed and not [p for p in packed if p.startswith("./build")], packed
    # byte for byte the package of the folder before run (the build is reproducible)
    assert after.read_bytes() == before.read_bytes()
    shutil.rmtree(state)  # deleting the folder starts afresh, as docs/run.md says
    assert run_app(app)["runs"] == "1"


def test_own_files_in_build_are_still_packed(public_tmp: Path) -> None:
    app = plain_app(public_tmp / "app")
    run_app(app)
    (app / "build" / "click-device").mkdir()  # `device run` writes its build here
    write_tree(app / "build" / "click-device", {"old.txt": "left over\n"})
    assert not [p for p in contents(build(app, public_tmp / "a")) if p.startswith("./build")]
    write_tree(app / "build", {"notes.txt": "mine\n", "clicker/x.qml": "Item {}\n"})
    packed = contents(build(app, public_tmp / "b"))
    assert [p for p in packed if p.startswith("./build")] == [
        "./build/", "./build/clicker/", "./build/clicker/x.qml", "./build/notes.txt"], packed


@pytest.mark.parametrize("settings", ["", 'build-dir = "out/{arch}"\n'],
                         ids=["default", "build-dir"])
def test_a_project_keeps_its_state_in_build_click_run_too(public_tmp: Path, settings: str,
                                                          ) -> None:
    """Whatever build-dir says: run's folder is not the project's build folder."""
    app = plain_app(public_tmp / "app")
    (app / "pyproject.toml").write_text(f'[tool.click-build]\nkind = "qml"\n{settings}')
    assert run_app(app)["data"] == str(app / "build" / "click-run" / "xdg" / "data")
    assert run_app(app)["runs"] == "2"
    packed = contents(build(app, public_tmp / "out"))
    assert "./app.sh" in packed and not [p for p in packed if p.startswith("./build")], packed


@pytest.mark.slow
def test_the_qml_template_as_a_plain_folder_packs_the_same_after_run(public_tmp: Path) -> None:
    """The finding as reported: a QML app run under Xvfb (Qt writes its caches), then built."""
    xvfb_run = need("xvfb-run")
    need("qmlscene")
    made = subprocess.run([*CLICK_BUILD, "new", "qml", "--no-input", "--set", "title=Tea Timer",
                           "--set", "namespace=jane"], cwd=public_tmp, capture_output=True,
                          text=True, timeout=seconds(120))
    assert made.returncode == 0, made.stderr
    template, app = public_tmp / "tea-timer", public_tmp / "app"
    app.mkdir()
    for name in ("manifest.json", "tea-timer.desktop", "tea-timer.apparmor", "qml", "assets"):
        source = template / name
        (shutil.copytree if source.is_dir() else shutil.copy2)(source, app / name)
    before = build(app, public_tmp / "before")
    ran = subprocess.run([xvfb_run, "-a", *CLICK_BUILD, "run", "--timeout", "3", str(app)],
                         env={**os.environ, **ENV, "LIBGL_ALWAYS_SOFTWARE": "1",
                              "QT_QPA_PLATFORM": "xcb"},
                         capture_output=True, text=True, timeout=seconds(120))
    assert ran.returncode == 0, ran.stderr
    assert (app / "build" / "click-run" / "xdg" / "cache").is_dir()
    after = build(app, public_tmp / "after")
    assert contents(after) == contents(before)
    assert after.read_bytes() == before.read_bytes()


def test_run_uses_only_a_state_folder_it_made(public_tmp: Path) -> None:
    """docs/run.md: run marks build/click-run with a key of the user's own; a moved
    project keeps its state, a copy (or another key) is refused until deleted, and an
    empty folder is taken."""
    mine = {"XDG_STATE_HOME": str(public_tmp / "state-home")}
    app = plain_app(public_tmp / "app")
    assert run_app(app, mine)["runs"] == "1"
    key = public_tmp / "state-home" / "click-build" / "run-key"
    assert key.stat().st_mode & 0o777 == 0o600 and key.parent.stat().st_mode & 0o777 == 0o700
    assert (app / "build" / "click-run" / ".click-run-mark").is_file()
    moved = public_tmp / "moved"
    app.rename(moved)
    assert run_app(moved, mine)["runs"] == "2"

    copy = public_tmp / "copy"
    shutil.copytree(moved, copy, symlinks=True)
    state = copy / "build" / "click-run"
    message = (f"{state} holds files click-build run did not make for you (no valid "
               ".click-run-mark: shipped with the project, copied, or left by an older "
               f"click-build), so it is not used: delete it to start afresh: rm -r {state}")
    assert_clean_error(cb("run", copy, env=mine), message)
    other_key = {"XDG_STATE_HOME": str(public_tmp / "another-state-home")}
    assert_clean_error(cb("run", moved, env=other_key), f"{moved}/build/click-run holds files")
    shutil.rmtree(state)
    assert run_app(copy, mine)["runs"] == "1"

    empty = public_tmp / "empty"
    empty.mkdir()
    ran = cb("run", "--root", empty, moved, env=mine)
    assert ran.returncode == 0, ran.stderr
    assert (empty / ".click-run-mark").is_file() and (empty / "db").is_dir()


@pytest.mark.root
def test_a_build_folder_of_another_user_is_refused(public_tmp: Path) -> None:
    """docs/run.md: that user could swap what is inside while run works in it."""
    if os.geteuid() != 0:
        pytest.skip("making a folder another user's needs root")
    app = plain_app(public_tmp / "app")
    (app / "build").mkdir()
    os.chown(app / "build", 65534, 65534)  # nobody
    result = cb("run", app)
    assert_clean_error(result, f"{app}/build belongs to ")
    assert "not to you (root): click-build keeps its state only in folders of your own" \
        in result.stderr
    assert os.listdir(app / "build") == []
