"""desktop: each app's .desktop file, as the launcher and the stores read it.

The file must parse, carry Name, Exec, Icon, Type=Application and the touch
marker; Exec must start something that exists (a program in the package or a
launcher the system ships) and the files it passes must be there too; Icon
must be a file of the package
(its suffix may be left out).
"""

from __future__ import annotations

import re

from ._collect import MAX_PARSED_FILE
from .findings import Context

__all__ = ["LAUNCHERS", "DesktopEntry", "check", "parse_desktop", "split_exec"]

#: Programs the system provides for click apps, and how their arguments are read.
LAUNCHERS: dict[str, str] = {
    "qmlscene": "qml",
    "qml": "qml",
    "webapp-container": "webapp",
    "lomiri-html5-app-launcher": "html5",
    "ubuntu-html5-app-launcher": "html5",
    "webbrowser-app": "webbrowser",
    "python3": "script",
    "python": "script",
    "sh": "script",
    "bash": "script",
}
REQUIRED_KEYS = ("Name", "Exec", "Icon", "Type")
TOUCH_KEYS = ("X-Lomiri-Touch", "X-Ubuntu-Touch")
#: Icon may omit one of these suffixes (the stores try them in turn).
ICON_SUFFIXES = ("", ".svg", ".png", ".jpg")
_KEY = re.compile(r"^[A-Za-z0-9-]+(\[[^\]=]+\])?$")
_ESCAPES = {"s": " ", "n": "\n", "t": "\t", "r": "\r", "\\": "\\", ";": ";"}


class DesktopEntry:
    def __init__(self) -> None:
        self.groups: dict[str, dict[str, str]] = {}

    def get(self, key: str) -> str | None:
        return self.groups.get("Desktop Entry", {}).get(key)


def _scheme(url: str) -> str:
    from urllib.parse import urlsplit  # only web app launchers take URLs

    return urlsplit(url).scheme


def _unescape(value: str) -> str:
    out, i = [], 0
    while i < len(value):
        ch = value[i]
        if ch == "\\" and i + 1 < len(value) and value[i + 1] in _ESCAPES:
            out.append(_ESCAPES[value[i + 1]])
            i += 2
            continue
        out.append(ch)
        i += 1
    return "".join(out)


def parse_desktop(raw: bytes) -> DesktopEntry:
    """Parse a Desktop Entry file strictly; ValueError says what is wrong where."""
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as e:
        raise ValueError(f"is not valid UTF-8 (byte {e.start})") from None
    entry = DesktopEntry()
    current: dict[str, str] | None = None
    for number, line in enumerate(text.lstrip("\ufeff").splitlines(), 1):
        line = line.rstrip("\r")
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        if line.startswith("["):
            if not line.endswith("]") or len(line) < 3:
                raise ValueError(f"line {number}: malformed group header {line!r}")
            name = line[1:-1]
            if "[" in name or "]" in name:
                raise ValueError(f"line {number}: malformed group header {line!r}")
            if name in entry.groups:
                raise ValueError(f"line {number}: group [{name}] appears twice")
            if not entry.groups and name != "Desktop Entry":
                raise ValueError(f"line {number}: the first group must be [Desktop Entry], "
                                 f"not [{name}]")
            current = entry.groups[name] = {}
            continue
        key, sep, value = line.partition("=")
        key = key.strip()
        if not sep or not _KEY.match(key):
            raise ValueError(f"line {number} is neither a 'Key=Value' line, a [Group] nor a "
                             f"comment: {line[:60]!r}")
        if current is None:
            raise ValueError(f"line {number}: {key} comes before the [Desktop Entry] group")
        if key in current:
            raise ValueError(f"line {number}: key {key} appears twice")
        current[key] = _unescape(value.strip())
    if "Desktop Entry" not in entry.groups:
        raise ValueError("has no [Desktop Entry] group")
    return entry


def split_exec(value: str) -> list[str]:
    """Exec's arguments, with the Desktop Entry spec's double-quote rules."""
    args: list[str] = []
    current: list[str] = []
    in_arg = quoted = False
    i = 0
    while i < len(value):
        ch = value[i]
        if quoted:
            if ch == "\\" and i + 1 < len(value) and value[i + 1] in '"`$\\':
                current.append(value[i + 1])
                i += 1
            elif ch == '"':
                quoted = False
            else:
                current.append(ch)
        elif ch == '"':
            quoted = in_arg = True
        elif ch in " \t":
            if in_arg:
                args.append("".join(current))
                current, in_arg = [], False
        else:
            current.append(ch)
            in_arg = True
        i += 1
    if quoted:
        raise ValueError("has an unterminated double quote")
    if in_arg:
        args.append("".join(current))
    return args


