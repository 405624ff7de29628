"""One device setup, three verifiers: debsig-verify, the original `click verify`, ours.

The original `click` runs `debsig-verify PKG` with no options, so its policy
and keyring must be in the system directories (/etc/debsig/policies,
/usr/share/debsig/keyrings).  These tests write them for a throwaway key,
check that all three tools agree, and remove everything they created.
"""

from __future__ import annotations

import shutil
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from conftest import Cli, assert_clean_error, need, run
from signing import Keys, install_policy, policy_xml, signed_copy

from click_build.signing.keyrings import (
    CLICK_KEYRINGS_DIR,
    DEBSIG_KEYRINGS_DIR,
    DEBSIG_POLICIES_DIR,
    ENV_KEYRINGS,
)

pytestmark = [pytest.mark.root, pytest.mark.oracle, pytest.mark.xdist_group("system")]
FW = {"CLICK_FRAMEWORKS_DIR": "/nonexistent"}


@pytest.fixture
def system_paths() -> Iterator[Callable[[Path], None]]:
    """Register paths this test creates under system directories; all are removed after."""
    created: list[Path] = []

    def track(path: Path) -> None:
        missing = [p for p in [path, *path.parents] if not p.exists()]
        created.extend(reversed(missing))  # outermost first, removed last

    yield track
    for path in reversed(created):
        if path.is_dir() and not path.is_symlink():
            shutil.rmtree(path, ignore_errors=True)
        else:
            path.unlink(missing_ok=True)


@pytest.fixture
def no_env_keyrings(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(ENV_KEYRINGS, raising=False)


def _verifiers(cli: Cli, pkg: Path) -> dict[str, tuple[int, str]]:
    debsig = run([need("debsig-verify"), str(pkg)], check=False)
    original = run([need("click"), "verify", "--force-missing-framework", str(pkg)], check=False)
    ours = cli("verify", "--force-missing-framework", pkg, check=False, env=FW)
    return {"debsig-verify": (debsig.returncode, debsig.stdout + debsig.stderr),
            "click": (original.returncode, original.stdout + original.stderr),
            "click-build": (ours.returncode, ours.stderr)}


def _install_system_policy(keys: Keys, track: Callable[[Path], None], rule_id: str = "") -> None:
    for top in (DEBSIG_POLICIES_DIR / keys.store.key_id, DEBSIG_KEYRINGS_DIR / keys.store.key_id):
        assert not top.exists(), f"{top} exists already"
        track(top)
    install_policy(DEBSIG_POLICIES_DIR, DEBSIG_KEYRINGS_DIR, keys.store)
    if rule_id:
        (DEBSIG_POLICIES_DIR / keys.store.key_id / "generic.pol").write_text(
            policy_xml(keys.store.key_id, rule_id=rule_id))


@pytest.mark.usefixtures("no_env_keyrings")
def test_debsig_policy_trusted_by_all_three(cli: Cli, keys: Keys, unsigned_click: Path,
                                           tmp_path: Path,
                                           system_paths: Callable[[Path], None]) -> None:
    good = signed_copy(cli, unsigned_click, tmp_path / "good.click", keys.store)
    evil = signed_copy(cli, unsigned_click, tmp_path / "evil.click", keys.evil)
    _install_system_policy(keys, system_paths)

    results = _verifiers(cli, good)
    assert all(rc == 0 for rc, _ in results.values()), results
    results = _verifiers(cli, evil)
    assert all(rc != 0 for rc, _ in results.values()), results
    assert results["debsig-verify"][0] == 11  # DS_FAIL_UNKNOWN_ORIGIN
    assert "Signature verification error: " in results["click"][1]
    assert_clean_error(cli("verify", "--force-missing-framework", evil, check=False, env=FW),
                       "Signature verification error: ", f"made by key {keys.evil.fingerprint}",
                       "debsig-verify policies")
    # the original accepts an unknown origin with --allow-unauthenticated, and so do we
    assert run([need("click"), "verify", "--force-missing-framework",
                "--allow-unauthenticated", str(evil)], check=False).returncode == 0
    assert cli("verify", "--force-missing-framework", "--allow-unauthenticated", evil,
               env=FW).returncode == 0


@pytest.mark.usefixtures("no_env_keyrings")
def test_policy_for_another_key_trusts_nothing(cli: Cli, keys: Keys, unsigned_click: Path,
                                              tmp_path: Path,
                                              system_paths: Callable[[Path], None]) -> None:
    """A policy whose rule names another key: debsig-verify finds no usable policy; nor do we."""
    good = signed_copy(cli, unsigned_click, tmp_path / "good.click", keys.store)
    _install_system_policy(keys, system_paths, rule_id=keys.evil.key_id)
    results = _verifiers(cli, good)
    assert all(rc != 0 for rc, _ in results.values()), results
    assert results["debsig-verify"][0] == 12  # DS_FAIL_NOPOLICIES


@pytest.mark.usefixtures("no_env_keyrings")
def test_etc_click_keyrings(cli: Cli, keys: Keys, unsigned_click: Path, tmp_path: Path,
                            system_paths: Callable[[Path], None]) -> None:
    pkg = signed_copy(cli, unsigned_click, tmp_path / "p.click", keys.store)
    ring = CLICK_KEYRINGS_DIR / f"click-build-test-{keys.store.key_id}.gpg"
    system_paths(ring)
    CLICK_KEYRINGS_DIR.mkdir(parents=True, exist_ok=True)
    shutil.copy(keys.store.keyring, ring)
    assert cli("verify", "--force-missing-framework", pkg, env=FW).returncode == 0
    ring.unlink()
    assert_clean_error(cli("verify", "--force-missing-framework", pkg, check=False, env=FW),
                       "no trusted keyring is configured (pass --keyring FILE or see /etc/click/keyrings/")
