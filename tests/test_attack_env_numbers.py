"""Issue 27, class 6: numbers from the environment, and never a partial package.

``SOURCE_DATE_EPOCH`` is the one number click-build reads from the environment
(``CLICK_BUILD_*`` settings are words: a review mode, a deflate engine, the
backend's settings; ``COLUMNS`` is argparse's). A value of 13 digits overflowed
the ar header and left a corrupt ``.click`` behind, which the review then
failed to read. Every route must refuse a value outside 0 to 4294967295 (the
gzip header's 32-bit time) with one error line naming the variable and the
range, before it writes anything; and no route may leave a partial or
unchecked package under a package's name, whatever stops it.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest
from cmake_support import build as cmake_build
from cmake_support import configure, qml_app
from conftest import CLICK_BUILD, ORIGINAL_CLICK, need, run

BAD = ["1234567890123", "4294967296", "-1", "9" * 5000, "1e9", " 1700000000", "0x10",
       "\uff11\uff17\uff10\uff10"]  # the 13 digits; one past; fullwidth digits
RANGE = "from 0 to 4294967295"
PYPROJECT = ('[build-system]\nrequires = ["click-build"]\nbuild-backend = "click_build.backend"'
             '\n\n[tool.click-build]\nkind = "qml"\n')


def _one_error(result: subprocess.CompletedProcess[str], *fragments: str) -> str:
    text = result.stdout + result.stderr
    assert result.returncode != 0, text
    assert "Traceback" not in text, text
    errors = [line for line in text.splitlines() if "click-build: error:" in line]
    assert len(errors) == 1, text
    for fragment in fragments:
        assert fragment in errors[0], errors[0]
    return errors[0]


def _everything(top: Path) -> list[str]:
    return sorted(str(p.relative_to(top)) for p in top.rglob("*"))


@pytest.mark.parametrize("value", BAD)
def test_build_refuses_before_writing(make_app, tmp_path: Path, value: str) -> None:
    app = make_app()
    before = _everything(tmp_path)
    result = run([*CLICK_BUILD, "build", str(app), "-o", str(tmp_path / "new-dist")],
                 env={"SOURCE_DATE_EPOCH": value}, check=False)
    _one_error(result, "SOURCE_DATE_EPOCH=", RANGE)
    assert _everything(tmp_path) == before  # not even the output folder


@pytest.mark.slow
@pytest.mark.parametrize("route", ["buildsource", "project", "pep517", "cmake", "as-user"])
def test_every_route_refuses(make_app, tmp_path: Path, route: str, real_user: str,
                             user_cli: list[str]) -> None:
    value = "1234567890123"
    app = make_app()
    out = tmp_path / "out"
    out.mkdir()
    if route == "buildsource":
        result = run([*CLICK_BUILD, "buildsource", str(app), "-o", str(out)],
                     env={"SOURCE_DATE_EPOCH": value}, check=False)
    elif route == "project":
        (app / "pyproject.toml").write_text(PYPROJECT)
        result = run([*CLICK_BUILD, "build", str(app), "-o", str(out)],
                     env={"SOURCE_DATE_EPOCH": value}, check=False)
        assert not (app / "build").exists()  # stopped before the backend built anything
    elif route == "pep517":
        (app / "pyproject.toml").write_text(PYPROJECT)
        result = run([sys.executable, "-m", "build", "-n", "--wheel", "-o", str(out), str(app)],
                     env={"SOURCE_DATE_EPOCH": value}, check=False)
    elif route == "cmake":
        need("cmake")
        need("ninja")
        src = qml_app(tmp_path / "src", "\n".join((
            "find_package(ClickBuild CONFIG REQUIRED)",
            'click_manifest(NAME qmlapp.example TITLE "QML app" DESCRIPTION "A QML app" '
            'MAINTAINER "Jane Doe <jane@example.com>")',
            "click_add_hook(qmlapp DESKTOP qmlapp.desktop APPARMOR qmlapp.apparmor)",
            "install(FILES Main.qml icon.svg DESTINATION ${CLICK_INSTALL_DATADIR})",
            "click_package()")))
        out = tmp_path / "build"
        configure(src, out)
        result = cmake_build(out, env={"SOURCE_DATE_EPOCH": value}, check=False)
        assert not list(out.rglob("*.click")) and not list(out.rglob(".*.tmp"))
    else:  # an unprivileged user's build, in their home
        import pwd
        import shutil
        import tempfile

        from install_support import run as run_as

        pw = pwd.getpwnam(real_user)
        base = Path(tempfile.mkdtemp(dir=pw.pw_dir if os.geteuid() == 0 else None))
        try:
            shutil.copytree(app, base / "app")
            (base / "out").mkdir()
            for path in [base, *base.rglob("*")]:
                os.chown(path, pw.pw_uid, pw.pw_gid)
            result = run_as([*user_cli, "build", str(base / "app"), "-o", str(base / "out")],
                            env={"SOURCE_DATE_EPOCH": value, "HOME": pw.pw_dir},
                            user=real_user if os.geteuid() == 0 else None)
            assert list((base / "out").iterdir()) == []
        finally:
            shutil.rmtree(base, ignore_errors=True)
    line = _one_error(result, "SOURCE_DATE_EPOCH=", RANGE)
    assert "1234567890123" in line
    if route != "cmake":
        assert list(out.iterdir()) == []


def test_values_in_range_are_read_as_numbers() -> None:
    from click_build.timestamps import source_date_epoch

    for value, number in (("0", 0), ("4294967295", 4294967295), ("0" * 20 + "42", 42)):
        assert source_date_epoch({"SOURCE_DATE_EPOCH": value}) == number
    assert source_date_epoch({"SOURCE_DATE_EPOCH": ""}) is None
    assert source_date_epoch({}) is None


@pytest.mark.oracle
@pytest.mark.parametrize("value", ["0", "4294967295"])
def test_the_range_ends_build(cli, make_app, tmp_path: Path, value: str) -> None:
    """Both ends of the range give packages dpkg-deb and the original read, with the
    time in every header (ar, gzip)."""
    out = tmp_path / "out"
    out.mkdir()
    cli("build", make_app(), "-o", out, env={"SOURCE_DATE_EPOCH": value})
    (click,) = out.glob("*.click")
    raw = click.read_bytes()
    assert raw[8 + 16:8 + 28] == value.ljust(12).encode()  # the first ar member's time
    data = subprocess.run(["ar", "p", str(click), "data.tar.gz"], check=True,
                          capture_output=True).stdout
    assert int.from_bytes(data[4:8], "little") == int(value)  # the gzip header's
    run(["dpkg-deb", "-c", str(click)])
    if os.path.exists(ORIGINAL_CLICK):
        run([ORIGINAL_CLICK, "verify", "--force-missing-framework", "--allow-unauthenticated",
             str(click)])


def test_api_times_are_checked(make_app, tmp_path: Path) -> None:
    from click_build.build import build_click, stage_tree
    from click_build.errors import BuildError
    from click_build.manifest import load_manifest

    app = make_app()
    for bad in (-1, 1 << 32, 10**13):
        with pytest.raises(BuildError, match="package time"):
            build_click(load_manifest(app / "manifest.json"), stage_tree(app), tmp_path,
                        mtime=bad)
    assert not list(tmp_path.glob("*.click"))


def test_a_failure_while_packing_leaves_nothing(make_app, tmp_path: Path) -> None:
    """A file that shrinks after the walk stops the build in the middle of the data:
    no package, no temporary file."""
    from click_build.build import build_click, stage_tree
    from click_build.errors import BuildError
    from click_build.manifest import load_manifest

    app = make_app(files={"zz/late.bin": os.urandom(3 << 20)})
    entries = stage_tree(app)
    with open(app / "zz/late.bin", "r+b") as f:
        f.truncate(1 << 20)
    out = tmp_path / "out"
    out.mkdir()
    with pytest.raises(BuildError, match="shrank"):
        build_click(load_manifest(app / "manifest.json"), entries, out)
    assert list(out.iterdir()) == []


def test_a_failed_review_never_names_the_package(cli, make_app, tmp_path: Path) -> None:
    """The review runs on the complete package before it gets its name: a package the
    review fails never appears, even for a moment, and nothing else is left."""
    app = make_app(files={"abs": "-> /usr/share/icons"})  # an absolute link: a review error
    out = tmp_path / "out"
    out.mkdir()
    result = cli("build", app, "-o", out, check=False)
    _one_error(result, "review:", "none was written")
    assert list(out.iterdir()) == []


KILLED_AT_CHECK = r'''
import os, signal, sys
from click_build.build import build_click, stage_tree
from click_build.manifest import load_manifest

app, out = sys.argv[1], sys.argv[2]

def die(path, final):  # complete, checked next: the process is killed here
    assert os.path.getsize(path) > 0 and not os.path.exists(final)
    os.kill(os.getpid(), signal.SIGKILL)

build_click(load_manifest(os.path.join(app, "manifest.json")), stage_tree(app), out, check=die)
'''


def test_a_kill_before_the_name_leaves_no_package(make_app, tmp_path: Path) -> None:
    """Killed with the package complete but not yet checked: nothing under a
    package's name (at most a hidden temporary file)."""
    app = make_app()
    out = tmp_path / "out"
    out.mkdir()
    result = subprocess.run([sys.executable, "-c", KILLED_AT_CHECK, str(app), str(out)],
                            capture_output=True, text=True)
    assert result.returncode == -signal.SIGKILL, result.stderr
    assert not list(out.glob("*.click"))
    assert all(p.name.startswith(".") and p.name.endswith(".tmp") for p in out.iterdir())
