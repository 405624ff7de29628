"""lint: the package as a whole, as the stores' lint pass sees it.

Control data against the manifest, the manifest's fields, the framework (and
its -qml variant for apps without code or Python: our advice, not the stores'),
architecture against the ELF files inside, modes, links, hook targets, the
hooks every app needs, and files that should not have been shipped.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from ..deb822 import whole_number
from ..framework_table import QT_MIN_FRAMEWORK, known_frameworks, qml_variant
from ..manifest import FRAMEWORK_RE, hook_path_problem, validate
from ..spec import ACCEPTED_PREINSTS, FORBIDDEN_FIELDS, click_version_ok
from ..versions import compare_versions
from ._collect import Sample
from .findings import Context

__all__ = [
    "KNOWN_HOOKS",
    "check_control",
    "check_data",
    "check_frameworks",
    "check_manifest",
    "report_scan_failure",
]

CONTROL_FIELDS = ("Package", "Version", "Click-Version", "Architecture", "Maintainer",
                  "Installed-Size", "Description")
#: The hooks click-reviewers-tools knows (cr_lint ``known_hooks``).
KNOWN_HOOKS = frozenset({
    "accounts", "account-application", "account-provider", "account-qml-plugin",
    "account-service", "apparmor", "apparmor-profile", "bin-path", "content-hub", "desktop",
    "language-packs", "pay-ui", "puritine", "push-helper", "scope", "snappy-systemd", "urls",
})
#: Hooks the stores hold for manual review.
REVIEWED_HOOKS = ("apparmor-profile", "pay-ui", "puritine")
#: An app with one of these is not a launcher entry, so it needs no desktop file.
NON_GRAPHICAL_HOOKS = frozenset({
    "account-provider", "account-qml-plugin", "apparmor-profile", "bin-path", "language-packs",
    "pay-ui", "puritine", "push-helper", "scope", "snappy-systemd",
})
#: Hooks whose target is a folder rather than a file.
FOLDER_HOOKS = frozenset({"scope", "bin-path", "account-qml-plugin", "puritine"})
SUPPORTED_ARCHES = ("armhf", "arm64", "amd64")
#: Top-level manifest keys the stores accept (besides 'x-' extensions).
STORE_KEYS = ("name", "version", "framework", "title", "description", "maintainer",
              "architecture", "installed-size", "icon", "hooks", "migrations", "ports",
              "source", "type")
_FIELD_HINTS = {
    "name": "use lower-case letters, digits, '.', '+' and '-' in reverse-domain style, "
            "e.g. 'myapp.yourname'",
    "version": "use a Debian version such as '1.0.2' (digits first, no '_' or '/')",
    "framework": "set one framework, e.g. 'ubuntu-sdk-20.04' or 'ubuntu-touch-24.04-2.x'",
    "title": "give a one-line title, e.g. \"title\": \"My App\"",
    "architecture": "use 'all' for QML/HTML/Python apps, or 'armhf', 'arm64' or 'amd64'",
    "hooks": "map each app name to its hooks, e.g. \"hooks\": {\"myapp\": {\"desktop\": "
             "\"myapp.desktop\", \"apparmor\": \"myapp.apparmor\"}}",
    "icon": "give a file in the package (e.g. 'assets/logo.svg') or an icon name",
    "description": "give the description as a string",
}


def _listing(paths: Sample) -> str:
    return paths.listing()


# ------------------------------------------------------------- control ---

def check_control(ctx: Context) -> None:
    """The control file and friends, as the installer and the stores read them."""
    pkg, add = ctx.pkg, ctx.report.add
    rebuild = "rebuild the package with 'click-build build'"
    if not click_version_ok(pkg.click_binary):
        add("lint.control", "_click-binary",
            f"says format {pkg.click_binary!r}; Click packages are format 0.4", rebuild)
    for name in CONTROL_FIELDS:
        if pkg.field(name) is None:
            add("lint.control", "control", f"has no {name} field", rebuild)
    allowed = {f.lower() for f in CONTROL_FIELDS}
    forbidden = {f.lower() for f in FORBIDDEN_FIELDS}
    for key in pkg.control:
        if key.lower() in forbidden:
            add("lint.control", "control",
                f"has a {key} field; Click packages may not declare dependencies",
                "remove it: an app gets its libraries from its framework or ships them inside")
        elif key.lower() not in allowed:
            add("lint.control", "control", f"has an extra field {key!r}", rebuild)
    click_version = pkg.field("Click-Version")
    if click_version is not None and not click_version_ok(click_version):
        add("lint.control", "control",
            f"Click-Version {click_version!r} is not 0.4 or older", rebuild)
    if pkg.preinst is None:
        add("lint.control", "control.tar", "has no preinst (the stores require the static one)",
            rebuild)
    elif pkg.preinst not in ACCEPTED_PREINSTS:
        add("lint.control", "preinst",
            "differs from the static script; Click packages may not run maintainer scripts",
            rebuild)
    _check_agreement(ctx)


def _check_agreement(ctx: Context) -> None:
    manifest, add = ctx.manifest, ctx.report.add
    arch = manifest.get("architecture", "all")
    expected = {
        "Package": manifest.get("name"),
        "Version": manifest.get("version"),
        "Architecture": "multi" if isinstance(arch, list) else arch,
        "Maintainer": manifest.get("maintainer"),
        "Description": manifest.get("title"),
    }
    for name, want in expected.items():
        value = ctx.pkg.field(name)
        if value is not None and isinstance(want, str) and value != want:
            source = "title" if name == "Description" else name.lower()
            add("lint.control-mismatch", "control",
                f"{name} is {value!r} but the manifest's {source} is {want!r}",
                "rebuild with 'click-build build', which writes both from manifest.json")
    size = ctx.pkg.field("Installed-Size")
    size_ok = size is not None and whole_number(size) is not None
    if size is not None and not size_ok:
        add("lint.installed-size", "control", f"Installed-Size {size!r} is not a whole number",
            "rebuild with 'click-build build', which computes it")
    stored = manifest.get("installed-size")
    if stored is None:
        add("lint.installed-size", "manifest", "has no installed-size",
            "rebuild with 'click-build build', which adds it")
    elif not (isinstance(stored, (str, int)) and whole_number(str(stored)) is not None):
        add("lint.installed-size", "manifest", f"installed-size {stored!r} is not a whole number",
            "rebuild with 'click-build build', which computes it")
    elif size_ok and str(stored) != size:
        add("lint.installed-size", "manifest",
            f"installed-size {stored} differs from the control's Installed-Size {size}",
            "rebuild with 'click-build build', which writes both")


# ------------------------------------------------------------ manifest ---

def check_manifest(ctx: Context) -> None:
    """Every manifest field against the format's rules."""
    add = ctx.report.add
    data = {k: v for k, v in ctx.manifest.items()
            if k != "installed-size" and not k.startswith("_")}
    problems = validate(data, "build")
    for problem in problems.errors:
        where = problem.split(":", 1)[0]
        field = where.split(".", 1)[0].split("[", 1)[0]
        if field == "maintainer":
            add("lint.maintainer", "manifest", problem,
                "set \"maintainer\": \"Full Name <you@example.com>\"; the stores need an e-mail "
                "address to reach you")
        else:
            add("lint.manifest-field", "manifest", problem,
                _FIELD_HINTS.get(field, "fix this field in manifest.json and rebuild"))
    for problem in problems.warnings:
        if problem.split(":", 1)[0] == "framework":
            add("lint.framework-unknown", "manifest", problem, _FIELD_HINTS["framework"])
    for key in sorted(ctx.manifest):
        if key in STORE_KEYS or key.startswith("x-"):
            continue
        close = _close_matches(key, STORE_KEYS, n=1, cutoff=0.75)
        why = (f"did you mean {close[0]!r}?" if close else
               "keys starting with '_' are the installer's" if key.startswith("_") else
               "not a manifest field")
        add("lint.manifest-key", "manifest", f"{key}: the stores reject this key ({why})",
            "rename it to the field you meant, or prefix your own keys with 'x-'")
    _check_description(ctx)
    icon = ctx.manifest.get("icon")
    if isinstance(icon, str) and icon.startswith("/"):
        add("lint.manifest-field", "manifest",
            f"icon: {icon!r} is an absolute path; the stores want the package's own icon",
            "ship the icon and give its path relative to the package root, e.g. "
            "\"icon\": \"assets/logo.svg\"")
    migrations = ctx.manifest.get("migrations")
    if "migrations" in ctx.manifest and not (
            isinstance(migrations, dict) and migrations
            and set(migrations) <= {"old-name"}
            and isinstance(migrations.get("old-name", ""), str)):
        add("lint.manifest-field", "manifest",
            "migrations must be an object with only \"old-name\": the app's former name",
            "write \"migrations\": {\"old-name\": \"old.app.name\"} or remove the key")
    if not ctx.hooks and not any(e.startswith("hooks") for e in problems.errors):
        add("lint.no-apps", "manifest", "declares no apps: there is nothing to launch",
            "add \"hooks\": {\"myapp\": {\"desktop\": \"myapp.desktop\", \"apparmor\": "
            "\"myapp.apparmor\"}}")


