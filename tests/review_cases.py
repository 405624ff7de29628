"""The review's crafted cases: for every check, a package made to trip it (craft()
arguments) and the exact findings expected; shared by our review's tests and the
comparisons with the stores' own tool."""

from __future__ import annotations

import copy
import hashlib
import json
import platform
from pathlib import Path
from typing import Any

from abi_programs import program
from review_craft import GOOD_FILES, GOOD_MANIFEST, F, L, elf_bytes

ROOT = Path(__file__).resolve().parent.parent
EM_X86_64, EM_AARCH64, EM_ARM, EM_MIPS = 62, 183, 40, 8


def manifest(**changes: Any) -> dict[str, object]:
    """The good manifest with keys changed (a value of None removes the key)."""
    data = copy.deepcopy(GOOD_MANIFEST)
    for key, value in changes.items():
        key = key.replace("_", "-") if key == "installed_size" else key
        if value is None:
            data.pop(key, None)
        else:
            data[key] = value
    return data


def hooks(**extra: str | None) -> dict[str, object]:
    """The good manifest with hello's hooks changed (None removes a hook)."""
    app = dict(GOOD_MANIFEST["hooks"]["hello"])  # type: ignore[index]
    for hook, target in extra.items():
        hook = hook.replace("_", "-")
        if target is None:
            app.pop(hook, None)
        else:
            app[hook] = target
    return manifest(hooks={"hello": app})


def files(*drop: str, **_: Any) -> dict[str, Any]:
    return {k: v for k, v in GOOD_FILES.items() if k not in drop}


def with_files(extra: dict[str, Any], *drop: str) -> dict[str, Any]:
    out = files(*drop)
    out.update(extra)
    return out


def desktop(**changes: str | None) -> dict[str, Any]:
    lines = {"Name": "Hello", "Exec": "qmlscene %u qml/Main.qml", "Icon": "assets/logo.svg",
             "Type": "Application", "X-Lomiri-Touch": "true"}
    for key, value in changes.items():
        if value is None:
            lines.pop(key, None)
        else:
            lines[key] = value
    text = "[Desktop Entry]\n" + "".join(f"{k}={v}\n" for k, v in lines.items())
    return with_files({"hello.desktop": F(text)})


def apparmor(**changes: object) -> dict[str, Any]:
    data: dict[str, object] = {"policy_groups": ["networking"], "policy_version": 20.04}
    for key, value in changes.items():
        if value is None:
            data.pop(key, None)
        else:
            data[key] = value
    return with_files({"hello.apparmor": F(json.dumps(data))})


def md5sums_with_wrong(path: str) -> str:
    lines = []
    for p, m in sorted(GOOD_FILES.items()):
        digest = "0" * 32 if p == path else hashlib.md5(m.raw).hexdigest()
        lines.append(f"{digest}  {p}\n")
    return "".join(lines)


LIB = "lib/aarch64-linux-gnu/libhello.so"
REAL_ELF = Path("/bin/true").read_bytes()  # a real program of this machine
HOST_ARCH = {"x86_64": "amd64", "aarch64": "arm64", "armv7l": "armhf"}[platform.machine()]
OTHER_ARCH = "arm64" if HOST_ARCH == "amd64" else "amd64"
QT515_ELF = REAL_ELF + b"\0Qt_5\0Qt_5.15\0"  # what a program linked against Qt 5.15 carries
M = "manifest"
#: The main QML file of a Lomiri app, as `clickable create` makes it.
LOMIRI_MAIN = """import QtQuick 2.7
import Lomiri.Components 1.3

MainView {
    id: root
    objectName: 'mainView'
    applicationName: 'com.example.hello'
    automaticOrientation: true

    Page {
        header: PageHeader { title: i18n.tr('Hello') }
    }
}
"""

