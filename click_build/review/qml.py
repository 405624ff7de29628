"""qml: what the stores' functional review reads in an app's QML files.

Two checks of click-reviewers-tools (cr_functional.py), with its patterns:

- ``functional:qml_application_uses_lomiri`` (error): a QML file imports
  ``Lomiri.*`` but a framework is older than ``ubuntu-sdk-20.04``, whose
  devices have only the ``Ubuntu.Components`` names.
- ``functional:qml_applicationName_matches_manifest`` (warning for apps
  without compiled code): the ``applicationName`` of the ``MainView`` is not
  the package name, so the app's settings and data land in folders its
  AppArmor profile does not allow.

Each QML file is read line by line as the one pass streams it
(:class:`~.qmlscan.QmlScanner`); only these facts are kept, never the text.
"""

from __future__ import annotations

from ..versions import compare_versions
from .findings import Context

__all__ = ["LOMIRI_SINCE", "check"]

#: The first framework with Lomiri's QML modules (the store's cut-off).
LOMIRI_SINCE = "ubuntu-sdk-20.04"


def _old_frameworks(frameworks: list[str]) -> list[str]:
    return [fw for fw in frameworks if compare_versions(fw, LOMIRI_SINCE) < 0]


def check(ctx: Context) -> None:
    """The QML files of the package, against the manifest."""
    assert ctx.data is not None
    lomiri = ctx.data.lomiri
    old = _old_frameworks(ctx.frameworks)
    if lomiri and old:
        ctx.report.add(
            "qml.lomiri-framework", lomiri.paths[0],
            f"imports Lomiri modules, which framework {', '.join(old)} does not have: "
            f"{lomiri.listing()}",
            f"declare framework '{LOMIRI_SINCE}' or newer (and its AppArmor policy_version), "
            "or import the Ubuntu.Components names that framework has")
    _check_application_name(ctx)


def _check_application_name(ctx: Context) -> None:
    assert ctx.data is not None
    data = ctx.data
    if data.uses_qsettings or not data.mainviews:
        return  # the store skips the check without a MainView
    if data.code:
        return  # the store only notes it: compiled apps may set the name in C++
    if data.name_matches:
        return
    name = ctx.manifest.get("name")
    if data.named:
        first = data.named_paths.paths[0]
        message = (f"the MainView's applicationName is not the package name {name!r}: "
                   f"{data.named.listing()}")
    elif data.inline_named:
        # The store's check reads applicationName only on a line of its own: it warns.
        first = data.inline_named.paths[0]
        ctx.report.add("qml.application-name", first,
                       "the MainView sets applicationName on its own first line "
                       f"({data.inline_named.listing()}), where the stores' check does not "
                       "read it: they warn that the app may not write its settings and data",
                       f"put applicationName: \"{name}\" on a line of its own in the MainView")
        return
    else:
        first = data.mainviews.paths[0]
        message = f"the MainView sets no applicationName: {data.mainviews.listing()}"
    ctx.report.add("qml.application-name", first,
                   f"{message}; confined, the app cannot write its settings and data",
                   f"set applicationName: \"{name}\" in the MainView")