def _check_description(ctx: Context) -> None:
    """The stores require a description (optional in the format) longer than the
    last part of the package name (click-reviewers-tools' description_present and
    description checks)."""
    add = ctx.report.add
    if "description" not in ctx.manifest:
        add("lint.description-missing", "manifest",
            "has no description; the stores require one",
            "add a one-line \"description\" of what the app does to manifest.json")
        return
    description, name = ctx.manifest["description"], ctx.manifest.get("name")
    if isinstance(description, str) and isinstance(name, str):
        base = name.split(".")[-1]
        if len(description) < len(base):
            add("lint.description-short", "manifest",
                f"description {description!r} is shorter than {base!r}; the stores warn",
                "describe what the app does in a sentence")


def check_frameworks(ctx: Context) -> None:
    """Each framework against the built-in table and the system's frameworks."""
    add = ctx.report.add
    known = known_frameworks(ctx.frameworks_dir)
    current = sorted(n for n, s in known.items() if s in ("available", "system"))
    for name in ctx.frameworks:
        if not re.fullmatch(FRAMEWORK_RE, name):
            continue  # reported as a malformed field
        state = known.get(name)
        if state is None:
            close = _close_matches(name, list(known), n=1, cutoff=0.8)
            guess = f" (did you mean {close[0]!r}?)" if close else ""
            add("lint.framework-unknown", "manifest",
                f"framework {name!r} is not an Ubuntu Touch framework{guess}",
                f"use one of: {', '.join(current)}")
        elif state == "obsolete":
            add("lint.framework-obsolete", "manifest",
                f"framework {name!r} is obsolete: no device runs it and stores refuse it",
                "move to a current framework such as 'ubuntu-touch-24.04-2.x' and update the "
                "AppArmor policy_version to match")
        elif state == "deprecated":
            add("lint.framework-deprecated", "manifest",
                f"framework {name!r} is deprecated (Ubuntu Touch 16.04 has reached its end)",
                "move to a current framework such as 'ubuntu-touch-24.04-2.x' and update the "
                "AppArmor policy_version to match")
        elif state == "system":
            add("lint.framework-local", "manifest",
                f"framework {name!r} is known only from this system's frameworks folder; "
                "stores may not know it, and its AppArmor policy version is not checked",
                "for a published app use a framework the stores know, e.g. 'ubuntu-touch-24.04-2.x'")
        elif state == "prereleased":
            add("lint.framework-prerelease", "manifest",
                f"framework {name!r} is for unreleased systems only",
                "use a released framework such as 'ubuntu-touch-24.04-2.x' for published apps")


