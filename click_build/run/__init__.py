"""``click-build run``: build, install privately and start an app as the phone would.

A project is built first (:func:`.project.build_project`), the package is
installed into a private database (:mod:`.private`), and the app's desktop
file is turned into a command and an environment the way the Ubuntu Touch
launcher does it (:mod:`.launcher`); :mod:`.process` runs it, or, for an HTML5
app without a web runner, :mod:`.webserve` serves its pages.
"""

from __future__ import annotations

import os
import re
import shlex
import unicodedata
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from .. import _console
from ..errors import ConfigError, RunError
from .launcher import WEB_RUNNERS, LaunchPlan
from .look import Look

TYPE_CHECKING = False  # not typing.TYPE_CHECKING: importing typing costs start-up time
if TYPE_CHECKING:
    from .private import PrivateRoot

__all__ = ["Look", "Prepared", "Session", "build", "install_and_plan", "open_session",
           "parse_env_pairs", "prepare", "render_shell", "start"]

_ENV_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
#: The desktop file's values a launch uses (Exec; Name for %c, Icon for %i).
_FIELDS = ("Exec", "Name", "Icon")
#: Bidi embeddings, overrides and isolates: they reorder how a line is shown.
_BIDI = frozenset("\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069")
#: With none of these set, a failing app most likely found no screen to open.
NO_DISPLAY_HINT_UNLESS = ("DISPLAY", "WAYLAND_DISPLAY", "QT_QPA_PLATFORM")


@dataclass(frozen=True)
class Prepared:
    plan: LaunchPlan
    app_id: str
    triplet: str
    exec_args: tuple[str, ...] = ()  # Exec's arguments, without those of the look
    emulated: bool = False  # under qemu (run --arch): on X11 alone

    def environment(self) -> dict[str, str]:
        return self.plan.environment(os.environ)

    def serves_pages(self) -> bool:
        """An HTML5 app whose web runner this computer lacks: ``run`` serves its pages."""
        from .launcher import find_program

        program = self.plan.argv[0]
        return program in WEB_RUNNERS and find_program(
            program, self.environment().get("PATH", os.defpath), self.triplet) is None


def parse_env_pairs(pairs: Sequence[str]) -> dict[str, str]:
    """``--env K=V`` values; a bad one is a one-line error."""
    env: dict[str, str] = {}
    for pair in pairs:
        name, sep, value = pair.partition("=")
        if not sep or not _ENV_NAME.fullmatch(name):
            raise ConfigError(f"--env {pair!r}: expected NAME=VALUE with a variable name "
                              "of letters, digits and '_'")
        env[name] = value
    return env


def host_triplet() -> str:
    from ..elf import ARCH_TRIPLETS
    from ..hostarch import host_architecture

    return ARCH_TRIPLETS.get(host_architecture(), "")


@dataclass(frozen=True)
class Session:
    """What every build and start of one ``run`` shares: the target and the claimed
    private root (its folders made before anything is built or installed into it)."""

    target: str
    private: PrivateRoot
    homes: dict[str, str]  # the app's XDG folders
    is_project: bool
    arch: str | None = None  # --arch: the phone's architecture, run under qemu


def open_session(target: str, root: str | None, arch: str | None = None) -> Session:
    """Claim the private root (:mod:`.state`) for a project folder or a .click file
    (``arch``: to run under qemu, checked before anything is made or built)."""
    from .private import PrivateRoot, default_root
    from .project import is_project
    from .state import claim_state_folder

    if arch is not None:
        from .emulate import check_arch, qemu_path

        qemu_path(check_arch(arch))
    if os.path.isdir(target):
        if not is_project(target):
            raise RunError(f"{target}: not an app project (no pyproject.toml or manifest.json); "
                           "give a project folder or a .click file")
        if root:
            private = PrivateRoot(claim_state_folder(root))
        else:
            private = PrivateRoot(claim_state_folder(default_root(target, True), project=target))
    elif os.path.isfile(target):
        private = PrivateRoot(claim_state_folder(root or default_root(target, False)))
    else:
        raise RunError(f"{target}: no such project folder or package file")
    return Session(target, private, private.prepare(os.environ.get("XDG_RUNTIME_DIR")),
                   os.path.isdir(target), arch)


def build(session: Session) -> str:
    """The package to install: the project built into the private root, or the file."""
    from .project import build_output_on_stderr, build_project

    if not session.is_project:
        return session.target
    with build_output_on_stderr():  # stdout is the app's, or the --print-env script
        if session.arch is not None:
            from .project import build_for_arch

            return os.fspath(build_for_arch(session.target, session.private.path,
                                            session.arch))
        return os.fspath(build_project(session.target, session.private.path))


def _one_line(key: str, value: str) -> str:
    """``value`` of the desktop file's ``key``, or ValueError if it holds a character that
    no launcher line may: a control character (a NUL ends an argument where the kernel
    reads it, and a shell reading the --print-env script drops it), a line or paragraph
    separator, or a bidi override (the printed script would read otherwise than it runs).
    A tab separates arguments, as a space does."""
    for ch in value:
        if ch != "\t" and (unicodedata.category(ch) in ("Cc", "Zl", "Zp") or ch in _BIDI):
            kind = "a bidi override" if ch in _BIDI else "a control character"
            raise ValueError(f"{key} holds U+{ord(ch):04X}, {kind}: a desktop file's values "
                             "are one line of printable text")
    return value


def prepare(target: str, root: str | None = None, app: str | None = None,
            args: Sequence[str] = (), env: Mapping[str, str] | None = None,
            look: Look | None = None, arch: str | None = None) -> Prepared:
    """Build (for a project), install privately, and plan the launch of one app
    (``arch``: for that architecture, to run under qemu)."""
    session = open_session(target, root, arch)
    return install_and_plan(session, build(session), app, args, env, look)


