"""A phone over adb (USB, developer mode on): the system's ``adb``.

Older ``adbd`` versions (Ubuntu Touch's among them) do not return the exit
status of ``adb shell``, so captured commands print it on a last line of
their own, which is read back and removed.
"""

from __future__ import annotations

import re
import shutil
from collections.abc import Sequence

from ..errors import DeviceError
from . import DEFAULT_TIMEOUT, Device, Result, remote_command

__all__ = ["AdbDevice", "attached", "find_adb", "no_device_message", "read_status",
           "with_status"]

_SERIAL = re.compile(r"[A-Za-z0-9._:][A-Za-z0-9._:-]*")
_STATUS = "click-build-status="
#: adb client errors -> what to check.
_ADB_ERRORS = (
    ("unauthorized", ("{serial} has not authorized this computer: unlock the phone and "
                      "accept the 'Allow USB debugging' prompt")),
    ("offline", "{serial} is offline: unplug and reconnect the USB cable"),
    ("not found", "no device {serial} attached over adb: check 'adb devices' and the cable"),
    ("no devices", ("no device attached over adb: connect the phone with USB and turn on "
                    "Developer mode (System Settings > About > Developer mode)")),
)


def find_adb() -> str:
    adb = shutil.which("adb")
    if adb is None:
        raise DeviceError("adb is not installed: install the Debian package 'adb' "
                          "(sudo apt install adb), or reach the phone with --ssh USER@HOST")
    return adb


def no_device_message() -> str:
    return ("no device attached over adb: connect the phone with USB and turn on Developer "
            "mode (System Settings > About > Developer mode), or use --ssh USER@HOST")


def attached(adb: str, timeout: float = 30.0) -> list[tuple[str, str]]:
    """(serial, state) of every device adb sees (``device``, ``unauthorized``...)."""
    import subprocess

    try:
        done = subprocess.run([adb, "devices"], stdin=subprocess.DEVNULL, capture_output=True,
                              text=True, timeout=timeout, check=False)
    except subprocess.TimeoutExpired:
        raise DeviceError(f"'adb devices' did not answer within {timeout:g} s: "
                          "restart the adb server ('adb kill-server')") from None
    except OSError as e:
        raise DeviceError(f"cannot run {adb}: {e.strerror}") from None
    if done.returncode != 0:
        detail = (done.stderr.strip().splitlines() or ["failed"])[-1]
        raise DeviceError(f"'adb devices' failed: {detail}")
    found = []
    for line in done.stdout.splitlines():
        parts = line.split()
        if len(parts) >= 2 and not line.startswith(("List of devices", "*")):
            found.append((parts[0], " ".join(parts[1:])))
    return found


def with_status(command: str) -> str:
    """``command``, then its exit status on a line of its own (older adbd drop it)."""
    return f"{command}; s=$?; echo; echo {_STATUS}$s"


def read_status(stdout: str) -> tuple[int | None, str]:
    """(exit status, output before it) from :func:`with_status`'s output; None: no status
    line, so the command never ran (adb's own failure)."""
    head, marker, tail = stdout.rpartition(_STATUS)
    if not marker:
        return None, stdout
    status = tail.strip()
    return (int(status) if status.isdigit() else 1), head.removesuffix("\n")


class AdbDevice(Device):
    def __init__(self, serial: str, adb: str | None = None) -> None:
        if not _SERIAL.fullmatch(serial):
            raise DeviceError(f"--adb {serial!r}: not a device serial (see 'adb devices')")
        self.adb = adb or find_adb()
        self.serial = serial
        self.label = f"adb device {serial}"

    def _argv(self, *args: str) -> list[str]:
        return [self.adb, "-s", self.serial, *args]

    def _adb_error(self, result: Result) -> DeviceError:
        text = result.stderr + result.stdout
        for needle, message in _ADB_ERRORS:
            if needle in text:
                return DeviceError(message.format(serial=self.serial))
        return DeviceError(f"adb failed for {self.serial}: {result.last_line()}")

    def run(self, script: str, args: Sequence[str] = (), timeout: float = DEFAULT_TIMEOUT,
            what: str = "") -> Result:
        result = self._capture(self._argv("shell", with_status(remote_command(script, args))),
                               timeout, what)
        status, stdout = read_status(result.stdout)
        if status is None:
            raise self._adb_error(result)
        return Result(status, stdout, result.stderr)

    def stream(self, script: str, args: Sequence[str] = (), follow: bool = False) -> int:
        return self._stream(self._argv("shell", remote_command(script, args)))

    def push(self, local: str, remote: str, timeout: float = 600.0) -> None:
        result = self._capture(self._argv("push", local, remote), timeout, "copying the package")
        if result.returncode != 0:
            raise self._adb_error(result)

    def shell(self) -> int:
        return self._stream(self._argv("shell"), "inherit")
