"""The package file as an attacker hands it over: not a file, or changing under us."""

from __future__ import annotations

import os
import socket
import threading
from pathlib import Path

import pytest
from deadlines import seconds

from click_build.errors import PackageError
from click_build.pkgfile import open_regular, private_copy


def test_fifo_is_refused_without_blocking(tmp_path: Path) -> None:
    fifo = tmp_path / "pkg.click"
    os.mkfifo(fifo)
    done = threading.Event()
    outcome: list[str] = []

    def attempt() -> None:
        try:
            open_regular(fifo)
        except PackageError as e:
            outcome.append(str(e))
        done.set()

    threading.Thread(target=attempt, daemon=True).start()
    assert done.wait(seconds(5)), "opening a FIFO with no writer blocked"
    assert outcome == [f"{fifo}: is a FIFO; a package must be a regular file"]


@pytest.mark.parametrize("kind", ["directory", "socket", "device"])
def test_other_non_regular_paths_are_refused(tmp_path: Path, kind: str) -> None:
    if kind == "directory":
        path = tmp_path / "dir.click"
        path.mkdir()
        expected = "is a directory"
    elif kind == "socket":
        path = tmp_path / "s.click"
        with socket.socket(socket.AF_UNIX) as sock:
            sock.bind(str(path))
        expected = "is a socket"
    else:
        path = Path("/dev/null")
        expected = "is a character device"
    with pytest.raises(PackageError, match=expected):
        open_regular(path)
    with pytest.raises(PackageError, match=expected):
        private_copy(path)


def test_private_copy_does_not_change_when_the_original_does(tmp_path: Path) -> None:
    original = tmp_path / "pkg.click"
    content = b"!<arch>\n" + os.urandom(3 << 20)  # larger than one read
    original.write_bytes(content)
    with private_copy(original) as copy:
        assert copy.name == str(original)
        with open(original, "r+b") as f:  # rewritten in place, then truncated
            f.write(b"X" * 1024)
            f.truncate(10)
        original.unlink()
        assert copy.read() == content
        copy.seek(5)
        assert copy.read(3) == content[5:8]


def test_private_copy_has_no_name_in_the_file_system(tmp_path: Path) -> None:
    original = tmp_path / "pkg.click"
    original.write_bytes(b"!<arch>\n")
    scratch = tmp_path / "scratch"
    scratch.mkdir()
    with private_copy(original, str(scratch)) as copy:
        assert list(scratch.iterdir()) == []
        assert os.fstat(copy.fileno()).st_nlink == 0
        assert os.fstat(copy.fileno()).st_mode & 0o777 == 0o600


def test_a_sparse_file_is_refused_before_it_is_copied(tmp_path: Path) -> None:
    """A terabyte of nothing costs its owner no disk: refused by its first bytes, and
    a sparse file that does start like a package, by its size against the free space,
    both before one byte is written."""
    scratch = tmp_path / "scratch"
    scratch.mkdir()
    hollow = tmp_path / "hollow.click"
    with open(hollow, "wb") as f:
        f.truncate(1 << 40)
    with pytest.raises(PackageError, match="not a Click package: it does not start with an ar"):
        private_copy(hollow, str(scratch))
    st = os.statvfs(scratch)
    free = st.f_bavail * st.f_frsize
    with open(hollow, "r+b") as f:
        f.write(b"!<arch>\n")
        f.truncate(free + (1 << 30))
    used = st.f_blocks - st.f_bfree
    with pytest.raises(PackageError, match=r"bytes, and the copy that is checked and unpacked "
                                           r"needs that much room: only \d+ bytes are free"):
        private_copy(hollow, str(scratch))
    after = os.statvfs(scratch)
    assert (after.f_blocks - after.f_bfree - used) * after.f_frsize < 64 << 20  # nothing copied


def test_missing_file_is_one_clear_error(tmp_path: Path) -> None:
    with pytest.raises(PackageError, match="cannot open: No such file or directory"):
        private_copy(tmp_path / "absent.click")


def test_open_regular_names_the_path(tmp_path: Path) -> None:
    """Messages about the open package name its path, not its descriptor."""
    path = tmp_path / "pkg.click"
    path.write_bytes(b"!<arch>\n")
    with open_regular(path) as f:
        assert f.name == str(path)
