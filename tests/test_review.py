"""The built-in review: one crafted package per check, and the good package clean.

Each case starts from a good app (no findings at all) and breaks exactly one
thing; the review must report exactly the expected (check id, file) pairs.
"""

from __future__ import annotations

import json
import platform
import re
from pathlib import Path
from typing import Any

import pytest
from conftest import ROOT
from review_cases import (
    CASES,
    EM_AARCH64,
    EM_ARM,
    EM_X86_64,
    FRAMEWORKS_DIR,
    HOST_ARCH,
    LOMIRI_MAIN,
    QT515_ELF,
    REAL_ELF,
    M,
    apparmor,
    desktop,
    files,
    manifest,
    with_files,
)
from review_craft import GOOD_FILES, F, L, craft, elf_bytes

from click_build.elf import parse_elf_header
from click_build.errors import PackageError
from click_build.framework_table import (
    FRAMEWORKS,
    POLICIES,
    policy,
    policy_version_for,
)
from click_build.review import CHECKS, Finding, review_package


def findings_of(path: Path, frameworks_dir: Path = FRAMEWORKS_DIR) -> list[Finding]:
    return review_package(path, frameworks_dir=frameworks_dir)


def pairs(findings: list[Finding]) -> set[tuple[str, str]]:
    return {(f.check, f.file) for f in findings}


def test_good_package_has_no_findings(tmp_path: Path) -> None:
    assert findings_of(craft(tmp_path / "good.click")) == []


def test_every_check_has_a_crafted_package() -> None:
    assert set(CASES) == set(CHECKS)


@pytest.mark.parametrize("check", sorted(CASES))
def test_crafted_package_shows_its_finding_only(tmp_path: Path, check: str) -> None:
    kwargs, expected = CASES[check]
    found = findings_of(craft(tmp_path / "bad.click", **kwargs))
    assert pairs(found) == expected, [f.line() for f in found]
    for finding in found:
        assert finding.severity == CHECKS[finding.check].severity
        assert finding.message and finding.hint
        assert "\n" not in finding.message + finding.hint


def test_findings_say_what_to_fix(tmp_path: Path) -> None:
    kwargs, _ = CASES["security.policy-mismatch"]
    (finding,) = findings_of(craft(tmp_path / "p.click", **kwargs))
    assert "16.04" in finding.message and "ubuntu-sdk-20.04" in finding.message
    assert '"policy_version": 20.04' in finding.hint
    kwargs, _ = CASES["lint.framework-unknown"]
    (finding,) = findings_of(craft(tmp_path / "f.click", **kwargs))
    assert "did you mean 'ubuntu-sdk-20.04'" in finding.message


def test_many_problems_are_all_reported(tmp_path: Path) -> None:
    text = "[Desktop Entry]\nName=Hello\nExec=/opt/hello\nType=Link\nPath=/tmp\n"
    pkg = craft(tmp_path / "many.click", files={
        **apparmor(policy_groups=["networking", "debug", "contacts"]),
        "hello.desktop": F(text), "lib/x86_64-linux-gnu/libx.so": F(elf_bytes(EM_X86_64)),
    })
    got = {f.check for f in findings_of(pkg)}
    assert got == {"desktop.missing-key", "desktop.type", "desktop.path-key",
                   "desktop.exec-absolute", "security.debug",
                   "security.policy-group-reserved", "lint.arch-all-compiled"}
    ordered = findings_of(pkg)
    assert [f.severity for f in ordered] == sorted(
        (f.severity for f in ordered), key=["error", "warning", "info"].index)


def test_hook_files_reached_through_links_are_read(tmp_path: Path) -> None:
    """A desktop hook naming a symlink is parsed from its target (a second pass)."""
    bad = "[Desktop Entry]\nName=Hello\nExec=qmlscene qml/Main.qml\nIcon=assets/logo.svg\n"
    pkg = craft(tmp_path / "l.click", files={
        **files("hello.desktop"), "hello.desktop": L("share/app.desktop"),
        "share/app.desktop": F(bad),
    })
    assert pairs(findings_of(pkg)) == {("desktop.missing-key", "hello.desktop")}


