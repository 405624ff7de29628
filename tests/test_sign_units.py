"""The pieces of signature checking: packet parser, armour, status lines, keyring lookup."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest
from conftest import Cli, assert_clean_error
from deadlines import seconds
from hypothesis import given, settings
from hypothesis import strategies as st
from signing import Keys, build_app, gpg, install_policy, policy_xml, signed_copy

from click_build.errors import ClickError, SignatureError
from click_build.signing.gpg import parse_status
from click_build.signing.keyrings import debsig_keyrings, same_key
from click_build.signing.openpgp import dearmor, parse_signature


def _signature(keys: Keys, *args: str) -> bytes:
    return gpg(keys.store.home, "--detach-sign", *args, stdin=b"some data").stdout


# ------------------------------------------------------------------ packets ---

def test_parse_real_signatures(keys: Keys) -> None:
    packet = parse_signature(_signature(keys, "--digest-algo", "SHA512"), "_gpgorigin")
    assert packet.version == 4 and packet.sig_class == 0 and packet.hash_name == "SHA512"
    assert packet.pubkey_name == "EdDSA"
    assert packet.issuer_fingerprint == keys.store.fingerprint
    assert packet.issuer_key_id == keys.store.key_id
    assert abs(packet.created - time.time()) < 600
    # gpg's old-format packet headers (--rfc2440) parse too
    old = parse_signature(_signature(keys, "--rfc2440", "--digest-algo", "SHA256"), "x")
    assert old.issuer_key_id == keys.store.key_id and old.hash_name == "SHA256"


@pytest.mark.parametrize(("args", "fragment"), [
    (("--digest-algo", "SHA1"), "uses the SHA1 digest"),
    (("--textmode",), "class 0x01"),
    (("--armor",), "ASCII-armoured"),
])
def test_parse_refuses_non_debsigs_signatures(keys: Keys, args: tuple[str, ...],
                                              fragment: str) -> None:
    with pytest.raises(SignatureError, match=fragment) as e:
        parse_signature(_signature(keys, *args), "_gpgorigin")
    assert str(e.value).startswith("Signature verification error: _gpgorigin")


def test_parse_refuses_truncation_and_extras(keys: Keys) -> None:
    good = _signature(keys)
    for cut in range(len(good)):
        with pytest.raises(SignatureError):
            parse_signature(good[:cut], "_gpgorigin")
    with pytest.raises(SignatureError, match="holds 2 signatures"):
        parse_signature(good + good, "_gpgorigin")
    with pytest.raises(SignatureError, match="not just one signature"):
        parse_signature(good + b"\xcb\x05b\x00\x00\x00\x00", "_gpgorigin")  # + literal packet


@settings(max_examples=300, deadline=None)
@given(st.binary(max_size=400))
def test_parse_never_crashes(data: bytes) -> None:
    try:
        parse_signature(data, "_gpgorigin")
    except SignatureError as e:
        assert "\n" not in str(e)


def test_dearmor(keys: Keys) -> None:
    armoured = gpg(keys.store.home, "--export", "--armor", keys.store.fingerprint).stdout
    assert dearmor(armoured, "k") == keys.store.keyring.read_bytes()
    assert dearmor(b"junk\n" + armoured + armoured, "k") == keys.store.keyring.read_bytes() * 2
    with pytest.raises(SignatureError, match="no END line"):
        dearmor(armoured.split(b"-----END")[0], "k")
    with pytest.raises(SignatureError, match="no armoured OpenPGP block"):
        dearmor(b"hello", "k")


def test_parse_status() -> None:
    fpr = "A" * 40
    text = "\n".join([
        "[GNUPG:] NEWSIG",
        f"[GNUPG:] KEY_CONSIDERED {fpr} 0",
        "[GNUPG:] KEYEXPIRED 1609372800",
        "[GNUPG:] EXPKEYSIG AAAAAAAAAAAAAAAA Old <old@example.com>",
        f"[GNUPG:] VALIDSIG {fpr} 2020-02-01 1580515200 0 4 0 22 10 00 {fpr}",
        "[GNUPG:] NEWSIG",
        f"[GNUPG:] ERRSIG BBBBBBBBBBBBBBBB 22 10 00 1580515200 9 {'B' * 40}",
        "[GNUPG:] NO_PUBKEY BBBBBBBBBBBBBBBB",
        "[GNUPG:] NEWSIG",
        "[GNUPG:] BADSIG CCCCCCCCCCCCCCCC Evil <e@example.com>",
    ])
    first, second, third = parse_status(text)
    assert (first.result, first.expires, first.primary_fingerprint, first.user_id) == (
        "expired-key", 1609372800, fpr, "Old <old@example.com>")
    assert (second.result, second.key_id, second.fingerprint) == ("no-key", "B" * 16, "B" * 40)
    assert (third.result, third.key_id) == ("bad", "C" * 16)


# ----------------------------------------------------------------- keyrings ---

def test_same_key() -> None:
    assert same_key("0123456789ABCDEF", "FFFF0123456789abcdef")
    assert not same_key("0123456789ABCDEF", "FFFF0123456789ABCDEE")
    assert not same_key("", "ABC")


def test_debsig_keyrings_follow_policies(keys: Keys, tmp_path: Path) -> None:
    pols, rings = tmp_path / "policies", tmp_path / "keyrings"
    key = keys.store
    assert debsig_keyrings(key.fingerprint, key.key_id, pols, rings) == []
    install_policy(pols, rings, key)
    expected = [rings / key.key_id / "origin.pub"]
    assert debsig_keyrings(key.fingerprint, key.key_id, pols, rings) == expected
    assert debsig_keyrings("", key.key_id, pols, rings) == expected
    assert debsig_keyrings(keys.evil.fingerprint, keys.evil.key_id, pols, rings) == []
    # a rule for another key, a broken policy and a policy naming a missing file add nothing
    (pols / key.key_id / "generic.pol").write_text(policy_xml(key.key_id, rule_id="F" * 16))
    (pols / key.key_id / "broken.pol").write_text("<Policy")
    (pols / key.key_id / "other.pol").write_text(policy_xml(key.key_id, "missing.pub"))
    assert debsig_keyrings(key.fingerprint, key.key_id, pols, rings) == []
    # the directory named by the full fingerprint is preferred, as debsig-verify does
    full = pols / key.fingerprint
    full.mkdir()
    (full / "generic.pol").write_text(policy_xml(key.key_id))
    (rings / key.fingerprint).mkdir()
    shutil.copy(key.keyring, rings / key.fingerprint / "origin.pub")
    assert debsig_keyrings(key.fingerprint, key.key_id, pols, rings) == [
        rings / key.fingerprint / "origin.pub"]


def test_bad_keyring_file(cli: Cli, keys: Keys, unsigned_click: Path, tmp_path: Path) -> None:
    pkg = signed_copy(cli, unsigned_click, tmp_path / "p.click", keys.store)
    garbage = tmp_path / "garbage.gpg"
    garbage.write_bytes(b"\x99 this is not a keyring")
    result = cli("verify", "--force-missing-framework", "--keyring", garbage, pkg, check=False,
                 env={"CLICK_KEYRINGS": "", "CLICK_FRAMEWORKS_DIR": "/nonexistent"})
    assert_clean_error(result, "Signature verification error: ")
    broken = tmp_path / "broken.asc"
    broken.write_text("-----BEGIN PGP PUBLIC KEY BLOCK-----\n\n!!!!\n-----END PGP PUBLIC KEY BLOCK-----\n")
    result = cli("verify", "--force-missing-framework", "--keyring", broken, pkg, check=False,
                 env={"CLICK_KEYRINGS": "", "CLICK_FRAMEWORKS_DIR": "/nonexistent"})
    assert_clean_error(result, "broken.asc: an armoured block is not valid base64")
    # a real keyring with one byte of its base64 made non-ASCII
    armoured = gpg(keys.store.home, "--export", "--armor", keys.store.fingerprint).stdout
    lines = armoured.split(b"\n")
    body = next(i for i, line in enumerate(lines) if len(line) > 40)
    lines[body] = b"\xe9" + lines[body][1:]
    damaged = tmp_path / "damaged.asc"
    damaged.write_bytes(b"\n".join(lines))
    result = cli("verify", "--force-missing-framework", "--keyring", damaged, pkg, check=False,
                 env={"CLICK_KEYRINGS": "", "CLICK_FRAMEWORKS_DIR": "/nonexistent"})
    assert_clean_error(result, "damaged.asc: an armoured block is not valid base64")


@pytest.mark.parametrize(("content", "fragment"), [
    (b"", "empty.gpg is empty: it holds no key"),  # gpg --export of a name it has no key for
    (b"garbage\n", "garbage.gpg is not an OpenPGP keyring"),
    (b"!<arch>\ndebian-binary", "garbage.gpg is not an OpenPGP keyring"),
])
def test_a_keyring_that_is_none_is_named(cli: Cli, keys: Keys, unsigned_click: Path,
                                         tmp_path: Path, content: bytes, fragment: str) -> None:
    """gpgv stops searching at a file that is no keyring, the good keyring after it
    too: the signer's key was reported missing from files that held it."""
    pkg = signed_copy(cli, unsigned_click, tmp_path / "p.click", keys.store)
    bad = tmp_path / fragment.split(" ")[0]
    bad.write_bytes(content)
    env = {"CLICK_KEYRINGS": "", "CLICK_FRAMEWORKS_DIR": "/nonexistent"}
    for args in (["verify"], ["install", "--root", str(tmp_path / "root")]):
        result = cli(*args, "--force-missing-framework", "--keyring", bad,
                     "--keyring", keys.store.keyring, pkg, check=False, env=env)
        assert_clean_error(result, f"Signature verification error: keyring {bad}", fragment)
    # an empty file among a directory's keyrings holds no key: passed over
    rings = tmp_path / "rings"
    rings.mkdir()
    (rings / "0-empty.gpg").write_bytes(b"")
    shutil.copy(keys.store.keyring, rings / "store.gpg")
    cli("verify", "--force-missing-framework", pkg, env={**env, "CLICK_KEYRINGS": str(rings)})


