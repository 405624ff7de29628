"""Deterministic benchmark trees: app-like text (QML, JS, HTML, CSS, JSON, SVG) and assets.

The same seed gives the same bytes on every machine and Python 3.10+ (only
``random.Random`` with a fixed seed, ``randbytes`` and zlib at a fixed level
are used), so figures taken on two machines measure the same input.

The text is generated from templates with a vocabulary of identifiers and
English prose, so it compresses like real app source (gzip -9 shrinks it about
4 times; the QML and JavaScript that Qt and Lomiri ship, about 5 times), not
like random bytes (which do not compress) nor like a handful of repeated words
(which compress far better, and at level 9 far slower, than real code).
"""

from __future__ import annotations

import json
import os
import random
import struct
import zlib
from pathlib import Path

MANIFEST = {
    "name": "com.example.bench",
    "version": "1.0",
    "framework": "ubuntu-sdk-20.04",
    "maintainer": "Bench <bench@example.com>",
    "title": "Bench",
    "description": "A generated app for the benchmarks",  # the review requires one
    "hooks": {"bench": {"desktop": "bench.desktop", "apparmor": "bench.apparmor"}},
}
#: dpkg-deb -b needs a control file; click-build leaves it out with ``-I DEBIAN``.
DEB_CONTROL = ("Package: bench\nVersion: 1.0\nArchitecture: all\n"
               "Maintainer: Bench <bench@example.com>\nDescription: bench\n")

_PROSE = """the a to of and in is it you that for on with this be as are was have not
at or from by can but will if all an one your which more when up there what so out do
about time has new been other into may some them only its over than first also any
after use these two how our work because way even want well most need show make each
user page item list view data value button text label model open close save load
error message file folder name title color size width height default current
selected visible enabled active empty ready update change remove add select settings
account network server request response result image icon theme style layout header
footer content section entry field input output search filter sort order count index
start stop pause play next previous back forward home menu dialog window screen
device phone tablet touch gesture swipe scroll drag drop click press release hold
notification alert warning info debug log cache storage database table record
query key token session login logout password email address number date time day
week month year hour minute second today tomorrow yesterday always never sometimes
please check again later before after while during until since because although
keep track every small large big long short fast slow quick simple complex easy
hard better best good bad wrong right left top bottom center middle inside outside
above below near far high low full half quarter part whole single double triple
when the user taps the button the page opens and shows the list of items
this function returns the current value or undefined when nothing is selected
make sure the model is ready before the view asks for its first row""".split()

_WORDS = """item list view model page header footer label button icon image text title
color width height margin padding spacing radius border opacity visible enabled
index count value state source target delegate section action handler timer
animation duration easing scale rotation anchor layout column row grid flick
settings account contact message thread conversation photo gallery album track
player playlist volume progress position duration status network request reply
cache store database record query filter sorter search result entry field
input output dialog popup menu drawer toolbar tab panel sheet overlay banner
notification badge avatar thumbnail preview detail summary content body note
task project event calendar alarm reminder location map marker route weather
forecast temperature feed article author comment reply share like favorite
download upload sync backup restore import export theme palette font size
current selected pending loading loaded error empty ready active checked""".split()

_QML_TYPES = ("Item Rectangle Column Row Flow Grid ListView GridView Repeater Flickable "
              "Label Button Icon Image Text MouseArea Page PageHeader Dialog Popup "
              "ListItem ListItemLayout Slider Switch CheckBox TextField ActivityIndicator "
              "ProgressBar Timer Connections Loader ScrollView AbstractButton").split()
_QML_PROPS = ("width height x y z opacity visible enabled clip color radius spacing "
              "anchors.margins anchors.fill anchors.centerIn anchors.left anchors.right "
              "anchors.top anchors.bottom font.pixelSize font.bold text source "
              "horizontalAlignment verticalAlignment elide wrapMode model delegate "
              "interval running repeat checked value minimumValue maximumValue").split()
_QML_TYPE_NAMES = "int real bool string var color url date list alias".split()
_HTML_TAGS = "div section article header footer nav aside ul li span p a button".split()
_CSS_PROPS = ("display position top left right bottom width height margin padding "
              "border border-radius color background background-color font-size "
              "font-weight line-height text-align flex flex-direction justify-content "
              "align-items gap overflow opacity transition transform z-index").split()
