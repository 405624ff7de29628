"""What the Ubuntu Touch launcher does before it starts a click app.

Mirrors lomiri-app-launch / ubuntu-app-launch (UAL) for an installed version:

- ``APP_ID=NAME_APP_VERSION``, ``APP_DIR`` and ``APP_DESKTOP_FILE_PATH``
  (UAL ``Click::launchEnv``), the working folder is ``APP_DIR``
  (``WorkingDirectory`` in UAL's ``jobs-systemd.cpp``, ``g_chdir`` in
  ``exec-line-exec.c``);
- ``PATH`` gets ``APP_DIR`` in front (``exec-line-exec.c``), and the app's
  ``lib/<triplet>/bin``, ``LD_LIBRARY_PATH`` ``lib/<triplet>`` and ``lib``,
  ``QML2_IMPORT_PATH`` ``lib/<triplet>/qml`` (UAL ``Click::launchEnv``) and
  ``lib/<triplet>``: the environment Clickable recorded from a running app on a
  phone (its gdb support), each folder only where the package has it;
- ``XDG_DATA_DIRS`` with ``APP_DIR`` first and the ``XDG_*_HOME`` folders set
  (UAL ``Base::confinedEnv``) -- here under the private root, so an app run on
  a PC never touches the developer's own settings;
- the desktop file's ``Exec`` split by the Desktop Entry rules and its field
  codes expanded as UAL's ``desktop_exec_parse`` does (``%U``/``%F`` take every
  argument, ``%u``/``%f`` the first; ``%i``, ``%c``, ``%k`` as the spec says;
  ``%%`` is ``%``; the deprecated codes vanish).
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from .. import _console
from ..errors import RunError

__all__ = [
    "RUNNER_PACKAGES",
    "WEB_RUNNERS",
    "LaunchPlan",
    "check_runner",
    "expand_exec",
    "find_program",
    "launch_environment",
    "missing_runner_message",
]

#: Programs the Exec lines of click apps start, and the Debian package of each
#: (Ubuntu Touch's webapp-container has none: Debian does not ship it).
RUNNER_PACKAGES: dict[str, str] = {
    "qmlscene": "qmlscene",
    "qml": "qml",
    "python3": "python3",
}
#: Runners of HTML5 apps: without them ``run`` serves the app's pages itself.
WEB_RUNNERS = ("webapp-container", "lomiri-html5-app-launcher", "ubuntu-html5-app-launcher")
#: Field codes the Desktop Entry spec deprecates: they expand to nothing.
_DEPRECATED = "dDnNvm"
#: Where Debian's qtchooser looks for the real Qt 5 tools its /usr/bin links start.
_QT5_BIN_DIRS = ("/usr/lib/qt5/bin", "/usr/lib/{triplet}/qt5/bin")


@dataclass(frozen=True)
class LaunchPlan:
    """The program to start, where, and the variables set on top of the caller's."""

    argv: list[str]
    cwd: str
    changed: dict[str, str] = field(default_factory=dict)

    def environment(self, base: Mapping[str, str]) -> dict[str, str]:
        env = dict(base)
        env.update(self.changed)
        return env


def _prepend(folders: Sequence[str], current: str | None) -> str:
    parts = list(folders)
    if current:
        parts.append(current)
    return ":".join(parts)


def launch_environment(base: Mapping[str, str], app_dir: str, app_id: str, desktop_path: str,
                       triplet: str, homes: Mapping[str, str]) -> dict[str, str]:
    """The variables the launcher sets for ``app_id`` (only those, not ``base``).

    ``homes`` maps ``XDG_CONFIG_HOME`` & co. to the private folders.
    """
    def existing(*parts: str) -> list[str]:
        path = os.path.join(app_dir, *parts)
        return [path] if os.path.isdir(path) else []

    arch_lib = ("lib", triplet) if triplet else ("lib",)
    changed = {
        "APP_ID": app_id,
        "APP_DIR": app_dir,
        "APP_DESKTOP_FILE_PATH": desktop_path,
        "PATH": _prepend([*existing(*arch_lib, "bin"), app_dir], base.get("PATH") or os.defpath),
        "LD_LIBRARY_PATH": _prepend([*existing(*arch_lib), *existing("lib")],
                                    base.get("LD_LIBRARY_PATH")),
        "QML2_IMPORT_PATH": _prepend([*existing(*arch_lib, "qml"), *existing(*arch_lib)],
                                     base.get("QML2_IMPORT_PATH")),
        "XDG_DATA_DIRS": _prepend([app_dir],
                                  base.get("XDG_DATA_DIRS") or "/usr/local/share:/usr/share"),
    }
    if triplet:
        changed["UBUNTU_APP_LAUNCH_ARCH"] = triplet
    changed.update(homes)
    return {k: v for k, v in changed.items() if v}