def test_multi_arch_package_with_code_for_each(tmp_path: Path) -> None:
    pkg = craft(tmp_path / "m.click", manifest=manifest(architecture=["arm64", "armhf"]), files={
        **GOOD_FILES,
        "lib/aarch64-linux-gnu/bin/hello": F(elf_bytes(EM_AARCH64, kind=2), 0o755),
        "lib/arm-linux-gnueabihf/bin/hello": F(elf_bytes(EM_ARM, 32, flags=0x5000400), 0o755),
    })
    assert findings_of(pkg) == []


def test_exec_found_in_lib_triplet_bin(tmp_path: Path) -> None:
    pkg = craft(tmp_path / "b.click", manifest=manifest(architecture="arm64"), files={
        **desktop(Exec="hello %u"),
        "lib/aarch64-linux-gnu/bin/hello": F(elf_bytes(EM_AARCH64, kind=2), 0o755),
    })
    assert findings_of(pkg) == []


def test_webapp_and_python_apps_are_good(tmp_path: Path) -> None:
    web = craft(tmp_path / "w.click", files={
        **desktop(Exec="webapp-container --app-id=${APP_ID} www/index.html"),
        "www/index.html": F("<html></html>"),
    })
    assert findings_of(web) == []
    remote = craft(tmp_path / "r.click", files=desktop(
        Exec="webapp-container --webappUrlPatterns=https?://example.com/* https://example.com"))
    assert findings_of(remote) == []
    py = craft(tmp_path / "p.click", files={**desktop(Exec="python3 src/main.py"),
                                             "src/main.py": F("print('hi')\n")})
    assert findings_of(py) == []
    missing = craft(tmp_path / "q.click", files=desktop(Exec="python3 src/main.py"))
    assert pairs(findings_of(missing)) == {("desktop.exec-arg-missing", "hello.desktop")}


def test_qt_version_against_the_framework(tmp_path: Path) -> None:
    def review_with(framework: str, elf: bytes, policy_version: float = 20.04) -> set[Any]:
        pkg = craft(tmp_path / "q.click",
                    manifest=manifest(architecture=HOST_ARCH, framework=framework),
                    files={**apparmor(policy_version=policy_version),
                           "lib/bin/hello": F(elf, 0o755)})
        return {p for p in pairs(findings_of(pkg)) if p[0] == "lint.qt-version"}

    assert review_with("ubuntu-touch-24.04-1.x", QT515_ELF, 2404.1) == set()
    assert review_with("ubuntu-sdk-20.04", REAL_ELF + b"Qt_5.12\0Qt_5.9\0") == set()
    assert review_with("ubuntu-sdk-20.04", REAL_ELF + b"Qt_5.4\0") == {
        ("lint.qt-version", "lib/bin/hello")}
    # a tag across the boundary of two 1 MiB chunks of the stream
    big = REAL_ELF + bytes((1 << 20) - len(REAL_ELF) - 3) + b"Qt_5.15\0"
    assert review_with("ubuntu-sdk-20.04", big) == {("lint.qt-version", "lib/bin/hello")}


def test_a_web_app_is_not_pointed_to_the_qml_variant(tmp_path: Path) -> None:
    """No QML, only HTML run by webapp-container: the QML part of the framework is not
    what it needs, so no advice."""
    files = {k: v for k, v in GOOD_FILES.items() if not k.endswith(".qml")}
    files["www/index.html"] = F("<!doctype html><title>Web</title>\n")
    pkg = craft(tmp_path / "w.click", manifest=manifest(framework="ubuntu-sdk-20.04"),
                files=files)
    assert "lint.framework-variant" not in {f.check for f in findings_of(pkg)}


