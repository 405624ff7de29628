"""`click-build sign` and the signature check of `verify`, against the real debsigs tools.

Real gpg with throwaway keys, the real debsigs and debsig-verify: what we
sign, they accept; what debsigs signs, we accept; every tampered package is
refused with a one-line error.
"""

from __future__ import annotations

import shutil
import stat
import subprocess
from collections.abc import Callable
from pathlib import Path

import pytest
from conftest import Cli, assert_clean_error, need, run
from signing import (
    NO_SYSTEM_KEYS,
    TAMPERS,
    Keys,
    ar_extract,
    ar_names,
    ar_put,
    debsig_verify,
    debsigs_list,
    debsigs_sign,
    gpg,
    sign,
    signed_bytes,
)

NO_SIG = "debsig: Origin Signature check failed. This deb might not be signed."
SIG_ERR = "Signature verification error: "


@pytest.fixture
def pkg(unsigned_click: Path, tmp_path: Path) -> Path:
    return Path(shutil.copy(unsigned_click, tmp_path / unsigned_click.name))


def verify(cli: Cli, path: Path, *keyrings: Path, extra: tuple[str, ...] = ()):  # type: ignore[no-untyped-def]
    args = [a for ring in keyrings for a in ("--keyring", str(ring))]
    return cli("verify", "--force-missing-framework", *args, *extra, path, check=False,
               env=NO_SYSTEM_KEYS)


def gpgv_ok(data: bytes, signature: bytes, keyring: Path, tmp: Path) -> bool:
    """An independent check with plain gpgv over exactly ``data``."""
    (tmp / "sig").write_bytes(signature)
    home = tmp / "gpgv-home"
    home.mkdir(mode=0o700, exist_ok=True)
    result = subprocess.run([need("gpgv"), "--homedir", str(home), "--keyring", str(keyring),
                             str(tmp / "sig"), "-"],
                            input=data, capture_output=True)
    return result.returncode == 0


# ------------------------------------------------------------------ signing ---

def test_sign_matches_debsigs_format(cli: Cli, keys: Keys, pkg: Path, tmp_path: Path) -> None:
    before = pkg.read_bytes()
    out = sign(cli, pkg, keys.store)
    assert f"added _gpgorigin signed by {keys.store.fingerprint} (SHA512)" in out.stdout
    assert ar_names(pkg) == ["debian-binary", "_click-binary", "control.tar.gz",
                             "data.tar.gz", "_gpgorigin"]
    after = pkg.read_bytes()
    assert after.startswith(before)  # the signed members are untouched, the member appended
    signature = ar_extract(pkg, "_gpgorigin")
    packets = gpg(keys.store.home, "--list-packets", stdin=signature).stdout.decode()
    assert "sigclass 0x00" in packets and "digest algo 10," in packets  # SHA512
    assert packets.count(":signature packet:") == 1
    # what debsigs signs: debian-binary + control + data, without _click-binary
    assert gpgv_ok(signed_bytes(pkg), signature, keys.store.keyring, tmp_path)
    with_click_binary = (ar_extract(pkg, "debian-binary") + ar_extract(pkg, "_click-binary")
                         + ar_extract(pkg, "control.tar.gz") + ar_extract(pkg, "data.tar.gz"))
    assert not gpgv_ok(with_click_binary, signature, keys.store.keyring, tmp_path)
    listing = debsigs_list(pkg, keys.store)
    assert f"origin: signed by {keys.store.key_id}" in listing
    result = debsig_verify(pkg, keys.store, tmp_path)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "Verified package" in result.stdout
    assert verify(cli, pkg, keys.store.keyring).returncode == 0
    # dpkg-deb and the original's reader still read it
    assert "com.example.signed" in run([need("dpkg-deb"), "-f", str(pkg), "Package"]).stdout


def test_resign_replaces_same_type_and_keeps_others(cli: Cli, keys: Keys, pkg: Path,
                                                   tmp_path: Path) -> None:
    sign(cli, pkg, keys.evil)
    sign(cli, pkg, keys.store, "--type", "maint")
    out = sign(cli, pkg, keys.store)
    assert "replaced _gpgorigin" in out.stdout
    assert ar_names(pkg) == ["debian-binary", "_click-binary", "control.tar.gz",
                             "data.tar.gz", "_gpgorigin", "_gpgmaint"]
    listing = debsigs_list(pkg, keys.store)
    assert f"origin: signed by {keys.store.key_id}" in listing
    assert f"maint: signed by {keys.store.key_id}" in listing
    assert keys.evil.key_id not in listing
    assert verify(cli, pkg, keys.store.keyring).returncode == 0
    assert debsig_verify(pkg, keys.store, tmp_path).returncode == 0


def test_maint_signature_alone_is_not_an_origin_signature(cli: Cli, keys: Keys,
                                                         pkg: Path, tmp_path: Path) -> None:
    sign(cli, pkg, keys.store, "--type", "maint")
    assert_clean_error(verify(cli, pkg, keys.store.keyring), NO_SIG, "only _gpgmaint")
    assert debsig_verify(pkg, keys.store, tmp_path).returncode == 10  # DS_FAIL_NOSIGS


