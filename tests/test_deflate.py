"""The two deflate engines, end to end: zlib-ng where click-build installs it, Python's zlib
everywhere (CLICK_BUILD_DEFLATE, or a machine without zlib-ng); both give packages the
original click and dpkg-deb read, and the core builds with no zlib-ng at all."""

from __future__ import annotations

import os
import random
import sys
from pathlib import Path

import pytest
from build_support import build, data_member_size
from conftest import ZLIB_NG_EXPECTED, assert_clean_error, run, write_tree

pytestmark = pytest.mark.oracle


def _app_files(size: int) -> dict[str, str | bytes]:
    """QML-like text over many files and one file of random bytes: several 256 KiB blocks,
    deflated and stored."""
    rng = random.Random(5)
    names = [f"{rng.choice(['item', 'list', 'page', 'model'])}{i}" for i in range(300)]
    files: dict[str, str | bytes] = {"assets/noise.bin": rng.randbytes(300_000)}
    for n in range(size // 20_000):
        files[f"qml/Page{n}.qml"] = "".join(
            f"    property int {rng.choice(names)}: {rng.choice(names)}.count + {rng.randint(0, 999)}\n"
            for _ in range(400))
    return files


def _hide_zlib_ng(tmp_path: Path) -> dict[str, str]:
    """An environment where ``import zlib_ng`` fails, as on a machine without it."""
    shadow = write_tree(tmp_path / "no-zlib-ng", {
        "zlib_ng/__init__.py": "raise ImportError('zlib-ng is not installed here')\n"})
    return {"PYTHONPATH": os.pathsep.join(filter(None, [str(shadow),
                                                        os.environ.get("PYTHONPATH")]))}


def test_both_engines_make_packages_the_original_reads(cli, make_app, tmp_path: Path,
                                                       original_click: str) -> None:
    app = make_app(files=_app_files(1_500_000))
    zlib = build(cli, app, tmp_path / "zlib", env={"CLICK_BUILD_DEFLATE": "zlib"})
    default = build(cli, app, tmp_path / "default")
    without = build(cli, app, tmp_path / "without", env=_hide_zlib_ng(tmp_path))
    # A machine without zlib-ng builds what CLICK_BUILD_DEFLATE=zlib builds anywhere.
    assert without.read_bytes() == zlib.read_bytes()
    if ZLIB_NG_EXPECTED:
        assert default.read_bytes() != zlib.read_bytes()
        again = build(cli, app, tmp_path / "again", env={"CLICK_BUILD_DEFLATE": "zlib-ng"})
        assert again.read_bytes() == default.read_bytes()
    trees = []
    for click in (default, zlib):
        run([original_click, "verify", "--force-missing-framework", "--allow-unauthenticated",
             str(click)])
        extracted = tmp_path / f"x-{click.parent.name}"
        run(["dpkg-deb", "-x", str(click), str(extracted)])
        trees.append(sorted((p.relative_to(extracted).as_posix(), p.read_bytes())
                            for p in extracted.rglob("*") if p.is_file()))
    assert trees[0] == trees[1]
    assert data_member_size(default) < data_member_size(zlib) * 1.005


def test_engine_errors_are_one_line_and_write_nothing(cli, make_app, tmp_path: Path) -> None:
    app = make_app(files=_app_files(600_000))
    out = tmp_path / "out"
    out.mkdir()
    small = make_app("small")
    for tree in (app, small):  # read for every build, not only those that deflate with it
        bad = cli("build", tree, "-o", out, env={"CLICK_BUILD_DEFLATE": "pigz"}, check=False)
        assert_clean_error(bad, "CLICK_BUILD_DEFLATE='pigz' is not an engine")
    env = {**_hide_zlib_ng(tmp_path), "CLICK_BUILD_DEFLATE": "zlib-ng"}
    missing = cli("build", app, "-o", out, env=env, check=False)
    assert_clean_error(missing, "CLICK_BUILD_DEFLATE=zlib-ng, but zlib-ng cannot be imported")
    assert "pip install zlib-ng" in missing.stderr
    assert not list(out.iterdir())
    help_text = " ".join(cli("build", "--help").stdout.split())
    assert "CLICK_BUILD_DEFLATE=zlib or =zlib-ng chooses" in help_text


_LOADS_ZLIB_NG = """
import sys, runpy
import click_build.cli
click_build.cli.end_process = sys.exit  # come back here, not end the process at once
sys.argv = ["click-build", *sys.argv[1:]]
try:
    runpy.run_module("click_build", run_name="__main__", alter_sys=True)
except SystemExit as e:
    assert not e.code, e.code
print("zlib_ng" in sys.modules)
"""


@pytest.mark.skipif(not ZLIB_NG_EXPECTED, reason="zlib-ng is a dependency on x86-64/ARM64 only")
def test_only_packages_over_256_kib_load_zlib_ng(make_app, tmp_path: Path) -> None:
    """Importing zlib-ng costs about 3 ms, more than deflating a small app takes; a stored
    icon (random bytes: deflate cannot shrink them) cuts the stream but changes nothing."""
    small = make_app(files={"qml/Main.qml": "Item {}\n" * 1000})
    icon = make_app("icon", files={"qml/Main.qml": "Item {}\n" * 1000,
                                   "icon.png": random.Random(3).randbytes(40_000)})
    big = make_app("big", files=_app_files(600_000))
    for app, loads in ((small, "False"), (icon, "False"), (big, "True")):
        out = tmp_path / f"out-{loads}"
        result = run([sys.executable, "-c", _LOADS_ZLIB_NG, "build", "--review", "off",
                      "-o", str(out), str(app)])
        assert result.stdout.splitlines()[-1] == loads, result.stdout
        assert list(out.glob("*.click"))