def _expand_word(word: str, files: Sequence[str], fields: Mapping[str, str]) -> tuple[str, bool, bool]:
    """One argument with its field codes expanded: (text, had a code, used files)."""
    out: list[str] = []
    had_code = used = False
    i = 0
    while i < len(word):
        ch = word[i]
        if ch != "%" or i + 1 == len(word):
            out.append(ch)
            i += 1
            continue
        code = word[i + 1]
        i += 2
        if code == "%":
            out.append("%")
            continue
        had_code = True
        if code in "fuFU":
            # %F/%U inside a word (the spec wants them alone): the first file, as %f/%u.
            if files:
                out.append(files[0])
            used = True
        elif code in "ck":
            out.append(fields["c" if code == "c" else "k"])
        elif code == "i" or code in _DEPRECATED:
            pass  # %i inside a word cannot become two arguments: dropped
        else:
            _console.warn(f"Exec: unknown field code %{code} dropped (as the launcher does)")
    return "".join(out), had_code, used


def expand_exec(args: Sequence[str], files: Sequence[str], name: str, icon: str,
                desktop_path: str) -> list[str]:
    """Exec's arguments with the Desktop Entry field codes expanded.

    ``files`` are the extra arguments (``run -- ARGS``): they replace ``%U``/``%F``
    (all) or ``%u``/``%f`` (the first); with no such code they go at the end,
    as do the ones a single-file code leaves over.
    """
    out: list[str] = []
    used = 0
    for arg in args:
        if arg in ("%F", "%U"):
            out.extend(files)
            used = len(files)
            continue
        if arg == "%i":
            if icon:
                out.extend(["--icon", icon])
            continue
        text, had_code, took_files = _expand_word(arg, files, {"c": name, "k": desktop_path})
        if took_files:
            used = max(used, 1)
        if text or not had_code:
            out.append(text)
    out.extend(files[used:])
    return out


def _qtchooser_tool_missing(path: str, program: str, triplet: str) -> bool:
    """Debian's /usr/bin/qmlscene is a qtchooser link even when Qt's tool is absent."""
    if os.path.basename(os.path.realpath(path)) != "qtchooser":
        return False
    folders = [d.format(triplet=triplet) for d in _QT5_BIN_DIRS]
    return not any(os.access(os.path.join(d, program), os.X_OK) for d in folders)


def find_program(program: str, search_path: str, triplet: str) -> str | None:
    """Where ``program`` is on ``search_path`` (None if it is not, or is a dangling qtchooser link)."""
    found = shutil.which(program, path=search_path)
    if found is None or _qtchooser_tool_missing(found, program, triplet):
        return None
    return found


def missing_runner_message(program: str, app_id: str) -> str:
    package = RUNNER_PACKAGES.get(program)
    if package is None and program in WEB_RUNNERS:
        return f"{program} is not installed, and {app_id} needs it"
    if package is None:
        return (f"{app_id}: Exec starts {program!r}, which is neither in the package nor on "
                "PATH: ship it in the package (lib/<triplet>/bin or the package root) or "
                "correct Exec in the desktop file")
    return (f"{program} is not installed, and {app_id} needs it: install the Debian package "
            f"'{package}' (sudo apt install {package})")


def check_runner(argv: Sequence[str], env: Mapping[str, str], triplet: str, app_id: str,
                 cwd: str) -> None:
    """A one-line error unless Exec's program can be started (a path is taken from ``cwd``)."""
    if not argv:
        raise RunError(f"{app_id}: the desktop file's Exec is empty")
    program = argv[0]
    if "/" in program:
        if not os.access(os.path.join(cwd, program), os.X_OK):
            raise RunError(missing_runner_message(program, app_id))
    elif find_program(program, env.get("PATH", os.defpath), triplet) is None:
        raise RunError(missing_runner_message(program, app_id))
