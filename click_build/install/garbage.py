"""gc: the overlay's versions that no user has registered and that are not current go.

``@gcinuse`` registrations (a legacy pseudo-user) do not count and are
dropped on the way, as in the original.  Only real directories that are
complete versions (they hold their ``.click/info/NAME.manifest``) are ever
removed, so a ``--root`` that names the wrong folder loses nothing.  Each
removal is one recorded change (:mod:`.changes`): killed in it, the next
writer finishes it.
"""

from __future__ import annotations

import stat

from ..errors import ClickError
from .changes import Changes, complete_versions, valid
from .database import Database
from .fs import Dir
from .intents import Intent
from .names import check_package, current_version
from .users import GC_IN_USE, Registry, user_names

__all__ = ["collect_garbage"]


def collect_garbage(db: Database, root: Dir, changes: Changes) -> list[str]:
    """Remove what nobody uses from the overlay ``root`` (its lock held); what went,
    as ``"PACKAGE VERSION"``."""
    removed: list[str] = []
    registered: dict[str, set[str]] = {}
    for name in user_names(db):
        if name == GC_IN_USE:
            continue
        registry = Registry(db, name)
        for package in registry.package_names():
            try:
                registered.setdefault(package, set()).add(registry.get_version(package))
            except ClickError:
                continue
    for package in root.entries():
        if package == ".click" or not valid(check_package, package):
            continue
        st = root.lstat(package)
        if st is None or not (stat.S_ISDIR(st.st_mode) or stat.S_ISLNK(st.st_mode)):
            continue
        package_dir = root.open(package)  # a planted link: refused, naming it
        if package_dir is None:
            continue  # removed since it was listed (not every writer takes our lock)
        with package_dir:
            current = current_version(package_dir.readlink("current"))
            doomed = [v for v in complete_versions(package_dir, package)
                      if v != current and v not in registered.get(package, ())]
        for version in doomed:
            _drop_gc_in_use(root, package)
            with changes.recorded(Intent("remove", package, version)):
                gone = changes.remove_version(package, version)
            if gone:
                removed.append(f"{package} {version}")
    return removed


def _drop_gc_in_use(root: Dir, package: str) -> None:
    gc_users = root.open(".click", "users", GC_IN_USE)
    if gc_users is not None:
        with gc_users:
            if gc_users.readlink(package) is not None:
                gc_users.unlink(package)
