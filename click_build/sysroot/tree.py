"""What every new root gets after its packages are unpacked, however they were.

- Absolute links become relative (``usr/lib/aarch64-linux-gnu/libm.so ->
  /lib/aarch64-linux-gnu/libm.so.6``): the linker would follow them onto the host.
- Folders a build never reads are removed (``dpkg -x`` unpacks everything).
- No file keeps a setuid or setgid bit: a root made as root stays harmless.
- Merged ``/usr``: where the packages put everything under ``usr/`` (Ubuntu 24.04),
  ``lib``, ``bin`` and ``sbin`` become links to it, as on the phone, so the
  emulator finds the dynamic loader at ``/lib/ld-linux-*.so``.
"""

from __future__ import annotations

import os
import shutil
import stat
from pathlib import Path

from .extract import EXCLUDED

__all__ = ["finish_tree", "tree_size"]

_MERGED = ("bin", "sbin", "lib")


def _relative_link(root: str, link: str, target: str) -> str:
    """``target`` (absolute, meant inside the root) as seen from ``link``'s folder."""
    inside = os.path.join(root, target.lstrip("/"))
    return os.path.relpath(inside, os.path.dirname(link))


def finish_tree(root: Path) -> None:
    top = str(root)
    for name in EXCLUDED:
        shutil.rmtree(os.path.join(top, name), ignore_errors=True)
    for dirpath, dirnames, filenames in os.walk(top):
        for name in dirnames + filenames:
            path = os.path.join(dirpath, name)
            st = os.lstat(path)
            if stat.S_ISLNK(st.st_mode):
                target = os.readlink(path)
                if target.startswith("/"):
                    os.unlink(path)
                    os.symlink(_relative_link(top, path, target), path)
            elif st.st_mode & (stat.S_ISUID | stat.S_ISGID) and not stat.S_ISDIR(st.st_mode):
                os.chmod(path, stat.S_IMODE(st.st_mode) & ~(stat.S_ISUID | stat.S_ISGID))
    for name in _MERGED:
        here = os.path.join(top, name)
        usr = os.path.join(top, "usr", name)
        if not os.path.lexists(here) and os.path.isdir(usr):
            os.symlink(f"usr/{name}", here)


def tree_size(root: Path) -> int:
    """Bytes the root takes on disk (allocated blocks, hard links counted once)."""
    seen: set[tuple[int, int]] = set()
    total = 0
    for dirpath, dirnames, filenames in os.walk(root):
        for name in dirnames + filenames:
            st = os.lstat(os.path.join(dirpath, name))
            if st.st_nlink > 1 and not stat.S_ISDIR(st.st_mode):
                key = (st.st_dev, st.st_ino)
                if key in seen:
                    continue
                seen.add(key)
            total += st.st_blocks * 512
    return total