@pytest.mark.parametrize(("framework", "policy_version", "variant"), [
    ("ubuntu-sdk-20.04", 20.04, "ubuntu-sdk-20.04-qml"),
    ("ubuntu-sdk-20.04.1", 20.04, "ubuntu-sdk-20.04.1-qml"),
    ("ubuntu-touch-24.04-1.x", 2404.1, "ubuntu-touch-24.04-1.x-qml"),
    ("ubuntu-touch-24.04-2.x", 2404.2, "ubuntu-touch-24.04-2.x-qml"),
])
def test_a_pure_qml_app_is_pointed_to_the_qml_variant(tmp_path: Path, framework: str,
                                                       policy_version: float,
                                                       variant: str) -> None:
    pkg = craft(tmp_path / "q.click", manifest=manifest(framework=framework),
                files=apparmor(policy_version=policy_version))
    (finding,) = findings_of(pkg)
    assert (finding.check, finding.severity, finding.file) == ("lint.framework-variant", "info",
                                                               M)
    # one screen line as the build prints it (80 columns), and the fix that names the variant
    assert len(f"review: {finding.line()}") <= 80
    assert finding.hint == f'set "framework": "{variant}" in manifest.json'
    # the fix, applied, leaves nothing to say
    fixed = craft(tmp_path / "f.click", manifest=manifest(framework=variant),
                  files=apparmor(policy_version=policy_version))
    assert findings_of(fixed) == []


def test_an_application_name_on_the_mainview_line_is_named_as_such(tmp_path: Path) -> None:
    """``MainView { applicationName: "..."`` on one line: the store's pattern misses it
    and warns, so the review warns too, but says why instead of "sets no applicationName"."""
    inline = LOMIRI_MAIN.replace("MainView {\n", "MainView { applicationName: 'com.example.hello'\n")
    inline = inline.replace("    applicationName: 'com.example.hello'\n", "")
    pkg = craft(tmp_path / "q.click", files=with_files({"qml/Main.qml": F(inline)}))
    (finding,) = [f for f in findings_of(pkg) if f.check == "qml.application-name"]
    assert (finding.severity, finding.file) == ("warning", "qml/Main.qml")
    assert "sets applicationName on its own first line (qml/Main.qml)" in finding.message
    assert "sets no applicationName" not in finding.message
    assert finding.hint == 'put applicationName: "com.example.hello" on a line of its own in the MainView'
    separate = craft(tmp_path / "s.click", files=with_files({"qml/Main.qml": F(LOMIRI_MAIN)}))
    assert not [f for f in findings_of(separate) if f.check == "qml.application-name"]


#: Code or Python in an otherwise pure-QML 20.04 package: what each adds to the findings.
NOT_PURE_QML: dict[str, tuple[dict[str, Any], set[tuple[str, str]]]] = {
    "a .so": (dict(manifest=manifest(framework="ubuntu-sdk-20.04", architecture=HOST_ARCH),
                   files=with_files({"lib/libhello.so": F(REAL_ELF)})),
              {("lint.abi-glibc", "lib/libhello.so")}),  # this machine's glibc 2.36: 20.04 has 2.31
    "a .so in an 'all' package": (
        dict(manifest=manifest(framework="ubuntu-sdk-20.04"),
             files=with_files({"lib/libhello.so": F(REAL_ELF)})),
        {("lint.arch-all-compiled", "lib/libhello.so")}),
    "a .py": (dict(manifest=manifest(framework="ubuntu-sdk-20.04"),
                   files=with_files({"src/main.py": F("print('hi')\n")})), set()),
    "only bytecode": (dict(manifest=manifest(framework="ubuntu-sdk-20.04"),
                           files=with_files({"src/__pycache__/main.cpython-38.pyc":
                                             F(b"U\r\r\n" + bytes(12))})), set()),
    "a Python script without .py": (
        dict(manifest=manifest(framework="ubuntu-sdk-20.04"),
             files=with_files({"bin/hello": F("#!/usr/bin/env python3\nprint('hi')\n", 0o755)})),
        set()),
}


@pytest.mark.parametrize("case", sorted(NOT_PURE_QML))
def test_code_or_python_gets_no_qml_variant_advice(tmp_path: Path, case: str) -> None:
    kwargs, expected = NOT_PURE_QML[case]
    assert pairs(findings_of(craft(tmp_path / "c.click", **kwargs))) == expected


