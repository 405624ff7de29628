"""Packages modelled on real Ubuntu Touch apps, for comparing our review with the
stores' (tests/test_review_parity.py).  Each is what an app of that kind ships:
the files `clickable create` or an older SDK template makes, with the mistake
(or none) that such apps are known to carry."""

from __future__ import annotations

import json
from typing import Any

from review_craft import F

__all__ = ["APPS"]

SVG = "<svg xmlns='http://www.w3.org/2000/svg' width='256' height='256'/>\n"


def _main_qml(app_name: str, components: str = "Lomiri.Components 1.3",
              extra_imports: str = "") -> str:
    return f"""import QtQuick 2.7
import {components}
{extra_imports}
MainView {{
    id: root
    objectName: 'mainView'
    applicationName: '{app_name}'
    automaticOrientation: true

    width: units.gu(45)
    height: units.gu(75)

    Page {{
        anchors.fill: parent
        header: PageHeader {{
            id: header
            title: i18n.tr('Notes')
        }}
        Label {{
            anchors.centerIn: parent
            text: i18n.tr('Hello World!')
        }}
    }}
}}
"""


def _desktop(name: str, exec_line: str, icon: str = "assets/logo.svg") -> str:
    return (f"[Desktop Entry]\nName={name}\nExec={exec_line}\nIcon={icon}\nTerminal=false\n"
            "Type=Application\nX-Lomiri-Touch=true\n")


def _app(name: str, framework: str, policy: float, groups: list[str], qml: str | None,
         exec_line: str = "qmlscene %u qml/Main.qml", description: str | None = "Take notes",
         apparmor: dict[str, Any] | None = None,
         extra: dict[str, F] | None = None) -> dict[str, Any]:
    app = name.split(".")[0]
    manifest: dict[str, object] = {
        "name": name, "version": "1.0.2", "framework": framework, "title": "Notes",
        "maintainer": "Jane Doe <jane@example.com>",
        "hooks": {app: {"desktop": f"{app}.desktop", "apparmor": f"{app}.apparmor"}},
    }
    if description is not None:
        manifest["description"] = description
    files = {
        f"{app}.desktop": F(_desktop("Notes", exec_line)),
        f"{app}.apparmor": F(json.dumps(apparmor or {"policy_groups": groups,
                                                    "policy_version": policy}, indent=4)),
        "assets/logo.svg": F(SVG),
        **({"qml/Main.qml": F(qml)} if qml is not None else {}),
        **(extra or {}),
    }
    return {"manifest": manifest, "files": files}


APPS: dict[str, dict[str, Any]] = {
    # A current app as `clickable create` makes it: clean in both reviews.
    "clean-24.04": _app("notes.jane", "ubuntu-touch-24.04-1.x", 2404.1, ["networking"],
                        _main_qml("notes.jane")),
    "clean-20.04": _app("notes.jane", "ubuntu-sdk-20.04", 20.04, ["content_exchange"],
                        _main_qml("notes.jane")),
    # An app ported to Lomiri names that still declares its 16.04 framework.
    "lomiri-on-16.04": _app("notes.jane", "ubuntu-sdk-16.04.5", 16.04, ["networking"],
                            _main_qml("notes.jane")),
    # The same app before the port: Ubuntu.Components on 16.04 is fine (a deprecation
    # warning only).
    "ubuntu-components-16.04": _app("notes.jane", "ubuntu-sdk-16.04.5", 16.04, ["networking"],
                                    _main_qml("notes.jane", "Ubuntu.Components 1.3")),
    # applicationName left at the template's placeholder after renaming the app.
    "applicationName-stale": _app("notes.jane", "ubuntu-sdk-20.04", 20.04, ["networking"],
                                  _main_qml("notes.yourname")),
    # No description in the manifest (the format allows it; the stores do not).
    "no-description": _app("notes.jane", "ubuntu-sdk-20.04", 20.04, ["networking"],
                           _main_qml("notes.jane"), description=None),
    # A calendar app asking for a reserved policy group.
    "reserved-calendar": _app("agenda.jane", "ubuntu-sdk-20.04", 20.04,
                              ["calendar", "networking"], _main_qml("agenda.jane")),
    # A terminal-like tool that asks to run unconfined.
    "unconfined": _app("shell.jane", "ubuntu-sdk-20.04", 20.04, [], _main_qml("shell.jane"),
                       apparmor={"template": "unconfined", "policy_groups": [],
                                 "policy_version": 20.04}),
    # A web app wrapping a site, as the webapp template of the old SDK made it.
    "webapp": _app("site.jane", "ubuntu-sdk-20.04", 20.04, ["networking", "webview"], None,
                   exec_line="webapp-container --enable-back-forward --store-session-cookies "
                             "--webappUrlPatterns=https?://example.com/* https://example.com",
                   apparmor={"template": "ubuntu-webapp", "policy_groups": [
                       "networking", "webview", "audio"], "policy_version": 20.04}),
}