_LICENSE = """/*
 * Copyright (C) {year} {author}
 *
 * This program is free software: you can redistribute it and/or modify
 * it under the terms of the GNU General Public License as published by
 * the Free Software Foundation; version 3.
 *
 * This program is distributed in the hope that it will be useful,
 * but WITHOUT ANY WARRANTY; without even the implied warranty of
 * MERCHANTABILITY or FITNESS FOR A PARTICULAR PURPOSE.  See the
 * GNU General Public License for more details.
 *
 * You should have received a copy of the GNU General Public License
 * along with this program.  If not, see <http://www.gnu.org/licenses/>.
 */
"""
_AUTHORS = ("Jane Doe", "Alex Smith", "Mika Virtanen", "Ana Souza", "Wei Zhang",
            "The Bench App Developers", "Lomiri Team", "UBports Foundation")


class _Text:
    """Generators of source-like text from one seeded random stream."""

    def __init__(self, rng: random.Random) -> None:
        self.r = rng
        # A per-app vocabulary of identifiers, as a real code base has.
        self.idents = sorted({self._camel(rng.randint(1, 3)) for _ in range(900)})
        self.types = sorted({w.capitalize() + rng.choice(_WORDS).capitalize()
                             for w in rng.sample(_WORDS, 60)})
        self.new_file()

    def _camel(self, n: int) -> str:
        parts = [self.r.choice(_WORDS) for _ in range(n)]
        return parts[0] + "".join(p.capitalize() for p in parts[1:])

    def new_file(self) -> None:
        """A file mostly uses its own few names, as a real component does."""
        self.local = [self._global_ident() for _ in range(self.r.randint(15, 40))]

    def _global_ident(self) -> str:
        # Zipf-like: a few names are everywhere, most are rare.
        return self.idents[int(len(self.idents) * self.r.random() ** 2.2)]

    def ident(self) -> str:
        if self.r.random() < 0.75:
            return self.local[int(len(self.local) * self.r.random() ** 1.5)]
        return self._global_ident()

    def prose(self, lo: int, hi: int) -> str:
        words = [self.r.choice(_PROSE) for _ in range(self.r.randint(lo, hi))]
        return " ".join(words).capitalize()

    def number(self) -> str:
        r = self.r.random()
        if r < 0.5:
            return str(self.r.choice((0, 1, 2, 4, 8, 10, 12, 16, 20, 24, 32, 48, 64, 100)))
        if r < 0.8:
            return str(self.r.randint(0, 999))
        return f"{self.r.random():.2f}"

    def string(self) -> str:
        return '"' + self.prose(1, 6) + '"'

    def expr(self, depth: int = 0) -> str:
        r = self.r.random()
        if r < 0.25 or depth > 1:
            return self.number() if r < 0.12 else f"{self.ident()}.{self.ident()}"
        if r < 0.4:
            return f'i18n.tr({self.string()})'
        if r < 0.55:
            return f"{self.expr(depth + 1)} {self.r.choice('+-*/')} {self.expr(depth + 1)}"
        if r < 0.7:
            return (f"{self.ident()} {self.r.choice(('===', '!==', '<', '>', '&&', '||'))} "
                    f"{self.expr(depth + 1)}")
        if r < 0.8:
            return f"{self.ident()} ? {self.expr(depth + 1)} : {self.expr(depth + 1)}"
        args = ", ".join(self.expr(depth + 1) for _ in range(self.r.randint(0, 3)))
        return f"{self.ident()}.{self.ident()}({args})"

    def statement(self, ind: str, depth: int = 0) -> list[str]:
        r = self.r.random()
        if r < 0.3:
            return [f"{ind}{self.r.choice(('var', 'let', 'const'))} {self.ident()} = {self.expr()};"]
        if r < 0.5:
            return [f"{ind}{self.ident()}.{self.ident()} = {self.expr()};"]
        if r < 0.6:
            return [f"{ind}// {self.prose(4, 14)}"]
        if r < 0.72 and depth < 3:
            body = [line for _ in range(self.r.randint(1, 4))
                    for line in self.statement(ind + "    ", depth + 1)]
            out = [f"{ind}if ({self.expr()}) {{", *body]
            if self.r.random() < 0.3:
                out += [f"{ind}}} else {{",
                        *self.statement(ind + "    ", depth + 1)]
            return out + [f"{ind}}}"]
        if r < 0.8 and depth < 3:
            i = self.r.choice("ijk")
            body = [line for _ in range(self.r.randint(1, 3))
                    for line in self.statement(ind + "    ", depth + 1)]
            return [f"{ind}for (var {i} = 0; {i} < {self.ident()}.length; {i}++) {{", *body,
                    f"{ind}}}"]
        if r < 0.88:
            return [f'{ind}console.log("{self.ident()}:", {self.expr()});']
        return [f"{ind}return {self.expr()};"]

    def function(self, ind: str) -> list[str]:
        args = ", ".join(self.ident() for _ in range(self.r.randint(0, 3)))
        lines = []
        if self.r.random() < 0.5:
            lines += [f"{ind}/**", f"{ind} * {self.prose(5, 16)}.", f"{ind} */"]
        lines.append(f"{ind}function {self.ident()}({args}) {{")
        for _ in range(self.r.randint(2, 9)):
            lines += self.statement(ind + "    ")
        return lines + [f"{ind}}}"]

    def license(self) -> str:
        return _LICENSE.format(year=self.r.randint(2014, 2024), author=self.r.choice(_AUTHORS))

    def qml_object(self, ind: str, depth: int) -> list[str]:
        kind = self.r.choice(_QML_TYPES if depth else ("Page", "Item", "Rectangle", "Dialog"))
        lines = [f"{ind}{kind} {{", f"{ind}    id: {self.ident()}"]
        inner = ind + "    "
        for _ in range(self.r.randint(1, 5)):
            prop = self.r.choice(_QML_PROPS)
            lines.append(f"{inner}{prop}: {self.expr()}")
        if depth == 0 or self.r.random() < 0.3:
            for _ in range(self.r.randint(1, 4)):
                lines.append(f"{inner}property {self.r.choice(_QML_TYPE_NAMES)} "
                             f"{self.ident()}: {self.expr()}")
        if self.r.random() < 0.35:
            lines.append(f"{inner}on{self.ident().capitalize()}: {{")
            for _ in range(self.r.randint(1, 4)):
                lines += self.statement(inner + "    ")
            lines.append(f"{inner}}}")
        if self.r.random() < 0.2:
            lines += self.function(inner)
        if depth < 4:
            for _ in range(self.r.randint(0, 3 if depth < 2 else 1)):
                lines.append("")
                lines += self.qml_object(inner, depth + 1)
        return lines + [f"{ind}}}"]

    def qml(self, size: int) -> str:
        out = [self.license()] if self.r.random() < 0.6 else []
        out.append("import QtQuick 2.7\nimport Lomiri.Components 1.3\n"
                   + ("import QtQuick.Layouts 1.3\n" if self.r.random() < 0.5 else "")
                   + (f'import "../js/{self.ident()}.js" as {self.r.choice(self.types)}\n'
                      if self.r.random() < 0.3 else ""))
        text = "\n".join(out)
        while len(text) < size:
            text += "\n" + "\n".join(self.qml_object("", 0)) + "\n"
        return text

    def js(self, size: int) -> str:
        text = (self.license() if self.r.random() < 0.5 else "") + ".pragma library\n\n"
        while len(text) < size:
            text += "\n".join(self.function("")) + "\n\n"
        return text

    def html(self, size: int) -> str:
        head = (f"<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n  <meta charset=\"utf-8\">\n"
                f"  <meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n"
                f"  <title>{self.prose(1, 4)}</title>\n"
                f"  <link rel=\"stylesheet\" href=\"css/{self.ident()}.css\">\n"
                f"  <script src=\"js/{self.ident()}.js\"></script>\n</head>\n<body>\n")
        parts = [head]
        length = len(head)
        while length < size:
            block = self._html_block("  ", 0)
            parts.append(block)
            length += len(block)
        parts.append("</body>\n</html>\n")
        return "".join(parts)

    def _html_block(self, ind: str, depth: int) -> str:
        tag = self.r.choice(_HTML_TAGS)
        cls = " ".join(self.ident().lower() for _ in range(self.r.randint(1, 2)))
        out = [f'{ind}<{tag} class="{cls}" id="{self.ident()}">\n']
        for _ in range(self.r.randint(1, 4)):
            if depth < 3 and self.r.random() < 0.5:
                out.append(self._html_block(ind + "  ", depth + 1))
            else:
                out.append(f'{ind}  <p class="{self.ident().lower()}">{self.prose(3, 24)}.</p>\n')
        out.append(f"{ind}</{tag}>\n")
        return "".join(out)

    def css(self, size: int) -> str:
        parts = []
        length = 0
        while length < size:
            sel = ", ".join(f".{self.ident().lower()}" + self.r.choice(("", " > p", ":hover", " a"))
                            for _ in range(self.r.randint(1, 2)))
            body = "".join(f"  {self.r.choice(_CSS_PROPS)}: {self.number()}"
                           f"{self.r.choice(('px', 'em', '%', ''))};\n"
                           for _ in range(self.r.randint(2, 8)))
            rule = f"{sel} {{\n{body}}}\n\n"
            parts.append(rule)
            length += len(rule)
        return "".join(parts)

    def json(self, size: int) -> str:
        entries = {}
        length = 0
        while length < size:
            key, value = self.ident(), self.prose(2, 12)
            while key in entries:
                key += "." + self.ident()
            entries[key] = value
            length += len(key) + len(value) + 10
        return json.dumps(entries, indent=4, sort_keys=True) + "\n"

    def svg(self, size: int) -> str:
        parts = ['<?xml version="1.0" encoding="UTF-8"?>\n'
                 '<svg xmlns="http://www.w3.org/2000/svg" width="256" height="256" '
                 'viewBox="0 0 256 256">\n']
        length = len(parts[0])
        while length < size:
            pts = " ".join(f"{self.r.uniform(0, 256):.3f},{self.r.uniform(0, 256):.3f}"
                           for _ in range(self.r.randint(3, 12)))
            line = (f'  <path fill="#{self.r.randrange(1 << 24):06x}" '
                    f'd="M{pts} Z" opacity="{self.r.random():.2f}"/>\n')
            parts.append(line)
            length += len(line)
        return "".join(parts) + "</svg>\n"


