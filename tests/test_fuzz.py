"""Reader fuzzing: mutated packages end in a ClickError, never another exception."""

from __future__ import annotations

import gzip
import io
from pathlib import Path

import pytest
from crafting import Crafted, Member
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from click_build.errors import ClickError
from click_build.listing import contents_lines
from click_build.package import audit, open_click

SEED = Crafted(data=[
    Member("./", kind="dir", mode=0o755), Member("./app.desktop", b"[Desktop Entry]\n"),
    Member("./sub", kind="dir", mode=0o755), Member("./sub/link", kind="symlink", target="../app.desktop"),
    Member("./sub/bin", b"\x7fELF" + bytes(200), mode=0o755),
])
SEED_BYTES = SEED.bytes()
SEED_PARTS = SEED.parts()


def _exercise(raw: bytes) -> None:
    try:
        with open_click(io.BytesIO(raw)) as pkg:
            pkg.info_json()
            for _ in contents_lines(pkg):
                pass
            audit(pkg, Path("/nonexistent"), force_missing_framework=True)
    except ClickError:
        pass


mutation = st.tuples(st.integers(0, 10**6), st.sampled_from(["flip", "cut", "insert", "delete"]),
                     st.binary(min_size=1, max_size=8))


def _mutate(raw: bytes, edits: list[tuple[int, str, bytes]]) -> bytes:
    data = bytearray(raw)
    for pos, how, blob in edits:
        if not data:
            break
        pos %= len(data)
        if how == "flip":
            data[pos] ^= blob[0] or 1
        elif how == "cut":
            del data[pos:]
        elif how == "insert":
            data[pos:pos] = blob
        else:
            del data[pos:pos + len(blob)]
    return bytes(data)


def test_an_ar_mode_with_a_digit_octal_lacks() -> None:
    """A mode of '100684' (hypothesis found it): 8 is no octal digit, an ArchiveError."""
    raw = bytearray(SEED_BYTES)
    at = raw.index(b"_click-binary") + 40  # the mode field of the member's header
    raw[at:at + 8] = b"100684  "
    with pytest.raises(ClickError, match="is not a number"):
        _exercise_strict(bytes(raw))


def _exercise_strict(raw: bytes) -> None:
    with open_click(io.BytesIO(raw)):
        pass


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(mutation, min_size=1, max_size=4))
def test_mutated_container(edits: list[tuple[int, str, bytes]]) -> None:
    _exercise(_mutate(SEED_BYTES, edits))


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.sampled_from([2, 3]), st.lists(mutation, min_size=1, max_size=4))
def test_mutated_tar_inside_valid_gzip(which: int, edits: list[tuple[int, str, bytes]]) -> None:
    """Mutate the uncompressed tar so the tar and control parsers see the damage."""
    parts = list(SEED_PARTS)
    name, data = parts[which]
    parts[which] = (name, gzip.compress(_mutate(gzip.decompress(data), edits), mtime=0))
    _exercise(Crafted(members=parts).bytes())


# ------------------------------------------------------------- the tar reader ---

def _read_all(raw: bytes, compression: str = "") -> list[tuple[bytes, bytes, int, bytes]]:
    """Every member and its data, as the reader hands them out."""
    from click_build.tarread import Decompressed, TarReader

    stream = io.BytesIO(raw)
    reader = TarReader(Decompressed(stream, 0, len(raw), compression), "fuzz.tar")
    out = []
    for member in reader:
        data = b"".join(reader.data()) if member.isreg() else b""
        assert len(data) == member.size or not member.isreg()
        out.append((member.name, member.type, member.size, member.linkname))
    return out


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.binary(max_size=4096), st.sampled_from(["", ".gz"]))
def test_tar_reader_on_noise(noise: bytes, compression: str) -> None:
    """Any bytes: members or one ArchiveError, never another exception."""
    from click_build.errors import ArchiveError

    raw = gzip.compress(noise, mtime=0) if compression else noise
    try:
        _read_all(raw, compression)
    except ArchiveError:
        pass


_KINDS = [b"0", b"\0", b"1", b"2", b"3", b"5", b"6", b"7", b"L", b"K", b"x", b"g", b"S", b"V", b"Z"]
_header_parts = st.fixed_dictionaries({
    "name": st.binary(min_size=1, max_size=120),
    "kind": st.sampled_from(_KINDS),
    "size": st.one_of(st.integers(0, 2048), st.integers(0, 1 << 70), st.just(-1)),
    "payload": st.binary(max_size=1500),
    "checksum_ok": st.booleans(),
    "magic": st.sampled_from([b"ustar  \0", b"ustar\x0000", b"", b"junk"]),
})