@pytest.mark.parametrize(("framework", "policy_version"), [
    ("ubuntu-sdk-20.04-qml", 20.04), ("ubuntu-touch-24.04-1.x-qml", 2404.1),
    ("ubuntu-touch-24.04-1.x-papi", 2404.1),  # no -papi-qml variant
])
def test_a_framework_without_a_smaller_variant_gets_no_advice(
        tmp_path: Path, framework: str, policy_version: float) -> None:
    pkg = craft(tmp_path / "q.click", manifest=manifest(framework=framework),
                files=apparmor(policy_version=policy_version))
    assert findings_of(pkg) == []


def test_a_deprecated_framework_is_not_pointed_to_its_qml_variant(tmp_path: Path) -> None:
    """16.04 has -qml variants, but the advice there is to move on (a warning), not to them."""
    pkg = craft(tmp_path / "d.click", manifest=manifest(framework="ubuntu-sdk-16.04.5"),
                files=apparmor(policy_version=16.04))
    assert pairs(findings_of(pkg)) == {("lint.framework-deprecated", M)}


def test_groups_of_compiled_code_are_capped(tmp_path: Path) -> None:
    """An attacker's code for 70 ELF machines nobody knows, or linked against 70 Qt
    releases: a group (and a finding) each up to 64; the rest of the machines in one
    group that names them all, the rest of the Qt releases left to the 64 errors."""
    from click_build.review._collect import OTHER_MACHINES

    unknown = {f"lib/bin/m{i:02d}": F(elf_bytes(0x9000 + i), 0o755) for i in range(70)}
    pkg = craft(tmp_path / "m.click", manifest=manifest(architecture=HOST_ARCH),
                files=with_files(unknown))
    mismatch = [f for f in findings_of(pkg) if f.check == "lint.arch-mismatch"]
    assert len(mismatch) == 65
    (other,) = [f for f in mismatch if OTHER_MACHINES in f.message]
    assert other.file == "lib/bin/m64" and "and 1 more" in other.message  # m64..m69
    qts = {f"lib/bin/q{i:02d}": F(REAL_ELF + b"\0Qt_9.%d\0" % i, 0o755) for i in range(70)}
    pkg = craft(tmp_path / "q.click", manifest=manifest(architecture=HOST_ARCH),
                files=with_files(qts))
    assert len([f for f in findings_of(pkg) if f.check == "lint.qt-version"]) == 64


def test_icon_may_leave_out_its_suffix(tmp_path: Path) -> None:
    assert findings_of(craft(tmp_path / "i.click", files=desktop(Icon="assets/logo"))) == []
    theme = craft(tmp_path / "t.click", files=desktop(Icon="hello"))
    assert pairs(findings_of(theme)) == {("desktop.icon", "hello.desktop")}


def test_extension_keys_and_migrations(tmp_path: Path) -> None:
    ok = manifest(**{"x-source": "https://example.com", "migrations": {"old-name": "hello.old"}})
    assert findings_of(craft(tmp_path / "x.click", manifest=ok)) == []
    bad = manifest(migrations={"new-name": "x"}, _removable=1, icon="/usr/share/icons/x.svg")
    found = findings_of(craft(tmp_path / "y.click", manifest=bad))
    assert sorted(f.check for f in found) == [
        "lint.manifest-field", "lint.manifest-field", "lint.manifest-key"]


def test_listing_of_many_leftovers_is_bounded(tmp_path: Path) -> None:
    extra = {f"obj/f{i:02}.o": F(str(i)) for i in range(12)}
    (finding,) = findings_of(craft(tmp_path / "o.click", files=with_files(extra)))
    assert finding.check == "lint.build-leftover"
    assert "and 7 more" in finding.message


