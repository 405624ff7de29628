"""A phone over ssh: the system's ``ssh`` with the user's keys and config.

Every non-interactive call runs with ``BatchMode=yes`` (never a password or
host-key prompt that would hang), ``ConnectTimeout`` and keep-alives (a phone
that drops off the network is noticed within half a minute).  ssh's own
failures (exit status 255) become one line that says what to check.
"""

from __future__ import annotations

import re
import shutil
from collections.abc import Sequence
from dataclasses import dataclass

from ..errors import DeviceError
from . import DEFAULT_TIMEOUT, Device, Result, remote_command

__all__ = ["SshDevice", "SshTarget", "parse_target"]

_USER = re.compile(r"[A-Za-z0-9._][A-Za-z0-9._-]*")
_HOST = re.compile(r"[A-Za-z0-9._%][A-Za-z0-9._%-]*")
_IPV6 = re.compile(r"[0-9A-Fa-f:.%A-Za-z]+")


@dataclass(frozen=True)
class SshTarget:
    user: str | None
    host: str
    port: int | None

    def __str__(self) -> str:
        host = f"[{self.host}]" if ":" in self.host else self.host
        who = f"{self.user}@{host}" if self.user else host
        return f"{who}:{self.port}" if self.port else who

    @property
    def destination(self) -> str:
        return f"{self.user}@{self.host}" if self.user else self.host


def parse_target(text: str) -> SshTarget:
    """``[USER@]HOST[:PORT]``, with ``[IPV6]`` in brackets; nothing that ssh could
    take for an option."""
    def bad(why: str) -> DeviceError:
        return DeviceError(f"--ssh {text!r}: {why}; expected USER@HOST or USER@HOST:PORT "
                           "(e.g. phablet@192.168.1.20:22)")

    user, sep, rest = text.rpartition("@")
    if sep and not _USER.fullmatch(user):
        raise bad("not a user name")
    port_text = ""
    if rest.startswith("["):
        host, close, tail = rest[1:].partition("]")
        if not close or not _IPV6.fullmatch(host) or (tail and not tail.startswith(":")):
            raise bad("not a host")
        port_text = tail[1:]
    else:
        host, _, port_text = rest.partition(":")
        if not _HOST.fullmatch(host):
            raise bad("not a host name or address")
    port = None
    if port_text:
        if not port_text.isdigit() or not 0 < int(port_text) < 65536:
            raise bad(f"{port_text!r} is not a port number")
        port = int(port_text)
    return SshTarget(user or None, host, port)


def _classify(target: SshTarget, stderr: str, timeout: float) -> str:
    """One line for an ssh failure (exit status 255)."""
    port = target.port or 22
    where = f"{target.host} port {port}"
    lines = [line.strip() for line in stderr.splitlines() if line.strip()]
    text = "\n".join(lines)
    if "Permission denied" in text:
        return (f"{target.destination} refused the key: add your public key to "
                f"~/.ssh/authorized_keys on the device (ssh-copy-id -p {port} "
                f"{target.destination}), or name the right IdentityFile in your ssh config")
    if "Host key verification failed" in text or "IDENTIFICATION HAS CHANGED" in text:
        return (f"the host key of {where} is unknown or has changed: connect once with "
                f"'ssh -p {port} {target.destination}' and check its fingerprint")
    if "Connection refused" in text:
        return (f"cannot reach {where}: connection refused: check the address and that the "
                "device's SSH server is on (Developer mode, 'android-gadget-service enable ssh')")
    if "timed out" in text or "Operation timed out" in text:
        return (f"no answer from {where} within {timeout:g} s: check the address and that the "
                "device is on and on the same network")
    if "Could not resolve hostname" in text:
        return f"cannot resolve {target.host!r}: check the device's name or use its IP address"
    if "No route to host" in text or "Network is unreachable" in text:
        return f"cannot reach {where}: no route to the device: check the network and address"
    if "Connection closed" in text or "Connection reset" in text or "kex_exchange" in text:
        return (f"{where} closed the connection before logging in: check that it is an SSH "
                "server and that your account may log in")
    detail = lines[-1] if lines else "ssh failed"
    return f"ssh to {target} failed: {detail}"


class SshDevice(Device):
    forwards_stdin = True

    def __init__(self, target: SshTarget, config: str | None = None,
                 connect_timeout: float = 10.0) -> None:
        self.target = target
        self.config = config
        self.connect_timeout = connect_timeout
        self.label = str(target)
        if shutil.which("ssh") is None:
            raise DeviceError("ssh is not installed: install the Debian package "
                              "'openssh-client' (sudo apt install openssh-client)")

    def _options(self, batch: bool = True) -> list[str]:
        options = ["-F", self.config] if self.config else []
        if batch:
            options += ["-o", "BatchMode=yes"]
        return options + ["-o", f"ConnectTimeout={max(1, round(self.connect_timeout))}",
                          "-o", "ServerAliveInterval=10", "-o", "ServerAliveCountMax=3"]

    def _ssh(self, command: str | None, batch: bool = True, tty: bool = False) -> list[str]:
        argv = ["ssh", *self._options(batch)]
        if self.target.port:
            argv += ["-p", str(self.target.port)]
        argv += ["-t"] if tty else ["-T"]
        argv += ["--", self.target.destination]
        return argv + ([command] if command is not None else [])

    def _failed(self, result: Result) -> DeviceError:
        return DeviceError(_classify(self.target, result.stderr, self.connect_timeout))

    def run(self, script: str, args: Sequence[str] = (), timeout: float = DEFAULT_TIMEOUT,
            what: str = "") -> Result:
        result = self._capture(self._ssh(remote_command(script, args)), timeout, what)
        if result.returncode == 255:
            raise self._failed(result)
        return result

    def stream(self, script: str, args: Sequence[str] = (), follow: bool = False) -> int:
        code = self._stream(self._ssh(remote_command(script, args)),
                            "pipe" if follow else "null")
        if code == 255:
            raise DeviceError(f"lost the connection to {self.target}")
        return code

    def push(self, local: str, remote: str, timeout: float = 600.0) -> None:
        """Copy over the ssh connection itself (``cat`` on the phone): no sftp or scp
        needed there."""
        try:
            source = open(local, "rb")
        except OSError as e:
            raise DeviceError(f"cannot read {local}: {e.strerror}") from None
        with source:
            result = self._capture(self._ssh(remote_command('cat > "$1"', [remote])), timeout,
                                   "copying the package", stdin=source)
        if result.returncode == 255:
            raise self._failed(result)
        if result.returncode != 0:
            raise DeviceError(f"cannot copy {local} to {self.target}:{remote}: "
                              f"{result.last_line()}")

    def shell(self) -> int:
        import sys

        code = self._stream(self._ssh(None, batch=False, tty=sys.stdin.isatty()), "inherit")
        if code == 255:
            raise DeviceError(f"ssh to {self.target} failed (see ssh's message above)")
        return code
