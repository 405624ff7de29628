"""The folders ``run`` and ``device run`` keep their state in, and why they can trust them.

A project folder may come from anyone (a clone, a tarball), ``build/`` included, and
``build/`` is what a code review of the tracked files never shows.  So nothing found
there is followed or used unless ``run`` made it:

- ``build`` and ``build/click-run`` (``build/click-device``) are opened one at a time
  with ``O_NOFOLLOW`` relative to the folder above: a link there is refused, never
  followed, and so is a folder that belongs to another user (who could swap it).
- The state folder carries a mark only ``run`` can write: an HMAC of the folder's inode
  number with a key of the user's own (``$XDG_STATE_HOME/click-build/run-key``, made
  once, readable by the user alone).  A project cannot ship a valid mark, since it
  cannot know the key; a copy of a state folder has another inode; a moved one keeps
  its mark.  A state folder without a valid mark is used only if it is empty, so a
  shipped database, hook file or QML cache is never read.
- The folders inside (``db``, ``xdg/...``) are opened the same way, and the private
  runtime folder is chmodded through its descriptor, never through a name.
"""

from __future__ import annotations

import errno
import hashlib
import hmac
import os
import secrets
import shlex
import stat
from collections.abc import Iterator, Sequence
from contextlib import contextmanager

from ..errors import RunError

__all__ = ["MARK", "claim_state_folder", "folder_fd_inside", "folder_inside", "walk_folders"]

#: The mark file in a state folder ``run`` made.
MARK = ".click-run-mark"
_MARK_TEXT = ("click-build run made this folder for its private Click database and the "
              "app's data; delete the folder to start afresh.\n")
_KEY_BYTES = 32
_DIR_FLAGS = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC


def _user(uid: int) -> str:
    import pwd

    try:
        return pwd.getpwuid(uid).pw_name
    except KeyError:
        return f"uid {uid}"


def _step(parent: int, name: str, shown: str, mode: int = 0o755) -> int:
    """The folder ``name`` in ``parent`` (made if missing), opened without following a link."""
    for _ in range(3):  # made between our look and our mkdir (another run): look again
        try:
            fd = os.open(name, _DIR_FLAGS, dir_fd=parent)
            break
        except FileNotFoundError:
            try:
                os.mkdir(name, mode, dir_fd=parent)
            except FileExistsError:
                pass
            except OSError as e:
                raise RunError(f"cannot make {shown}: {e.strerror}") from None
        except OSError as e:
            raise _refusal(shown, e) from None
    else:
        raise RunError(f"cannot open {shown}: it keeps changing")
    st = os.fstat(fd)
    if st.st_uid not in (os.geteuid(), 0):
        os.close(fd)
        raise RunError(f"{shown} belongs to {_user(st.st_uid)}, not to you "
                       f"({_user(os.geteuid())}): click-build keeps its state only in "
                       "folders of your own (or root's)")
    return fd


def _refusal(shown: str, e: OSError) -> RunError:
    if e.errno in (errno.ELOOP, errno.ENOTDIR):
        return RunError(f"{shown} is a symbolic link or not a folder: click-build does not "
                        "follow links in its own folders (a project may ship them to make it "
                        f"write elsewhere); remove it: rm {shlex.quote(shown)}")
    return RunError(f"cannot open {shown}: {e.strerror}")


