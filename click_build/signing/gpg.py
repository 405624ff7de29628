"""Running the system's ``gpg`` (to sign) and ``gpgv`` (to verify).

Both read the signed bytes from a pipe that a thread fills straight from the
package file (``sendfile``), so a package of any size costs no memory and no
temporary copy.  Results come from the ``--status-fd`` lines, never from the
human-readable text or the exit code alone: gpgv exits 0 for a good signature
by an expired or revoked key.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import tempfile
import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from ..errors import ArchiveError, ConfigError, SignatureError
from .openpgp import check_keyring, dearmor, is_armored

__all__ = ["SignatureStatus", "detach_sign", "gpgv_verify"]

Result = Literal["good", "bad", "expired-key", "revoked-key", "expired-sig", "no-key", "error"]
_RESULTS: dict[str, Result] = {
    "GOODSIG": "good", "BADSIG": "bad", "EXPKEYSIG": "expired-key",
    "REVKEYSIG": "revoked-key", "EXPSIG": "expired-sig", "ERRSIG": "error",
}
#: ERRSIG's return code for "public key not found".
_ERRSIG_NO_PUBKEY = "9"
_ENV = {"LC_ALL": "C", "LANGUAGE": "C"}


@dataclass
class SignatureStatus:
    """What gpgv said about one signature (one ``NEWSIG`` block)."""

    result: Result = "error"
    key_id: str = ""
    fingerprint: str = ""  # of the signing (sub)key, from VALIDSIG or ERRSIG
    primary_fingerprint: str = ""
    user_id: str = ""
    created: int = 0
    expires: int = 0  # of the signature (EXPSIG) or key (KEYEXPIRED); 0 = never
    detail: str = ""


def _tool(name: str, package: str) -> str:
    path = shutil.which(name)
    if path is None:
        raise ConfigError(f"{name} is not installed; install the {package} package")
    return path


def parse_status(text: str) -> list[SignatureStatus]:
    """One :class:`SignatureStatus` per ``NEWSIG`` in gpg's status output."""
    statuses: list[SignatureStatus] = []
    for line in text.splitlines():
        if not line.startswith("[GNUPG:] "):
            continue
        keyword, _, rest = line[9:].partition(" ")
        args = rest.split(" ")
        if keyword == "NEWSIG" or (not statuses and keyword in _RESULTS):
            statuses.append(SignatureStatus())
            if keyword == "NEWSIG":
                continue
        if not statuses:
            continue
        st = statuses[-1]
        if keyword in _RESULTS:
            st.result = _RESULTS[keyword]
            st.key_id = args[0]
            if keyword == "ERRSIG":
                st.detail = args[5] if len(args) > 5 else ""
                st.created = int(args[4]) if len(args) > 4 and args[4].isdigit() else 0
                st.fingerprint = args[6] if len(args) > 6 and args[6] != "-" else ""
                if st.detail == _ERRSIG_NO_PUBKEY:
                    st.result = "no-key"
            else:
                st.user_id = rest.partition(" ")[2]
        elif keyword == "NO_PUBKEY":
            st.result = "no-key"
            st.key_id = args[0]
        elif keyword == "VALIDSIG" and len(args) >= 10:
            st.fingerprint = args[0]
            st.created = int(args[2]) if args[2].isdigit() else 0
            if st.result == "expired-sig" and args[3].isdigit():
                st.expires = int(args[3])
            st.primary_fingerprint = args[9]
        elif keyword == "KEYEXPIRED" and args[0].isdigit():
            st.expires = int(args[0])
    return statuses


