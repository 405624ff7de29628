"""Archive writers: standard gzip from the parallel writer, same bytes on any core count."""

from __future__ import annotations

import gzip
import io
import os
import subprocess
import sys
import tarfile
import zlib

import pytest
from conftest import ZLIB_NG_EXPECTED
from hypothesis import given, settings
from hypothesis import strategies as st

from click_build import deflate
from click_build.archive import (
    AR_MAGIC,
    STORE_PROBE_MIN,
    GzipBlockWriter,
    TarWriter,
    crc32_combine,
    looks_incompressible,
    read_ar_members,
    tar_header,
    write_ar_member,
)
from click_build.errors import ArchiveError, ConfigError


def _mixed(n_blocks: int) -> bytes:
    text = b"".join(b"line %d of some very ordinary text\n" % i for i in range(20000))
    parts = []
    for i in range(n_blocks):
        parts.append(os.urandom(70_000) if i % 3 == 0 else text[i * 1000:i * 1000 + 90_000])
    return b"".join(parts)


def _gz(data: bytes, threads: int, level: int = 9, chunk: int = 7777,
        engine: str | None = None) -> bytes:
    out = io.BytesIO()
    gz = GzipBlockWriter(out, mtime=1234, level=level, threads=threads, engine=engine)
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


def _source_like(size: int, seed: int = 7) -> bytes:
    """Code-like text: a vocabulary of names in varied statements (compresses 4-5x)."""
    import random

    rng = random.Random(seed)
    words = ("item list view page model label count width title index color value ready "
             "open close save load error text name user data time").split()
    names = [rng.choice(words) + rng.choice(words).capitalize() + rng.choice(words).capitalize()
             for _ in range(2000)]
    lines: list[str] = []
    length = 0
    while length < size:
        a, b, c = (rng.choice(names) for _ in range(3))
        lines.append(rng.choice((
            f"    property int {a}: {b} + {rng.randint(0, 99999)}\n",
            f"    if ({a} > {b}) {{ {c} = {a}.{b}({rng.random():.3f}); }}\n",
            f"    // {a} follows {b} when {c} changes\n",
            f'    text: i18n.tr("{a} {b} {c}")\n')))
        length += len(lines[-1])
    return "".join(lines).encode()[:size]


def test_level_9_is_zlibs_level_9() -> None:
    """One block: byte for byte the deflate stream of zlib at level 9, memLevel 8, which
    is what dpkg-deb -Zgzip writes (whatever the engine: the first 256 KiB are zlib's);
    many blocks compressed apart by zlib, primed with the previous 32 KiB as pigz does:
    within 0.1% of it."""
    small = _source_like(200_000)
    for engine in ("zlib", None, "zlib-ng"):
        serial = zlib.compressobj(9, zlib.DEFLATED, -15, 8)
        ours = _gz(small, threads=1, engine=engine)
        assert ours[10:-8] == serial.compress(small) + serial.flush()
    big = _source_like(3_000_000)
    serial = zlib.compressobj(9, zlib.DEFLATED, -15, 8)
    reference = len(serial.compress(big) + serial.flush())
    parallel = _gz(big, threads=3, engine="zlib")
    assert gzip.decompress(parallel) == big
    assert len(parallel) < reference * 1.001, (len(parallel), reference)
    assert parallel[8] == 2  # XFL: maximum compression, as gzip -9 marks it


@pytest.mark.skipif(not ZLIB_NG_EXPECTED, reason="zlib-ng is a dependency on x86-64/ARM64 only")
def test_zlib_ng_deflates_many_blocks_as_small_as_zlib(monkeypatch: pytest.MonkeyPatch) -> None:
    """Unset, CLICK_BUILD_DEFLATE takes zlib-ng (installed with click-build here): other
    bytes than zlib's, the same on any core count, standard gzip, and within 0.5% of zlib's
    serial level 9 (dpkg-deb's) on code-like text."""
    from zlib_ng import zlib_ng

    monkeypatch.delenv(deflate.ENV, raising=False)
    assert deflate.load(deflate.chosen()) is zlib_ng
    big = _source_like(3_000_000)
    serial = zlib.compressobj(9, zlib.DEFLATED, -15, 8)
    reference = len(serial.compress(big) + serial.flush())
    fast = _gz(big, threads=3, engine=None)
    assert fast == _gz(big, threads=1, engine=None)
    assert gzip.decompress(fast) == big
    assert subprocess.run(["gzip", "-t"], input=fast).returncode == 0
    assert len(fast) < reference * 1.005, (len(fast), reference)
    assert _gz(big, threads=3, engine="zlib") != fast  # the engine made the difference
    assert _gz(big, threads=2, engine="zlib-ng") == fast