#: check id -> (craft() arguments, the exact (check, file) findings expected)
CASES: dict[str, tuple[dict[str, Any], set[tuple[str, str]]]] = {
    # ---- lint
    "lint.package-invalid": (dict(md5sums=md5sums_with_wrong("hello.desktop")),
                             {("lint.package-invalid", "")}),
    "lint.control": (dict(control={"Depends": "libfoo"}), {("lint.control", "control")}),
    "lint.control-mismatch": (dict(control={"Version": "2.0"}),
                              {("lint.control-mismatch", "control")}),
    "lint.manifest-field": (dict(manifest=manifest(title=None)),
                            {("lint.manifest-field", M)}),
    "lint.manifest-key": (dict(manifest=manifest(titel="Hello")), {("lint.manifest-key", M)}),
    "lint.maintainer": (dict(manifest=manifest(maintainer="Jane Doe")),
                        {("lint.maintainer", M)}),
    "lint.installed-size": (dict(installed_size="lots"), {("lint.installed-size", M)}),
    "lint.description-missing": (dict(manifest=manifest(description=None)),
                                 {("lint.description-missing", M)}),
    "lint.description-short": (dict(manifest=manifest(description="Hi")),
                               {("lint.description-short", M)}),
    "lint.framework-unknown": (dict(manifest=manifest(framework="ubuntu-sdk-20.4")),
                               {("lint.framework-unknown", M)}),
    "lint.framework-obsolete": (dict(manifest=manifest(framework="ubuntu-sdk-15.04"),
                                     files=apparmor(policy_version=1.3)),
                                {("lint.framework-obsolete", M)}),
    "lint.framework-deprecated": (dict(manifest=manifest(framework="ubuntu-sdk-16.04.5"),
                                       files=apparmor(policy_version=16.04)),
                                  {("lint.framework-deprecated", M)}),
    "lint.framework-local": (dict(manifest=manifest(framework="my-device-fw-1")),
                             {("lint.framework-local", M)}),
    "lint.framework-variant": (dict(manifest=manifest(framework="ubuntu-sdk-20.04")),
                               {("lint.framework-variant", M)}),
    "lint.framework-prerelease": (dict(manifest=manifest(framework="ubuntu-touch-next-internal"),
                                       files=apparmor(policy_version=9999)),
                                  {("lint.framework-prerelease", M)}),
    "lint.arch-unsupported": (dict(manifest=manifest(architecture="mipsel"),
                                   files=with_files({"bin/hello": F(elf_bytes(EM_MIPS, 32),
                                                                    0o755)})),
                              {("lint.arch-unsupported", M)}),
    "lint.arch-all-compiled": (dict(files=with_files({LIB: F(REAL_ELF)})),
                               {("lint.arch-all-compiled", LIB)}),
    "lint.arch-mismatch": (dict(manifest=manifest(architecture=OTHER_ARCH),
                                files=with_files({LIB: F(REAL_ELF)})),
                           {("lint.arch-mismatch", LIB)}),
    "lint.arch-unneeded": (dict(manifest=manifest(architecture="arm64")),
                           {("lint.arch-unneeded", M)}),
    # /bin/true of this Debian 12 machine needs glibc 2.34 as well: 20.04 has 2.31
    "lint.qt-version": (dict(manifest=manifest(architecture=HOST_ARCH),
                             files=with_files({"lib/bin/hello": F(QT515_ELF, 0o755)})),
                        {("lint.qt-version", "lib/bin/hello"), ("lint.abi-glibc", "lib/bin/hello")}),
    "lint.abi-glibc": (dict(manifest=manifest(architecture=HOST_ARCH, framework="ubuntu-sdk-20.04"),
                            files=with_files({"hello": F(REAL_ELF, 0o755)})),
                       {("lint.abi-glibc", "hello")}),
    # a program that finds libhelper.so.1 in ../private, shipped without it
    "lint.abi-soname": (dict(manifest=manifest(architecture="amd64",
                                               framework="ubuntu-touch-24.04-1.x"),
                             files={**apparmor(policy_version=2404.1),
                                    "bin/hello": F(program("amd64", "hello-helper"), 0o755)}),
                        {("lint.abi-soname", "bin/hello")}),
    # /bin/true cut before its dynamic section
    "lint.abi-unreadable": (dict(manifest=manifest(architecture=HOST_ARCH,
                                                   framework="ubuntu-touch-24.04-1.x"),
                                 files={**apparmor(policy_version=2404.1),
                                        "hello": F(REAL_ELF[:16384], 0o755)}),
                            {("lint.abi-unreadable", "hello")}),
    "lint.setuid": (dict(files=with_files({"helper.sh": F("#!/bin/sh\n", 0o4755)})),
                    {("lint.setuid", "helper.sh")}),
    "lint.world-writable": (dict(files=with_files({"notes.txt": F("x", 0o666)})),
                            {("lint.world-writable", "notes.txt")}),
    "lint.symlink-external": (dict(files=with_files({"passwd": L("/etc/passwd")})),
                              {("lint.symlink-external", "passwd")}),
    "lint.symlink-dangling": (dict(files=with_files({"latest": L("qml/Gone.qml")})),
                              {("lint.symlink-dangling", "latest")}),
    "lint.no-apps": (dict(manifest=manifest(hooks=None)), {("lint.no-apps", M)}),
    "lint.hook-target-missing": (dict(files=files("hello.desktop")),
                                 {("lint.hook-target-missing", "hello.desktop")}),
    "lint.hook-missing-apparmor": (dict(manifest=hooks(apparmor=None)),
                                   {("lint.hook-missing-apparmor", M)}),
    "lint.hook-missing-desktop": (dict(manifest=hooks(desktop=None)),
                                  {("lint.hook-missing-desktop", M)}),
    "lint.hook-unknown": (dict(manifest=hooks(desktp="hello.desktop")),
                          {("lint.hook-unknown", M)}),
    "lint.hook-review": (dict(manifest=hooks(pay_ui="hello.desktop")),
                         {("lint.hook-review", M)}),
    "lint.hook-exclusive": (dict(manifest=hooks(scope="qml")), {("lint.hook-exclusive", M)}),
    "lint.vcs": (dict(files=with_files({".git/config": F("[core]\n"),
                                        ".git/HEAD": F("ref: x\n")})),
                 {("lint.vcs", ".git")}),
    "lint.build-leftover": (dict(files=with_files({"CMakeFiles/main.o": F("x"),
                                                   "src/util.o": F("y")})),
                            {("lint.build-leftover", "CMakeFiles")}),
    # ---- desktop
    "desktop.unreadable": (dict(files=with_files({"hello.desktop": F("Name=Hello\n")})),
                           {("desktop.unreadable", "hello.desktop")}),
    "desktop.missing-key": (dict(files=desktop(Icon=None)),
                            {("desktop.missing-key", "hello.desktop")}),
    "desktop.type": (dict(files=desktop(Type="Link")), {("desktop.type", "hello.desktop")}),
    "desktop.touch": (dict(files=desktop(**{"X-Lomiri-Touch": "false"})),
                      {("desktop.touch", "hello.desktop")}),
    "desktop.path-key": (dict(files=desktop(Path="/tmp")),
                         {("desktop.path-key", "hello.desktop")}),
    "desktop.exec-absolute": (dict(files=desktop(Exec="/usr/bin/hello")),
                              {("desktop.exec-absolute", "hello.desktop")}),
    "desktop.exec-missing": (dict(files=desktop(Exec="hello-app %u")),
                             {("desktop.exec-missing", "hello.desktop")}),
    "desktop.exec-not-executable": (
        dict(files={**desktop(Exec="hello.sh"), "hello.sh": F("#!/bin/sh\n", 0o644)}),
        {("desktop.exec-not-executable", "hello.desktop")}),
    "desktop.exec-arg-missing": (dict(files=desktop(Exec="qmlscene %u qml/App.qml")),
                                 {("desktop.exec-arg-missing", "hello.desktop")}),
    "desktop.launcher-obsolete": (
        dict(files={**desktop(Exec="ubuntu-html5-app-launcher --www=www"),
                    "www/index.html": F("<html/>")}),
        {("desktop.launcher-obsolete", "hello.desktop")}),
    "desktop.webapp-args": (dict(files=desktop(Exec="webapp-container https://example.com")),
                            {("desktop.webapp-args", "hello.desktop")}),
    "desktop.icon": (dict(files=desktop(Icon="assets/icon.png")),
                     {("desktop.icon", "hello.desktop")}),
    # ---- security
    "security.unreadable": (dict(files=with_files({"hello.apparmor": F("{policy_groups: []}")})),
                            {("security.unreadable", "hello.apparmor")}),
    "security.field": (dict(files=apparmor(policy_groups="networking")),
                       {("security.field", "hello.apparmor")}),
    "security.policy-version": (dict(files=apparmor(policy_version=3.5)),
                                {("security.policy-version", "hello.apparmor")}),
    "security.policy-mismatch": (dict(files=apparmor(policy_version=16.04)),
                                 {("security.policy-mismatch", "hello.apparmor")}),
    "security.policy-group-unknown": (dict(files=apparmor(policy_groups=["networking", "wifi"])),
                                      {("security.policy-group-unknown", "hello.apparmor")}),
    "security.policy-group-duplicate": (
        dict(files=apparmor(policy_groups=["networking", "audio", "networking"])),
        {("security.policy-group-duplicate", "hello.apparmor")}),
    "security.policy-group-reserved": (
        dict(files=apparmor(policy_groups=["networking", "contacts"])),
        {("security.policy-group-reserved", "hello.apparmor")}),
    "security.debug": (dict(files=apparmor(policy_groups=["networking", "debug"])),
                       {("security.debug", "hello.apparmor")}),
    "security.template-unknown": (dict(files=apparmor(template="ubuntu-game")),
                                  {("security.template-unknown", "hello.apparmor")}),
    "security.template-unconfined": (dict(files=apparmor(template="unconfined")),
                                     {("security.template-unconfined", "hello.apparmor")}),
    "security.template-redundant": (dict(files=apparmor(template="ubuntu-sdk")),
                                    {("security.template-redundant", "hello.apparmor")}),
    "security.template-groups": (
        dict(files=apparmor(template="ubuntu-webapp", policy_groups=["webview", "audio"])),
        {("security.template-groups", "hello.apparmor")}),
    "security.redflag-field": (dict(files=apparmor(read_path=["@{HOME}/Documents/"])),
                               {("security.redflag-field", "hello.apparmor")}),
    "security.ignored-field": (dict(files=apparmor(comment="my app")),
                               {("security.ignored-field", "hello.apparmor")}),
    # ---- QML
    "qml.lomiri-framework": (
        dict(manifest=manifest(framework="ubuntu-sdk-16.04.8"),
             files={**apparmor(policy_version=16.04), "qml/Main.qml": F(LOMIRI_MAIN)}),
        {("qml.lomiri-framework", "qml/Main.qml"), ("lint.framework-deprecated", M)}),
    "qml.application-name": (
        dict(files=with_files({"qml/Main.qml": F(LOMIRI_MAIN.replace("com.example.hello",
                                                                     "hello"))})),
        {("qml.application-name", "qml/Main.qml")}),
    # ---- other hooks
    "hooks.unreadable": (dict(manifest=hooks(urls="hello.url-dispatcher"),
                              files=with_files({"hello.url-dispatcher": F('[{"protocol": ')})),
                         {("hooks.unreadable", "hello.url-dispatcher")}),
    "hooks.missing-key": (
        dict(manifest=hooks(urls="hello.url-dispatcher"),
             files=with_files({"hello.url-dispatcher": F('[{"domain-suffix": "example.com"}]')})),
        {("hooks.missing-key", "hello.url-dispatcher")}),
    "hooks.bad-value": (dict(manifest=hooks(content_hub="hello.content-hub"),
                             files=with_files({"hello.content-hub": F('{"source": []}')})),
                        {("hooks.bad-value", "hello.content-hub")}),
    "hooks.unknown-key": (
        dict(manifest=hooks(content_hub="hello.content-hub"),
             files=with_files({"hello.content-hub": F('{"source": ["pictures"], "sink": ["x"]}')})),
        {("hooks.unknown-key", "hello.content-hub")}),
    "hooks.push-helper-peers": (
        dict(manifest=hooks(push_helper="push.json"),
             files=with_files({"push.json": F('{"exec": "push.sh"}'),
                               "push.sh": F("#!/bin/sh\n", 0o755)})),
        {("hooks.push-helper-peers", M)}),
}


#: A frameworks folder as a device or SDK image has one (for lint.framework-local).
FRAMEWORKS_DIR = ROOT / "tests" / "packages" / "review-frameworks"
