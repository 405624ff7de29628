"""What click-build runs on the phone: POSIX shell, arguments passed as ``$1``...

Installing picks the phone's own route: ``pkcon install-local --allow-untrusted``
where PackageKit has its click plugin (Ubuntu Touch 16.04), otherwise
``click install --user=$(id -un) --allow-unauthenticated`` (the installer pkcon
drives; ``--root DIR`` adds a database of the user's own). Launching uses
``lomiri-app-launch`` or ``ubuntu-app-launch``; logs come from the launcher's
log file (``~/.cache/upstart/application-click-APP_ID.log``) or, where there is
none, the user journal of the launcher's unit.
"""

from __future__ import annotations

import json
import os
import re
from dataclasses import dataclass

from ..errors import DeviceError
from ..manifest import FRAMEWORK_RE
from ..run.apps import choose_app, desktop_apps
from . import Device

__all__ = [
    "AppRef",
    "PhoneFacts",
    "install",
    "launch",
    "list_packages",
    "logs",
    "phone_facts",
    "resolve_app",
]

_MARK = "click-build-"
_APP_ID_PART = re.compile(r"[A-Za-z0-9][A-Za-z0-9+.~:-]*")

#: The phone's architecture, then its frameworks (none listed where click is missing).
FACTS_SCRIPT = r"""
arch=$(dpkg --print-architecture) || exit
printf 'click-build-arch: %s\n' "$arch"
if command -v click >/dev/null 2>&1; then
    click framework list | sed 's/^/click-build-framework: /'
fi
"""
MKTEMP_SCRIPT = 'mktemp -d "${TMPDIR:-/tmp}/click-build.XXXXXX"'
REMOVE_SCRIPT = 'rm -rf -- "$1"'
INSTALL_SCRIPT = r"""
f=$1 root=$2 user=$(id -un)
if [ -z "$root" ] && command -v pkcon >/dev/null 2>&1 &&
        ls /usr/lib/*/packagekit-plugins*/libpk_plugin_click.so >/dev/null 2>&1; then
    echo "click-build-installer: pkcon install-local --allow-untrusted" >&2
    exec pkcon install-local --allow-untrusted "$f" </dev/null
fi
if ! command -v click >/dev/null 2>&1; then
    echo "click-build-installer: none" >&2
    exit 127
fi
echo "click-build-installer: click install --user=$user" >&2
exec click install ${root:+"--root=$root"} --user="$user" --allow-unauthenticated "$f" </dev/null
"""
LIST_SCRIPT = r'root=$1; shift; exec click list ${root:+"--root=$root"} "$@"'
LAUNCH_SCRIPT = r"""
for launcher in lomiri-app-launch ubuntu-app-launch; do
    if command -v "$launcher" >/dev/null 2>&1; then
        echo "click-build-launcher: $launcher" >&2
        exec "$launcher" "$1" </dev/null
    fi
done
echo "click-build-launcher: none" >&2
exit 127
"""
LOG_SOURCE_SCRIPT = r"""
if [ -f "$HOME/.cache/upstart/application-click-$1.log" ]; then echo file
elif command -v journalctl >/dev/null 2>&1; then echo journal
else echo none
fi
"""
LOGS_SCRIPT = r"""
source=$1 id=$2 follow=$3 watch=$4
f=""
[ -n "$follow" ] && f=-f
if [ "$source" = file ]; then
    set -- tail -n 100 $f "$HOME/.cache/upstart/application-click-$id.log"
else
    set -- journalctl --user --no-pager -n 100 $f -u "lomiri-app-launch--application-click--$id--"
fi
if [ -n "$follow" ] && [ -n "$watch" ]; then
    "$@" &
    pid=$!
    cat >/dev/null  # returns when click-build stops: stop following with it
    kill "$pid" 2>/dev/null
    wait "$pid" 2>/dev/null
    exit 0
fi
exec "$@"
"""


@dataclass(frozen=True)
class AppRef:
    package: str
    app: str
    version: str

    def __str__(self) -> str:
        return f"{self.package}_{self.app}_{self.version}"


@dataclass(frozen=True)
class PhoneFacts:
    arch: str  # its dpkg architecture: arm64, armhf, amd64
    frameworks: tuple[str, ...]  # what its click lists (empty: it could not say)


def phone_facts(device: Device) -> PhoneFacts:
    """The phone's architecture (``dpkg --print-architecture``) and the frameworks it has
    (``click framework list``), asked in one command."""
    result = device.run(FACTS_SCRIPT, what="asking for its architecture and frameworks")
    found: dict[str, list[str]] = {"arch": [], "framework": []}
    for line in result.stdout.splitlines():
        kind, sep, value = line.partition(": ")
        if sep and kind.startswith(_MARK) and kind[len(_MARK):] in found:
            found[kind[len(_MARK):]].append(value.strip())
    arch = found["arch"][-1] if found["arch"] else ""
    if result.returncode != 0 or not re.fullmatch(r"[a-z0-9]+", arch):
        raise DeviceError(f"cannot tell the architecture of {device.label}: "
                          f"'dpkg --print-architecture' said {result.last_line()!r}")
    frameworks = sorted({f for f in found["framework"] if re.match(FRAMEWORK_RE, f)})
    return PhoneFacts(arch, tuple(frameworks))


