"""What may become a file name in a database or a hook directory.

Every string an attacker can choose -- a package's name, version and app
names, a ``--user`` value, a name given on the command line, a version read
back from a link, a user name found in a registration directory -- passes
through here before it is joined into a path.  A component must be a single
name the file system can hold: not empty, not ``.`` or ``..``, no ``/``, no
NUL or other control character (a trailing newline included), valid UTF-8,
and at most ``NAME_MAX`` (255) bytes.  Package names, versions and app names
must also follow the format's own rules, matched whole (a regex's ``$`` anchor
would let a trailing newline through).

The installer's own temporary and scratch names have a fixed length (see
:func:`temp_name`), so no attacker-chosen name makes them longer.
"""

from __future__ import annotations

import os
import time

from ..errors import InstallError

__all__ = [
    "NAME_MAX",
    "PATH_MAX",
    "app_id",
    "check_app",
    "check_component",
    "check_link_path",
    "check_package",
    "check_root",
    "check_user",
    "check_version",
    "component_problem",
    "current_version",
    "temp_name",
    "version_from_target",
]

NAME_MAX = 255  # bytes in one path component (Linux, and every file system it mounts)
PATH_MAX = 4096  # bytes in a path, or a symlink's target, including the final NUL


def _show(value: object) -> str:
    """A name for an error message: one line, control characters escaped, not huge."""
    text = repr(value)
    return text if len(text) <= 80 else text[:60] + "..." + text[-12:]


def _control(value: str) -> bool:
    if value.isascii():  # nearly every name: one C-level pass (ASCII controls: 0-31, 127)
        return not value.isprintable()
    return any(ord(c) < 0x20 or 0x7F <= ord(c) < 0xA0 for c in value)


def component_problem(value: object) -> str | None:
    """Why ``value`` cannot be one path component, or None."""
    if not isinstance(value, str) or not value:
        return "is empty"
    if value in (".", ".."):
        return "is not a name"
    if "/" in value:
        return "contains '/'"
    if _control(value):
        return "contains a control character"
    try:
        size = len(value.encode("utf-8"))
    except UnicodeEncodeError:
        return "is not valid UTF-8 text"
    if size > NAME_MAX:
        return f"is {size} bytes long; a file name holds at most {NAME_MAX}"
    return None


def check_component(value: str, what: str) -> str:
    problem = component_problem(value)
    if problem is not None:
        raise InstallError(f"{what} {_show(value)} {problem}")
    return value


def check_package(name: str, what: str = "package name") -> str:
    """A package name as the format defines it (it becomes ``ROOT/NAME`` and
    ``VERSION/.click/info/NAME.manifest``: 246 bytes at most)."""
    # The format's rule, loaded only when a name is checked (start-up cost).
    from ..manifest import NAME_RULE

    check_component(name, what)
    size, most = len(name.encode("utf-8")), NAME_MAX - len(".manifest")
    if size > most:  # VERSION/.click/info/NAME.manifest must fit as well
        raise InstallError(f"{what} {_show(name)} is {size} bytes long; with '.manifest' "
                           f"it must fit in a file name: {most} bytes at most")
    if not NAME_RULE.fullmatch(name):
        raise InstallError(
            f"{what} {_show(name)} is not a valid package name (lower-case letters, digits, "
            "'.', '+' and '-', starting with a letter or digit)")
    return name


def check_version(version: str, what: str = "version") -> str:
    """A Click version (it becomes ``ROOT/NAME/VERSION``)."""
    from ..versions import version_problem

    check_component(version, what)
    problem = version_problem(version)
    if problem is not None:
        raise InstallError(f"{what} {_show(version)} is not a valid version: {problem}")
    return version


def check_app(app: str) -> str:
    """An app name of a manifest's ``hooks`` (it becomes part of ``NAME_APP_VERSION``)."""
    from ..manifest import APP_NAME_RULE

    check_component(app, "app name")
    if not APP_NAME_RULE.fullmatch(app):
        raise InstallError(
            f"app name {_show(app)} may only contain letters, digits, '+', '.' and '-'")
    return app


def app_id(package: str, app: str, version: str) -> str:
    """``NAME_APP_VERSION``, the ``${id}`` of hook patterns; it must fit in one name."""
    return check_component(f"{package}_{check_app(app)}_{version}", "application id")


def check_user(name: str) -> str:
    """A user name given to ``--user`` or found in ``.click/users`` (``@all`` included)."""
    if name == "":  # only an option gives one, such as --user "$USER" with USER unset
        raise InstallError('--user was given an empty user name (is $USER unset?); '
                           '--user "$(id -un)" names you')
    return check_component(name, "user name")


def check_root(path: str) -> str:
    """A database root (``--root`` or a configuration file): no control characters."""
    if not path or _control(path) or "\0" in path:
        raise InstallError(f"database root {_show(path)} is not a usable path")
    return path


def check_link_path(path: str, what: str) -> str:
    """A hook link's path (or target): absolute, clean, every component a name."""
    if not path.startswith("/"):
        raise InstallError(f"{what} {_show(path)} is not an absolute path")
    try:
        size = len(path.encode("utf-8"))
    except UnicodeEncodeError:
        raise InstallError(f"{what} {_show(path)} is not valid UTF-8 text") from None
    if size >= PATH_MAX:
        raise InstallError(f"{what} {_show(path)} is {size} bytes long; the limit is "
                           f"{PATH_MAX - 1}")
    for part in path.split("/")[1:]:
        if part:  # "//" and a trailing "/" are harmless
            problem = component_problem(part)
            if problem is not None:
                raise InstallError(f"{what} {_show(path)}: component {_show(part)} {problem}")
    return path


def version_from_target(target: str | None) -> str | None:
    """The version a ``current`` or registration link names, or None if it names none.

    A link planted or damaged by someone else may say anything (``..``,
    ``/etc``); only a valid version ever becomes a path.
    """
    from ..versions import version_problem

    if target is None or target.startswith("@"):
        return None
    version = target.rsplit("/", 1)[-1]
    if component_problem(version) is not None or version_problem(version) is not None:
        return None
    return version


def current_version(target: str | None) -> str | None:
    """The version a ``ROOT/NAME/current`` link names: a bare version, or None."""
    return target if target is not None and version_from_target(target) == target else None


def temp_name(label: str) -> str:
    """A temporary or scratch name of fixed size: ``.click-build.LABEL.PID.NS.new``.

    It never contains an attacker's string, so it always fits; the pid and
    clock make it unique among writers (each writer holds its database's lock).
    """
    return f".click-build.{label}.{os.getpid()}.{time.monotonic_ns()}.new"