def test_sign_keeps_mode_and_follows_symlink(cli: Cli, keys: Keys, pkg: Path,
                                            tmp_path: Path) -> None:
    pkg.chmod(0o640)
    link = tmp_path / "link.click"
    link.symlink_to(pkg.name)
    sign(cli, link, keys.store)
    assert link.is_symlink() and stat.S_IMODE(pkg.stat().st_mode) == 0o640
    assert ar_names(pkg)[-1] == "_gpgorigin"
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted([pkg.name, "link.click"])


def test_sign_failures_leave_the_package_alone(cli: Cli, keys: Keys, pkg: Path,
                                              tmp_path: Path) -> None:
    before = pkg.read_bytes()
    result = cli("sign", "--key", "nobody@example.com", pkg, env=keys.store.env(), check=False)
    assert_clean_error(result, "cannot sign: no usable secret key for key 'nobody@example.com'")
    result = cli("sign", "--gpg-homedir", tmp_path / "none", pkg, check=False)
    assert_clean_error(result, "gpg home directory", "does not exist")
    empty = tmp_path / "emptyhome"
    empty.mkdir(mode=0o700)
    try:
        assert_clean_error(cli("sign", "--gpg-homedir", empty, pkg, check=False),
                           "no usable secret key for the default key")
    finally:
        subprocess.run(["gpgconf", "--homedir", str(empty), "--kill", "all"])
    assert pkg.read_bytes() == before
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted([pkg.name, "emptyhome"])
    junk = tmp_path / "junk.click"
    junk.write_bytes(b"not a package")
    assert_clean_error(sign(cli, junk, keys.store, check=False), "ar archive")
    assert_clean_error(sign(cli, tmp_path / "missing.click", keys.store, check=False),
                       "cannot open")
    assert_clean_error(cli("sign", "--type", "bogus", pkg, check=False), "invalid choice")


def test_gpg_homedir_option(cli: Cli, keys: Keys, pkg: Path) -> None:
    out = cli("sign", "--gpg-homedir", keys.store.home, pkg, env={"GNUPGHOME": "/nonexistent"})
    assert keys.store.fingerprint in out.stdout
    assert verify(cli, pkg, keys.store.keyring).returncode == 0


# ------------------------------------------------- debsigs-signed packages ---

def test_package_signed_by_debsigs_verifies(cli: Cli, keys: Keys, pkg: Path,
                                           tmp_path: Path) -> None:
    debsigs_sign(pkg, keys.debsigs)
    packets = gpg(keys.debsigs.home, "--list-packets",
                  stdin=ar_extract(pkg, "_gpgorigin")).stdout.decode()
    assert "digest algo 10," in packets  # gpg.conf's SHA-512 was used
    assert verify(cli, pkg, keys.debsigs.keyring).returncode == 0
    assert debsig_verify(pkg, keys.debsigs, tmp_path).returncode == 0
    assert_clean_error(verify(cli, pkg, keys.store.keyring), SIG_ERR, "not in the --keyring")


def test_original_click_build_output_signed_by_debsigs(cli: Cli, keys: Keys, tmp_path: Path,
                                                      make_app: Callable[..., Path]) -> None:
    app = make_app(hooks={})
    run([need("click"), "build", "--no-validate", str(app)], cwd=tmp_path)
    (click,) = tmp_path.glob("*.click")
    debsigs_sign(click, keys.debsigs)
    assert ar_names(click)[1] == "_click-binary"
    signature = ar_extract(click, "_gpgorigin")
    assert gpgv_ok(signed_bytes(click), signature, keys.debsigs.keyring, tmp_path)
    assert verify(cli, click, keys.debsigs.keyring).returncode == 0


def test_sha1_signature_refused_like_debsig_verify(cli: Cli, keys: Keys, pkg: Path,
                                                  tmp_path: Path) -> None:
    signature = gpg(keys.store.home, "--detach-sign", "--digest-algo", "SHA1",
                    stdin=signed_bytes(pkg)).stdout
    ar_put(pkg, tmp_path, "_gpgorigin", signature)
    assert_clean_error(verify(cli, pkg, keys.store.keyring), SIG_ERR, "SHA1 digest")
    assert debsig_verify(pkg, keys.store, tmp_path).returncode == 13


# -------------------------------------------------------------- tampering ---

@pytest.mark.parametrize("case", sorted(TAMPERS))
def test_tampered_package_refused(case: str, cli: Cli, keys: Keys, pkg: Path,
                                  tmp_path: Path) -> None:
    tamper, fragment, debsig_rc = TAMPERS[case]
    sign(cli, pkg, keys.store)
    assert verify(cli, pkg, keys.store.keyring).returncode == 0
    work = tmp_path / "work"
    work.mkdir()
    tamper(pkg, work, keys)
    result = verify(cli, pkg, keys.store.keyring)
    assert_clean_error(result, SIG_ERR, fragment)
    assert len([ln for ln in result.stderr.splitlines() if "error:" in ln]) == 1
    # --allow-unauthenticated never excuses tampering
    assert_clean_error(verify(cli, pkg, keys.store.keyring, extra=("--allow-unauthenticated",)),
                       SIG_ERR, fragment)
    if debsig_rc is not None:  # where debsig-verify gets that far, record that it agrees
        assert debsig_verify(pkg, keys.store, tmp_path).returncode == debsig_rc


