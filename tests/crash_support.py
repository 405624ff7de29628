"""Killing a real click-build at a chosen step: the crash tests' driver.

``python -c DRIVER STEP MODE ARGS...`` runs ``click-build ARGS`` in this process and
counts every change it makes to the file system (open for writing, write, pwrite,
ftruncate, mkdir, symlink, link, rename, exchange, unlink, rmdir, chown, chmod, utime);
just before the ``STEP``th (0: never) the process sends itself SIGKILL.  ``MODE``
"parent": only the command's own process counts and dies; "child": only the process it
forks to unpack as clickpkg (so each gets every step).  Either with "+no-exchange": the
file system has no ``renameat2(RENAME_EXCHANGE)`` (as NFS has not), so a reinstall
swaps trees in two renames.
"""

from __future__ import annotations

__all__ = ["DRIVER"]

DRIVER = r"""
import os, signal, sys
limit, mode = int(sys.argv[1]), sys.argv[2]
mode, no_exchange = mode.removesuffix("+no-exchange"), mode.endswith("+no-exchange")
main_pid = os.getpid()
count = [0]
def step():
    # "parent": only the installer process counts and dies; "child": only the
    # process it forks to unpack as clickpkg (so each gets every step).
    if (os.getpid() == main_pid) != (mode == "parent"):
        return
    count[0] += 1
    if count[0] == limit:
        os.kill(os.getpid(), signal.SIGKILL)
def wrap(module, name, creates=None):
    real = getattr(module, name)
    def wrapper(*args, **kwargs):
        if creates is None or creates(*args, **kwargs):
            step()
        return real(*args, **kwargs)
    setattr(module, name, wrapper)
writes = os.O_WRONLY | os.O_RDWR | os.O_CREAT
for name in ("write", "pwrite", "ftruncate", "mkdir", "symlink", "link", "rename", "replace",
             "unlink", "rmdir", "chown", "fchown", "chmod", "utime"):
    wrap(os, name)
wrap(os, "open", lambda path, flags, *a, **k: bool(flags & writes))
import click_build.install.fs as fs
if no_exchange:
    fs._renameat2 = False
wrap(fs, "exchange")
import click_build.install.installer as installer
installer.exchange = fs.exchange
from click_build.cli import main
sys.exit(main(sys.argv[3:]))
"""
