"""The overlay given back to ``clickpkg`` when its ids changed (a system-image update).

Only what the installer made moves: complete versions (and their package
folder and ``current``), the log and the registrations, and of those only
what the old owner owned.
"""

from __future__ import annotations

import os
import stat

from .changes import complete_versions, valid
from .fs import Dir, refused
from .names import check_package

__all__ = ["give_back"]


def give_back(root: Dir, owner: tuple[int, int]) -> None:
    """Give the overlay ``root`` (its lock held) to ``owner`` if another owns it."""
    uid, gid = owner
    st = os.fstat(root.fd)
    if (st.st_uid, st.st_gid) == (uid, gid):
        return
    # Only what the old owner owned moves: a hard link someone planted to a file
    # outside the database (root's, say) keeps its owner.
    old_uid = st.st_uid

    def give(name: str, dir_fd: int) -> None:
        found = os.stat(name, dir_fd=dir_fd, follow_symlinks=False)
        if found.st_uid == old_uid:
            os.chown(name, uid, gid, dir_fd=dir_fd, follow_symlinks=False)

    # Only what the installer made: complete versions (and their package folder and
    # ``current``), the log and the registrations.  ``run-system --root`` pointed at
    # the wrong folder (/srv, say) must not give its files to clickpkg, the account
    # that unpacks untrusted packages, as gc there deletes nothing.
    packages = _installed_versions(root)
    admin = root.open(".click")
    try:
        kept = [n for n in ("log", "users")
                if admin is not None and admin.lstat(n) is not None]
        if not packages and not kept:
            return  # nothing of the installer's here: leave the folder as it is
        os.fchown(root.fd, uid, gid)
        if admin is not None:
            if os.fstat(admin.fd).st_uid == old_uid:
                os.fchown(admin.fd, uid, gid)
            for name in kept:
                give(name, admin.fd)
    finally:
        if admin is not None:
            admin.close()
    for package, versions in packages.items():
        give(package, root.fd)
        package_dir = root.open(package)
        if package_dir is None:
            continue  # removed meanwhile
        with package_dir:
            if package_dir.lstat("current") is not None:
                give("current", package_dir.fd)
            for version in versions:
                give(version, package_dir.fd)
                # fwalk: every entry by descriptor, never through a link (one
                # swapped in for a directory meanwhile is not entered).
                for _, dirs, files, dir_fd in os.fwalk(version, dir_fd=package_dir.fd):
                    for entry in dirs + files:
                        give(entry, dir_fd)


def _installed_versions(root: Dir) -> dict[str, list[str]]:
    """Package folder -> its complete versions, for every package that has one.

    A link in place of a package folder or a version is refused, naming it.
    """
    found: dict[str, list[str]] = {}
    for package in root.entries():
        if package == ".click":
            continue
        st = root.lstat(package)
        if st is None:
            continue
        if stat.S_ISLNK(st.st_mode):
            raise refused(root.join(package), st.st_mode)
        if not stat.S_ISDIR(st.st_mode) or not valid(check_package, package):
            continue
        package_dir = root.open(package)
        if package_dir is None:
            continue
        with package_dir:
            versions = complete_versions(package_dir, package)
        if versions:
            found[package] = versions
    return found
