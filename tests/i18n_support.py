"""The translation tests' app (strings in every form the extraction knows), and reading
and writing gettext catalogs as they do: the messages of a .po/.pot, a header field, a
translator's msgstr lines, and a package's compiled catalog."""

from __future__ import annotations

import json
import re
from pathlib import Path

from conftest import need, run

MANIFEST = {
    "name": "com.example.dice", "version": "1.0", "framework": "ubuntu-sdk-20.04",
    "maintainer": "Jane Doe <jane@example.com>", "title": "Dice",
    "description": "Rolls dice for board games",
    "hooks": {"dice": {"desktop": "dice.desktop", "apparmor": "dice.apparmor"}},
}
DESKTOP = ("[Desktop Entry]\nName=Dice\nGenericName=Dice game\nComment=Rolls dice\n"
           "Keywords=dice;game;\n"
           "Exec=qmlscene qml/Main.qml\nIcon=icon.svg\nType=Application\nX-Lomiri-Touch=true\n")
MAIN_QML = """\
import QtQuick 2.12
// a comment with a ' in it, which C++ mode would misread
Item {
    // TRANSLATORS: the app's name
    property string a: i18n.tr("Dice")
    property string b: i18n.tr("%1 die", "%1 dice", 3).arg(3)
    property string c: i18n.dtr("other.domain", "Other")
    property string d: i18n.dtr("other.domain", "%1 cup", "%1 cups", 2)
    property string e: i18n.ctr("verb", "Roll")
    property string f: i18n.dctr("other.domain", "menu", "Quit")
    property string g: i18n.tag("Tagged")
    property string h: `${a} is not extracted`
    property var r: /it's a regex/
    property string w: i18n.tr("Würfel")
}
"""
APP_FILES: dict[str, str | bytes] = {
    "manifest.json": json.dumps(MANIFEST),
    "dice.desktop": DESKTOP,
    "dice.apparmor": json.dumps({"policy_groups": [], "policy_version": 20.04}),
    "icon.svg": "<svg xmlns='http://www.w3.org/2000/svg'/>\n",
    "qml/Main.qml": MAIN_QML,
}


def entries(pot: str) -> set[tuple[str, str, str]]:
    """(context, msgid, msgid_plural) of each message of a .po/.pot (one-line strings)."""
    out = set()
    for block in pot.split("\n\n"):
        fields = dict(re.findall(r'^(msgctxt|msgid|msgid_plural) "(.*)"$', block, re.MULTILINE))
        if fields.get("msgid"):
            out.add((fields.get("msgctxt", ""), fields["msgid"], fields.get("msgid_plural", "")))
    return out


def header(po: str, field: str) -> str:
    m = re.search(rf'^"{field}: (.*)\\n"$', po, re.MULTILINE)
    assert m, (field, po[:600])
    return m.group(1)


def translate(po: Path, translations: dict[str, str]) -> None:
    """Fill in msgstr lines, as a translator does in an editor."""
    text = po.read_text(encoding="utf-8")
    for msgid, msgstr in translations.items():
        old = f'msgid "{msgid}"\nmsgstr ""\n'
        assert old in text, (msgid, text)
        text = text.replace(old, f'msgid "{msgid}"\nmsgstr "{msgstr}"\n')
    po.write_text(text, encoding="utf-8")


def unpacked(click: Path, dest: Path) -> Path:
    run([need("dpkg-deb"), "-x", str(click), str(dest)])
    return dest


def catalog(mo: Path) -> str:
    return run([need("msgunfmt"), str(mo)]).stdout
