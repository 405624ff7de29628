"""`click-build i18n` and the build's translations on a hostile project (issue 27, classes
2 and 3), as root and as a real unprivileged user, comparing the home before and after.

Class 2: a `po` folder, a `po/LANG.po` or `po/NAME.pot` planted as a link (dangling, or to
the user's shell start-up file, or to a catalog of theirs) must never be written or read
through.  Class 3: a source file name with a line break used to add lines to xgettext's
`--files-from` list (a link at the top of the project to any file of the user's), and its
strings reached the committed template; a name with a control character is refused, and
other names reach every gettext tool as plain arguments.
"""

from __future__ import annotations

import json
import os
import pwd
import shutil
import stat
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest
from attack_support import assert_refused
from conftest import run, write_tree
from i18n_support import APP_FILES, MANIFEST, entries
from project_attack import BAIT, Scene

POT = f"po/{MANIFEST['name']}.pot"
CATALOG = ('msgid ""\nmsgstr ""\n"Content-Type: text/plain; charset=UTF-8\\n"\n\n'
           f'msgid "Dice"\nmsgstr "{BAIT}"\n')
LINK_REFUSED = "a symbolic link; click-build never reads or writes translations through a link"


def _app(s: Scene) -> Path:
    """The project, and in the home: a catalog and a Python file of the user's."""
    write_tree(s.project, APP_FILES)
    write_tree(s.bait, {"other/po/de.po": CATALOG, "secret.py": f'x = _("{BAIT}")\n'})
    return s.project


def _targets(s: Scene) -> dict[str, Path]:
    return {"shell start-up file": s.home / ".bashrc",
            "missing autostart entry": s.bait / "autostart" / "evil.desktop",
            "catalog of the user's": s.bait / "other" / "po" / "de.po"}


def _assert_untouched(s: Scene, before: dict[str, tuple[object, ...]]) -> None:
    assert s.around() == before
    assert not list((s.bait / "autostart").iterdir())


def _assert_no_bait(result: subprocess.CompletedProcess[str]) -> None:
    assert BAIT not in result.stdout + result.stderr


@pytest.mark.parametrize("target", ["shell start-up file", "missing autostart entry",
                                    "catalog of the user's"])
@pytest.mark.parametrize("action", [["init", "de"], ["update"]])
def test_a_catalog_planted_as_a_link_is_never_written_or_read_through(
        scene: Scene, target: str, action: list[str]) -> None:
    project = _app(scene)
    (project / "po").mkdir()
    os.symlink(_targets(scene)[target], project / "po" / "de.po")
    before = scene.around()
    result = scene.click_build("i18n", *action)
    assert_refused(result, f"po/de.po: {LINK_REFUSED}")
    _assert_no_bait(result)
    _assert_untouched(scene, before)
    assert os.readlink(project / "po" / "de.po") == str(_targets(scene)[target])
    if action == ["update"]:  # refused before anything was written
        assert not (project / POT).exists()


@pytest.mark.parametrize("action", [[], ["init", "de"], ["update"]])
def test_a_po_folder_planted_as_a_link_is_refused(scene: Scene, action: list[str]) -> None:
    project = _app(scene)
    os.symlink(scene.bait / "autostart", project / "po")
    before = scene.around()
    assert_refused(scene.click_build("i18n", *action), f"./po: {LINK_REFUSED}")
    _assert_untouched(scene, before)


def test_a_template_planted_as_a_link_is_replaced_not_followed(scene: Scene) -> None:
    project = _app(scene)
    (project / "po").mkdir()
    os.symlink(scene.home / ".bashrc", project / POT)
    before = scene.around()
    result = scene.click_build("i18n")
    assert result.returncode == 0, result.stderr
    _assert_untouched(scene, before)
    st = os.lstat(project / POT)
    assert stat.S_ISREG(st.st_mode) and stat.S_IMODE(st.st_mode) == 0o644
    assert st.st_uid == pwd.getpwnam(scene.user).pw_uid
    assert ("", "Dice", "") in entries((project / POT).read_text(encoding="utf-8"))
    assert not [n for n in os.listdir(project / "po") if n.endswith(".tmp")]


def test_a_build_refuses_a_catalog_link_out_of_the_project(scene: Scene) -> None:
    """Through a link, the build compiled a catalog of the user's into the package."""
    project = _app(scene)
    (project / "po").mkdir()
    os.symlink(scene.bait / "other" / "po" / "de.po", project / "po" / "de.po")
    out = scene.base / "out"
    out.mkdir()
    before = scene.around()
    result = scene.click_build("build", project, "-o", out)
    assert_refused(result, f"po/de.po: {LINK_REFUSED}")
    _assert_no_bait(result)
    _assert_untouched(scene, before)  # out/ included: nothing written


@pytest.mark.parametrize("name", [
    "Main.qml\nleak.py\nz.qml",  # the lines name a link at the top: any file of the user's
    "Main.qml\rz.qml", "a\x1b[2Jb.qml", "tab\t.qml", "del\x7f.qml", "c1\x85.qml",
])
def test_a_file_name_with_a_control_character_is_refused(scene: Scene, name: str) -> None:
    project = _app(scene)
    write_tree(project, {f"qml/{name}": 'Item { property string a: i18n.tr("x") }\n',
                         "z.qml": 'Item { property string z: i18n.tr("z") }\n'})
    os.symlink(scene.bait / "secret.py", project / "leak.py")
    before = scene.around()
    result = scene.click_build("i18n")
    assert_refused(result)
    assert result.stderr == (f"click-build: error: {f'qml/{name}'!r}: a file name with a "
                             "control character cannot be named in a translation template; "
                             "rename the file\n")
    _assert_no_bait(result)
    _assert_untouched(scene, before)
    assert not (project / "po").exists()
    # Named on the command line, it is refused the same way.
    assert_refused(scene.click_build("i18n", "extract", f"qml/{name}"), "control character")
    assert not (project / "po").exists()


