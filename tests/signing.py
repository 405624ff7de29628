"""Throwaway OpenPGP keys, packages and debsig-verify setups for the signing tests.

Everything here drives the real tools (gpg, ar, debsigs, debsig-verify):
keys live in short-lived GNUPGHOMEs under /tmp (gpg-agent's socket path must
stay short), and every agent started is killed when the keys are dropped, or, if
the test process was killed outright, when the next run makes its keys.
"""

from __future__ import annotations

import json
import os
import shutil
import stat
import subprocess
import sys
import tarfile
import tempfile
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
from conftest import Cli, need, run

CLICK_BUILD = [sys.executable, "-m", "click_build"]
APP_MANIFEST = {
    "name": "com.example.signed",
    "version": "1.0",
    "framework": "ubuntu-sdk-20.04",
    "maintainer": "Jane Doe <jane@example.com>",
    "title": "Signed",
}
# CLICK_KEYRINGS set but empty: no system keyring can make a test pass or fail.
NO_SYSTEM_KEYS = {"CLICK_KEYRINGS": "", "CLICK_FRAMEWORKS_DIR": "/nonexistent"}


@dataclass(frozen=True)
class Key:
    name: str
    home: Path  # GNUPGHOME holding the secret key
    fingerprint: str
    keyring: Path  # the public key as a device holds it (binary, gpg --export)

    @property
    def key_id(self) -> str:
        return self.fingerprint[-16:]

    def env(self) -> dict[str, str]:
        return {"GNUPGHOME": str(self.home)}


def gpg(home: Path, *args: str, stdin: bytes | None = None) -> subprocess.CompletedProcess[bytes]:
    result = subprocess.run(
        [need("gpg"), "--homedir", str(home), "--batch", *args],
        input=stdin, capture_output=True,
    )
    if result.returncode != 0:
        raise AssertionError(f"gpg {args} failed: {result.stderr.decode()}")
    return result


def generate(base: Path, name: str, *, faked_time: str | None = None, expire: str = "never",
             gpg_conf: str = "") -> Key:
    home = base / name
    home.mkdir(mode=0o700)
    if gpg_conf:
        (home / "gpg.conf").write_text(gpg_conf)
    fake = ["--faked-system-time", faked_time] if faked_time else []
    gpg(home, *fake, "--passphrase", "", "--quick-gen-key",
        f"Test {name} <{name}@example.com>", "ed25519", "sign", expire)
    listing = gpg(home, "--with-colons", "--list-keys").stdout.decode()
    fpr = next(line.split(":")[9] for line in listing.splitlines() if line.startswith("fpr:"))
    keyring = base / f"{name}.gpg"
    keyring.write_bytes(gpg(home, "--export", fpr).stdout)
    return Key(name, home, fpr, keyring)


def revoked_keyring(key: Key, base: Path) -> Path:
    """The key's public keyring after its (auto-generated) revocation is published."""
    scratch = base / f"{key.name}-revoked-home"
    scratch.mkdir(mode=0o700)
    gpg(scratch, "--import", str(key.keyring))
    cert = (key.home / "openpgp-revocs.d" / f"{key.fingerprint}.rev").read_text()
    gpg(scratch, "--import", stdin=cert.replace(":-----BEGIN", "-----BEGIN").encode())
    out = base / f"{key.name}-revoked.gpg"
    out.write_bytes(gpg(scratch, "--export", key.fingerprint).stdout)
    kill_agent(scratch)
    return out


def kill_agent(home: Path) -> None:
    subprocess.run(["gpgconf", "--homedir", str(home), "--kill", "all"], capture_output=True)


@dataclass(frozen=True)
class Keys:
    base: Path
    store: Key  # the trusted origin key
    evil: Key  # a valid key nobody trusts
    expired: Key  # expired after it signed (made with a faked clock)
    revoked: Key  # revoked after it signed: verify against revoked_ring
    revoked_ring: Path
    debsigs: Key  # its gpg.conf asks for SHA-512, for packages signed by debsigs itself