def _run_fed(
    cmd: list[str], feed: Callable[[int], None], what: str
) -> tuple[int, bytes, str]:
    """Run ``cmd`` with ``feed`` writing its stdin from a thread; (rc, stdout, stderr)."""
    read_fd, write_fd = os.pipe()
    errors: list[BaseException] = []

    def writer() -> None:
        try:
            feed(write_fd)
        except BrokenPipeError:
            pass  # the tool stopped reading: it has already failed, and says why
        except (OSError, ArchiveError) as e:
            errors.append(e)
        finally:
            os.close(write_fd)

    try:
        proc = subprocess.Popen(
            cmd, stdin=read_fd, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
            env={**os.environ, **_ENV},
        )
    except OSError as e:
        os.close(read_fd)
        os.close(write_fd)
        raise ConfigError(f"cannot run {cmd[0]}: {e.strerror}") from None
    os.close(read_fd)
    thread = threading.Thread(target=writer, name=f"{what}-feed", daemon=True)
    thread.start()
    out, err = proc.communicate()
    thread.join()
    if errors:
        if isinstance(errors[0], ArchiveError):
            raise errors[0]
        raise SignatureError(f"cannot read the package for {what}: {errors[0]}")
    return proc.returncode, out, err.decode("utf-8", "replace")


def _binary_keyring(path: Path, scratch: Path, index: int) -> Path:
    """``path`` itself, or a dearmoured copy when it is ASCII-armoured (gpgv needs binary);
    either checked to be a keyring first."""
    try:
        with open(path, "rb") as f:
            data = f.read()
    except OSError as e:
        raise ConfigError(f"keyring {path}: cannot read: {e.strerror}") from None
    armored = is_armored(data[:64])
    if armored:
        data = dearmor(data, f"keyring {path}")
    check_keyring(data, f"keyring {path}")
    if not armored:
        return path.resolve()
    out = scratch / f"keyring-{index}.gpg"
    out.write_bytes(data)
    return out


def gpgv_verify(
    signatures: bytes, feed: Callable[[int], None], keyrings: Sequence[Path]
) -> list[SignatureStatus]:
    """Verify the detached ``signatures`` over the bytes ``feed`` writes.

    Only ``keyrings`` are trusted: gpgv runs with an empty temporary home, so
    no user configuration or default keyring can widen that set.
    """
    gpgv = _tool("gpgv", "gpgv")
    with tempfile.TemporaryDirectory(prefix="click-build-gpgv-") as tmp:
        scratch = Path(tmp)
        os.chmod(scratch, 0o700)
        sig_path = scratch / "signature"
        sig_path.write_bytes(signatures)
        cmd = [gpgv, "--homedir", tmp, "--status-fd", "1", "--weak-digest", "SHA1"]
        for i, keyring in enumerate(keyrings):
            cmd += ["--keyring", str(_binary_keyring(keyring, scratch, i))]
        cmd += [str(sig_path), "-"]
        _, out, err = _run_fed(cmd, feed, "gpgv")
    statuses = parse_status(out.decode("utf-8", "replace"))
    if not statuses:
        last = err.strip().splitlines()[-1:] or ["no output"]
        raise SignatureError(f"Signature verification error: gpgv failed: {last[0]}")
    return statuses


@dataclass(frozen=True)
class Signed:
    """A fresh detached signature and the key that made it."""

    signature: bytes
    fingerprint: str


def detach_sign(
    feed: Callable[[int], None], key: str | None, homedir: Path | None, digest: str
) -> Signed:
    """A binary detached signature, as debsigs makes, but with a strong digest."""
    gpg = _tool("gpg", "gpg")
    cmd = [gpg, "--batch", "--status-fd", "2", "--no-armor", "--detach-sign",
           "--digest-algo", digest, "--output", "-"]
    if homedir is not None:
        cmd[1:1] = ["--homedir", str(homedir)]
    if key:
        cmd[1:1] = ["--local-user", key]
    rc, out, err = _run_fed(cmd, feed, "gpg")
    created = [line.split() for line in err.splitlines() if line.startswith("[GNUPG:] SIG_CREATED ")]
    if rc == 0 and created and out:
        return Signed(out, created[-1][-1])
    who = f"key {key!r}" if key else "the default key"
    home = f" in {homedir}" if homedir else ""
    status = {line.split()[1] for line in err.splitlines() if line.startswith("[GNUPG:] ")}
    if status & {"INV_SGNR", "NO_SGNR"}:
        raise SignatureError(f"cannot sign: no usable secret key for {who}{home}")
    human = [line for line in err.splitlines() if line and not line.startswith("[GNUPG:]")]
    reason = human[-1].removeprefix("gpg: ") if human else f"gpg exited with status {rc}"
    raise SignatureError(f"cannot sign with {who}{home}: {reason}")