#: kind -> (extension, share of the text bytes)
_TEXT_KINDS = (("qml", 0.40), ("js", 0.27), ("html", 0.13), ("css", 0.06),
               ("json", 0.07), ("svg", 0.07))


def _sizes(rng: random.Random, count: int, total: int) -> list[int]:
    """``count`` file sizes summing to about ``total``, log-normally spread as in real trees."""
    raw = [rng.lognormvariate(0, 0.9) for _ in range(count)]
    scale = total / sum(raw)
    return [max(64, int(x * scale)) for x in raw]


def write_text_files(app: Path, rng: random.Random, count: int, total: int) -> int:
    """Write ``count`` text files of about ``total`` bytes under ``app``; return the bytes."""
    gen = _Text(rng)
    kinds = [k for k, _ in _TEXT_KINDS]
    weights = [w for _, w in _TEXT_KINDS]
    written = 0
    dirs = [f"{top}/{gen.ident()}" for top in ("qml", "js", "www", "assets") for _ in range(6)]
    for i, size in enumerate(_sizes(rng, count, total)):
        kind = rng.choices(kinds, weights)[0]
        gen.new_file()
        body = getattr(gen, kind)(size)
        body = body[:body.rfind("\n", 0, size) + 1] or body
        path = app / rng.choice(dirs) / f"{gen.ident()}{i}.{kind}"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(body, encoding="utf-8")
        written += len(body)
    return written