# ---------------------------------------------------------------- data ---

_SCAN_SETUID = re.compile(r"^data: (.+) has the setuid or setgid bit$")


def report_scan_failure(ctx: Context, message: str) -> None:
    """The core audit refused the data archive; say so, mapped to a check id."""
    m = _SCAN_SETUID.match(message)
    if m:
        ctx.report.add("lint.setuid", m.group(1),
                       "has the setuid or setgid bit; installers refuse such packages "
                       "(the rest of the package was not reviewed)",
                       f"clear the bit with 'chmod u-s,g-s {m.group(1)}' and rebuild")
        return
    ctx.report.add("lint.package-invalid", "",
                   f"{message} (the rest of the package was not reviewed)",
                   "rebuild the package with 'click-build build'; a package altered after "
                   "its build or made by hand is refused by installers")


def check_data(ctx: Context) -> None:
    """Checks over the data tree gathered by the one streaming pass."""
    _check_architecture(ctx)
    _check_framework_variant(ctx)
    _check_qt(ctx)
    _check_modes_and_links(ctx)
    _check_hook_targets(ctx)
    _check_app_hooks(ctx)
    _check_leftovers(ctx)


def _check_framework_variant(ctx: Context) -> None:
    """A QML app with no compiled code and no Python needs only the QML part of its
    framework: advice with the fix, as the package works as it is (the stores do not
    check this).  Not for web apps (no QML): their runtime is not QML's part."""
    assert ctx.data is not None
    if ctx.data.code or ctx.data.python or not ctx.data.has_qml:
        return
    for name in ctx.frameworks:
        variant = qml_variant(name)
        if variant is not None:
            # One screen line each, message and fix: docs/review.md has the other routes.
            ctx.report.add("lint.framework-variant", "manifest",
                           "pure QML: a smaller framework will do",
                           f"set \"framework\": \"{variant}\" in manifest.json")