def test_deflate_engine_choice(monkeypatch: pytest.MonkeyPatch) -> None:
    """A bad CLICK_BUILD_DEFLATE is refused; zlib-ng asked for but not importable fails
    with the fix once past 256 KiB; unset, a missing zlib-ng falls back to zlib."""
    monkeypatch.setenv(deflate.ENV, "gzip")
    with pytest.raises(ConfigError, match="CLICK_BUILD_DEFLATE='gzip' is not an engine"):
        deflate.chosen()
    monkeypatch.setenv(deflate.ENV, " zlib-ng ")
    assert deflate.chosen() == "zlib-ng"
    monkeypatch.setitem(sys.modules, "zlib_ng", None)  # as if not installed
    with pytest.raises(ConfigError, match="zlib-ng cannot be imported.*pip install zlib-ng"):
        _gz(_source_like(700_000), threads=2, engine="zlib-ng")
    tiny = _gz(b"tiny", threads=1, engine="zlib-ng")  # the first 256 KiB: zlib, no import
    assert gzip.decompress(tiny) == b"tiny"
    monkeypatch.delenv(deflate.ENV)
    assert deflate.load(deflate.chosen()) is zlib
    data = _source_like(700_000)
    fallback = _gz(data, threads=2, engine=None)
    assert fallback == _gz(data, threads=1, engine="zlib")


def test_stored_pieces_in_the_first_256_kib_stay_zlibs() -> None:
    """A small package with a file stored as it is (an icon deflate cannot shrink) is cut
    into pieces, all in the first 256 KiB: zlib's bytes, whatever the engine."""
    text = _source_like(60_000)
    noise = os.urandom(40_000)
    outs = []
    for engine in ("zlib", None, "zlib-ng"):
        out = io.BytesIO()
        gz = GzipBlockWriter(out, 0, threads=2, engine=engine)
        tar = TarWriter(gz, gz)  # type: ignore[arg-type]
        tar.add_bytes("./a.qml", text, 0o644, 0)
        tar.add_bytes("./icon.png", noise, 0o644, 0)
        tar.add_bytes("./b.qml", text, 0o644, 0)
        tar.close()
        gz.close()
        outs.append(out.getvalue())
    assert outs[0] == outs[1] == outs[2]
    assert len(outs[0]) < len(noise) + len(text)  # the text deflated, the noise stored


@pytest.mark.parametrize("level", [0, 1, 6])
def test_other_levels(level: int) -> None:
    data = _source_like(700_000)
    out = _gz(data, threads=1, level=level)
    assert out == _gz(data, threads=4, level=level)
    assert gzip.decompress(out) == data
    if level == 0:
        assert len(data) < len(out) < len(data) * 1.001  # stored blocks only
    else:
        assert len(_gz(data, threads=1, level=9)) < len(out) < len(data) / 2


def test_store_probe() -> None:
    """Stored only when deflate would gain (almost) nothing, at the start and mid-file."""
    noise = os.urandom(200_000)
    assert looks_incompressible(noise)
    assert not looks_incompressible(_source_like(200_000))
    assert not looks_incompressible(noise[:STORE_PROBE_MIN - 1])  # too small to judge
    # Compressed media often start with metadata that compresses (a JPEG's EXIF block):
    # storing the whole file would give up what dpkg-deb's level 9 gains there.
    assert not looks_incompressible(_source_like(6000) + noise)
    # 3% to gain is worth deflating for (PNG and JPEG files often have that much).
    half_noise = b"".join(noise[i:i + 970] + bytes(30) for i in range(0, 100_000, 970))
    assert not looks_incompressible(half_noise)


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