#: The keys' folders: ``/tmp/cbsig-PID-*``, PID the test process that made them.
KEYS_PREFIX = "cbsig-"


def sweep_dead_runs(top: Path = Path("/tmp")) -> None:
    """The keys' folders of test processes killed outright (their fixture never ended):
    their agents stopped (a daemon each, which nothing else would stop), then removed."""
    for base in top.glob(f"{KEYS_PREFIX}*-*"):
        pid = base.name[len(KEYS_PREFIX):].split("-", 1)[0]
        st = base.lstat()
        if not pid.isdigit() or not stat.S_ISDIR(st.st_mode) or st.st_uid != os.geteuid():
            continue
        try:
            os.kill(int(pid), 0)
            continue  # that run goes on
        except PermissionError:
            continue
        except ProcessLookupError:
            pass
        for home in base.iterdir():
            if home.is_dir() and not home.is_symlink():
                kill_agent(home)
        shutil.rmtree(base, ignore_errors=True)


@pytest.fixture(scope="session")
def keys() -> Iterator[Keys]:
    need("gpg")
    sweep_dead_runs()
    base = Path(tempfile.mkdtemp(prefix=f"{KEYS_PREFIX}{os.getpid()}-", dir="/tmp"))
    made: list[Key] = []
    try:
        for name in ("store", "evil", "revoked"):
            made.append(generate(base, name))
        made.append(generate(base, "expired", faked_time="20200101T000000!", expire="1y"))
        made.append(generate(base, "debsigs", gpg_conf="digest-algo SHA512\n"
                                                       "personal-digest-preferences SHA512\n"))
        by = {k.name: k for k in made}
        yield Keys(base, by["store"], by["evil"], by["expired"], by["revoked"],
                   revoked_keyring(by["revoked"], base), by["debsigs"])
    finally:
        for key in made:
            kill_agent(key.home)
        shutil.rmtree(base, ignore_errors=True)


def build_app(root: Path, version: str = "1.0") -> Path:
    """A small real package built by click-build."""
    app = root / f"app-{version}"
    (app / "sub").mkdir(parents=True)
    (app / "manifest.json").write_text(json.dumps(dict(APP_MANIFEST, version=version)))
    (app / "main.qml").write_text(f"import QtQuick 2.7\nRectangle {{}} // {version}\n")
    (app / "sub" / "data.bin").write_bytes(os.urandom(3000))
    run([*CLICK_BUILD, "build", "--no-validate", "-o", str(root), str(app)],
        env={"SOURCE_DATE_EPOCH": "1700000000"})
    return root / f"{APP_MANIFEST['name']}_{version}_all.click"