def test_a_keyring_directory_without_keyrings_is_named(cli: Cli, keys: Keys,
                                                      unsigned_click: Path,
                                                      tmp_path: Path) -> None:
    pkg = signed_copy(cli, unsigned_click, tmp_path / "p.click", keys.store)
    folder = tmp_path / "keys"
    folder.mkdir()
    (folder / "README").write_text("no keyring here")
    result = cli("verify", "--force-missing-framework", "--keyring", folder, pkg, check=False,
                 env={"CLICK_KEYRINGS": "", "CLICK_FRAMEWORKS_DIR": "/nonexistent"})
    assert_clean_error(result, f"keyring {folder} (from --keyring) is a directory holding "
                               "no keyring")
    shutil.copy(keys.store.keyring, folder / "store.gpg")
    cli("verify", "--force-missing-framework", "--keyring", folder, pkg,
        env={"CLICK_KEYRINGS": "", "CLICK_FRAMEWORKS_DIR": "/nonexistent"})


def test_api_on_open_file_and_errors(keys: Keys, unsigned_click: Path, tmp_path: Path,
                                     monkeypatch: pytest.MonkeyPatch) -> None:
    """The functions the installer calls, in-process."""
    from click_build.package import open_click
    from click_build.sign import check_file_signature, check_package_signature, sign_package

    pkg = Path(shutil.copy(unsigned_click, tmp_path / "p.click"))
    monkeypatch.setenv("GNUPGHOME", str(keys.store.home))
    result = sign_package(pkg, keys.store.fingerprint)
    assert result.member == "_gpgorigin" and not result.replaced
    with open(pkg, "rb") as f:
        verified = check_file_signature(f, [keys.store.keyring])
        assert verified.trusted and verified.fingerprint == keys.store.fingerprint
        with open_click(f) as opened:
            check_package_signature(opened, [keys.store.keyring])
            with pytest.raises(SignatureError, match="not in the --keyring files"):
                check_package_signature(opened, [keys.evil.keyring])
    with pytest.raises(ClickError, match="does not start with an ar archive header"):
        (tmp_path / "text").write_text("hello")
        check_file_signature(tmp_path / "text", [keys.store.keyring])
    with pytest.raises(SignatureError, match="cannot read"):
        check_file_signature(tmp_path / "missing", [keys.store.keyring])


