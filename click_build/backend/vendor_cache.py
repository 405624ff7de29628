"""The cache of vendored Python dependencies: pip downloads them once.

A python app's ``[project].dependencies`` are installed by pip for the device (its
Python, its architecture's wheels: :func:`click_build.backend.pysetup.pip_command`).
The tree pip makes is kept in ``~/.cache/click-build/python/KEY/`` (``$XDG_CACHE_HOME``;
``CLICK_BUILD_PYTHON_CACHE`` names another folder), where KEY is a hash of what pip was
asked: the requirements as written, the device's Python, the platforms of the
architecture. A rebuild copies the tree from there without pip, so it works with no
package index reachable. The cache does not notice a new release of a dependency that
is not pinned, nor another index: remove the folder to download afresh.

The cache is someone else's input until proven otherwise:
- the cache folder must be a real folder (not a link), the user's own, that nobody
  else may write to; otherwise it is not used (a warning says why);
- an entry is written into a fresh temporary folder beside it and renamed into place
  in one step, so a reader sees all of it or nothing (a build killed meanwhile leaves
  only a ``.new-*`` folder, never read);
- every file is read through folder descriptors opened without following links, must
  be a regular file, and is hashed as it is copied: a file whose SHA-256 or size differs
  from the entry's list, a link or a missing file makes the entry void (removed, with a
  warning) and pip runs as if nothing were cached.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import stat
import tempfile
from pathlib import Path

from .. import _console

__all__ = ["VendorCache", "cache_home", "entry_key", "open_cache"]

#: Bumped when the layout of an entry changes: older entries are then never read.
FORMAT = 1
_LIST = "files.json"
_TREE = "tree"
_DIR_FLAGS = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC
_FILE_FLAGS = os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC | os.O_NONBLOCK
_CHUNK = 1 << 20


def cache_home(environ: os._Environ[str] | dict[str, str] = os.environ) -> Path:
    named = environ.get("CLICK_BUILD_PYTHON_CACHE")
    if named:
        return Path(named).expanduser().absolute()
    base = environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base, "click-build", "python").absolute()


def entry_key(request: list[str]) -> str:
    """The entry of a pip request: its arguments, less where pip writes."""
    text = json.dumps({"format": FORMAT, "pip": request}, sort_keys=True)
    return hashlib.sha256(text.encode()).hexdigest()[:32]


class _Void(Exception):
    """An entry that is not what its list says."""


def _safe_name(part: str) -> bool:
    return part not in ("", ".", "..") and "/" not in part and "\0" not in part


def _parts(path: object) -> list[str]:
    if not isinstance(path, str):
        raise _Void(f"a path in {_LIST} is not text")
    parts = path.split("/")
    if not all(_safe_name(p) for p in parts):
        raise _Void(f"{path!r} in {_LIST} leaves the entry")
    return parts


class VendorCache:
    """The cache folder, checked; :meth:`fetch` and :meth:`store` one entry each."""

    def __init__(self, root: Path) -> None:
        self.root = root

    def entry(self, key: str) -> Path:
        return self.root / key

    def fetch(self, key: str, target: Path) -> bool:
        """Copy entry ``key`` into the empty folder ``target``, checking every file;
        False when there is none, or it was void (then it is removed, and what was
        copied stays in ``target`` for the caller to clean)."""
        try:
            root_fd = os.open(self.root, _DIR_FLAGS)
        except OSError:
            return False
        try:
            try:
                entry_fd = os.open(key, _DIR_FLAGS, dir_fd=root_fd)
            except FileNotFoundError:
                return False
            except OSError as e:  # a link or a file where the entry should be
                raise _Void(e.strerror) from None
            try:
                _copy_entry(entry_fd, target)
            finally:
                os.close(entry_fd)
            return True
        except _Void as void:
            _console.warn(f"{self.entry(key)}: the cached dependencies are void ({void}); "
                          "removed, pip installs them again")
            self._remove(root_fd, key)
            return False
        finally:
            os.close(root_fd)

    def store(self, key: str, tree: Path, request: list[str]) -> None:
        """Keep a copy of ``tree`` (what pip installed) as entry ``key``. A tree with
        anything but folders and regular files is not kept; neither is an entry another
        build stored first."""
        files: list[dict[str, object]] = []
        dirs: list[str] = []
        for folder, subdirs, names in os.walk(tree):
            rel = os.path.relpath(folder, tree).replace(os.sep, "/")
            prefix = "" if rel == "." else rel + "/"
            for name in subdirs:
                if os.path.islink(os.path.join(folder, name)):
                    return
                dirs.append(prefix + name)
            for name in names:
                st = os.lstat(os.path.join(folder, name))
                if not stat.S_ISREG(st.st_mode):
                    return
                files.append({"path": prefix + name, "size": st.st_size,
                              "exec": bool(st.st_mode & 0o111)})
        try:
            new = Path(tempfile.mkdtemp(prefix=".new-", dir=self.root))
        except OSError:
            return
        try:
            for folder in dirs:
                (new / _TREE / folder).mkdir(parents=True, exist_ok=True)
            (new / _TREE).mkdir(exist_ok=True)
            for item in files:
                digest = hashlib.sha256()
                with open(tree / str(item["path"]), "rb") as src, \
                        open(new / _TREE / str(item["path"]), "xb") as dst:
                    while chunk := src.read(_CHUNK):
                        digest.update(chunk)
                        dst.write(chunk)
                item["sha256"] = digest.hexdigest()
            listing = {"format": FORMAT, "pip": request, "dirs": dirs, "files": files}
            (new / _LIST).write_text(json.dumps(listing, indent=1), encoding="utf-8")
            os.rename(new, self.entry(key))  # a folder there already: OSError, kept as is
        except OSError:
            pass
        finally:
            if new.exists():
                shutil.rmtree(new, ignore_errors=True)

    def _remove(self, root_fd: int, key: str) -> None:
        """Take a void entry out of the way at once (a rename), then delete it."""
        aside = f".void-{key}-{os.getpid()}"
        try:
            os.rename(key, aside, src_dir_fd=root_fd, dst_dir_fd=root_fd)
        except OSError:
            return
        try:
            if stat.S_ISDIR(os.lstat(aside, dir_fd=root_fd).st_mode):
                shutil.rmtree(self.root / aside)  # follows no link inside
            else:
                os.unlink(aside, dir_fd=root_fd)
        except OSError:
            pass


def open_cache() -> VendorCache | None:
    """The cache folder, made if missing; None (with a warning) when it is not safe to
    use: a link, another user's, or writable by others."""
    root = cache_home()
    try:
        root.mkdir(mode=0o700, parents=True, exist_ok=True)
        fd = os.open(root, _DIR_FLAGS)
    except OSError as e:
        why = "it is a link" if os.path.islink(root) else e.strerror  # O_NOFOLLOW met one
        _console.warn(f"{root}: not used as the cache of Python dependencies ({why})")
        return None
    try:
        st = os.fstat(fd)
    finally:
        os.close(fd)
    if st.st_uid != os.geteuid():
        why = f"it belongs to user id {st.st_uid}"
    elif st.st_mode & 0o022:
        why = "others may write to it"
    else:
        return VendorCache(root)
    _console.warn(f"{root}: not used as the cache of Python dependencies ({why})")
    return None


