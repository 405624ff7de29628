"""`click-build install` checks signatures: tampered packages never replace a good install.

Every case first installs a good signed 1.0, then tries a signed and
tampered 2.0: the install must fail with one signature error line and leave
the database exactly as it was (1.0 current, nothing half-unpacked).
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from conftest import Cli, assert_clean_error
from install_support import check_invariants, make_env, tree_snapshot
from signing import APP_MANIFEST, TAMPERS, Keys, build_app, sign, signed_copy

NAME = str(APP_MANIFEST["name"])
NO_SIG = "debsig: Origin Signature check failed. This deb might not be signed."
SIG_ERR = "Signature verification error: "


@pytest.fixture(scope="module")
def packages(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    root = tmp_path_factory.mktemp("install-sign")
    return {v: build_app(root, v) for v in ("1.0", "2.0")}


class World:
    def __init__(self, cli: Cli, base: Path, keys: Keys) -> None:
        self.cli, self.env, self.keys = cli, make_env(base / "world"), keys

    def install(self, pkg: Path, *extra: str, keyring: Path | None = None):  # type: ignore[no-untyped-def]
        ring = keyring or self.keys.store.keyring
        return self.cli("install", "--root", self.env.root, "--force-missing-framework",
                        "--keyring", ring, *extra, pkg, check=False,
                        env={**self.env.vars(), "CLICK_KEYRINGS": ""})

    def current(self) -> str | None:
        link = self.env.root / NAME / "current"
        return str(link.readlink()) if link.is_symlink() else None


@pytest.fixture
def world(cli: Cli, tmp_path: Path, keys: Keys, packages: dict[str, Path]) -> World:
    w = World(cli, tmp_path, keys)
    good = signed_copy(cli, packages["1.0"], tmp_path / "good.click", keys.store)
    result = w.install(good)
    assert result.returncode == 0, result.stderr
    assert w.current() == "1.0"
    return w


def _refused(world: World, pkg: Path, *fragments: str, extra: tuple[str, ...] = ()) -> None:
    before = tree_snapshot(world.env.base)
    result = world.install(pkg, *extra)
    assert_clean_error(result, *fragments)
    assert tree_snapshot(world.env.base) == before  # not a byte changed, nothing left behind
    assert world.current() == "1.0"
    assert not check_invariants(world.env.root)


@pytest.mark.parametrize("case", sorted(TAMPERS))
def test_install_refuses_tampered(case: str, world: World, keys: Keys, cli: Cli,
                                  packages: dict[str, Path], tmp_path: Path) -> None:
    tamper, fragment, _ = TAMPERS[case]
    pkg = signed_copy(cli, packages["2.0"], tmp_path / "new.click", keys.store)
    work = tmp_path / "work"
    work.mkdir()
    tamper(pkg, work, keys)
    _refused(world, pkg, SIG_ERR, fragment)
    _refused(world, pkg, SIG_ERR, fragment, extra=("--allow-unauthenticated",))


def test_install_trust_rules(world: World, keys: Keys, cli: Cli, packages: dict[str, Path],
                             tmp_path: Path) -> None:
    pkg = Path(shutil.copy(packages["2.0"], tmp_path / "new.click"))
    _refused(world, pkg, NO_SIG)  # unsigned
    sign(cli, pkg, keys.evil)
    _refused(world, pkg, SIG_ERR, "is not in the --keyring files")  # unknown key
    sign(cli, pkg, keys.revoked)
    _refused(world, pkg, SIG_ERR, "has been revoked", extra=("--keyring", str(keys.revoked_ring)))
    sign(cli, pkg, keys.store)
    result = world.install(pkg)
    assert result.returncode == 0, result.stderr
    assert world.current() == "2.0"


def test_install_allow_unauthenticated(world: World, keys: Keys, cli: Cli,
                                       packages: dict[str, Path], tmp_path: Path) -> None:
    pkg = signed_copy(cli, packages["2.0"], tmp_path / "new.click", keys.evil)
    result = world.install(pkg, "--allow-unauthenticated")
    assert result.returncode == 0, result.stderr
    assert "; accepted (--allow-unauthenticated)" in result.stderr
    assert world.current() == "2.0"
