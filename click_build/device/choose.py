"""Which phone: ``--ssh``/``--adb``, else ``$CLICK_BUILD_DEVICE``, else the one adb device."""

from __future__ import annotations

import os
import shutil
from collections.abc import Mapping

from ..errors import DeviceError
from . import Device

__all__ = ["ENV", "choose_device"]

ENV = "CLICK_BUILD_DEVICE"
_FORMS = "ssh:USER@HOST[:PORT], adb or adb:SERIAL"


def _adb_device(serial: str) -> Device:
    from .adb import AdbDevice, attached, find_adb, no_device_message

    adb = find_adb()
    if serial:
        return AdbDevice(serial, adb)
    devices = attached(adb)
    ready = [s for s, state in devices if state == "device"]
    if len(ready) == 1:
        return AdbDevice(ready[0], adb)
    if len(ready) > 1:
        raise DeviceError(f"several devices attached over adb ({', '.join(ready)}): choose one "
                          "with --adb SERIAL")
    waiting = [f"{s} ({state})" for s, state in devices]
    if waiting:
        raise DeviceError(f"no usable device over adb: {', '.join(waiting)}: unlock the phone "
                          "and accept the 'Allow USB debugging' prompt, or reconnect it")
    raise DeviceError(no_device_message())


def choose_device(ssh: str | None = None, adb: str | None = None, ssh_config: str | None = None,
                  connect_timeout: float = 10.0,
                  environ: Mapping[str, str] | None = None) -> Device:
    """``adb`` is None (not asked for), "" (any one attached device) or a serial."""
    from .ssh import SshDevice, parse_target

    if ssh is not None and adb is not None:
        raise DeviceError("give either --ssh or --adb, not both")
    if ssh is not None:
        return SshDevice(parse_target(ssh), ssh_config, connect_timeout)
    if adb is not None:
        return _adb_device(adb)
    setting = (os.environ if environ is None else environ).get(ENV, "").strip()
    if setting:
        kind, _, value = setting.partition(":")
        if kind == "ssh" and value:
            return SshDevice(parse_target(value), ssh_config, connect_timeout)
        if kind == "adb":
            return _adb_device(value)
        raise DeviceError(f"{ENV}={setting!r}: expected {_FORMS}")
    if shutil.which("adb") is None:
        raise DeviceError(f"no device given: use --ssh USER@HOST, --adb or {ENV}=ssh:USER@HOST"
                          "[:PORT] (adb, which finds a phone on USB, is not installed: "
                          "sudo apt install adb)")
    try:
        return _adb_device("")
    except DeviceError as e:
        from .adb import no_device_message

        if str(e) == no_device_message():  # nothing attached: name the third way too
            raise DeviceError(f"{e}, or set {ENV}") from None
        raise
