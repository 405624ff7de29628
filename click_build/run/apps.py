"""The apps of a package that a launcher can start, and picking one of them."""

from __future__ import annotations

from collections.abc import Mapping

from ..errors import ClickError

__all__ = ["choose_app", "desktop_apps"]


def desktop_apps(manifest: Mapping[str, object]) -> dict[str, str]:
    """App name -> its desktop file, for every app with a ``desktop`` hook (sorted)."""
    hooks = manifest.get("hooks")
    apps: dict[str, str] = {}
    if isinstance(hooks, dict):
        for app, entries in hooks.items():
            if isinstance(app, str) and isinstance(entries, dict):
                desktop = entries.get("desktop")
                if isinstance(desktop, str):
                    apps[app] = desktop
    return dict(sorted(apps.items()))


def choose_app(apps: Mapping[str, str], package: str, wanted: str | None,
               error: type[ClickError], how: str = "--app") -> str:
    """``wanted`` if the package has it, else its only app; ``how`` says how to choose."""
    if not apps:
        raise error(f"{package} has no app with a desktop hook: nothing to start")
    if wanted is not None:
        if wanted not in apps:
            raise error(f"{package} has no app {wanted!r} with a desktop file; its apps: "
                        f"{', '.join(apps)}")
        return wanted
    if len(apps) > 1:
        raise error(f"{package} has {len(apps)} apps ({', '.join(apps)}): choose one with {how}")
    return next(iter(apps))