def _fuzz_header(part: dict[str, object]) -> bytes:
    name, kind, size = part["name"], part["kind"], part["size"]
    payload = part["payload"]
    assert isinstance(name, bytes) and isinstance(kind, bytes) and isinstance(payload, bytes)
    assert isinstance(size, int) and isinstance(part["magic"], bytes)
    head = bytearray(512)
    head[:len(name[:100])] = name[:100]
    head[100:108] = b"0000644\0"
    if size < 0:
        head[124:136] = b"12345678zz\0\0"
    elif size < 8 ** 11:
        head[124:136] = b"%011o\0" % size
    else:
        head[124:136] = b"\x80" + size.to_bytes(11, "big")
    head[156:157] = kind
    head[257:257 + len(part["magic"])] = part["magic"]
    head[148:156] = b" " * 8
    head[148:156] = b"%06o\0 " % (sum(head) + (0 if part["checksum_ok"] else 1))
    return bytes(head) + payload + b"\0" * (-len(payload) % 512)


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(_header_parts, max_size=6), st.booleans())
def test_tar_reader_on_crafted_headers(parts: list[dict[str, object]], end: bool) -> None:
    """Headers with every type, lying sizes, base-256, bad checksums and any payload:
    members or one ArchiveError, whatever the sizes claim."""
    from click_build.errors import ArchiveError

    raw = b"".join(_fuzz_header(p) for p in parts) + (b"\0" * 1024 if end else b"")
    try:
        _read_all(gzip.compress(raw, mtime=0), ".gz")
    except ArchiveError:
        pass


_names = st.text(st.characters(blacklist_categories=("Cs",), blacklist_characters="\0/"),
                 min_size=1, max_size=40)


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(st.tuples(st.lists(_names, min_size=1, max_size=6),
                          st.sampled_from(["file", "dir", "symlink"]), st.binary(max_size=700)),
                max_size=8),
       st.sampled_from(["gnu", "pax", "ustar"]))
def test_tar_reader_agrees_with_tarfile(members: list[tuple[list[str], str, bytes]],
                                        fmt: str) -> None:
    """What Python's tarfile writes (GNU long names, pax, ustar prefixes), read back
    exactly: names, types, sizes, link targets and data."""
    import tarfile

    formats = {"gnu": tarfile.GNU_FORMAT, "pax": tarfile.PAX_FORMAT, "ustar": tarfile.USTAR_FORMAT}
    buf = io.BytesIO()
    expected = []
    with tarfile.open(fileobj=buf, mode="w", format=formats[fmt]) as tar:
        for parts, kind, data in members:
            info = tarfile.TarInfo("./" + "/".join(parts))
            if kind == "file":
                info.size = len(data)
            elif kind == "dir":
                info.type = tarfile.DIRTYPE
            else:
                info.type, info.linkname = tarfile.SYMTYPE, "/".join(parts[::-1])
            try:
                tar.addfile(info, io.BytesIO(data) if kind == "file" else None)
            except ValueError:  # a name ustar cannot hold
                return
            expected.append(info)
    with tarfile.open(fileobj=io.BytesIO(buf.getvalue())) as tar:
        want = [(m.name.encode("utf-8", "surrogateescape"), m.size, m.linkname.encode())
                for m in tar]
    got = _read_all(buf.getvalue())
    assert [(n.rstrip(b"/"), s, link) for n, _t, s, link in got] == [
        (n.rstrip(b"/"), s, link) for n, s, link in want]
    assert [t for _n, t, _s, _l in got] == [
        {tarfile.REGTYPE: b"0", tarfile.DIRTYPE: b"5", tarfile.SYMTYPE: b"2"}[i.type]
        for i in expected]


# ------------------------------------------------------------ the tree checks ---

_tree_paths = st.lists(st.tuples(
    st.lists(st.sampled_from(["a", "b", "a.b", "c"]), min_size=1, max_size=4).map("/".join),
    st.sampled_from([1, 2, 3, 4, "hardlink"])), max_size=12)


def _tree_outcome(entries: list[tuple[str, object]], index: bool) -> str:
    from click_build.datatree import TreeCheck
    from click_build.errors import PackageError

    def replay(count: int) -> list[tuple[str, int]]:
        return [(p, k) for p, k in entries if k != "hardlink"][:count]  # type: ignore[misc]

    check = TreeCheck(replay, index=index)
    try:
        for path, kind in entries:
            if kind == "hardlink":
                check.add_hardlink(path, "a")
            else:
                assert isinstance(kind, int)
                check.add(path, kind)
    except PackageError as e:
        return str(e).split(":")[1].split(" ", 2)[-1]  # the kind of refusal, not the path
    return "accepted"


@settings(max_examples=600, deadline=None)
@given(_tree_paths, st.booleans())
def test_tree_check_keeps_nothing_yet_refuses_what_the_index_refuses(
        entries: list[tuple[str, object]], builder_order: bool) -> None:
    """The order-based checks (no memory per path) and the index agree on every
    sequence, in the builders' order or not: same acceptance, same kind of refusal."""
    if builder_order:
        entries = sorted(entries, key=lambda e: e[0].split("/"))
    assert _tree_outcome(entries, index=False) == _tree_outcome(entries, index=True)
