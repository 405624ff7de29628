"""Doing file work as another user: ``with as_user(name): ...``.

Root writes into a user's home (user-level hook links) only with that user's
effective ids, supplementary groups and a umask that keeps group write off,
as the original does: a symlink the user planted there then leads only where
the user could go anyway.  A class, not ``contextlib``: importing it costs
start-up time on every install.
"""

from __future__ import annotations

import os
import pwd

from ..errors import HookError

__all__ = ["as_user"]


class as_user:  # used like a function: ``with as_user(name):``
    """Run the body with ``user``'s effective ids when root; a no-op otherwise.

    ``None`` means "as we are".  A pseudo-user (``@all``...) is nobody: doing
    a user's work for it is refused rather than done as root.
    """

    def __init__(self, user: str | None) -> None:
        self.user = user
        self._saved: tuple[list[int], int] | None = None

    def __enter__(self) -> None:
        user = self.user
        if user is None or os.geteuid() != 0:
            return
        if user.startswith("@"):
            raise HookError(f"'{user}' is not a real user; nothing can be done as it")
        try:
            pw = pwd.getpwnam(user)
        except KeyError:
            raise HookError(f"Cannot get password file entry for user '{user}'") from None
        if pw.pw_uid == 0:
            return
        groups = os.getgroups()
        mask = os.umask(0)
        os.umask(mask | 0o002)
        self._saved = (groups, mask)
        try:
            os.setgroups(os.getgrouplist(user, pw.pw_gid))
            os.setegid(pw.pw_gid)
            os.seteuid(pw.pw_uid)
        except BaseException:
            self._restore()
            raise

    def _restore(self) -> None:
        assert self._saved is not None
        groups, mask = self._saved
        self._saved = None
        try:
            os.seteuid(0)
            os.setegid(0)
            os.setgroups(groups)
        except OSError:  # never carry on with the wrong identity
            os._exit(70)
        os.umask(mask)

    def __exit__(self, *exc: object) -> None:
        if self._saved is not None:
            self._restore()