@contextmanager
def _opened(path: str) -> Iterator[int]:
    try:
        fd = os.open(path, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
    except OSError as e:
        raise RunError(f"cannot open {path}: {e.strerror}") from None
    try:
        yield fd
    finally:
        os.close(fd)


@contextmanager
def _walked(top: str, parts: Sequence[str], mode: int = 0o755) -> Iterator[int]:
    """A descriptor of ``top/parts...``: ``top`` as given, each part without links."""
    with _opened(top) as fd:
        current, shown = fd, top
        try:
            for part in parts:
                shown = os.path.join(shown, part)
                following = _step(current, part, shown, mode)
                if current != fd:
                    os.close(current)
                current = following
            yield current
        finally:
            if current != fd:
                os.close(current)


def walk_folders(top: str, parts: Sequence[str]) -> str:
    """``top/parts...``, each part made where missing and none of them a link or another
    user's folder (``device run``'s ``build/click-device``)."""
    with _walked(top, parts):
        return os.path.join(top, *parts)


def folder_inside(state: str, *parts: str, private: bool = False) -> str:
    """A folder in a claimed state folder, walked the same way; ``private``: mode 0700,
    set through its descriptor (Qt refuses a runtime folder others can read)."""
    path = os.path.join(state, *parts)
    with _walked(state, parts, 0o700 if private else 0o755) as fd:
        if private:
            try:
                os.fchmod(fd, 0o700)
            except OSError as e:
                raise RunError(f"cannot make {path} private: {e.strerror}") from None
        return path


@contextmanager
def folder_fd_inside(state: str, *parts: str) -> Iterator[int]:
    """A descriptor of a folder in a claimed state folder (made where missing), walked as
    :func:`folder_inside` walks: for writing a file there by descriptor, never by a path
    someone could swap meanwhile."""
    with _walked(state, parts) as fd:
        yield fd


# --- the mark ----------------------------------------------------------------------------

def _key_path() -> str:
    base = os.environ.get("XDG_STATE_HOME") or os.path.join(os.path.expanduser("~"), ".local",
                                                            "state")
    return os.path.join(base, "click-build", "run-key")


def _read_key(path: str) -> bytes | None:
    try:
        with open(path, "rb") as f:
            raw = f.read(4 * _KEY_BYTES)
    except FileNotFoundError:
        return None
    try:
        key = bytes.fromhex(raw.decode("ascii").strip())
    except ValueError:
        key = b""
    if len(key) != _KEY_BYTES:
        raise RunError(f"{path} is not a key click-build made: delete it (folders click-build "
                       "run made before must then be deleted too)")
    return key


def _key() -> bytes:
    """The user's secret for marks: read, or made once (published with link(), so two
    runs starting at once agree on one key)."""
    path = _key_path()
    try:
        key = _read_key(path)
        if key is not None:
            return key
        os.makedirs(os.path.dirname(path), 0o700, exist_ok=True)
        scratch = f"{path}.{secrets.token_hex(8)}"
        fd = os.open(scratch, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW
                     | os.O_CLOEXEC, 0o600)
        try:
            with os.fdopen(fd, "w") as f:
                f.write(secrets.token_hex(_KEY_BYTES) + "\n")
            try:
                os.link(scratch, path)
            except FileExistsError:
                pass  # another run made it first: theirs is the key
        finally:
            os.unlink(scratch)
        key = _read_key(path)
    except OSError as e:
        raise RunError(f"cannot keep click-build run's key in {path}: {e.strerror} (set "
                       "XDG_STATE_HOME to a folder of yours)") from None
    if key is None:
        raise RunError(f"cannot keep click-build run's key in {path}: it vanished")
    return key


def _mark_for(fd: int, key: bytes) -> str:
    inode = os.fstat(fd).st_ino
    return hmac.new(key, f"click-build run state folder, inode {inode}".encode(),
                    hashlib.sha256).hexdigest()


def _has_mark(fd: int, key: bytes) -> bool:
    try:
        mark = os.open(MARK, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC,
                       dir_fd=fd)
    except OSError:
        return False
    with os.fdopen(mark, "rb") as f:
        if not stat.S_ISREG(os.fstat(f.fileno()).st_mode):
            return False
        text = f.read(4096).decode("utf-8", "replace")
    lines = text.splitlines()
    return bool(lines) and hmac.compare_digest(lines[-1], _mark_for(fd, key))


def _write_mark(fd: int, key: bytes) -> None:
    """Publish the mark whole (written aside, then linked): a run starting at the same
    moment reads it complete or not at all."""
    scratch = f"{MARK}.{secrets.token_hex(8)}"
    made = os.open(scratch, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW
                   | os.O_CLOEXEC, 0o644, dir_fd=fd)
    try:
        with os.fdopen(made, "w") as f:
            f.write(_MARK_TEXT + _mark_for(fd, key) + "\n")
        try:
            os.link(scratch, MARK, src_dir_fd=fd, dst_dir_fd=fd)
        except FileExistsError:
            pass  # another run marked it a moment ago; the caller looks again
    finally:
        os.unlink(scratch, dir_fd=fd)


def claim_state_folder(path: str, project: str | None = None) -> str:
    """``path``, a state folder ``run`` made (or an empty one, which it marks), or a refusal.

    With ``project``, ``path`` is inside it and each folder below ``project`` is opened
    without following links; without, ``path`` is the user's own choice (``--root``,
    the cache) and its parent is made as given.
    """
    path = os.path.abspath(path)
    if project is not None:
        top = os.path.abspath(project)
        parts = os.path.relpath(path, top).split(os.sep)
    else:
        top, name = os.path.split(path)
        parts = [name]
        try:
            os.makedirs(top, 0o755, exist_ok=True)
        except OSError as e:
            raise RunError(f"cannot make {top}: {e.strerror}") from None
    key = _key()
    with _walked(top, parts) as fd:
        st = os.fstat(fd)
        if st.st_uid != os.geteuid():
            raise RunError(f"{path} belongs to {_user(st.st_uid)}, not to you "
                           f"({_user(os.geteuid())}): click-build run keeps its state only in "
                           "a folder of your own; give --root DIR")
        for _ in range(2):
            if _has_mark(fd, key):
                return path
            if any(not name.startswith(MARK) for name in os.listdir(fd)):
                break  # not empty (a mark being written by another run aside)
            try:
                _write_mark(fd, key)
            except OSError as e:
                raise RunError(f"cannot mark {path} as click-build run's: {e.strerror}") from None
    raise RunError(f"{path} holds files click-build run did not make for you (no valid "
                   f"{MARK}: shipped with the project, copied, or left by an older "
                   f"click-build), so it is not used: delete it to start afresh: "
                   f"rm -r {shlex.quote(path)}")
