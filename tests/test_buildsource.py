"""``buildsource`` on the folders click-build makes: templates whose manifest is a
manifest.json.in, leaves the architecture to the build, or takes the version from
pyproject.toml. Only the name and the version are needed (NAME_VERSION.tar.gz)."""

from __future__ import annotations

import json
import tarfile
from collections.abc import Callable
from pathlib import Path

import pytest
from conftest import Cli, assert_clean_error, run

MakeApp = Callable[..., Path]


def new(cli: Cli, kind: str, where: Path, app: str) -> Path:
    cli("new", kind, "--no-input", "--set", f"app_name={app}", "--set", "namespace=jane",
        "-o", where)
    return where / app


def names(tarball: Path) -> list[str]:
    with tarfile.open(tarball) as tar:
        return sorted(tar.getnames())


@pytest.mark.parametrize("kind", ["cpp", "python"])
def test_templates_build_their_source_package(cli: Cli, tmp_path: Path, kind: str) -> None:
    """cpp: only a manifest.json.in, with "@CLICK_ARCH@"; python: a manifest.json without a
    version (pyproject.toml's) and with "@CLICK_ARCH@". Build products are left out."""
    app = new(cli, kind, tmp_path, "counter")
    (app / "src" / "core.o").write_text("o")
    (app / "libx.so").write_text("so")
    out = tmp_path / "out"
    result = cli("buildsource", "-o", out, app)
    assert result.stdout == ("Successfully built source package in "
                             f"'{out}/counter.jane_1.0.0.tar.gz'.\n"), result
    assert result.stderr == ""
    members = names(out / "counter.jane_1.0.0.tar.gz")
    assert "./manifest.json" in members and "./pyproject.toml" in members
    assert ("./manifest.json.in" in members) == (kind == "cpp")
    assert not any(m.endswith((".o", ".so")) or ".git" in m for m in members)
    with tarfile.open(out / "counter.jane_1.0.0.tar.gz") as tar:
        packed = tar.extractfile("./manifest.json").read()  # type: ignore[union-attr]
    top = app / ("manifest.json.in" if kind == "cpp" else "manifest.json")
    assert packed == top.read_bytes()  # the manifest as written, as the original packs -m
    # the same from inside the folder, as a user types it
    cli("buildsource", "-o", tmp_path / "here", ".", cwd=app)
    assert names(tmp_path / "here" / "counter.jane_1.0.0.tar.gz") == members


@pytest.mark.oracle
def test_same_files_as_the_original(cli: Cli, tmp_path: Path, original_click: str) -> None:
    """The cpp template with -m manifest.json.in: the file list the original packs."""
    app = new(cli, "cpp", tmp_path, "counter")
    (app / "src" / "core.o").write_text("o")
    (app / ".git").mkdir()
    (app / ".git" / "HEAD").write_text("x")
    theirs = tmp_path / "theirs"
    theirs.mkdir()
    run([original_click, "buildsource", "-m", str(app / "manifest.json.in"), str(app)],
        cwd=theirs)
    cli("buildsource", "-m", "manifest.json.in", "-o", tmp_path / "ours", app)
    name = "counter.jane_1.0.0.tar.gz"
    assert names(tmp_path / "ours" / name) == names(theirs / name)


@pytest.mark.oracle
def test_plain_folder_with_arch_placeholder(cli: Cli, make_app: MakeApp, tmp_path: Path,
                                            original_click: str) -> None:
    """A manifest.json with "@CLICK_ARCH@" and "@CLICK_FRAMEWORK@": the original packs it,
    so does click-build; real mistakes in the manifest are still reported."""
    app = make_app(architecture="@CLICK_ARCH@", framework="@CLICK_FRAMEWORK@")
    run([original_click, "buildsource", str(app)], cwd=tmp_path)
    cli("buildsource", "-o", tmp_path / "ours", app)
    (made,) = (tmp_path / "ours").glob("*.tar.gz")
    assert (tmp_path / made.name).is_file()
    assert names(made) == names(tmp_path / made.name)
    data = json.loads((app / "manifest.json").read_text())
    (app / "manifest.json").write_text(json.dumps({**data, "maintainer": "nobody"}))
    assert_clean_error(cli("buildsource", "-o", tmp_path / "bad", app, check=False),
                       "manifest.json: maintainer:")


def test_clickable_layout_hint_works(cli: Cli, make_app: MakeApp, tmp_path: Path) -> None:
    """Not a click-build project, only manifest.json.in: the hint's -m works."""
    app = make_app(architecture="@CLICK_ARCH@")
    (app / "manifest.json").rename(app / "manifest.json.in")
    result = cli("buildsource", "-o", tmp_path / "out", app, check=False)
    assert_clean_error(result, "build with -m manifest.json.in")
    cli("buildsource", "-m", "manifest.json.in", "-o", tmp_path / "out", app)
    assert len(list((tmp_path / "out").glob("*.tar.gz"))) == 1


def test_version_is_needed(cli: Cli, make_app: MakeApp, tmp_path: Path) -> None:
    """No version anywhere, or one only a build can fill: said so, with what to do."""
    app = make_app()
    data = json.loads((app / "manifest.json").read_text())
    del data["version"]
    (app / "manifest.json").write_text(json.dumps(data))
    assert_clean_error(cli("buildsource", "-o", tmp_path, app, check=False),
                       "version: is missing; set it here or as [project].version")
    (app / "manifest.json").write_text(json.dumps({**data, "version": "@PROJECT_VERSION@"}))
    assert_clean_error(cli("buildsource", "-o", tmp_path, app, check=False),
                       "version: '@PROJECT_VERSION@' is left to the build, but buildsource "
                       "names the source package NAME_VERSION.tar.gz")
    assert not list(tmp_path.glob("*.tar.gz"))


def test_project_version_conflict_and_placeholder(cli: Cli, tmp_path: Path) -> None:
    """As build: a manifest version that contradicts [project].version is refused, and
    "@PROJECT_VERSION@" is the project's."""
    app = new(cli, "python", tmp_path, "dice")
    data = json.loads((app / "manifest.json").read_text())
    (app / "manifest.json").write_text(json.dumps({**data, "version": "2.0"}))
    assert_clean_error(cli("buildsource", "-o", tmp_path / "out", app, check=False),
                       "version '2.0' differs from pyproject.toml: project.version '1.0.0'")
    (app / "manifest.json").write_text(json.dumps({**data, "version": "@PROJECT_VERSION@"}))
    cli("buildsource", "-o", tmp_path / "out", app)
    assert (tmp_path / "out" / "dice.jane_1.0.0.tar.gz").is_file()