def install(device: Device, package: str, root: str | None = None) -> str:
    """Copy ``package`` to the phone and install it there; return the route used."""
    made = device.run(MKTEMP_SCRIPT, what="making a folder for the package")
    folder = _last(made.stdout)
    if made.returncode != 0 or not folder.startswith("/"):
        raise DeviceError(f"cannot make a temporary folder on {device.label}: "
                          f"{made.last_line()}")
    remote = f"{folder}/{os.path.basename(package)}"
    try:
        device.push(package, remote)
        result = device.run(INSTALL_SCRIPT, [remote, root or ""], timeout=600.0,
                            what="installing the package")
    finally:
        try:
            device.run(REMOVE_SCRIPT, [folder], what="removing the copied package")
        except DeviceError:
            pass  # the install's own error matters more
    route = _marker(result.stderr + result.stdout, "installer")
    if result.returncode == 0:
        return route
    if route == "none":
        raise DeviceError(f"{device.label} has neither pkcon (with its click plugin) nor click: "
                          "is it an Ubuntu Touch device?")
    hint = ""
    said = result.stderr + result.stdout
    if route.startswith("click") and ("Permission denied" in said
                                      or "Cannot acquire permission" in said):
        hint = (": its Click database is not writable by this account; install with pkcon "
                "on the phone, or give --root DIR for a database of your own")
    raise DeviceError(f"{device.label} could not install {os.path.basename(package)} "
                      f"({route}): {result.last_line()}{hint}")


def _json_array(stdout: str) -> list[object] | None:
    """The JSON array a command printed, after whatever a login script printed first."""
    lines = stdout.splitlines()
    for i, line in enumerate(lines):
        if line.startswith("["):
            try:
                data = json.loads("\n".join(lines[i:]))
            except (ValueError, RecursionError):
                continue
            return data if isinstance(data, list) else None
    return [] if not stdout.strip() else None


def _last(stdout: str) -> str:
    """The last line a command printed (a login script may have printed before it)."""
    lines = stdout.strip().splitlines()
    return lines[-1].strip() if lines else ""


def _marker(text: str, kind: str) -> str:
    for line in text.splitlines():
        if line.startswith(f"{_MARK}{kind}: "):
            return line.split(": ", 1)[1].strip()
    return "unknown"


def list_packages(device: Device, root: str | None = None, manifest: bool = False) -> str:
    result = device.run(LIST_SCRIPT, [root or "", *(["--manifest"] if manifest else [])],
                        what="listing its packages")
    if result.returncode != 0:
        if result.returncode == 127:
            raise DeviceError(f"{device.label} has no click command: is it an Ubuntu Touch "
                              "device?")
        raise DeviceError(f"'click list' failed on {device.label}: {result.last_line()}")
    return result.stdout


def resolve_app(device: Device, app_id: str, root: str | None = None) -> AppRef:
    """``NAME``, ``NAME_APP`` or ``NAME_APP_VERSION`` -> the installed app's full id."""
    parts = app_id.split("_")
    if len(parts) > 3 or not all(_APP_ID_PART.fullmatch(p) for p in parts):
        raise DeviceError(f"{app_id!r} is not an app id: expected NAME, NAME_APP or "
                          "NAME_APP_VERSION (e.g. tea-timer.jane_tea-timer_1.0.0)")
    if len(parts) == 3:
        return AppRef(*parts)
    manifests = _json_array(list_packages(device, root, manifest=True))
    if manifests is None:
        raise DeviceError(f"'click list --manifest' on {device.label} did not print "
                          "JSON")
    found = next((m for m in manifests if isinstance(m, dict) and m.get("name") == parts[0]),
                 None)
    if found is None:
        raise DeviceError(f"{parts[0]} is not installed on {device.label} for this user "
                          "(see 'click-build device list')")
    app = choose_app(desktop_apps(found), parts[0], parts[1] if len(parts) == 2 else None,
                     DeviceError, how="NAME_APP")
    return AppRef(parts[0], app, str(found.get("version")))


def launch(device: Device, app: AppRef) -> str:
    """Start the app with the phone's launcher; return the launcher used."""
    result = device.run(LAUNCH_SCRIPT, [str(app)], what="starting the app")
    launcher = _marker(result.stderr, "launcher")
    if launcher == "none":
        raise DeviceError(f"no launcher on {device.label}: neither lomiri-app-launch nor "
                          f"ubuntu-app-launch is installed, so {app} cannot be started there "
                          "(is it an Ubuntu Touch device with a running session?)")
    if result.returncode != 0:
        raise DeviceError(f"{launcher} could not start {app} on {device.label}: "
                          f"{result.last_line()}")
    return launcher


def logs(device: Device, app: AppRef, follow: bool) -> int:
    """Print the app's log (and follow it until Ctrl-C when asked)."""
    source = device.run(LOG_SOURCE_SCRIPT, [str(app)], what="looking for the app's log")
    kind = _last(source.stdout)
    if kind not in ("file", "journal"):
        raise DeviceError(f"no log of {app} on {device.label}: no "
                          f"~/.cache/upstart/application-click-{app}.log and no journalctl")
    return device.stream(LOGS_SCRIPT, [kind, str(app), "1" if follow else "",
                                       "1" if device.forwards_stdin else ""], follow=follow)