def _copy_entry(entry_fd: int, target: Path) -> None:
    try:
        listing = json.loads(_read_all(entry_fd, _LIST))
    except ValueError:
        listing = None
    if not (isinstance(listing, dict) and listing.get("format") == FORMAT
            and isinstance(listing.get("files"), list) and isinstance(listing.get("dirs"), list)):
        raise _Void(f"{_LIST} is not an entry's list")
    for folder in listing["dirs"]:
        target.joinpath(*_parts(folder)).mkdir(parents=True, exist_ok=True)
    folders: dict[tuple[str, ...], int] = {(): _open_dir(entry_fd, _TREE)}

    def opened(path: tuple[str, ...]) -> int:  # each folder once, never through a link
        if path not in folders:
            folders[path] = _open_dir(opened(path[:-1]), path[-1])
        return folders[path]

    try:
        for item in listing["files"]:
            if not (isinstance(item, dict) and isinstance(item.get("size"), int)
                    and isinstance(item.get("sha256"), str)):
                raise _Void(f"{_LIST} is not an entry's list")
            parts = _parts(item.get("path"))
            dest = target.joinpath(*parts)
            dest.parent.mkdir(parents=True, exist_ok=True)
            _copy_checked(opened(tuple(parts[:-1])), parts[-1], dest, item["size"],
                          item["sha256"])
            if item.get("exec"):
                dest.chmod(0o755)
    finally:
        for fd in folders.values():
            os.close(fd)


def _open_dir(parent_fd: int, name: str) -> int:
    try:
        return os.open(name, _DIR_FLAGS, dir_fd=parent_fd)
    except OSError as e:
        raise _Void(f"{name}: {e.strerror}") from None


def _read_all(parent_fd: int, name: str) -> bytes:
    try:
        fd = os.open(name, _FILE_FLAGS, dir_fd=parent_fd)
    except OSError as e:
        raise _Void(f"{name}: {e.strerror}") from None
    with os.fdopen(fd, "rb") as f:
        if not stat.S_ISREG(os.fstat(f.fileno()).st_mode):
            raise _Void(f"{name} is not a file")
        data = f.read(64 << 20)
    return data


def _copy_checked(parent_fd: int, name: str, dest: Path, size: int, sha256: str) -> None:
    try:
        fd = os.open(name, _FILE_FLAGS, dir_fd=parent_fd)
    except OSError as e:
        raise _Void(f"{name}: {e.strerror}") from None
    digest = hashlib.sha256()
    copied = 0
    with os.fdopen(fd, "rb") as src:
        if not stat.S_ISREG(os.fstat(src.fileno()).st_mode):
            raise _Void(f"{name} is not a file")
        with open(dest, "xb") as dst:
            while chunk := src.read(_CHUNK):
                digest.update(chunk)
                copied += len(chunk)
                if copied > size:
                    break
                dst.write(chunk)
    if copied != size or digest.hexdigest() != sha256:
        raise _Void(f"{dest.name} is not the file that was stored")