# ------------------------------------------------------------------- scale ---

@pytest.mark.slow
def test_large_package_is_streamed(cli: Cli, keys: Keys, tmp_path: Path) -> None:
    """Signing and verifying 200 MiB each take under 50 MiB of memory: members are piped,
    not read."""
    pkg = build_app(tmp_path, "9.0")
    big = tmp_path / "app-9.0" / "big.bin"
    with open(big, "wb") as f:
        for _ in range(200):
            f.write(os.urandom(1 << 20))
    pkg.unlink()
    cli("build", "--no-validate", "-o", tmp_path, tmp_path / "app-9.0")
    assert pkg.stat().st_size > 200 << 20

    def peak_kib(*args: object) -> tuple[int, float]:
        start = time.monotonic()
        # Measured from a fresh, small interpreter: a child forked straight from this
        # (large) pytest worker would report the worker's memory as its own peak.
        probe = ("import os, subprocess, sys\n"
                 "p = subprocess.Popen(sys.argv[1:], stdout=subprocess.DEVNULL)\n"
                 "_, status, usage = os.wait4(p.pid, 0)\n"
                 "print(usage.ru_maxrss, file=sys.stderr)\n"
                 "sys.exit(os.waitstatus_to_exitcode(status))\n")
        proc = subprocess.run(
            [sys.executable, "-c", probe, sys.executable, "-m", "click_build", *map(str, args)],
            env={**os.environ, **keys.store.env(), "CLICK_KEYRINGS": "",
                 "CLICK_FRAMEWORKS_DIR": "/nonexistent"},
            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, timeout=seconds(300))
        errors = proc.stderr
        assert proc.returncode == 0, errors
        return int(errors.split()[-1]), time.monotonic() - start

    sign_kib, sign_s = peak_kib("sign", "--key", keys.store.fingerprint, pkg)
    verify_kib, verify_s = peak_kib("verify", "--force-missing-framework", "--keyring",
                                    keys.store.keyring, pkg)
    print(f"200 MiB package: sign {sign_s:.2f}s {sign_kib // 1024} MiB peak, "
          f"verify {verify_s:.2f}s {verify_kib // 1024} MiB peak")
    assert sign_kib < 50 * 1024 and verify_kib < 50 * 1024  # docs/signing.md says so
