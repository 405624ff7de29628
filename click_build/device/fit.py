"""What ``device run`` builds: the one target the phone can run, decided before building.

The phone says its architecture and frameworks (:func:`.remote.phone_facts`); the
project's settings and manifest say which frameworks it is for
(:func:`click_build.run.project.plan_project`).  A project for a framework the phone
lacks, or a compiled app for an architecture with no sysroot to build against, is
refused here with the fix, before anything is compiled.
"""

from __future__ import annotations

from ..errors import DeviceError

TYPE_CHECKING = False  # not typing.TYPE_CHECKING: importing typing costs start-up time
if TYPE_CHECKING:
    from ..run.project import Planned
    from .remote import PhoneFacts

__all__ = ["build_settings"]

_SETTING = 'framework = "{fw}" under [tool.click-build] in pyproject.toml (or in manifest.json)'


def _suggest(frameworks: tuple[str, ...], wanted: str) -> str:
    """The phone's framework to propose: of the wanted variant (``-qml``...), newest."""
    variant = next((v for v in ("-qml", "-html", "-papi") if wanted.endswith(v)), "")
    same = [f for f in frameworks if (f.endswith(variant) if variant else
                                      not f.endswith(("-qml", "-html", "-papi")))]
    return max(same or frameworks)


def build_settings(planned: Planned, phone: PhoneFacts, label: str) -> dict[str, str]:
    """The ``-C`` settings that build ``planned`` for ``phone``, or a DeviceError."""
    frameworks = phone.frameworks
    if not frameworks:  # its click said nothing: the install will say what is wrong
        return {}
    if planned.matrix:
        fits = [f for f in planned.matrix if f in frameworks]
        if not fits:
            raise DeviceError(
                f"{label} has {', '.join(frameworks)}, and the project is built for "
                f"{', '.join(planned.matrix)} (frameworks): add "
                f"{_suggest(frameworks, planned.matrix[0])} to frameworks under "
                "[tool.click-build] in pyproject.toml")
        return {"click-build.frameworks": fits[-1]}
    if planned.framework in frameworks:
        return {}
    if not planned.chosen:  # click-build's default: the phone's own instead
        return {"click-build.framework": _suggest(frameworks, planned.framework)}
    raise DeviceError(
        f"{label} has {', '.join(frameworks)}, not {planned.framework}, which the project "
        f"is built for: set {_SETTING.format(fw=_suggest(frameworks, planned.framework))}, "
        "or build for several with frameworks = [...]")
