"""Which files of a project changed: Linux's inotify, through ctypes (no dependency).

Why inotify and not polling: the kernel says which file changed the moment it is
written, and an idle watch costs nothing; a poll must stat the whole tree every
interval, and is either slow to notice or costly.  The tree is bounded all the same
(:data:`MAX_FOLDERS`): one watch per folder, and the system's watch limit is shared.
Where no inotify instance can be had (the per-user limit reached, or no inotify),
:class:`Poller` looks at the files' times and sizes every :data:`POLL_SECONDS`
instead, for a tree bounded to :data:`MAX_FILES` entries, and says so.

The project may be someone else's, ``build/`` included (see :mod:`.state`), and it
may change while it is walked.  So the walk never follows a link: each folder is
opened relative to its parent's descriptor with ``O_NOFOLLOW``, and watched through
that descriptor (``/proc/self/fd/N``), so the folder watched is the one that was
opened, never one a link swapped in meanwhile points at.  Left out: ``build/``
(``run``'s own state and the build folders), the ``build-dir`` setting's folders,
``dist/``, folders whose name starts with a dot (``.git``, editors' folders),
``__pycache__``, ``*.egg-info`` and ``node_modules``; and the temporary files editors
write beside the one they save (``.name.swp``, ``name~``, ``#name#``, vim's ``4913``).
"""

from __future__ import annotations

import ctypes
import errno
import fnmatch
import os
import re
import select
import struct
import time
from collections.abc import Iterable, Iterator, Sequence

from ..errors import RunError

__all__ = ["MAX_FILES", "MAX_FOLDERS", "POLL_SECONDS", "NoInotify", "Poller", "Watcher",
           "describe", "is_editor_scratch", "skipped_folders", "watcher_for"]

#: Folders one watch may hold: a project beyond this is not an app's source.
MAX_FOLDERS = 10000
#: Files the fallback looks at every POLL_SECONDS (a stat each: about a millisecond
#: per thousand files).
MAX_FILES = 20000
POLL_SECONDS = 0.25

IN_MODIFY, IN_ATTRIB, IN_CLOSE_WRITE = 0x2, 0x4, 0x8
IN_MOVED_FROM, IN_MOVED_TO, IN_CREATE, IN_DELETE = 0x40, 0x80, 0x100, 0x200
IN_DELETE_SELF, IN_MOVE_SELF = 0x400, 0x800
IN_Q_OVERFLOW, IN_IGNORED, IN_ONLYDIR, IN_ISDIR = 0x4000, 0x8000, 0x01000000, 0x40000000
IN_NONBLOCK, IN_CLOEXEC = os.O_NONBLOCK, os.O_CLOEXEC
_MASK = (IN_ATTRIB | IN_CLOSE_WRITE | IN_MOVED_FROM | IN_MOVED_TO | IN_CREATE | IN_DELETE
         | IN_DELETE_SELF | IN_ONLYDIR)
_EVENT = struct.Struct("iIII")
_DIR_FLAGS = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC
_SKIPPED_NAMES = ("__pycache__", "node_modules", "*.egg-info")
_SCRATCH = re.compile(r"^(?:\..*|#.*#|.*~|49\d\d|.*\.(?:swp|swx|swo|kate-swp|tmp)"
                      r"|.*___jb_(?:tmp|old)___)$")


def is_editor_scratch(name: str) -> bool:
    """A file an editor writes beside the one it saves, or a hidden file."""
    return bool(_SCRATCH.match(name))


def skipped_folders(project: str) -> list[str]:
    """Patterns (from the project's top, ``/``-separated) of the folders not watched:
    those the build writes, whatever the ``build-dir`` setting says."""
    from ..backend.settings import load_project
    from ..build_folders import own_folder_patterns
    from ..errors import ClickError

    build_dir = ""
    try:
        build_dir = load_project(project, require_pyproject=False).settings.build_dir
    except (ClickError, OSError):
        pass  # a broken pyproject.toml is the build's to report
    return sorted({"build", "dist", *(p.lstrip("/") for p in own_folder_patterns(project,
                                                                                build_dir))})


class _Libc:
    def __init__(self) -> None:
        libc = ctypes.CDLL(None, use_errno=True)
        self.init1 = libc.inotify_init1
        self.init1.argtypes = [ctypes.c_int]
        self.add_watch = libc.inotify_add_watch
        self.add_watch.argtypes = [ctypes.c_int, ctypes.c_char_p, ctypes.c_uint32]
        self.rm_watch = libc.inotify_rm_watch
        self.rm_watch.argtypes = [ctypes.c_int, ctypes.c_int]


