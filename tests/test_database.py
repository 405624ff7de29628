"""Database configuration and lookups: layering, defaults, order of listings, frameworks."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest
from conftest import assert_clean_error
from install_support import Env, current_user, make_click, make_env

from click_build.install.database import Database, open_database, read_config
from click_build.install.users import Registry


@pytest.fixture
def env(tmp_path: Path) -> Env:
    return make_env(tmp_path)


def test_config_files_layer_in_name_order(tmp_path: Path) -> None:
    conf = tmp_path / "conf"
    conf.mkdir()
    (conf / "99_default.conf").write_text("[Click Database]\n# user apps\nroot = /opt/c\n")
    (conf / "10_core.conf").write_text("[Click Database]\nroot=/usr/share/click/preinstalled\n")
    (conf / "20_broken.conf").write_text("[Other]\nroot = /nope\n")
    (conf / "30_notes.txt").write_text("[Click Database]\nroot = /ignored\n")
    assert read_config(str(conf)) == ["/usr/share/click/preinstalled", "/opt/c"]
    db = open_database(str(tmp_path / "extra"), str(conf))
    assert db.roots[-1] == str(tmp_path / "extra") and db.overlay == db.roots[-1]


def test_defaults_without_configuration(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "xdg"))
    monkeypatch.setenv("CLICK_DATABASES_DIR", str(tmp_path / "none"))
    expected = "/var/lib/clickpkg" if os.geteuid() == 0 else str(
        tmp_path / "xdg/click-build/database")
    assert open_database().roots == [expected]
    assert open_database(root="rel").roots == [os.path.abspath("rel")]


def test_lookups_follow_the_original_order(cli, env: Env, tmp_path: Path) -> None:
    """Overlay first; in each layer the user's own links, then @all's; hidden stays hidden."""
    lower, upper = tmp_path / "lower", tmp_path / "upper"
    (env.confdir / "10.conf").write_text(f"[Click Database]\nroot = {lower}\n")
    user = current_user()
    for name, where, who in (("com.example.b", lower, "--all-users"),
                             ("com.example.a", lower, f"--user={user}"),
                             ("com.example.c", upper, f"--user={user}"),
                             ("com.example.d", upper, "--all-users")):
        cli("install", f"--root={where}", "--allow-unauthenticated", who,
            make_click(tmp_path, name=name), env=env.vars())
    listed = cli("list", f"--root={upper}", env=env.vars()).stdout
    assert listed.split() == ["com.example.c", "1.0", "com.example.d", "1.0",
                              "com.example.a", "1.0", "com.example.b", "1.0"]
    db = Database([str(lower), str(upper)])
    registry = Registry(db, user)
    assert registry.get_path("com.example.b") == f"{lower}/.click/users/@all/com.example.b"
    assert registry.get_version("com.example.a") == "1.0"
    assert not registry.is_removable("com.example.zzz")
    everything = json.loads(cli("list", "--all", "--manifest", f"--root={upper}",
                                env=env.vars()).stdout)
    assert [(m["name"], m["_removable"]) for m in everything] == [
        ("com.example.c", 1), ("com.example.d", 1), ("com.example.a", 0), ("com.example.b", 0)]


def test_broken_entries_are_skipped_with_a_warning(cli, env: Env, tmp_path: Path) -> None:
    root = tmp_path / "db"
    user = current_user()
    cli("install", f"--root={root}", "--allow-unauthenticated", f"--user={user}",
        make_click(tmp_path), env=env.vars())
    (root / "com.example.app/1.0/.click/info/com.example.app.manifest").write_text("{broken")
    (root / "stray-file").write_text("not a package\n")
    result = cli("list", f"--root={root}", env=env.vars())
    assert result.stdout == ""
    assert "Failed to parse manifest" in result.stderr
    assert cli("list", "--all", f"--root={root}", env=env.vars()).stdout == ""


def test_framework_commands(cli, env: Env) -> None:
    (env.frameworks / "ubuntu-sdk-20.04.framework").write_text(
        "Base-Name: ubuntu-sdk\nBase-Version: 20.04\n")
    assert cli("framework", "list", env=env.vars()).stdout == "fw-1\nubuntu-sdk-20.04\n"
    assert cli("framework", "info", "ubuntu-sdk-20.04", env=env.vars()).stdout == \
        "base-name: ubuntu-sdk\nbase-version: 20.04\n"
    assert cli("framework", "get-field", "ubuntu-sdk-20.04", "Base-Version",
               env=env.vars()).stdout == "20.04\n"
    assert_clean_error(cli("framework", "info", "nope", check=False, env=env.vars()),
                       "No click framework 'nope' installed")
    assert_clean_error(cli("framework", "get-field", "fw-1", "x", check=False, env=env.vars()),
                       "Framework 'fw-1' has no field named 'x'")


def test_an_installed_manifest_with_a_lone_surrogate(env: Env, cli: Any) -> None:
    """Planted in clickpkg's copy of the manifest, "\\ud800" parses as JSON but cannot be
    printed: readers report the manifest as unreadable (list skips it, as the original
    skips one it cannot parse) instead of dying on the output."""
    pkg = make_click(env.base / "pkgs", framework="fw-1")
    user = current_user()
    cli("install", f"--root={env.root}", f"--user={user}", "--allow-unauthenticated", pkg,
        env=env.vars())
    manifest = env.root / "com.example.app" / "1.0" / ".click" / "info" / "com.example.app.manifest"
    data = json.loads(manifest.read_text())
    manifest.write_text(json.dumps(dict(data, title="SURROGATE")).replace(
        '"SURROGATE"', '"\\ud800"'))
    for args in (["list", "--manifest", f"--user={user}"], ["list", "--all", "--manifest"]):
        listed = cli(*args, f"--root={env.root}", env=env.vars())
        assert json.loads(listed.stdout) == [] and "Traceback" not in listed.stderr
    for what in ("com.example.app", str(manifest.parent.parent.parent / "app.desktop")):
        result = cli("info", f"--root={env.root}", f"--user={user}", what, env=env.vars(),
                     check=False)
        assert_clean_error(result, "title holds a lone surrogate escape, which is not text")