def test_header_fields_that_do_not_fit_are_refused() -> None:
    """Issue 27, class 6: a 13-digit time shifted the ar header and left a package no
    reader takes.  Every field is checked; the largest time that fits is written."""
    out = io.BytesIO()
    write_ar_member(out, "x", b"", 999_999_999_999)
    assert len(out.getvalue()) == 60
    for bad in (1_000_000_000_000, -1):
        with pytest.raises(ArchiveError, match="does not fit"):
            write_ar_member(io.BytesIO(), "x", b"", bad)
    with pytest.raises(ArchiveError, match="gzip header"):
        GzipBlockWriter(io.BytesIO(), 1 << 32)
    GzipBlockWriter(io.BytesIO(), (1 << 32) - 1).close()


@settings(max_examples=300, deadline=None)
@given(st.binary(max_size=3000), st.binary(max_size=3000))
def test_crc32_combine_is_zlibs(a: bytes, b: bytes) -> None:
    assert crc32_combine(zlib.crc32(a), zlib.crc32(b), len(b)) == zlib.crc32(a + b)


def test_crc32_combine_long() -> None:
    a, b = os.urandom(1000), bytes(5_000_000) + os.urandom(77)
    assert crc32_combine(zlib.crc32(a), zlib.crc32(b), len(b)) == zlib.crc32(a + b)


@pytest.mark.parametrize("after", [0, 100, 3_000_000])
def test_reserved_bytes_filled_later(after: int) -> None:
    """A slot filled after what follows it was written: queued (a few bytes after it,
    on several threads) or already in the file (patched in place); the same bytes on
    one thread and four, a standard gzip stream with the right CRC."""
    before, rest = _mixed(4)[:700_000], _mixed(40)[:after]
    header = os.urandom(512)
    outs = []
    for threads in (1, 4):
        out = io.BytesIO()
        gz = GzipBlockWriter(out, 0, threads=threads)
        gz.write(before)
        slot = gz.reserve(512)
        for i in range(0, len(rest), 100_000):
            gz.write(rest[i:i + 100_000])
        gz.fill(slot, header)
        gz.write(b"tail")
        gz.close()
        outs.append(out.getvalue())
    assert outs[0] == outs[1]
    assert gzip.decompress(outs[0]) == before + header + rest + b"tail"
    assert subprocess.run(["gzip", "-t"], input=outs[0]).returncode == 0
    gz = GzipBlockWriter(io.BytesIO(), 0)
    gz.reserve(10)
    with pytest.raises(ArchiveError, match="never filled"):
        gz.close()


@pytest.mark.parametrize("size", [0, 5, 1 << 20, (1 << 20) + 1, 3_500_000])
def test_tar_time_from_content(size: int) -> None:
    """A file's time may come from its data (a function called once all of it has
    passed ``on_chunk``): read first up to 1 MiB, or its header kept in a slot."""
    data = _mixed(size // 80_000 + 1)[:size]
    outs = []
    for threads in (1, 3):
        out = io.BytesIO()
        gz = GzipBlockWriter(out, 0, threads=threads)
        tar = TarWriter(gz, gz)  # type: ignore[arg-type]
        seen: list[bytes] = []

        def time_of(seen: list[bytes] = seen) -> int:  # asked once the data has passed
            return len(b"".join(seen)) + 1000

        tar.add_bytes("./before", b"b" * 1000, 0o644, 7)
        tar.add_file("./" + "long/" * 30 + "f", io.BytesIO(data), size, 0o644, time_of,
                     seen.append)
        tar.add_bytes("./after", b"a" * 1000, 0o644, 7)
        tar.close()
        gz.close()
        outs.append(out.getvalue())
        assert b"".join(seen) == data  # every byte passed on_chunk before the time was asked
    assert outs[0] == outs[1]
    with tarfile.open(fileobj=io.BytesIO(outs[0])) as tar:
        member = tar.getmember("./" + "long/" * 30 + "f")
        assert member.mtime == size + 1000 and member.size == size
        assert tar.extractfile(member).read() == data  # type: ignore[union-attr]
        assert tar.getmember("./after").mtime == 7
    for wrong in (size + 1, size - 1):
        if wrong < 0:
            continue
        gz = GzipBlockWriter(io.BytesIO(), 0)
        with pytest.raises(ArchiveError, match="shrank|grew"):
            TarWriter(gz, gz).add_file(  # type: ignore[arg-type]
                "./f", io.BytesIO(data), wrong, 0o644, lambda: 0)


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