def _is_placeholder(arg: str) -> bool:
    return arg.startswith("%") or arg.startswith("$")


class _Checker:
    def __init__(self, ctx: Context, app: str, path: str, entry: DesktopEntry):
        self.ctx, self.app, self.path, self.entry = ctx, app, path, entry
        assert ctx.data is not None
        self.data = ctx.data

    def add(self, check: str, message: str, hint: str) -> None:
        self.ctx.report.add(check, self.path, message, hint)

    def run(self) -> None:
        entry = self.entry
        missing = [k for k in REQUIRED_KEYS if not (entry.get(k) or "").strip()]
        if not any(entry.get(k) for k in TOUCH_KEYS):
            missing.append("X-Lomiri-Touch")
        if missing:
            self.add("desktop.missing-key",
                     f"lacks {', '.join(missing)} in [Desktop Entry]",
                     "add " + ", ".join(f"{k}={_EXAMPLES[k]}" for k in missing))
        touch = next((k for k in TOUCH_KEYS if entry.get(k)), None)
        if touch is not None and entry.get(touch) not in ("true", "True"):
            self.add("desktop.touch",
                     f"{touch} is {entry.get(touch)!r}; touch apps must say true",
                     f"set {touch}=true")
        kind = entry.get("Type")
        if kind and kind != "Application":
            self.add("desktop.type", f"Type is {kind!r}; apps need Type=Application",
                     "set Type=Application")
        if entry.get("Path") is not None:
            self.add("desktop.path-key",
                     "sets Path; the launcher starts apps in their package folder itself",
                     "remove the Path line")
        if (entry.get("Exec") or "").strip():
            self._check_exec(entry.get("Exec") or "")
        icon = (entry.get("Icon") or "").strip()
        if icon:
            self._check_icon(icon)

    # --- Exec ---
    def _check_exec(self, value: str) -> None:
        try:
            args = split_exec(value)
        except ValueError as e:
            self.add("desktop.unreadable", f"Exec {e}", "balance the double quotes in Exec")
            return
        while args and args[0] == "env":
            args = args[1:]
            while args and "=" in args[0] and not args[0].startswith("-"):
                args = args[1:]
        if not args:
            return
        program = args[0]
        if program.startswith("/"):
            self.add("desktop.exec-absolute",
                     f"Exec starts {program!r} by absolute path; apps run from their own "
                     "folder, whose path changes with each version",
                     "give the program relative to the package root (e.g. 'Exec=myapp') or a "
                     "launcher such as 'qmlscene qml/Main.qml'")
            return
        local = program[2:] if program.startswith("./") else program
        found = self._find_program(local)
        if found is not None:
            if not self.data.is_executable(found):
                self.add("desktop.exec-not-executable",
                         f"Exec starts {found!r}, which is not executable",
                         f"make it executable ('chmod +x {found}') before building")
            return
        style = LAUNCHERS.get(program)
        if style is None:
            self.add("desktop.exec-missing",
                     f"Exec starts {program!r}, which is neither in the package nor a launcher "
                     "known to ship with Ubuntu Touch: the app does not start unless the "
                     "system has it",
                     "ship the program in the package (at its root or in lib/<triplet>/bin) or "
                     f"start the app with a launcher: {', '.join(sorted(LAUNCHERS))}")
            return
        getattr(self, f"_launcher_{style}")(program, args[1:])

    def _find_program(self, program: str) -> str | None:
        if self.data.kind(program) == "file":
            return program
        if "/" not in program:
            for triplet in sorted(self.data.lib_triplets):
                path = f"lib/{triplet}/bin/{program}"
                if self.data.kind(path) == "file":
                    return path
        return None

    def _need_file(self, arg: str, what: str, kind: str = "file") -> None:
        if arg.startswith("/") or self.data.kind(arg) == kind:
            return
        self.add("desktop.exec-arg-missing",
                 f"Exec passes {what} {arg!r}, which is not in the package",
                 "ship that file at this path (relative to the package root) or correct Exec")

    def _launcher_qml(self, program: str, args: list[str]) -> None:
        files = [a for a in args if a.endswith(".qml") and not a.startswith("-")]
        if not files:
            self.add("desktop.exec-arg-missing",
                     f"Exec runs {program} without a QML file",
                     f"name the main QML file, e.g. 'Exec={program} %u qml/Main.qml'")
        for arg in files:
            self._need_file(arg, "the QML file")

    def _launcher_html5(self, program: str, args: list[str]) -> None:
        framework = self.ctx.framework
        if program == "ubuntu-html5-app-launcher" and not framework.startswith(
                ("ubuntu-sdk-13", "ubuntu-sdk-14")):
            self.add("desktop.launcher-obsolete",
                     f"ubuntu-html5-app-launcher does not exist on {framework or 'this framework'}",
                     "use 'webapp-container' with the 'ubuntu-webapp' AppArmor template, e.g. "
                     "'Exec=webapp-container --app-id=${APP_ID} www/index.html'")
            return
        for i, arg in enumerate(args):
            if arg.startswith("--www="):
                self._need_file(arg[len("--www="):], "the web folder", "dir")
            elif arg == "--www" and i + 1 < len(args):
                self._need_file(args[i + 1], "the web folder", "dir")

    def _launcher_webbrowser(self, program: str, args: list[str]) -> None:
        if self.ctx.framework != "ubuntu-sdk-13.10":
            self.add("desktop.launcher-obsolete",
                     f"webbrowser-app cannot start apps on {self.ctx.framework or 'this framework'}",
                     "use 'webapp-container' with the 'ubuntu-webapp' AppArmor template")

    def _launcher_webapp(self, program: str, args: list[str]) -> None:
        if "--webapp" in args:
            self.add("desktop.webapp-args", "Exec passes --webapp to webapp-container",
                     "remove --webapp; webapp-container needs no such switch")
        targets = [a for a in args if not a.startswith("-") and not _is_placeholder(a)]
        remote = [a for a in targets if _scheme(a) in ("http", "https")]
        scoped = any(a.startswith(("--webappUrlPatterns", "--webappModelSearchPath",
                                   "--webapp=")) for a in args)
        if remote and not scoped:
            self.add("desktop.webapp-args",
                     f"Exec opens {remote[0]!r} without --webappUrlPatterns or "
                     "--webappModelSearchPath",
                     "add --webappUrlPatterns=https?://example.com/* so the app stays on its "
                     "own site")
        if targets and not remote:
            if scoped:
                self.add("desktop.webapp-args",
                         "Exec limits URLs with --webappUrlPatterns/--webappModelSearchPath/"
                         "--webapp= but opens a local file",
                         "remove those switches for an app whose pages are in the package")
            for arg in targets:
                if _scheme(arg) in ("", "file"):
                    self._need_file(arg.removeprefix("file://"), "the page")

    def _launcher_script(self, program: str, args: list[str]) -> None:
        if any(a in ("-c", "-m") for a in args):
            return
        script = next((a for a in args if not a.startswith("-")), None)
        if script is None or _is_placeholder(script):
            self.add("desktop.exec-arg-missing", f"Exec runs {program} without a script",
                     f"name the script, e.g. 'Exec={program} src/main.py'")
            return
        self._need_file(script[2:] if script.startswith("./") else script, "the script")

    # --- Icon ---
    def _check_icon(self, icon: str) -> None:
        if icon.startswith("/"):
            self.add("desktop.icon",
                     f"Icon {icon!r} is an absolute path; the icon must be in the package",
                     "ship the icon in the package and give its path relative to the package "
                     "root, e.g. 'Icon=assets/logo.svg'")
            return
        # As the stores: the path itself, or the path with an image suffix added.
        if any(self.data.kind(icon + suffix) == "file" for suffix in ICON_SUFFIXES):
            return
        self.add("desktop.icon", f"Icon {icon!r} is not a file in the package",
                 "ship the icon and give its path relative to the package root (e.g. "
                 "'Icon=assets/logo.svg'); icon-theme names are not accepted")


_EXAMPLES = {
    "Name": "My App", "Exec": "qmlscene %u qml/Main.qml", "Icon": "assets/logo.svg",
    "Type": "Application", "X-Lomiri-Touch": "true",
}


def check(ctx: Context) -> None:
    """Every desktop hook's file."""
    assert ctx.data is not None
    for app, hooks in sorted(ctx.hooks.items()):
        path = hooks.get("desktop")
        if path is None:
            continue
        resolved = ctx.data.resolve(path)
        if resolved is not None and resolved in ctx.data.too_large:
            ctx.report.add("desktop.unreadable", path,
                           f"is larger than {MAX_PARSED_FILE >> 10} KiB; not a desktop file",
                           f"point hooks.{app}.desktop at the app's .desktop file")
            continue
        raw = ctx.data.content(path)
        if raw is None:
            continue  # missing: reported by lint.hook-target-missing
        try:
            entry = parse_desktop(raw)
        except ValueError as e:
            ctx.report.add("desktop.unreadable", path, str(e),
                           "write it as '[Desktop Entry]' followed by 'Key=Value' lines")
            continue
        _Checker(ctx, app, path, entry).run()
