"""Archive writers: standard gzip from the parallel writer, same bytes on any core count."""

from __future__ import annotations

import gzip
import io
import os
import subprocess
import tarfile
import zlib

import pytest

from click_build.archive import (
    AR_MAGIC,
    GzipBlockWriter,
    TarWriter,
    read_ar_members,
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