def _check_architecture(ctx: Context) -> None:
    assert ctx.data is not None
    add, arches = ctx.report.add, ctx.architectures
    for arch in arches:
        if arch != "all" and arch not in SUPPORTED_ARCHES:
            add("lint.arch-unsupported", "manifest",
                f"architecture {arch!r} is not one Ubuntu Touch devices use",
                f"build for {', '.join(SUPPORTED_ARCHES)} (or use 'all' for code that is "
                "not compiled)")
    code = ctx.data.code
    if arches == ["all"]:
        if code:
            add("lint.arch-all-compiled", code.paths[0],
                f"the package says architecture 'all' but holds compiled code: {_listing(code)}",
                "set \"architecture\" in manifest.json to the machine the code was built for "
                "(e.g. 'arm64'), or leave the compiled files out")
        return
    if not arches:
        return
    if not code:
        add("lint.arch-unneeded", "manifest",
            f"architecture {', '.join(arches)} is set but the package holds no compiled code",
            "set \"architecture\": \"all\" so the app installs on every device")
        return
    for machine, (machine_arches, paths) in sorted(ctx.data.machines.items()):
        if machine_arches & set(arches):
            continue
        add("lint.arch-mismatch", paths.paths[0],
            f"compiled for {machine}, but the package is for {', '.join(arches)}: "
            f"{_listing(paths)}",
            f"rebuild these files for {', '.join(arches)} (e.g. 'clickable build --arch "
            f"{arches[0]}'), or correct \"architecture\" in manifest.json")


def _check_qt(ctx: Context) -> None:
    """Compiled code linked against a Qt newer than the framework's does not start."""
    assert ctx.data is not None
    if not ctx.frameworks:
        return
    for (major, minor), paths in sorted(ctx.data.qt.items()):
        qt = f"{major}.{minor}"
        needed = QT_MIN_FRAMEWORK.get(qt)
        if needed is None:
            add_hint = ("build against the Qt of your framework (Qt 5.12 for ubuntu-sdk-20.04, "
                        "Qt 5.15 for ubuntu-touch-24.04-*)")
            ctx.report.add("lint.qt-version", paths.paths[0],
                           f"linked against Qt {qt}, which no Ubuntu Touch framework ships: "
                           f"{_listing(paths)}", add_hint)
        elif not any(compare_versions(fw, needed) >= 0 for fw in ctx.frameworks):
            ctx.report.add(
                "lint.qt-version", paths.paths[0],
                f"linked against Qt {qt}, newer than framework {ctx.framework!r} ships "
                f"(Qt {qt} needs {needed} or later): {_listing(paths)}",
                f"build inside the framework's SDK (e.g. 'clickable build'), or declare a "
                f"framework with Qt {qt}, e.g. {needed!r} (CLICK_FRAMEWORK={needed} for CMake "
                "projects), and its AppArmor policy_version")


def _check_modes_and_links(ctx: Context) -> None:
    assert ctx.data is not None
    data, add = ctx.data, ctx.report.add
    if data.world_writable:
        paths = data.world_writable
        add("lint.world-writable", paths.paths[0],
            f"writable by every user of the device: {_listing(paths)}",
            "remove the write bit for others ('chmod o-w') before building, or build with "
            "'click-build build', which normalises modes")
    for path, target in sorted(data.scan.symlinks.items()):
        resolved = data.resolve(path)
        if target.startswith("/") or resolved is None:
            add("lint.symlink-external", path,
                f"symbolic link to {target!r} leaves the package",
                "ship the file itself, or point the link at a file inside the package with a "
                "relative target")
        elif data.kind(path) is None:
            add("lint.symlink-dangling", path, f"symbolic link to {target!r} points to nothing",
                "remove the link or ship the file it names")


