"""The phone's look on the desktop: its language, its dark theme, its screen.

- ``--lang LANG``: gettext reads ``LANGUAGE`` (the app's ``i18n.tr()`` and
  ``share/locale`` catalogs); ``LANG`` and ``LC_ALL`` name a locale this computer has
  (``ll_CC.UTF-8`` where installed, else ``C.UTF-8``): a locale glibc cannot load
  falls back to ``C``, and gettext ignores ``LANGUAGE`` there.
- ``--dark-mode``: the Lomiri UI Toolkit reads the system theme from
  ``$XDG_CONFIG_HOME/lomiri-ui-toolkit/theme.ini`` (``theme=`` under ``[General]``),
  the file the phone's settings write; ``run`` writes it in the app's private config
  folder on each start, ``SuruDark`` or the default ``Ambiance``.
- ``--form-factor``: a device's screen size and grid unit (UBports' deviceinfo
  configurations).  On the phone the shell hands the toolkit the screen's scale; on an
  X11 desktop the toolkit takes it from Qt's device pixel ratio, so ``QT_SCALE_FACTOR``
  is the grid unit over 8 (``GRID_UNIT_PX`` is set too, for toolkits that read it), and
  the window gets the device's size through Qt's ``-qwindowgeometry`` argument.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass

from ..atomicfile import new_file_mode, write_file
from ..errors import ConfigError, RunError
from .state import folder_fd_inside

__all__ = ["FORM_FACTORS", "FormFactor", "Look", "parse_lang", "write_theme"]

#: The toolkit's grid unit without scaling (UCUnits' DEFAULT_GRID_UNIT_PX).
BASE_GRID_UNIT = 8
THEMES = {False: "Lomiri.Components.Themes.Ambiance", True: "Lomiri.Components.Themes.SuruDark"}
_LANG = re.compile(r"([a-z]{2,3})(?:[_-]([A-Za-z]{2}|[0-9]{3}|[A-Z][a-z]{3}))?(@[a-z]+)?")


@dataclass(frozen=True)
class FormFactor:
    device: str
    width: int  # the screen in the orientation apps start in, in pixels
    height: int
    grid_unit: int  # pixels per grid unit (GRID_UNIT_PX)

    def __str__(self) -> str:
        return f"{self.device}, {self.width}x{self.height} px, {self.grid_unit} px per grid unit"


#: Real Ubuntu Touch devices: grid units from UBports' deviceinfo (configs/devices/
#: pinephone.yaml: GridUnit 14, portrait; pinetab.yaml: GridUnit 9, landscape), screens
#: from their makers (PinePhone 1440x720, PineTab 1280x800).
FORM_FACTORS = {
    "phone": FormFactor("PinePhone", 720, 1440, 14),
    "tablet": FormFactor("PineTab", 1280, 800, 9),
}


def parse_lang(value: str) -> str:
    """``--lang``'s value as gettext names languages: ``de``, ``pt_BR``, ``sr@latin``."""
    match = _LANG.fullmatch(value.strip())
    if not match:
        raise ConfigError(f"--lang {value!r}: give a language code such as de, pt_BR or "
                          "sr@latin (the names of your po/*.po files)")
    lang, region, variant = match.groups()
    region = "" if region is None else "_" + (region.upper() if len(region) == 2 else region)
    return lang + region + (variant or "")


def _locale_for(lang: str) -> str:
    """A UTF-8 locale for ``lang`` that this computer has, else ``C.UTF-8``."""
    import locale

    base = lang.split("@")[0]
    candidates = [f"{base}.UTF-8"] if "_" in base else []
    candidates += [f"{base}_{base.upper()}.UTF-8"] if "_" not in base else []
    saved = locale.setlocale(locale.LC_MESSAGES)
    try:
        for name in candidates:
            try:
                locale.setlocale(locale.LC_MESSAGES, name)
            except locale.Error:
                continue
            return name
    finally:
        locale.setlocale(locale.LC_MESSAGES, saved)
    return "C.UTF-8"


@dataclass(frozen=True)
class Look:
    """What ``--lang``, ``--dark-mode``, ``--form-factor`` and ``--grid-unit`` asked for."""

    lang: str | None = None
    dark: bool = False
    form_factor: str | None = None
    grid_unit: float | None = None

    def __post_init__(self) -> None:
        if self.grid_unit is not None and self.form_factor is None:
            raise ConfigError("--grid-unit scales a --form-factor: give one (phone or tablet)")

    @property
    def device(self) -> FormFactor | None:
        return FORM_FACTORS[self.form_factor] if self.form_factor else None

    def environment(self) -> dict[str, str]:
        """The variables the look sets for the app."""
        env: dict[str, str] = {}
        if self.lang:
            env["LANGUAGE"] = self.lang
            env["LANG"] = env["LC_ALL"] = _locale_for(self.lang)
        device = self.device
        if device is not None:
            grid_unit = self.grid_unit or device.grid_unit
            env["GRID_UNIT_PX"] = f"{grid_unit:g}"
            env["QT_SCALE_FACTOR"] = f"{grid_unit / BASE_GRID_UNIT:g}"
        return env

    def arguments(self) -> list[str]:
        """Arguments for the app (every Qt program takes Qt's own and removes them)."""
        device = self.device
        if device is None:
            return []
        # In Qt's device-independent pixels: QT_SCALE_FACTOR makes them the device's.
        width = round(device.width * BASE_GRID_UNIT / device.grid_unit)
        height = round(device.height * BASE_GRID_UNIT / device.grid_unit)
        return ["-qwindowgeometry", f"{width}x{height}"]


def write_theme(config_home: str, state: str, dark: bool) -> None:
    """``lomiri-ui-toolkit/theme.ini`` in the app's private config folder (``config_home``,
    inside the claimed state folder ``state``), written aside and renamed into place,
    never through a link the app may have left there."""
    parts = [*os.path.relpath(config_home, state).split(os.sep), "lomiri-ui-toolkit"]
    shown = os.path.join(state, *parts, "theme.ini")
    with folder_fd_inside(state, *parts) as fd:
        try:
            write_file("theme.ini", f"[General]\ntheme={THEMES[dark]}\n".encode(),
                       new_file_mode(0o644), dir_fd=fd)
        except OSError as e:
            raise RunError(f"cannot write {shown}: {e.strerror}") from None
