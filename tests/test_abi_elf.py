"""click_build.elfdyn against readelf, on programs built here for amd64, arm64 and armhf,
and against an attacker's files: truncated tables, chains without end, huge counts.

readelf (binutils) is the reference: what it says a file needs, the reader says too,
whether it reads the file whole, from a file object, or as the review does, as a
stream of chunks keeping only a prefix and the parts it planned to keep.
"""

from __future__ import annotations

import re
import struct
import subprocess
import time
from pathlib import Path

import pytest
from abi_programs import COMPILERS, QT515_SYMBOL, build
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from click_build.elfdyn import (
    MAX_VERSION_ENTRIES,
    BytesSource,
    Capture,
    Dynamic,
    FileSource,
    read_dynamic,
)
from click_build.errors import ClickError, ElfError

ARCHES = sorted(COMPILERS)


@pytest.fixture(scope="module", params=ARCHES)
def programs(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
             ) -> tuple[str, dict[str, Path]]:
    arch = request.param
    return arch, build(arch, tmp_path_factory.mktemp(f"abi-{arch}"))


def readelf(path: Path) -> dict[str, object]:
    """What readelf -dV --dyn-syms says the file needs."""
    out = subprocess.run(["readelf", "-dVW", "--dyn-syms", str(path)], capture_output=True,
                         text=True, check=True).stdout
    needs, library = set(), None
    section = out.split("Version needs section")[1].split("\n\n")[0] \
        if "Version needs section" in out else ""
    for line in section.splitlines():
        m = re.search(r"File: (\S+)", line)
        if m:
            library = m.group(1)
        m = re.search(r"Name: (\S+)\s+Flags: (\S+)", line)
        if m and library:
            needs.add((library, m.group(1), "WEAK" in m.group(2)))
    undefined = set()
    symbols = out.split("Symbol table '.dynsym'")[1] if ".dynsym" in out else ""
    for line in symbols.splitlines()[2:]:
        fields = line.split()
        if not fields:
            break
        if len(fields) >= 8 and fields[6] == "UND" and fields[4] != "WEAK":
            undefined.add(fields[7].split("@")[0])
    runpath = re.findall(r"\((?:RUNPATH|RPATH)\)\s+Library r\w*path: \[(.*)\]", out)
    return {
        "needed": re.findall(r"\(NEEDED\)\s+Shared library: \[(.*)\]", out),
        "soname": (re.findall(r"\(SONAME\)\s+Library soname: \[(.*)\]", out) or [None])[0],
        "runpath": [p for r in runpath[:1] for p in r.split(":") if p],
        "needs": needs,
        "undefined": undefined,
    }


def facts(dyn: Dynamic) -> dict[str, object]:
    return {
        "needed": list(dyn.needed),
        "soname": dyn.soname,
        "runpath": list(dyn.runpath),
        "needs": set(dyn.needs.values()),
        "undefined": {name.decode() for name, _ in dyn.undefined()},
    }


def streamed(data: bytes, chunk: int, prefix: int = 16 << 20) -> Capture:
    capture = Capture(len(data), prefix)
    for i in range(0, len(data), chunk):
        capture.feed(data[i:i + chunk])
    return capture


def test_what_readelf_says_every_way_the_file_is_read(programs: tuple[str, dict[str, Path]]
                                                      ) -> None:
    _, built = programs
    for name, path in built.items():
        expected = readelf(path)
        data = path.read_bytes()
        with path.open("rb") as f:
            whole = read_dynamic(FileSource(f))
            assert whole is not None
            assert facts(whole) == expected, name
        for source in (BytesSource(data), streamed(data, 4096), streamed(data, 7),
                       streamed(data, 1 << 20, prefix=2048)):
            dyn = read_dynamic(source)
            assert dyn is not None and facts(dyn) == expected, name


def test_what_the_programs_need(programs: tuple[str, dict[str, Path]]) -> None:
    """Built against Debian 12's glibc: GLIBC_2.34 (__libc_start_main), and the stubs'
    names, versions and symbols as the real libraries would give them."""
    arch, built = programs
    hello = read_dynamic(BytesSource(built["hello"].read_bytes()))
    assert hello is not None and hello.needed == ("libc.so.6",)
    assert ("libc.so.6", "GLIBC_2.34") in hello.required_versions()
    index = {ver: i for i, (_, ver, _) in hello.needs.items()}["GLIBC_2.34"]
    assert (b"__libc_start_main", index) in set(hello.undefined())
    qt = read_dynamic(BytesSource(built["hello-qt"].read_bytes()))
    assert qt is not None and qt.needed[0] == "libQt5Core.so.5"
    qt_index = {ver: i for i, (lib, ver, _) in qt.needs.items() if lib == "libQt5Core.so.5"}
    assert (QT515_SYMBOL.encode(), qt_index["Qt_5"]) in set(qt.undefined())
    ssl = read_dynamic(BytesSource(built["hello-ssl"].read_bytes()))
    assert ssl is not None and "libssl.so.3" in ssl.needed
    helper = read_dynamic(BytesSource(built["hello-helper"].read_bytes()))
    assert helper is not None and helper.runpath == ("$ORIGIN/../private",)
    library = read_dynamic(BytesSource(built["libQt5Core.so.5"].read_bytes()))
    assert library is not None and library.soname == "libQt5Core.so.5"
    assert library.definitions == ("Qt_5",)
    assert hello.elf.arches & {arch}


