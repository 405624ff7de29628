"""How ``click-build i18n`` and the build touch a project's ``po/``: never through a link.

A project folder may be someone else's (a clone), and a ``po`` folder or a ``po/de.po``
planted as a symbolic link must neither carry the project's strings into the user's
shell start-up file nor bring a file from outside the project into a catalog.  So:

- every folder between the project and a file written there is opened without
  following a link (``O_NOFOLLOW``), made when missing, and refused when it is a link;
- a file is written whole under a new name in its folder and renamed over its name, so
  a link found there is replaced, never followed (a new catalog takes no name that
  exists at all); a file replaced keeps its mode and, under root, its owner;
- catalogs and templates are read with ``O_NOFOLLOW`` on the file and its folder: a link
  is refused with one line.

The external tools (xgettext, msginit, msgmerge, msgfmt) only ever read copies and
write into a private temporary folder.  Standard library only.
"""

from __future__ import annotations

import errno
import os
import stat

from . import atomicfile
from .datatree import shown
from .errors import BuildError

__all__ = ["link_refused", "read_file", "write_file"]

_DIR_FLAGS = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC
_LINK_ERRORS = (errno.ELOOP, errno.ENOTDIR)
_LINK_FIX = ("click-build never reads or writes translations through a link (a project "
             "may be someone else's); replace the link with the real")


def link_refused(path: str, what: str) -> BuildError:
    """The error for ``path`` (a ``what``: file or folder) met as a link, or not a ``what``."""
    try:
        link = stat.S_ISLNK(os.lstat(path).st_mode)
    except OSError:
        link = True  # gone or swapped again: say what was met
    if not link:
        return BuildError(f"{shown(path)}: not a {what}")
    return BuildError(f"{shown(path)}: a symbolic link; {_LINK_FIX} {what}")


def read_file(path: str) -> bytes:
    """The bytes of the regular file ``path``, neither it nor its folder followed when
    a link."""
    folder, name = os.path.split(path)
    try:
        dir_fd = os.open(folder or ".", _DIR_FLAGS)
    except OSError as e:
        if e.errno in _LINK_ERRORS:
            raise link_refused(folder, "folder") from None
        raise BuildError(f"{shown(folder)}: cannot open: {e.strerror}") from None
    try:
        fd = os.open(name, os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC | os.O_NONBLOCK,
                     dir_fd=dir_fd)
    except OSError as e:
        if e.errno in _LINK_ERRORS:
            raise link_refused(path, "file") from None
        raise BuildError(f"{shown(path)}: cannot read: {e.strerror}") from None
    finally:
        os.close(dir_fd)
    with os.fdopen(fd, "rb") as f:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            raise BuildError(f"{shown(path)}: not a file")
        return f.read()


def _open_folder(root: str, folder: str) -> int:
    """A descriptor of ``folder``: each of its folders below ``root`` opened without
    following a link and made when missing (owned, under root, as its parent)."""
    top, here = os.path.abspath(root), os.path.abspath(folder)
    if here == top or here.startswith(top.rstrip(os.sep) + os.sep):
        start, parts = top, [p for p in os.path.relpath(here, top).split(os.sep) if p != "."]
        shown_start = root
    else:  # named outside the project (-o): the user's own path, made as usual
        try:
            os.makedirs(here, exist_ok=True)
        except OSError as e:
            raise BuildError(f"{shown(folder)}: cannot make the folder: {e.strerror}") from None
        start, parts, shown_start = here, [], folder
    try:
        fd = os.open(start, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
    except OSError as e:
        raise BuildError(f"{shown(start)}: cannot open: {e.strerror}") from None
    walked = shown_start
    try:
        for part in parts:
            walked = os.path.join(walked, part)
            try:
                child = os.open(part, _DIR_FLAGS, dir_fd=fd)
            except FileNotFoundError:
                try:
                    os.mkdir(part, 0o755, dir_fd=fd)
                    if os.geteuid() == 0:
                        parent = os.fstat(fd)
                        os.chown(part, parent.st_uid, parent.st_gid, dir_fd=fd,
                                 follow_symlinks=False)
                except FileExistsError:
                    pass  # a dangling link: refused just below
                child = os.open(part, _DIR_FLAGS, dir_fd=fd)
            os.close(fd)
            fd = child
    except OSError as e:
        os.close(fd)
        if e.errno in _LINK_ERRORS:
            raise link_refused(walked, "folder") from None
        raise BuildError(f"{shown(walked)}: cannot open the folder: {e.strerror}") from None
    return fd


def write_file(root: str, path: str, data: bytes, new: bool = False) -> bool:
    """Write ``data`` as the file ``path`` (inside the project ``root``, or anywhere
    the user named), replacing whatever is there, a link included, by a rename; with
    ``new``, refuse a name that exists.  False when the file already held ``data``
    (left untouched, as ``msgmerge --update`` does)."""
    fd = _open_folder(root, os.path.dirname(path) or ".")
    name = os.path.basename(path)
    exists = f"{shown(path)} exists; 'click-build i18n update' adds new strings to it"
    try:
        try:
            old: os.stat_result | None = os.stat(name, dir_fd=fd, follow_symlinks=False)
        except FileNotFoundError:
            old = None
        if old is not None and new:
            raise BuildError(exists)
        regular = old is not None and stat.S_ISREG(old.st_mode)
        owner = old if regular and old is not None else os.fstat(fd)
        try:
            return atomicfile.write_file(
                name, data, stat.S_IMODE(old.st_mode) if regular and old else 0o644, dir_fd=fd,
                owner=(owner.st_uid, owner.st_gid) if os.geteuid() == 0 else None,
                exclusive=new, only_if_changed=regular)
        except FileExistsError:
            raise BuildError(exists) from None
        except OSError as e:
            raise BuildError(f"{shown(path)}: cannot write: {e.strerror}") from None
    finally:
        os.close(fd)