def _png(rng: random.Random, width: int, height: int) -> bytes:
    """A real PNG (a noisy gradient), deflated as image tools do: nearly incompressible."""
    rows = []
    base = [rng.randrange(256) for _ in range(3)]
    for y in range(height):
        row = bytearray([0])
        for x in range(width):
            for c in range(3):
                row.append((base[c] + x * (c + 1) + y * (3 - c) + rng.randrange(24)) & 0xFF)
        rows.append(bytes(row))
    def chunk(tag: bytes, data: bytes) -> bytes:
        return (struct.pack(">I", len(data)) + tag + data
                + struct.pack(">I", zlib.crc32(tag + data) & 0xFFFFFFFF))
    ihdr = struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0)
    return (b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", ihdr)
            + chunk(b"IDAT", zlib.compress(b"".join(rows), 9)) + chunk(b"IEND", b""))


def write_app_files(app: Path, icon: str) -> None:
    """The manifest and the hook files of a valid app (click-build reviews by default and
    fails on review errors), its desktop file naming ``icon``."""
    app.mkdir(parents=True)
    (app / "manifest.json").write_text(json.dumps(MANIFEST))
    (app / "bench.desktop").write_text("[Desktop Entry]\nName=Bench\nExec=qmlscene main.qml\n"
                                       f"Icon={icon}\nType=Application\n"
                                       "X-Lomiri-Touch=true\n")
    (app / "bench.apparmor").write_text('{"policy_groups": [], "policy_version": 20.04}\n')