def test_versions_a_real_runtime_defines() -> None:
    """The maintainer script reads the highest versions from libc and libstdc++ this way."""
    for path, expected in (("/usr/aarch64-linux-gnu/lib/libc.so.6", "GLIBC_2.36"),
                           ("/usr/arm-linux-gnueabihf/lib/libstdc++.so.6", "GLIBCXX_3.4.30")):
        with open(path, "rb") as f:
            dyn = read_dynamic(FileSource(f))
        assert dyn is not None and expected in dyn.definitions, path


def test_tables_beyond_what_the_stream_keeps(programs: tuple[str, dict[str, Path]]) -> None:
    """A prefix too short for the symbol tables: one error line that says so."""
    _, built = programs
    data = built["hello-qt"].read_bytes()
    with pytest.raises(ElfError, match="beyond the first 256 bytes"):
        dyn = read_dynamic(streamed(data, 1 << 20, prefix=256))
        assert dyn is not None
        list(dyn.undefined())


def test_not_a_program_or_static_is_none(tmp_path: Path) -> None:
    assert read_dynamic(BytesSource(b"#!/bin/sh\n" + bytes(100))) is None
    assert read_dynamic(BytesSource(b"")) is None
    static = tmp_path / "static"
    (tmp_path / "s.c").write_text("int main(void) { return 0; }\n")
    subprocess.run(["gcc", "-static", "-o", str(static), str(tmp_path / "s.c")], check=True)
    assert read_dynamic(BytesSource(static.read_bytes())) is None
    (tmp_path / "o.c").write_text("int f(void) { return 1; }\n")
    subprocess.run(["gcc", "-c", "-o", str(tmp_path / "o.o"), str(tmp_path / "o.c")], check=True)
    assert read_dynamic(BytesSource((tmp_path / "o.o").read_bytes())) is None


# ------------------------------------------------------------ an attacker's files ---

def _layout(data: bytes) -> tuple[int, dict[int, int], list[tuple[int, int, int]]]:
    """(offset of the dynamic section, its tags -> the file offset of their entry,
    the loads) of a little-endian ELF64 program."""
    phoff, = struct.unpack_from("<Q", data, 32)
    phnum, = struct.unpack_from("<H", data, 56)
    loads, dynamic = [], 0
    for i in range(phnum):
        kind, _, off, vaddr, _, filesz = struct.unpack_from("<IIQQQQ", data, phoff + 56 * i)
        if kind == 1:
            loads.append((vaddr, filesz, off))
        if kind == 2:
            dynamic = off
    tags, at = {}, dynamic
    while True:
        tag, _ = struct.unpack_from("<qQ", data, at)
        if tag == 0:
            break
        tags.setdefault(tag, at)
        at += 16
    return dynamic, tags, loads


def _offset(loads: list[tuple[int, int, int]], addr: int) -> int:
    return next(addr - v + o for v, s, o in loads if v <= addr < v + s)


@pytest.fixture(scope="module")
def amd64(tmp_path_factory: pytest.TempPathFactory) -> dict[str, bytes]:
    built = build("amd64", tmp_path_factory.mktemp("abi-hostile"))
    return {name: path.read_bytes() for name, path in built.items()}


def _set(data: bytes, at: int, fmt: str, *values: int) -> bytes:
    out = bytearray(data)
    struct.pack_into(fmt, out, at, *values)
    return bytes(out)


def _read_all(data: bytes) -> Dynamic | None:
    """Everything the review asks of a file, as it asks it."""
    dyn = read_dynamic(streamed(data, 1 << 16))
    if dyn is not None:
        dyn.required_versions()
        list(dyn.undefined())
    return dyn


def test_version_needs_without_end_are_cut_at_the_budget(amd64: dict[str, bytes]) -> None:
    """DT_VERNEEDNUM of 2^31 and every entry pointing 16 bytes on: the walk stops at
    the budget or the file's end, with one error line."""
    data = amd64["hello-qt"]
    _, tags, loads = _layout(data)
    verneed = _offset(loads, struct.unpack_from("<Q", data, tags[0x6FFFFFFE] + 8)[0])
    data = _set(data, tags[0x6FFFFFFF] + 8, "<Q", 1 << 31)
    data = _set(data, verneed + 12, "<I", 16)  # vn_next: the next entry 16 bytes on
    with pytest.raises(ElfError):
        _read_all(data)