def test_oversized_desktop_file_is_not_read(tmp_path: Path) -> None:
    huge = F(b"[Desktop Entry]\n" + b"#" * (2 << 20))
    found = findings_of(craft(tmp_path / "h.click", files=with_files({"hello.desktop": huge})))
    assert pairs(found) == {("desktop.unreadable", "hello.desktop")}
    assert "larger than 1024 KiB" in found[0].message


def test_hook_json_is_read_up_to_1_mib(tmp_path: Path) -> None:
    """docs/review.md: JSON files that hooks name are read up to 1 MiB: one of exactly
    1 MiB is checked as usual, one byte more is reported, not read."""
    text = json.dumps({"policy_groups": ["networking"], "policy_version": 20.04})

    def padded(size: int) -> F:
        return F(text[:-1] + " " * (size - len(text)) + "}")

    exact = craft(tmp_path / "exact.click", files=with_files({"hello.apparmor": padded(1 << 20)}))
    assert findings_of(exact) == []
    over = craft(tmp_path / "over.click",
                 files=with_files({"hello.apparmor": padded((1 << 20) + 1)}))
    found = findings_of(over)
    assert pairs(found) == {("security.unreadable", "hello.apparmor")}
    assert "larger than 1024 KiB" in found[0].message


def test_not_a_click_package_is_one_error(tmp_path: Path) -> None:
    bogus = tmp_path / "x.click"
    bogus.write_bytes(b"hello")
    with pytest.raises(PackageError):
        review_package(bogus)


def test_system_frameworks_extend_the_table(tmp_path: Path) -> None:
    pkg = craft(tmp_path / "s.click", manifest=manifest(framework="my-device-fw-1"))
    assert pairs(findings_of(pkg, tmp_path / "none")) == {("lint.framework-unknown", M)}
    (finding,) = findings_of(pkg)
    assert finding.check == "lint.framework-local" and finding.severity == "info"


# ------------------------------------------------------------- facts ---

def test_framework_table_facts() -> None:
    assert FRAMEWORKS["ubuntu-sdk-20.04"] == "available"
    assert FRAMEWORKS["ubuntu-touch-24.04-1.x"] == "available"
    assert FRAMEWORKS["ubuntu-touch-24.04-2.x-qml"] == "available"
    assert FRAMEWORKS["ubuntu-touch-26.04-1.x"] == "prereleased"
    assert policy_version_for(["ubuntu-touch-24.04-2.x"])[1] == 2404.2  # type: ignore[index]
    assert policy_version_for(["ubuntu-touch-26.04-1.x-qml"])[1] == 2604.1  # type: ignore[index]
    assert "ubuntu-account-plugin" not in POLICIES["ubuntu"]["2604.1"].templates
    assert FRAMEWORKS["ubuntu-sdk-16.04.8-qml"] == "deprecated"
    assert FRAMEWORKS["ubuntu-sdk-15.04.7-html"] == "obsolete"
    assert FRAMEWORKS["ubuntu-sdk-13.10"] == "obsolete"
    assert policy_version_for(["ubuntu-sdk-20.04.1-qml"]) == ("ubuntu-sdk-20.04.1-qml", 20.04)
    assert policy_version_for(["ubuntu-touch-24.04-1.x-papi"])[1] == 2404.1  # type: ignore[index]
    assert policy_version_for(["ubuntu-sdk-14.10-html-dev2"])[1] == 1.2  # type: ignore[index]
    assert policy_version_for(["ubuntu-sdk-16.04.3"])[1] == 16.04  # type: ignore[index]
    assert policy_version_for(["something-else"]) is None
    p2404 = policy("ubuntu", 2404.1)
    assert p2404 is not None and {"networking", "webview", "content_exchange"} <= p2404.groups
    assert {"contacts", "debug", "music_files"} <= p2404.reserved_groups
    assert "in-app-purchases" not in p2404.groups
    assert policy("ubuntu", 1) is POLICIES["ubuntu"]["1.0"]
    assert "webview" not in POLICIES["ubuntu"]["1.0"].groups
    assert "accounts" in POLICIES["ubuntu"]["1.1"].reserved_groups
    assert "accounts" in POLICIES["ubuntu"]["1.2"].groups
    assert "ubuntu-scope-network" not in POLICIES["ubuntu"]["20.04"].templates