# ------------------------------------------------------------ trust rules ---

def test_unsigned(cli: Cli, keys: Keys, pkg: Path) -> None:
    result = verify(cli, pkg, keys.store.keyring)
    assert_clean_error(result, SIG_ERR + NO_SIG, "--allow-unauthenticated")
    ok = verify(cli, pkg, extra=("--allow-unauthenticated",))
    assert ok.returncode == 0
    assert f"warning: {pkg} has no _gpgorigin signature; accepted (--allow-unauthenticated)" \
        in ok.stderr


def test_unknown_key(cli: Cli, keys: Keys, pkg: Path) -> None:
    sign(cli, pkg, keys.evil)
    result = verify(cli, pkg, keys.store.keyring)
    assert_clean_error(result, SIG_ERR, f"made by key {keys.evil.fingerprint}",
                       "not in the --keyring files")
    ok = verify(cli, pkg, keys.store.keyring, extra=("--allow-unauthenticated",))
    assert ok.returncode == 0 and "not in the --keyring files; accepted (--allow-unauth" in ok.stderr
    # no keyring at all
    assert_clean_error(verify(cli, pkg), SIG_ERR, "no trusted keyring is configured")
    # several keyrings: any of them may hold the key
    assert verify(cli, pkg, keys.store.keyring, keys.evil.keyring).returncode == 0


def test_expired_key(cli: Cli, keys: Keys, pkg: Path, tmp_path: Path) -> None:
    signature = gpg(keys.expired.home, "--faked-system-time", "20200201T000000!",
                    "--detach-sign", "--digest-algo", "SHA512", stdin=signed_bytes(pkg)).stdout
    ar_put(pkg, tmp_path, "_gpgorigin", signature)
    for extra in ((), ("--allow-unauthenticated",)):
        assert_clean_error(verify(cli, pkg, keys.expired.keyring, extra=extra), SIG_ERR,
                           "which expired on 2020-12-31")
    # Stricter than debsig-verify, which accepts a signature made before the key expired
    # (docs/signing.md says so): a device must not keep trusting a key its owner let expire.


def test_revoked_key(cli: Cli, keys: Keys, pkg: Path, tmp_path: Path) -> None:
    sign(cli, pkg, keys.revoked)
    assert verify(cli, pkg, keys.revoked.keyring).returncode == 0  # before the revocation
    for extra in ((), ("--allow-unauthenticated",)):
        assert_clean_error(verify(cli, pkg, keys.revoked_ring, extra=extra), SIG_ERR,
                           "has been revoked")
    # debsig-verify (gpg --verify) accepts it, with a warning only: docs/signing.md says so.


def test_keyring_sources(cli: Cli, keys: Keys, pkg: Path, tmp_path: Path) -> None:
    sign(cli, pkg, keys.store)
    ring_dir = tmp_path / "rings"
    ring_dir.mkdir()
    armoured = gpg(keys.store.home, "--export", "--armor", keys.store.fingerprint).stdout
    (ring_dir / "store.asc").write_bytes(armoured)
    (ring_dir / "README").write_text("not a keyring, ignored")
    base = ["verify", "--force-missing-framework", pkg]
    env = {"CLICK_FRAMEWORKS_DIR": "/nonexistent"}
    assert cli(*base, env={**env, "CLICK_KEYRINGS": str(ring_dir)}).returncode == 0
    assert cli(*base, env={**env, "CLICK_KEYRINGS": f"/nonexistent-dir:{ring_dir}"},
               check=False).returncode == 1  # a missing entry is an error, not ignored
    good = cli("verify", "--force-missing-framework", "--keyring", ring_dir / "store.asc", pkg,
               env=NO_SYSTEM_KEYS)
    assert good.returncode == 0 and good.stdout == ""  # docs/signing.md: nothing but the flag's
    assert all(line.startswith("click-build: warning: ignoring missing framework ")
               for line in good.stderr.splitlines())
    result = cli(*base, env={**env, "CLICK_KEYRINGS": ""}, check=False)
    assert_clean_error(result, "no trusted keyring is configured")
    result = cli(*base[:2], "--keyring", tmp_path / "missing.gpg", pkg, check=False,
                 env=NO_SYSTEM_KEYS)
    assert_clean_error(result, "missing.gpg (from --keyring) does not exist")


def test_verify_after_audit_problems(cli: Cli, keys: Keys, tmp_path: Path,
                                     make_app: Callable[..., Path]) -> None:
    """A good signature does not excuse a bad package: the audit still runs."""
    app = make_app(framework="missing-framework", hooks={})
    cli("build", "--no-validate", "-o", tmp_path, app)
    (click,) = tmp_path.glob("*.click")
    sign(cli, click, keys.store)
    result = cli("verify", "--keyring", keys.store.keyring, click, check=False,
                 env=NO_SYSTEM_KEYS)
    assert_clean_error(result, 'Framework "missing-framework" not present')
