"""Archive writers: standard gzip from the parallel writer, same bytes on any core count."""

from __future__ import annotations

import gzip
import io
import os
import subprocess
import tarfile
import zlib

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from click_build.archive import (
    AR_MAGIC,
    GzipBlockWriter,
    TarWriter,
    read_ar_members,
    tar_header,
    write_ar_member,
)
from click_build.errors import ArchiveError


def _mixed(n_blocks: int) -> bytes:
    text = b"".join(b"line %d of some very ordinary text\n" % i for i in range(20000))
    parts = []
    for i in range(n_blocks):
        parts.append(os.urandom(70_000) if i % 3 == 0 else text[i * 1000:i * 1000 + 90_000])
    return b"".join(parts)


def _gz(data: bytes, threads: int, level: int = 9, chunk: int = 7777) -> bytes:
    out = io.BytesIO()
    gz = GzipBlockWriter(out, mtime=1234, level=level, threads=threads)
    for i in range(0, len(data), chunk):
        gz.write(data[i:i + chunk])
    gz.close()
    return out.getvalue()


@pytest.mark.parametrize("size", [0, 1, 100_000, 3_000_000])
def test_roundtrip_and_thread_independence(size: int) -> None:
    data = _mixed(size // 80_000 + 1)[:size]
    one = _gz(data, threads=1)
    four = _gz(data, threads=4, chunk=1 << 20)
    assert one == four
    assert gzip.decompress(one) == data
    assert one[4:8] == (1234).to_bytes(4, "little") and one[3] == 0  # mtime, no name
    proc = subprocess.run(["gzip", "-t"], input=one)
    assert proc.returncode == 0


def test_incompressible_files_are_stored_not_grown() -> None:
    """The tar writer probes big files; random data is stored, text deflated, one stream."""
    random_file = os.urandom(2_000_000)
    text_file = b"".join(b"text line %d\n" % i for i in range(200_000))
    outs = []
    for threads in (1, 3):
        out = io.BytesIO()
        gz = GzipBlockWriter(out, 0, threads=threads)
        tar = TarWriter(gz, gz)  # type: ignore[arg-type]
        tar.add_bytes("./random.bin", random_file, 0o644, 0)
        tar.add_bytes("./text.txt", text_file, 0o644, 0)
        tar.close()
        gz.close()
        outs.append(out.getvalue())
    assert outs[0] == outs[1]
    assert len(outs[0]) < len(random_file) * 1.001 + len(zlib.compress(text_file, 9)) * 1.02
    with tarfile.open(fileobj=io.BytesIO(outs[0])) as tar:
        assert tar.extractfile("./random.bin").read() == random_file  # type: ignore[union-attr]
    text = b"".join(b"%d: %s\n" % (i, str(i * i * 7919).encode() * 3) for i in range(100_000))
    assert len(_gz(text, threads=2)) < len(zlib.compress(text, 9)) * 1.01


def test_ar_roundtrip_and_refusals() -> None:
    buf = io.BytesIO()
    buf.write(AR_MAGIC)
    write_ar_member(buf, "debian-binary", b"2.0\n", 0)
    write_ar_member(buf, "odd", b"123", 0)
    raw = buf.getvalue()
    members = read_ar_members(io.BytesIO(raw), len(raw))
    assert [(m.name, m.size) for m in members] == [("debian-binary", 4), ("odd", 3)]
    with pytest.raises(ArchiveError):
        write_ar_member(io.BytesIO(), "a-name-that-is-too-long", b"", 0)
    bad = raw[:8] + b"x" * 60
    with pytest.raises(ArchiveError, match="corrupt"):
        read_ar_members(io.BytesIO(bad), len(bad))


names = st.text(st.characters(blacklist_categories=("Cs",), blacklist_characters="\0"),
                min_size=1, max_size=260)


@settings(max_examples=300, deadline=None)
@given(names, st.sampled_from([b"0", b"2", b"5"]), st.integers(0, 0o7777),
       st.integers(0, 2**40), st.integers(0, 2**34), names)
def test_tar_header_is_tarfiles(name: str, kind: bytes, mode: int, size: int, mtime: int,
                                link: str) -> None:
    """Our header writer gives exactly the bytes of tarfile's GNU format."""
    info = tarfile.TarInfo(name)
    info.type, info.mode, info.mtime = kind, mode, mtime
    info.size = size if kind == b"0" else 0
    info.linkname = link if kind == b"2" else ""
    info.uname = info.gname = "root"
    name = name + "/" if kind == b"5" and not name.endswith("/") else name
    ours = tar_header(name, kind, mode, info.size, mtime, info.linkname)
    assert ours == info.tobuf(tarfile.GNU_FORMAT, "utf-8", "surrogateescape")