def test_elf_headers() -> None:
    arm = parse_elf_header(elf_bytes(EM_ARM, 32, flags=0x5000400))
    assert arm is not None and arm.arches == {"armhf"}
    soft = parse_elf_header(elf_bytes(EM_ARM, 32, flags=0x5000200))
    assert soft is not None and soft.arches == {"armel"}
    either = parse_elf_header(elf_bytes(EM_ARM, 32, flags=0x5000000))
    assert either is not None and either.arches == {"armhf", "armel"}
    big = parse_elf_header(elf_bytes(21, little=False))
    assert big is not None and big.arches == {"ppc64"}
    assert parse_elf_header(b"#!/bin/sh\n" + bytes(60)) is None
    assert parse_elf_header(b"\x7fELF") is None
    unknown = parse_elf_header(elf_bytes(9999))
    assert unknown is not None and unknown.arches == frozenset()
    assert "9999" in unknown.description


def test_elf_header_of_a_real_binary() -> None:
    head = Path("/bin/true").read_bytes()[:64]
    info = parse_elf_header(head)
    assert info is not None and info.is_code
    expected = {"x86_64": "amd64", "aarch64": "arm64", "armv7l": "armhf"}[platform.machine()]
    assert expected in info.arches


def test_docs_list_every_check() -> None:
    text = (ROOT / "docs" / "review.md").read_text()
    documented = set(re.findall(r"^### `([a-z0-9.-]+)`", text, re.M))
    assert documented == set(CHECKS)
    for check, info in CHECKS.items():
        section = text.split(f"### `{check}`", 1)[1].split("\n### ", 1)[0]
        assert f"**{info.severity}**" in section, check
        assert "Fix:" in section, check


def test_control_installed_size_that_is_not_a_number(tmp_path: Path) -> None:
    pkg = craft(tmp_path / "s.click", control={"Installed-Size": "abc"})
    assert pairs(findings_of(pkg)) == {("lint.installed-size", "control")}


# ------------------------------------------------------------ hostile ---

from hypothesis import HealthCheck, given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

JSON = st.recursive(
    st.none() | st.booleans() | st.integers(min_value=-(10**30), max_value=10**30)
    | st.floats(allow_nan=False, allow_infinity=False) | st.text(max_size=20),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner,
                                                                 max_size=4),
    max_leaves=12,
)
FIELDS = st.sampled_from(["name", "version", "framework", "maintainer", "title", "architecture",
                          "hooks", "icon", "description", "installed-size", "_removable"])
HOOK_FILES = st.sampled_from(["hello.desktop", "hello.apparmor", "hello.urls", "hello.hub",
                              "hello.push", "hello.accounts"])


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(changes=st.dictionaries(FIELDS, JSON, max_size=3),
       contents=st.dictionaries(HOOK_FILES, JSON.map(json.dumps) | st.binary(max_size=80),
                                max_size=3))
def test_hostile_manifests_and_hook_files_never_crash(tmp_path: Path, changes: dict[str, Any],
                                                      contents: dict[str, Any]) -> None:
    data = manifest(**{k: v for k, v in changes.items() if k != "installed-size"})
    data["hooks"] = changes.get("hooks", {"hello": {
        "desktop": "hello.desktop", "apparmor": "hello.apparmor", "urls": "hello.urls",
        "content-hub": "hello.hub", "push-helper": "hello.push", "accounts": "hello.accounts"}})
    tree = {**GOOD_FILES, **{k: F(v) for k, v in contents.items()}}
    pkg = craft(tmp_path / "fuzz.click", manifest=data, files=tree,
                installed_size=str(changes.get("installed-size", "")) or None)
    try:
        found = findings_of(pkg)
    except PackageError:
        return  # control data no Click reader accepts (e.g. a title with a newline)
    for finding in found:
        assert CHECKS[finding.check].severity == finding.severity
        assert finding.message and finding.hint