def _check_hook_targets(ctx: Context) -> None:
    assert ctx.data is not None
    data, add = ctx.data, ctx.report.add
    for app, hooks in sorted(ctx.hooks.items()):
        for hook, target in sorted(hooks.items()):
            if hook_path_problem(target):
                continue  # reported as a malformed manifest field
            kind = data.kind(target)
            if kind is None:
                what = "leaves the package" if data.resolve(target) is None else "is not in the package"
                add("lint.hook-target-missing", target,
                    f"named by hooks.{app}.{hook} but {what}",
                    "ship the file at that path (relative to the package root) or correct the "
                    "path in manifest.json")
            elif kind == "dir" and hook not in FOLDER_HOOKS:
                add("lint.hook-target-missing", target,
                    f"named by hooks.{app}.{hook} is a folder, not a file",
                    "point the hook at the file itself")


def _system_hooks() -> set[str]:
    from ..hookfiles import DEFAULT_HOOKS_DIR, hook_files  # needed only here

    try:
        files = hook_files(DEFAULT_HOOKS_DIR)
    except OSError:
        return set()
    return {fields.get("hook-name") or name for name, fields in files}


def _check_app_hooks(ctx: Context) -> None:
    add = ctx.report.add
    known: set[str] | None = None
    for app, hooks in sorted(ctx.hooks.items()):
        names = set(hooks)
        if (not names & {"apparmor", "apparmor-profile"}
                and names != {"account-provider", "account-qml-plugin"}):
            add("lint.hook-missing-apparmor", "manifest",
                f"app {app!r} has no apparmor hook, so it cannot be confined",
                f"add \"apparmor\": \"{app}.apparmor\" to hooks.{app} and ship that file, e.g. "
                "{\"policy_groups\": [\"networking\"], \"policy_version\": 20.04}")
        if "desktop" not in names and not names & NON_GRAPHICAL_HOOKS:
            add("lint.hook-missing-desktop", "manifest",
                f"app {app!r} has no desktop hook, so it never appears in the app drawer",
                f"add \"desktop\": \"{app}.desktop\" to hooks.{app} and ship a desktop file "
                "with Name, Exec, Icon and Type=Application")
        if {"desktop", "scope"} <= names:
            add("lint.hook-exclusive", "manifest",
                f"app {app!r} has both a desktop and a scope hook",
                "split them into two apps in \"hooks\"")
        for hook in sorted(names):
            if hook in REVIEWED_HOOKS:
                add("lint.hook-review", "manifest",
                    f"hooks.{app}.{hook}: stores hold packages using {hook!r} for manual review",
                    "keep it only if the app cannot work without it, and explain why when you "
                    "upload")
            elif hook not in KNOWN_HOOKS:
                if known is None:
                    known = _system_hooks()
                if hook not in known:
                    close = _close_matches(hook, sorted(KNOWN_HOOKS), n=1)
                    guess = f" (did you mean {close[0]!r}?)" if close else ""
                    add("lint.hook-unknown", "manifest",
                        f"hooks.{app}.{hook}: no Ubuntu Touch service handles this hook{guess}",
                        f"use one of: {', '.join(sorted(KNOWN_HOOKS))}")


def _check_leftovers(ctx: Context) -> None:
    assert ctx.data is not None
    vcs = ctx.data.vcs
    if vcs:
        ctx.report.add("lint.vcs", vcs.paths[0],
                       f"version-control data in the package: {_listing(vcs)}",
                       "build from a clean tree; 'click-build build' leaves these out unless "
                       "they are renamed")
    left = ctx.data.leftovers
    if left:
        ctx.report.add("lint.build-leftover", left.paths[0],
                       f"build leftovers in the package: {_listing(left)}",
                       "install only the built app into the package tree (e.g. 'cmake --install'"
                       " into a clean prefix) or leave them out with -I PATTERN")


def _close_matches(word: str, options: Sequence[str], n: int = 1, cutoff: float = 0.6) -> list[str]:
    """difflib's suggestions, loaded only when something needs a suggestion."""
    import difflib

    return difflib.get_close_matches(word, options, n=n, cutoff=cutoff)