def install_and_plan(session: Session, package: str, app: str | None = None,
                     args: Sequence[str] = (), env: Mapping[str, str] | None = None,
                     look: Look | None = None) -> Prepared:
    """Install ``package`` privately and plan the launch of one of its apps, as ``look``
    asks (its theme file written, its variables and arguments in the plan)."""
    from ..review.desktop import parse_desktop, split_exec
    from .apps import choose_app, desktop_apps
    from .launcher import expand_exec, launch_environment
    from .look import write_theme
    from .private import install_private

    look = look or Look()
    if session.arch is not None:
        from ..package import open_click
        from .emulate import check_fits

        with open_click(package) as pkg:
            check_fits(pkg.manifest_data, session.arch, f"{pkg.name} {pkg.version}")
    installed = install_private(package, session.private, session.arch)
    apps = desktop_apps(installed.manifest)
    app_name = choose_app(apps, installed.name, app, RunError)
    relpath = apps[app_name]
    desktop_path, raw = installed.read_desktop(relpath)
    try:
        entry = parse_desktop(raw)
        fields = {key: _one_line(key, entry.get(key) or "") for key in _FIELDS}
        exec_line = fields["Exec"].strip()
        if not exec_line:
            raise ValueError("has no Exec line: nothing to start")
        words = split_exec(exec_line)
    except ValueError as e:
        raise RunError(f"{installed.name}: {relpath}: {e}") from None
    icon = fields["Icon"].strip()
    if icon and not icon.startswith("/"):
        icon = os.path.join(installed.app_dir, icon)
    argv = expand_exec(words, list(args), fields["Name"], icon, desktop_path)
    if not argv:
        raise RunError(f"{installed.name}: {relpath}: Exec has no program")
    exec_args = tuple(argv[1:])
    argv += look.arguments()
    app_id = f"{installed.name}_{app_name}_{installed.version}"
    base: Mapping[str, str] = os.environ
    emulation = None
    if session.arch is not None and argv[0] not in WEB_RUNNERS:  # pages are served alike
        from .emulate import emulation_for, root_env

        emulation = emulation_for(session.arch, installed.manifest, installed.app_dir, argv[0],
                                  app_id)
        triplet = emulation.triplet
        base = {**os.environ, **root_env(emulation.root, triplet)}
    else:
        triplet = host_triplet()
    changed = launch_environment(base, installed.app_dir, app_id, desktop_path, triplet,
                                 session.homes)
    # Qt's QML disk cache trusts a compiled file while the source's path and time match,
    # and a package's times need not change with its contents (SOURCE_DATE_EPOCH): a
    # cache kept from the last run would show the page as it was.  A development run
    # compiles its QML afresh instead (milliseconds for an app's few files), and so never
    # loads a cache file it did not write.
    changed["QML_DISABLE_DISK_CACHE"] = "1"
    changed.update(look.environment())
    plan = LaunchPlan(argv, installed.app_dir, changed)
    if emulation is not None:
        from .emulate import emulate

        plan = emulate(plan, emulation, app_id)
    plan.changed.update(env or {})
    write_theme(session.homes["XDG_CONFIG_HOME"], session.private.path, look.dark)
    return Prepared(plan, app_id, triplet, exec_args, emulation is not None)


def render_shell(plan: LaunchPlan) -> str:
    """The launch as a POSIX shell script: ``sh -c "$(click-build run --print-env)"`` runs it."""
    words = [plan.cwd, *plan.changed.values(), *plan.argv]
    if any("\0" in word for word in words):  # no shell can hold one: it would run otherwise
        raise RunError("the launch holds a NUL character, which no shell script can carry")
    lines = [f"cd {shlex.quote(plan.cwd)} || exit"]
    lines += [f"export {k}={shlex.quote(v)}" for k, v in sorted(plan.changed.items())]
    lines.append("exec " + " ".join(shlex.quote(a) for a in plan.argv))
    return "\n".join(lines) + "\n"


def start(prepared: Prepared, timeout: float | None) -> int:
    """Run the planned app (or serve an HTML5 app's pages); return the exit status."""
    from .process import run_app

    plan = prepared.plan
    if prepared.serves_pages():
        from .webserve import serve_app

        return serve_app(plan.argv[0], prepared.exec_args, plan.cwd, timeout, prepared.app_id)
    env = checked_environment(prepared)
    status = run_app(plan.argv, plan.cwd, env, timeout, prepared.app_id)
    if status != 0:
        hint_display(prepared, env, status)
    return status


def checked_environment(prepared: Prepared) -> dict[str, str]:
    """The app's environment, once its program is known to start (else a one-line error)."""
    from .launcher import check_runner

    plan, env = prepared.plan, prepared.environment()
    check_runner(plan.argv, env, prepared.triplet, prepared.app_id, plan.cwd)
    _console.debug(f"starting {prepared.app_id} in {plan.cwd}: {shlex.join(plan.argv)}")
    return env


def hint_display(prepared: Prepared, env: Mapping[str, str], status: int) -> None:
    """After a failure: with no display set, say how to give the app one (Qt's own "could
    not connect to display" is easy to miss above its abort)."""
    # under qemu the app is told to use X11 (QT_QPA_PLATFORM=xcb): only DISPLAY gives one
    shown = ("DISPLAY",) if prepared.emulated else NO_DISPLAY_HINT_UNLESS
    if not any(env.get(k) for k in shown):
        _console.warn(f"{prepared.app_id} ended with status {status}, and no display was "
                      "set (DISPLAY, WAYLAND_DISPLAY): run it in a desktop session, or "
                      "under a virtual X server: xvfb-run -a click-build run ...")
