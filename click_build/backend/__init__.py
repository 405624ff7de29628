"""PEP 517 build backend: ``python -m build`` turns an app project into a ``.click``.

``build_wheel`` writes ``NAME_VERSION_ARCH.click`` (frontends accept a
non-wheel file name); ``build_sdist`` writes the app's source package.  Only
the hooks live here, each behind one decorator that turns a
:class:`~click_build.errors.ClickError` into ``click-build: error: ...`` and
exit status 1.  Everything heavy is imported inside the hooks.

No PEP 660 editable hooks: an app runs on a phone from an installed package,
so there is nothing to install into a Python environment in editable mode.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Mapping
from typing import TypeVar

__all__ = [
    "build_sdist",
    "build_wheel",
    "get_requires_for_build_sdist",
    "get_requires_for_build_wheel",
    "prepare_metadata_for_build_wheel",
]

ConfigSettings = Mapping[str, "str | list[str]"] | None
T = TypeVar("T")

NOT_A_WHEEL = "click-build produces .click packages; use python -m build"


def _pyproject_hook(func: Callable[..., T]) -> Callable[..., T]:
    """Report a ClickError as one line and exit 1; anything else is a bug and propagates."""

    @functools.wraps(func)
    def wrapper(*args: object, **kwargs: object) -> T:
        from .. import _console
        from ..errors import ClickError

        _console.setup_logging()
        try:
            return func(*args, **kwargs)
        except ClickError as e:
            _console.print_error(e)
            raise SystemExit(1) from None
        except OSError as e:
            _console.print_os_error(e)
            raise SystemExit(1) from None

    return wrapper


@_pyproject_hook
def get_requires_for_build_wheel(config_settings: ConfigSettings = None) -> list[str]:
    """What the project's kind needs and the build environment lacks."""
    from .kinds import requires, resolve
    from .settings import load_project

    project = load_project(".", config_settings)
    return requires(project, resolve(project))


@_pyproject_hook
def get_requires_for_build_sdist(config_settings: ConfigSettings = None) -> list[str]:
    return []


@_pyproject_hook
def build_wheel(
    wheel_directory: str,
    config_settings: ConfigSettings = None,
    metadata_directory: str | None = None,
) -> str:
    """Build the ``.click`` into ``wheel_directory`` and return its file name."""
    from .pipeline import build_package
    from .settings import load_project

    return build_package(load_project(".", config_settings), wheel_directory).name


@_pyproject_hook
def build_sdist(sdist_directory: str, config_settings: ConfigSettings = None) -> str:
    """Write the app's source package ``NAME-VERSION.tar.gz``; return its file name."""
    from .sdist import build_sdist as _build_sdist

    return _build_sdist(".", sdist_directory, config_settings)


@_pyproject_hook
def prepare_metadata_for_build_wheel(
    metadata_directory: str, config_settings: ConfigSettings = None
) -> str:
    """pip and ``build --metadata`` ask for wheel metadata; an app has none."""
    from ..errors import BuildError

    raise BuildError(NOT_A_WHEEL)
