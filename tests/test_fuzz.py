"""Reader fuzzing: mutated packages end in a ClickError, never another exception."""

from __future__ import annotations

import gzip
import io
from pathlib import Path

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
