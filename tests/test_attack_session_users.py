"""A logged-in user cannot keep a change for all users from happening.

``--all-users`` runs the user-level hooks of every user with a session, with that
user's rights, in their home.  A user can break their own hook folder (a directory
where their link goes); that used to stop ``unregister --all-users`` before the
registration went, for everyone, every time.  Now the change is made, the other
users' hooks run, and the failure is reported (one error line, non-zero exit).
"""

from __future__ import annotations

import os
import pwd
import shutil
from pathlib import Path

import pytest
from install_support import check_invariants, make_click, make_env

from click_build.errors import HookError
from click_build.frameworks import frameworks_dir
from click_build.install import installer as installer_module
from click_build.install.database import Database
from click_build.install.installer import Installer

APP = "com.example.app"


@pytest.mark.root
def test_a_users_broken_hook_folder_does_not_block_unregister_for_all(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, real_user: str) -> None:
    if os.geteuid() != 0:
        pytest.skip("root runs hooks for other users")
    account = pwd.getpwnam(real_user)
    hooks_folder = Path(account.pw_dir) / ".cb-session-hooks"
    env = make_env(tmp_path / "env")
    os.chmod(tmp_path, 0o755)
    env.add_hook("desktop", f"Pattern: ${{home}}/{hooks_folder.name}/${{id}}.desktop\n"
                            "User-Level: yes\n")
    monkeypatch.setattr(installer_module, "logged_in_users", lambda: [real_user])
    installer = Installer(Database([str(env.root)]), frameworks_dir(env.frameworks),
                          hooks_dir=str(env.hooks), allow_unauthenticated=True)
    try:
        installer.install(str(make_click(tmp_path / "pkgs", APP, "1.0")), all_users=True)
        link = hooks_folder / f"{APP}_app_1.0.desktop"
        assert link.is_symlink()
        link.unlink()  # the user puts a directory where their link goes
        link.mkdir()
        os.chown(link, account.pw_uid, account.pw_gid)
        with pytest.raises(HookError, match=f"{real_user}: .*it is a directory"):
            installer.unregister(APP, all_users=True)
        assert not (env.root / ".click" / "users" / "@all" / APP).is_symlink()
        assert not (env.root / APP).exists()
        assert check_invariants(env.root) == []
    finally:
        shutil.rmtree(hooks_folder, ignore_errors=True)