class _Tree:
    """The project's folders, walked without following a link, skipped ones left out."""

    def __init__(self, root: str, skipped: Sequence[str]) -> None:
        self.root = os.path.abspath(root)
        self.skipped = list(skipped)
        try:
            self._root_fd = os.open(self.root, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
        except OSError as e:
            raise RunError(f"cannot watch {self.root}: {e.strerror}") from None
        self.fd: int | None = None  # what select() waits on (None: poll every interval)
        self.interval: float | None = None

    def close(self) -> None:
        for fd in (self.fd, self._root_fd):
            if fd is not None:
                try:
                    os.close(fd)
                except OSError:
                    pass

    def __enter__(self) -> _Tree:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def skips(self, rel: str) -> bool:
        name = rel.rsplit("/", 1)[-1]
        return (name.startswith(".") or any(fnmatch.fnmatchcase(name, p) for p in _SKIPPED_NAMES)
                or any(fnmatch.fnmatchcase(rel, p) for p in self.skipped))

    def _open(self, rel: str) -> int | None:
        """A descriptor of the folder ``rel``, each step without following a link (None
        if it is gone, or is a link or a file now)."""
        fd = os.dup(self._root_fd)
        for part in rel.split("/") if rel else []:
            try:
                child = os.open(part, _DIR_FLAGS, dir_fd=fd)
            except OSError:
                os.close(fd)
                return None
            os.close(fd)
            fd = child
        return fd

    def walk(self, top: str = "") -> Iterator[tuple[str, int, list[os.DirEntry[str]]]]:
        """(folder, its descriptor, its entries) for ``top`` and every folder below."""
        pending = [top]
        while pending:
            rel = pending.pop()
            fd = self._open(rel)
            if fd is None:
                continue
            try:
                try:
                    with os.scandir(fd) as listing:
                        entries = list(listing)
                except OSError:
                    continue  # gone meanwhile
                yield rel, fd, entries
                for entry in entries:
                    child = f"{rel}/{entry.name}" if rel else entry.name
                    if entry.is_dir(follow_symlinks=False) and not self.skips(child):
                        pending.append(child)
            finally:
                os.close(fd)

    def changes(self, quiet: float = 0.05, at_most: float = 1.0) -> list[str]:
        raise NotImplementedError


class Watcher(_Tree):
    """The changed files (paths from the project's top) of ``root``, as they are saved:
    select() on :attr:`fd`, then :meth:`changes`."""

    def __init__(self, root: str, skipped: Sequence[str] = ()) -> None:
        super().__init__(root, skipped)
        try:
            self._libc = _Libc()
        except (OSError, AttributeError):
            self.close()
            raise NoInotify("this system has no inotify") from None
        fd = self._libc.init1(IN_NONBLOCK | IN_CLOEXEC)
        if fd < 0:
            code = ctypes.get_errno()
            self.close()
            if code == errno.EMFILE:
                raise NoInotify("no inotify instance is left (the per-user limit, "
                                "fs.inotify.max_user_instances, is reached)")
            raise NoInotify(f"inotify: {os.strerror(code)}")
        self.fd = int(fd)
        self.folders: dict[int, str] = {}  # watch descriptor -> folder ("" the top)
        self._made: set[str] = set()
        try:
            self._add_tree("")
        except BaseException:
            self.close()
            raise

    def _add_tree(self, top: str) -> None:
        for rel, fd, _ in self.walk(top):
            self._watch(fd, rel)

    def _watch(self, fd: int, rel: str) -> None:
        if len(self.folders) >= MAX_FOLDERS:
            raise RunError(f"{self.root} holds more than {MAX_FOLDERS} folders to watch "
                           "(build/, dist/ and hidden folders left out): watch the app's "
                           "own folder")
        assert self.fd is not None
        wd = self._libc.add_watch(self.fd, f"/proc/self/fd/{fd}".encode(), _MASK)
        if wd < 0:
            code = ctypes.get_errno()
            if code == errno.ENOSPC:
                raise RunError(
                    f"cannot watch {os.path.join(self.root, rel)}: the system's limit of "
                    "inotify watches is reached (other programs hold them): raise it, e.g. "
                    "sudo sysctl fs.inotify.max_user_watches=524288")
            if code in (errno.ENOENT, errno.ENOTDIR):
                return  # gone meanwhile
            raise RunError(f"cannot watch {os.path.join(self.root, rel)}: {os.strerror(code)}")
        self.folders[wd] = rel

    def _forget_tree(self, top: str) -> None:
        """Stop watching ``top`` and the folders in it (moved away, maybe out of the
        project: a folder moved within comes back through its new name)."""
        for wd, rel in list(self.folders.items()):
            if rel == top or rel.startswith(top + "/"):
                del self.folders[wd]
                assert self.fd is not None
                self._libc.rm_watch(self.fd, wd)

    def _read(self, changed: set[str]) -> bool:
        """Add the paths the events waiting now name to ``changed``; whether events were
        lost (the kernel's queue overflowed)."""
        assert self.fd is not None
        overflow = False
        while True:
            try:
                data = os.read(self.fd, 65536)
            except BlockingIOError:
                return overflow
            offset = 0
            while offset + _EVENT.size <= len(data):
                wd, mask, _cookie, length = _EVENT.unpack_from(data, offset)
                offset += _EVENT.size
                name = os.fsdecode(data[offset:offset + length].rstrip(b"\0"))
                offset += length
                if mask & IN_Q_OVERFLOW:
                    overflow = True
                    continue
                folder = self.folders.get(wd)
                if folder is None:
                    continue
                if mask & IN_IGNORED:
                    del self.folders[wd]
                    continue
                if not name:
                    continue  # the folder itself: its parent reports it
                rel = f"{folder}/{name}" if folder else name
                if mask & IN_ISDIR:
                    if self.skips(rel) or not mask & (IN_CREATE | IN_MOVED_TO
                                                      | IN_MOVED_FROM | IN_DELETE):
                        continue
                    if mask & IN_MOVED_FROM:
                        self._forget_tree(rel)
                    if mask & (IN_CREATE | IN_MOVED_TO):
                        self._add_tree(rel)
                    changed.add(rel + "/")
                elif not is_editor_scratch(name):
                    if mask & IN_CREATE:
                        self._made.add(rel)
                    if mask & (IN_MOVED_FROM | IN_DELETE) and rel in self._made:
                        # made and gone in one save: sed -i's and some editors' scratch file
                        self._made.discard(rel)
                        changed.discard(rel)
                    else:
                        changed.add(rel)

    def changes(self, quiet: float = 0.03, at_most: float = 1.0) -> list[str]:
        """The files changed since the last call, once none has changed for ``quiet``
        seconds (an editor's save is several events) or after ``at_most``; ``[]`` when
        only scratch files moved.  After a lost event queue, every folder is walked
        again and ``["*"]`` stands for "anything"."""
        assert self.fd is not None
        self._made = set()  # files made in this save
        changed: set[str] = set()
        overflow = self._read(changed)
        deadline = time.monotonic() + at_most
        while True:
            left = min(quiet, deadline - time.monotonic())
            if left <= 0 or not select.select([self.fd], [], [], left)[0]:
                break
            overflow |= self._read(changed)
        if overflow:
            self.folders.clear()
            self._add_tree("")
            return ["*"]
        return sorted(changed)


class NoInotify(Exception):
    """inotify cannot be had here (the reason is the message)."""


class Poller(_Tree):
    """The same answers as :class:`Watcher`, from the files' times and sizes, looked at
    every :attr:`interval` seconds (call :meth:`changes` then)."""

    def __init__(self, root: str, skipped: Sequence[str] = ()) -> None:
        super().__init__(root, skipped)
        self.interval = POLL_SECONDS
        self._seen = self._snapshot()

    def _snapshot(self) -> dict[str, tuple[int, int, int, int]]:
        seen: dict[str, tuple[int, int, int, int]] = {}
        for rel, _, entries in self.walk():
            for entry in entries:
                child = f"{rel}/{entry.name}" if rel else entry.name
                if is_editor_scratch(entry.name) or self.skips(child):
                    continue
                try:
                    st = entry.stat(follow_symlinks=False)
                except OSError:
                    continue
                if len(seen) >= MAX_FILES:
                    raise RunError(f"{self.root} holds more than {MAX_FILES} files to look "
                                   "at (build/, dist/ and hidden folders left out): watch "
                                   "the app's own folder")
                # A folder counts by being there: its time moves with every save in it.
                folder = entry.is_dir(follow_symlinks=False)
                key = child + "/" if folder else child
                seen[key] = (0, 0, st.st_ino, st.st_mode) if folder else (
                    st.st_mtime_ns, st.st_size, st.st_ino, st.st_mode)
        return seen

    def changes(self, quiet: float = 0.05, at_most: float = 1.0) -> list[str]:
        """The paths whose time, size, inode or mode changed since the last look (a new
        look after ``quiet`` until two agree, within ``at_most``: a save in progress)."""
        now = self._snapshot()
        changed = {p for p in now.keys() | self._seen.keys() if now.get(p) != self._seen.get(p)}
        deadline = time.monotonic() + at_most
        while changed and time.monotonic() < deadline:
            time.sleep(quiet)
            later = self._snapshot()
            if later == now:
                break
            changed |= {p for p in now.keys() | later.keys() if now.get(p) != later.get(p)}
            now = later
        self._seen = now
        return sorted(changed)


def watcher_for(root: str, skipped: Sequence[str] = ()) -> _Tree:
    """A :class:`Watcher`, or a :class:`Poller` (said with a warning) where inotify
    cannot be had."""
    from .. import _console

    try:
        return Watcher(root, skipped)
    except NoInotify as e:
        _console.warn(f"{e}: looking at the project's files every {POLL_SECONDS:g} s instead")
        return Poller(root, skipped)


def describe(paths: Iterable[str]) -> str:
    """``qml/Main.qml``, ``a and b``, ``a and 3 more``: what changed, for one line."""
    names = list(paths)
    if names == ["*"]:
        return "many files"
    if len(names) <= 2:
        return " and ".join(names)
    return f"{names[0]} and {len(names) - 1} more"
