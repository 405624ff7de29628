"""Entries that vanish while ``gc`` looks at them.

Whoever owns the database folder, or a writer that does not take click-build's
lock (the original tool), may remove a package or version directory between the
moment ``gc`` sees it and the moment it opens it.  That is nothing to collect, not
a crash: the window is forced here by removing the entry right after ``gc`` first
looks at it (a real race with ``rmdir`` loops hit it within a few runs).
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from install_support import check_invariants, current_user, make_click, make_env

from click_build.frameworks import frameworks_dir
from click_build.install import fs
from click_build.install.database import Database
from click_build.install.installer import Installer

APP = "com.example.app"


@pytest.mark.parametrize("vanishing", ["com.example.gone", f"{APP}/3.0"])
def test_gc_skips_a_directory_removed_while_it_looks(tmp_path: Path,
                                                     monkeypatch: pytest.MonkeyPatch,
                                                     vanishing: str) -> None:
    env = make_env(tmp_path / "env")
    installer = Installer(Database([str(env.root)]), frameworks_dir(env.frameworks),
                          hooks_dir=str(env.hooks), allow_unauthenticated=True)
    installer.install(str(make_click(tmp_path / "pkgs", APP, "1.0")), user=current_user())
    planted = env.root / vanishing
    planted.mkdir()
    real_lstat = fs.Dir.lstat

    def lstat_then_vanish(self: fs.Dir, name: str) -> os.stat_result | None:
        found = real_lstat(self, name)
        if found is not None and os.path.join(self.path, name) == str(planted):
            planted.rmdir()  # gone before gc opens it
        return found

    monkeypatch.setattr(fs.Dir, "lstat", lstat_then_vanish)
    assert installer.gc() == []
    assert not planted.exists()
    assert (env.root / APP / "1.0" / ".click" / "info" / f"{APP}.manifest").is_file()
    assert check_invariants(env.root) == []
