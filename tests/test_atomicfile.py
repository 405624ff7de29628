"""The one atomic writer: a file appears whole under its name, or not at all."""

from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest

from click_build.atomicfile import AtomicFile, new_file_mode, write_file


def _names(folder: Path) -> list[str]:
    return sorted(os.listdir(folder))


def test_the_name_appears_only_when_published(tmp_path: Path) -> None:
    target = tmp_path / "out.click"
    with AtomicFile(target, 0o640) as out:
        out.file.write(b"part")
        (hidden,) = _names(tmp_path)
        assert hidden.startswith(".out.click.") and hidden.endswith(".tmp")
        assert not target.exists()
        out.publish()
    assert _names(tmp_path) == ["out.click"]
    assert target.read_bytes() == b"part"
    assert stat.S_IMODE(target.stat().st_mode) == 0o640


def test_an_error_or_no_publish_leaves_nothing(tmp_path: Path) -> None:
    (tmp_path / "keep").write_bytes(b"old")
    with pytest.raises(RuntimeError), AtomicFile(tmp_path / "keep") as out:
        out.file.write(b"new")
        raise RuntimeError("stopped")
    with AtomicFile(tmp_path / "keep") as out:
        out.file.write(b"unwanted")
    assert _names(tmp_path) == ["keep"]
    assert (tmp_path / "keep").read_bytes() == b"old"


def test_a_failing_check_sees_the_complete_file_and_leaves_nothing(tmp_path: Path) -> None:
    seen = []

    def check(path: str) -> None:
        seen.append(Path(path).read_bytes())
        raise ValueError("review failed")

    with pytest.raises(ValueError), AtomicFile(tmp_path / "pkg") as out:
        out.file.write(b"whole")
        out.publish(check)
    assert seen == [b"whole"]
    assert _names(tmp_path) == []


def test_a_link_in_the_way_is_replaced_never_written_through(tmp_path: Path) -> None:
    victim = tmp_path / "victim"
    victim.write_bytes(b"secret")
    (tmp_path / "dir").mkdir()
    (tmp_path / "dir" / "f").symlink_to(victim)
    assert write_file(tmp_path / "dir" / "f", b"secret", only_if_changed=True)
    assert not (tmp_path / "dir" / "f").is_symlink()
    assert victim.read_bytes() == b"secret"


def test_exclusive_refuses_any_name_there_a_dangling_link_too(tmp_path: Path) -> None:
    (tmp_path / "new.po").symlink_to(tmp_path / "nowhere")
    with pytest.raises(FileExistsError):
        write_file(tmp_path / "new.po", b"x", exclusive=True)
    assert _names(tmp_path) == ["new.po"] and not (tmp_path / "nowhere").exists()
    assert write_file(tmp_path / "other.po", b"x", exclusive=True)


def test_an_unchanged_file_keeps_its_time(tmp_path: Path) -> None:
    path = tmp_path / "gen.cmake"
    assert write_file(path, b"set(A 1)\n", only_if_changed=True)
    os.utime(path, (1, 1))
    assert not write_file(path, b"set(A 1)\n", only_if_changed=True)
    assert path.stat().st_mtime == 1
    assert write_file(path, b"set(A 2)\n", only_if_changed=True)
    assert path.read_bytes() == b"set(A 2)\n"
    assert stat.S_IMODE(path.stat().st_mode) == new_file_mode()


def test_relative_to_an_open_folder(tmp_path: Path) -> None:
    fd = os.open(tmp_path, os.O_RDONLY | os.O_DIRECTORY)
    try:
        assert write_file("catalog.po", b"msgid", 0o600, dir_fd=fd)
    finally:
        os.close(fd)
    assert (tmp_path / "catalog.po").read_bytes() == b"msgid"
    assert stat.S_IMODE((tmp_path / "catalog.po").stat().st_mode) == 0o600