@pytest.fixture(scope="session")
def unsigned_click(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """One package built by click-build; tests sign and tamper with copies."""
    return build_app(tmp_path_factory.mktemp("signed-app"))


def ar_names(path: Path) -> list[str]:
    return run([need("ar"), "t", str(path)]).stdout.split()


def ar_extract(path: Path, member: str) -> bytes:
    return subprocess.run([need("ar"), "p", str(path), member], capture_output=True,
                          check=True).stdout


def signed_bytes(path: Path) -> bytes:
    """What debsigs signs: ``ar p PKG debian-binary control.tar.gz data.tar.gz``."""
    return b"".join(ar_extract(path, m) for m in ("debian-binary", "control.tar.gz",
                                                  "data.tar.gz"))


def debsigs_sign(path: Path, key: Key, kind: str = "origin") -> None:
    run([need("debsigs"), f"--sign={kind}", f"--default-key={key.fingerprint}", str(path)],
        env=key.env())


def debsigs_list(path: Path, key: Key) -> str:
    """``debsigs --list``; its gpg runs in the key's home, never in the user's ~/.gnupg."""
    return run([need("debsigs"), "--list", str(path)], env=key.env()).stdout


def policy_xml(key_id: str, keyring_file: str = "origin.pub", rule_id: str | None = None) -> str:
    ns = "https://www.debian.org/debsig/1.0/"
    rid = rule_id or key_id
    return (
        f'<?xml version="1.0"?>\n<!DOCTYPE Policy SYSTEM "{ns}policy.dtd">\n'
        f'<Policy xmlns="{ns}">\n'
        f'<Origin Name="click-build-test" id="{key_id}" Description="test store"/>\n'
        f'<Selection>\n<Required Type="origin" File="{keyring_file}" id="{rid}"/>\n'
        "</Selection>\n"
        f'<Verification>\n<Required Type="origin" File="{keyring_file}" id="{rid}"/>\n'
        "</Verification>\n</Policy>\n"
    )


def install_policy(policies: Path, keyrings: Path, key: Key) -> list[Path]:
    """debsig-verify's setup for ``key``; returns what was created (to remove)."""
    pol_dir, ring_dir = policies / key.key_id, keyrings / key.key_id
    pol_dir.mkdir(parents=True)
    ring_dir.mkdir(parents=True)
    (pol_dir / "generic.pol").write_text(policy_xml(key.key_id))
    shutil.copy(key.keyring, ring_dir / "origin.pub")
    return [pol_dir, ring_dir]


def debsig_verify(path: Path, key: Key, tmp: Path) -> subprocess.CompletedProcess[str]:
    """Run the real debsig-verify with a policy trusting ``key`` in temporary dirs."""
    policies, keyrings = tmp / "debsig-policies", tmp / "debsig-keyrings"
    if not (policies / key.key_id).exists():
        install_policy(policies, keyrings, key)
    return run([need("debsig-verify"), "--policies-dir", str(policies), "--keyrings-dir",
                str(keyrings), str(path)], check=False)


def sign(cli: Cli, path: Path, key: Key, *extra: str,
         check: bool = True) -> subprocess.CompletedProcess[str]:
    """``click-build sign`` with ``key`` from its own GNUPGHOME."""
    return cli("sign", "--key", key.fingerprint, *extra, path, env=key.env(), check=check)


def signed_copy(cli: Cli, source: Path, dest: Path, key: Key) -> Path:
    """A copy of ``source`` at ``dest``, signed by ``key``."""
    shutil.copy(source, dest)
    sign(cli, dest, key)
    return dest


# ------------------------------------------------------------ tampering ---
# Each takes (signed package, scratch dir, keys) and alters the package as an attacker
# would, mostly with ar as the original's integration suite does.

def _ar(tmp: Path, *args: str) -> None:
    run(["ar", *args], cwd=tmp)


def _write(tmp: Path, name: str, data: bytes) -> str:
    (tmp / name).write_bytes(data)
    return name


def ar_put(pkg: Path, tmp: Path, name: str, data: bytes) -> None:
    """``ar r``: replace member ``name`` in place, or append it."""
    _ar(tmp, "r", str(pkg), _write(tmp, name, data))


def _alter(member: str) -> Callable[[Path, Path, Keys], None]:
    def tamper(pkg: Path, tmp: Path, keys: Keys) -> None:
        ar_put(pkg, tmp, member, ar_extract(pkg, member) + b"\0")
    return tamper


def _evil_data(tmp: Path, name: str) -> str:
    (tmp / "README.evil").write_text("I am a nasty README")
    with tarfile.open(tmp / name, "w:" + name.rsplit(".", 1)[1]) as tar:
        tar.add(tmp / "README.evil", arcname="./README.evil")
    return name


def _inject(pkg: Path, tmp: Path, keys: Keys) -> None:
    _ar(tmp, "r", "-b", "data.tar.gz", str(pkg), _evil_data(tmp, "data.tar.bz2"))


def _replace(pkg: Path, tmp: Path, keys: Keys) -> None:
    _ar(tmp, "d", str(pkg), "data.tar.gz")
    _ar(tmp, "r", str(pkg), _evil_data(tmp, "data.tar.bz2"))


def _prepend_evil_signature(pkg: Path, tmp: Path, keys: Keys) -> None:
    good = ar_extract(pkg, "_gpgorigin")
    evil = gpg(keys.evil.home, "--detach-sign", stdin=signed_bytes(pkg)).stdout
    ar_put(pkg, tmp, "_gpgorigin", evil + good)


def _signature_from_other_package(pkg: Path, tmp: Path, keys: Keys) -> None:
    other = gpg(keys.store.home, "--detach-sign", "--digest-algo", "SHA512",
                stdin=signed_bytes(pkg) + b"other package").stdout
    ar_put(pkg, tmp, "_gpgorigin", other)


def _signature_moved_first(pkg: Path, tmp: Path, keys: Keys) -> None:
    _ar(tmp, "m", "-b", "debian-binary", str(pkg), "_gpgorigin")


def _not_a_signature(pkg: Path, tmp: Path, keys: Keys) -> None:
    ar_put(pkg, tmp, "_gpgorigin", b"no-valid-signature")


def _armoured(pkg: Path, tmp: Path, keys: Keys) -> None:
    sig = gpg(keys.store.home, "--detach-sign", "--armor", stdin=signed_bytes(pkg)).stdout
    ar_put(pkg, tmp, "_gpgorigin", sig)


def _inline_signed(pkg: Path, tmp: Path, keys: Keys) -> None:
    # a signed message carries its own data: gpgv must never see it as the package's
    sig = gpg(keys.store.home, "--sign", stdin=b"harmless").stdout
    ar_put(pkg, tmp, "_gpgorigin", sig)


def _huge_signature(pkg: Path, tmp: Path, keys: Keys) -> None:
    ar_put(pkg, tmp, "_gpgmaint", ar_extract(pkg, "_gpgorigin") * 2000)


def _bad_maint(pkg: Path, tmp: Path, keys: Keys) -> None:
    other = gpg(keys.store.home, "--detach-sign", stdin=b"something else").stdout
    ar_put(pkg, tmp, "_gpgmaint", other)


def _trailing_junk(pkg: Path, tmp: Path, keys: Keys) -> None:
    with open(pkg, "ab") as f:
        f.write(b"junk that is not an ar member header at all" * 3)


def _trailing_member(pkg: Path, tmp: Path, keys: Keys) -> None:
    ar_put(pkg, tmp, "extra", b"payload")


def _duplicate_data(pkg: Path, tmp: Path, keys: Keys) -> None:
    _ar(tmp, "q", str(pkg), _write(tmp, "data.tar.gz", ar_extract(pkg, "data.tar.gz")))


# (tamper, fragment of our error, debsig-verify's exit code or None when it accepts)
TAMPERS = {
    "control altered": (_alter("control.tar.gz"), "BAD signature", 13),
    "data altered": (_alter("data.tar.gz"), "BAD signature", 13),
    "debian-binary altered": (_alter("debian-binary"), "BAD signature", 13),
    # debsig-verify picks data.tar.gz by name and accepts: the original caught it later
    "data injected": (_inject, "unexpected member 'data.tar.gz' after data.tar.bz2", 0),
    "data replaced": (_replace, "member 4 is '_gpgorigin'", 13),
    "duplicate data": (_duplicate_data, "unexpected member 'data.tar.gz'", 0),
    "evil signature prepended": (_prepend_evil_signature, "holds 2 signatures", None),
    "signature over other bytes": (_signature_from_other_package, "BAD signature", 13),
    "signature moved first": (_signature_moved_first, "member 1 is '_gpgorigin'", 0),
    "not a signature": (_not_a_signature, "not a valid detached OpenPGP signature", 10),
    "armoured signature": (_armoured, "ASCII-armoured", None),
    "inline signed message": (_inline_signed, "not a valid detached OpenPGP signature", None),
    "huge signature member": (_huge_signature, "far too large for a signature", 0),
    "bad maint signature": (_bad_maint, "BAD signature in _gpgmaint", 0),
    "trailing junk": (_trailing_junk, "trailing or damaged data", None),
    "trailing member": (_trailing_member, "unexpected member 'extra'", 0),
}