def write_common(app: Path) -> None:
    """What every generated benchmark tree has: app files and a control for dpkg-deb."""
    write_app_files(app, "assets/icon.svg")
    (app / "DEBIAN").mkdir()
    (app / "DEBIAN" / "control").write_text(DEB_CONTROL)


def text_app(root: Path, files: int = 3000, total: int = 27_000_000, seed: int = 15) -> Path:
    """A text-only app tree: QML, JS, HTML, CSS, JSON and SVG, ``total`` bytes in ``files``."""
    app = root / f"text-{files}-{total}"
    if app.exists():
        return app  # generated by an earlier run kept with --keep
    tmp = app.with_name(app.name + ".part")
    _clear(tmp)
    write_common(tmp)
    write_text_files(tmp, random.Random(seed), files, total)
    os.rename(tmp, app)
    return app


def mixed_app(root: Path, files: int = 10_000, total: int = 140_000_000, seed: int = 140) -> Path:
    """Half text, half binary assets by bytes; one file in ten is binary.

    The binaries are what apps carry: random bytes (compressed media such as
    JPEG, OGG or WebP: nothing to gain), real PNG images (deflated already) and
    a few shared libraries (ELF, which compress well).
    """
    app = root / f"mixed-{files}-{total}"
    if app.exists():
        return app
    tmp = app.with_name(app.name + ".part")
    _clear(tmp)
    write_common(tmp)
    rng = random.Random(seed)
    n_bin = files // 10
    write_text_files(tmp, rng, files - n_bin, total // 2)
    elf = _elf_like(rng, 1_500_000)
    media = tmp / "assets" / "media"
    media.mkdir(parents=True)
    for i, size in enumerate(_sizes(rng, n_bin, total // 2)):
        if i % 50 == 0:
            (media / f"lib{i}.so").write_bytes(elf[:size] if size <= len(elf) else elf)
        elif i % 5 == 0:
            side = max(8, int((size / 3) ** 0.5))
            (media / f"image{i}.png").write_bytes(_png(rng, side, side))
        else:
            (media / f"clip{i}.ogg").write_bytes(rng.randbytes(size))
    os.rename(tmp, app)
    return app


def _elf_like(rng: random.Random, size: int) -> bytes:
    """Machine-code-like bytes: an ELF header, then short repeated opcode patterns and tables."""
    head = b"\x7fELF\x02\x01\x01" + b"\0" * 9 + struct.pack("<HHI", 3, 62, 1)
    ops = [rng.randbytes(rng.randint(2, 7)) for _ in range(400)]
    out = bytearray(head)
    while len(out) < size:
        if rng.random() < 0.1:
            out += rng.randbytes(rng.randint(8, 64))  # constants, addresses
        else:
            out += ops[int(len(ops) * rng.random() ** 2)]
    return bytes(out[:size])


def trivial_app(root: Path) -> Path:
    app = root / "trivial"
    if not app.exists():
        tmp = app.with_name("trivial.part")
        _clear(tmp)
        write_app_files(tmp, "icon.svg")
        (tmp / "main.qml").write_text("import QtQuick 2.7\nItem {}\n")
        (tmp / "icon.svg").write_text("<svg xmlns='http://www.w3.org/2000/svg'/>\n")
        os.rename(tmp, app)
    return app


def tree_stats(app: Path) -> tuple[int, int]:
    """(files, bytes) of a tree, the DEBIAN folder excluded."""
    count = size = 0
    for dirpath, dirnames, filenames in os.walk(app):
        if dirpath == str(app) and "DEBIAN" in dirnames:
            dirnames.remove("DEBIAN")
        for name in filenames:
            count += 1
            size += os.lstat(os.path.join(dirpath, name)).st_size
    return count, size


def _clear(path: Path) -> None:
    import shutil

    shutil.rmtree(path, ignore_errors=True)