def test_needed_versions_without_end_are_cut_at_the_budget(amd64: dict[str, bytes]) -> None:
    """vn_cnt of 65535, and 64,000 needed versions each pointing 16 bytes on (appended to
    the file): the walk stops at the budget of the whole file, with one error line."""
    data = amd64["hello-qt"]
    _, tags, loads = _layout(data)
    verneed = _offset(loads, struct.unpack_from("<Q", data, tags[0x6FFFFFFE] + 8)[0])
    vn_aux, = struct.unpack_from("<I", data, verneed + 8)
    _, _, _, name, _ = struct.unpack_from("<IHHII", data, verneed + vn_aux)
    entries = struct.pack("<IHHII", 0, 0, 2, name, 16) * 64_000
    data = _set(data, verneed + 2, "<H", 0xFFFF)
    data = _set(data, verneed + 8, "<I", len(data) - verneed) + entries
    start = time.process_time()
    with pytest.raises(ElfError, match=f"more than {MAX_VERSION_ENTRIES} version entries"):
        _read_all(data)
    assert time.process_time() - start < 5


def test_a_version_entry_that_points_at_itself(amd64: dict[str, bytes]) -> None:
    """A definitions chain whose count never runs out and whose next is 0: it ends (0
    ends a chain), and the budget holds whatever the count says."""
    data = amd64["libQt5Core.so.5"]
    _, tags, _ = _layout(data)
    data = _set(data, tags[0x6FFFFFFD] + 8, "<Q", 1 << 40)
    dyn = _read_all(data)
    assert dyn is not None and dyn.definitions == ("Qt_5",)


def test_huge_symbol_counts_are_bounded_by_the_file(amd64: dict[str, bytes]) -> None:
    """A hash table claiming 4 billion symbols: only what the file holds is read."""
    data = amd64["hello-qt"]
    data = data[:struct.unpack_from("<Q", data, 40)[0]]  # no section headers: the hash counts
    data = _set(data, 40, "<Q", 0)
    _, tags, loads = _layout(data)
    if 0x6FFFFEF5 in tags:  # GNU hash: its buckets claim a symbol far away
        gnu = _offset(loads, struct.unpack_from("<Q", data, tags[0x6FFFFEF5] + 8)[0])
        data = _set(data, gnu, "<I", 0x0FFFFFFF)  # nbuckets
    start = time.process_time()
    try:
        _read_all(data)
    except ElfError:
        pass
    assert time.process_time() - start < 5


def test_strings_past_their_table_and_strings_without_end(amd64: dict[str, bytes]) -> None:
    data = amd64["hello-ssl"]
    _, tags, _ = _layout(data)
    with pytest.raises(ElfError, match="outside the string table"):
        _read_all(_set(data, tags[1] + 8, "<Q", 1 << 40))  # a DT_NEEDED name far away
    with pytest.raises(ElfError):
        _read_all(_set(data, tags[10] + 8, "<Q", 1 << 60))  # DT_STRSZ past the file


def test_a_dynamic_section_without_end(amd64: dict[str, bytes]) -> None:
    data = bytearray(amd64["hello"])
    dynamic, _, _ = _layout(bytes(data))
    phoff, = struct.unpack_from("<Q", data, 32)
    size = next(struct.unpack_from("<Q", data, phoff + 56 * i + 32)[0] for i in range(20)
                if struct.unpack_from("<I", data, phoff + 56 * i)[0] == 2)
    for at in range(dynamic, dynamic + size, 16):  # every DT_NULL becomes an unknown tag
        if struct.unpack_from("<q", data, at)[0] == 0:
            data[at:at + 16] = struct.pack("<qQ", 0x7FFF0000, 0)
    with pytest.raises(ElfError, match="no end"):
        _read_all(bytes(data))


def test_every_truncation_is_an_answer_or_one_error(amd64: dict[str, bytes]) -> None:
    data = amd64["hello-helper"]
    for cut in range(0, len(data), 61):
        try:
            _read_all(data[:cut])
        except ElfError as e:
            assert "\n" not in str(e)


mutation = st.tuples(st.integers(0, 1 << 16), st.sampled_from(["flip", "cut", "big", "zero"]),
                     st.integers(0, 255))


@settings(max_examples=500, deadline=None, suppress_health_check=[HealthCheck.too_slow,
                                                                  HealthCheck.function_scoped_fixture])
@given(which=st.sampled_from(["hello-qt", "hello-helper", "libQt5Core.so.5"]),
       edits=st.lists(mutation, min_size=1, max_size=6))
def test_mutated_programs_give_an_answer_or_one_error(
        amd64: dict[str, bytes], which: str, edits: list[tuple[int, str, int]]) -> None:
    """Random damage, mostly where the tables are (the first 16 KiB): the reader answers
    or raises ElfError (a ClickError), quickly, never anything else."""
    data = bytearray(amd64[which])
    for pos, how, value in edits:
        pos = pos % len(data)
        if how == "flip":
            data[pos] ^= value or 1
        elif how == "cut":
            del data[max(pos, 64):]
        elif how == "big":
            data[pos:pos + 4] = b"\xff\xff\xff\x7f"[:len(data[pos:pos + 4])]
        else:
            data[pos:pos + 8] = bytes(len(data[pos:pos + 8]))
    start = time.process_time()
    try:
        _read_all(bytes(data))
    except ClickError as e:
        assert isinstance(e, ElfError) and "\n" not in str(e)
    assert time.process_time() - start < 2