def test_a_file_name_that_is_not_utf8_is_refused(scene: Scene) -> None:
    project = _app(scene)
    raw = os.fsencode(project / "qml") + b"/caf\xe9.qml"
    with open(raw, "w") as f:
        f.write('Item { property string a: i18n.tr("x") }\n')
    assert_refused(scene.click_build("i18n"), "'qml/caf\\udce9.qml': a file name that is not "
                   "UTF-8 cannot be named in a translation template")
    assert not (project / "po").exists()


def test_names_like_options_or_comments_reach_xgettext_as_files(scene: Scene) -> None:
    """`-o.qml` would have been xgettext's -o option, `#x.qml` a comment line of a
    --files-from list, ` lead.qml` a name with its blank trimmed."""
    project = _app(scene)
    names = {"-o.qml": "Dash", "#x.qml": "Hash", "--help.js": "Help", " lead.qml": "Lead"}
    write_tree(project, {name: f'var s = i18n.tr("{text}");\n' for name, text in names.items()})
    result = scene.click_build("i18n")
    assert result.returncode == 0, result.stderr
    assert result.stdout.startswith(f"Wrote {POT}: 15 strings from 6 files\n")
    pot = (project / POT).read_text(encoding="utf-8")
    assert {("", text, "") for text in names.values()} <= entries(pot)
    assert "#: -o.qml:1" in pot and "#: #x.qml:1" in pot
    assert sorted(os.listdir(project / "po")) == [os.path.basename(POT)]
    assert not (project / ".qml").exists()  # where "-o.qml" as an option would have written
    # Named on the command line, after the options' "--", they are files too.
    result = scene.click_build("i18n", "extract", "--", "-o.qml", "#x.qml")
    assert result.returncode == 0, result.stderr
    assert result.stdout.startswith(f"Wrote {POT}: 2 strings from 2 files\n")


def test_root_keeps_the_owner_and_mode_of_a_users_project(
        real_user: str) -> None:
    """Rewritten catalogs keep their owner and mode; what root makes there is the
    folder owner's, as docs/translations.md says."""
    if os.geteuid() != 0:
        pytest.skip("needs root")
    pw = pwd.getpwnam(real_user)
    top = Path(tempfile.mkdtemp(prefix="attack.", dir=pw.pw_dir))
    cli = [sys.executable, "-m", "click_build", "i18n"]
    try:
        project = write_tree(top / "app", APP_FILES)
        for dirpath, dirnames, filenames in os.walk(top):
            for n in [".", *dirnames, *filenames]:
                os.chown(os.path.join(dirpath, n), pw.pw_uid, pw.pw_gid)
        run([*cli, "init", "de"], cwd=project)
        for path in (project / "po", project / POT, project / "po" / "de.po"):
            assert (path.stat().st_uid, path.stat().st_gid) == (pw.pw_uid, pw.pw_gid), path
        (project / "po" / "de.po").chmod(0o664)
        main = project / "qml" / "Main.qml"
        main.write_text(main.read_text().replace('"Tagged"', '"Tagged again"'))
        run([*cli, "update"], cwd=project)
        st = (project / "po" / "de.po").stat()
        assert (st.st_uid, st.st_gid, stat.S_IMODE(st.st_mode)) == (pw.pw_uid, pw.pw_gid, 0o664)
        assert ("", "Tagged again", "") in entries((project / "po/de.po").read_text("utf-8"))
    finally:
        shutil.rmtree(top, ignore_errors=True)


def test_many_files_go_to_xgettext_in_several_runs_with_the_same_template(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The names are arguments, so a big project is read in several runs (ARG_MAX):
    joined, they give the template one run gives."""
    import click_build.i18n as i18n

    files: dict[str, str | bytes] = {"manifest.json": json.dumps(MANIFEST)}
    for n in range(12):
        files[f"qml/Page{n:02}.qml"] = (f'Item {{ property string a: i18n.tr("Page {n}")\n'
                                        '  property string b: i18n.tr("Shared") }\n')
        files[f"src/mod{n:02}.py"] = f'a = _("Python {n}")\nb = _("Shared")\n'
    project = write_tree(tmp_path / "many", files)
    assert i18n.extract(str(project), str(project / "one.pot"), "d") == (25, 24)
    runs: list[list[str]] = []
    batches = i18n._batches

    def small(paths: list[str], budget: int = 0) -> object:
        for batch in batches(paths, 40):
            runs.append(batch)
            yield batch

    monkeypatch.setattr(i18n, "_batches", small)
    assert i18n.extract(str(project), str(project / "many.pot"), "d") == (25, 24)
    assert len(runs) >= 8 and sorted(sum(runs, [])) == sorted(i18n.find_sources(str(project)))

    def body(name: str) -> str:
        text = (project / name).read_text(encoding="utf-8")
        return "\n".join(line for line in text.splitlines()
                         if not line.startswith('"POT-Creation-Date:'))

    assert body("many.pot") == body("one.pot")
