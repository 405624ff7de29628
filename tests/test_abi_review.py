"""The ABI checks of the review, end to end: programs built here with real compilers for
amd64, arm64 and armhf, packaged with ``click-build build`` for Ubuntu Touch 20.04 and
24.04, then reviewed.

Built against Debian 12 (glibc 2.36), every program needs ``GLIBC_2.34``: an error for
20.04 (glibc 2.31), nothing for 24.04 (2.39).  A program linked to ``libssl.so.3`` is an
error for 20.04 (OpenSSL 1.1), fine for 24.04, and fine anywhere once the package ships
the library in ``lib/<triplet>/``.  A program using a Qt 5.15 function (through a stub
``libQt5Core.so.5``, see abi_programs.py: ARM code carries no Qt tag to read) is an error
for 20.04 (Qt 5.12), fine for 24.04.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from abi_programs import COMPILERS, QT515_SYMBOL, build
from review_craft import F, craft

from click_build import elfdyn
from click_build.abi_facts import facts_for, families
from click_build.elf import ARCH_TRIPLETS
from click_build.framework_table import FRAMEWORKS
from click_build.review import Finding, review_package

ARCHES = sorted(COMPILERS)
#: A package of amd64 code for 24.04 and nothing else (no apps), for crafted contents.
BARE = {"name": "com.example.hello", "version": "1.0", "framework": "ubuntu-touch-24.04-1.x",
        "architecture": "amd64", "maintainer": "Jane Doe <jane@example.com>", "title": "Hello",
        "description": "A friendly app", "hooks": {}}
POLICY = {"ubuntu-sdk-20.04": 20.04, "ubuntu-touch-24.04-1.x": 2404.1,
          "ubuntu-touch-24.04-2.x": 2404.2, "ubuntu-touch-26.04-1.x": 2604.1}


@pytest.fixture(scope="module", params=ARCHES)
def programs(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
             ) -> tuple[str, dict[str, Path]]:
    arch = request.param
    return arch, build(arch, tmp_path_factory.mktemp(f"abi-{arch}"))


def app(root: Path, arch: str, framework: str, files: dict[str, Path]) -> Path:
    """An app folder: a launcher for the first program, each file at its package path."""
    root.mkdir(parents=True)
    first = next(iter(files))
    (root / "manifest.json").write_text(json.dumps({
        "name": "hi.example", "version": "1.0", "title": "Hi", "description": "Says hi",
        "framework": framework, "architecture": arch,
        "maintainer": "Jane Doe <jane@example.com>",
        "hooks": {"hi": {"desktop": "hi.desktop", "apparmor": "hi.apparmor"}}}))
    (root / "hi.desktop").write_text(f"[Desktop Entry]\nName=Hi\nExec={first}\nIcon=hi.svg\n"
                                     "Type=Application\nX-Lomiri-Touch=true\n")
    (root / "hi.svg").write_text("<svg/>\n")
    policy = POLICY[framework.split(",")[0].strip()]
    (root / "hi.apparmor").write_text(json.dumps({"policy_groups": [], "policy_version": policy}))
    for path, source in files.items():
        (root / path).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy(source, root / path)
    return root


def click_build(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "click_build", *args], cwd=cwd,
                          capture_output=True, text=True, timeout=300)


def findings(root: Path) -> list[Finding]:
    """Build the app (findings only: the package is written whatever they say), review it."""
    done = click_build("build", "--no-validate", ".", cwd=root)
    assert done.returncode == 0, done.stderr
    (package,) = root.glob("*.click")
    return review_package(package, frameworks_dir="/nonexistent")


def checks(found: list[Finding]) -> set[tuple[str, str]]:
    return {(f.check, f.file) for f in found}


def test_built_for_20_04_fails_and_for_24_04_passes(tmp_path: Path,
                                                    programs: tuple[str, dict[str, Path]]) -> None:
    arch, built = programs
    bin_ = f"lib/{ARCH_TRIPLETS[arch]}/bin"
    files = {f"{bin_}/hello": built["hello"], f"{bin_}/hello-ssl": built["hello-ssl"],
             f"{bin_}/hello-qt": built["hello-qt"]}
    old = app(tmp_path / "old", arch, "ubuntu-sdk-20.04", files)
    build_ = click_build("build", ".", cwd=old)
    assert build_.returncode == 1 and not list(old.glob("*.click")), build_.stderr
    assert "lint.abi-glibc" in build_.stderr and "none was written" in build_.stderr
    found = findings(old)
    assert checks(found) == {("lint.abi-glibc", f"{bin_}/hello"),
                             ("lint.abi-soname", f"{bin_}/hello-ssl"),
                             ("lint.qt-version", f"{bin_}/hello-qt")}
    by = {f.check: f for f in found}
    glibc = by["lint.abi-glibc"]
    assert glibc.severity == "error"
    assert "needs GLIBC_2.34 of libc.so.6 (for __libc_start_main)" in glibc.message
    assert f"framework 'ubuntu-sdk-20.04' ({arch})" in glibc.message
    assert glibc.message.endswith(", ".join(sorted(files)))  # all three programs, one finding
    assert "approximate" in glibc.message  # the 20.04 facts are stated, not read
    soname = by["lint.abi-soname"]
    assert "needs libssl.so.3" in soname.message and "libssl.so.1.1" in soname.message
    assert f"lib/{ARCH_TRIPLETS[arch]}/" in soname.hint
    qt = by["lint.qt-version"]
    assert QT515_SYMBOL in qt.message and "Qt 5.15" in qt.message and "5.12.8" in qt.message
    assert "ubuntu-touch-24.04-1.x" in qt.hint
    new = app(tmp_path / "new", arch, "ubuntu-touch-24.04-1.x", files)
    build_ = click_build("build", ".", cwd=new)
    assert build_.returncode == 0, build_.stderr
    (package,) = new.glob("*.click")
    assert review_package(package, frameworks_dir="/nonexistent") == []


def test_a_library_the_package_ships_is_found(tmp_path: Path,
                                              programs: tuple[str, dict[str, Path]]) -> None:
    """In lib/<triplet>/ or lib/ (the app's library path) or where RUNPATH $ORIGIN/...
    says; anywhere else it does not count."""
    arch, built = programs
    triplet = ARCH_TRIPLETS[arch]
    fw = "ubuntu-touch-24.04-1.x"
    bundled = app(tmp_path / "bundled", arch, "ubuntu-sdk-20.04", {
        f"lib/{triplet}/bin/hello-ssl": built["hello-ssl"],
        f"lib/{triplet}/libssl.so.3": built["libssl.so.3"]})
    assert "lint.abi-soname" not in {f.check for f in findings(bundled)}
    in_lib = app(tmp_path / "in-lib", arch, "ubuntu-sdk-20.04", {
        f"lib/{triplet}/bin/hello-ssl": built["hello-ssl"], "lib/libssl.so.3": built["libssl.so.3"]})
    assert "lint.abi-soname" not in {f.check for f in findings(in_lib)}
    beside = app(tmp_path / "beside", arch, fw, {
        f"lib/{triplet}/bin/hello-helper": built["hello-helper"],
        f"lib/{triplet}/private/libhelper.so.1": built["libhelper.so.1"]})
    assert findings(beside) == []
    elsewhere = app(tmp_path / "elsewhere", arch, fw, {
        f"lib/{triplet}/bin/hello-helper": built["hello-helper"],
        "share/libhelper.so.1": built["libhelper.so.1"]})
    assert checks(findings(elsewhere)) == {("lint.abi-soname", f"lib/{triplet}/bin/hello-helper")}


def test_a_bundled_qt_answers_for_its_symbols(tmp_path: Path,
                                              programs: tuple[str, dict[str, Path]]) -> None:
    """The package ships its own libQt5Core.so.5: the framework's Qt is not asked."""
    arch, built = programs
    triplet = ARCH_TRIPLETS[arch]
    root = app(tmp_path / "qt", arch, "ubuntu-sdk-20.04", {
        f"lib/{triplet}/bin/hello-qt": built["hello-qt"],
        f"lib/{triplet}/libQt5Core.so.5": built["libQt5Core.so.5"]})
    assert {f.check for f in findings(root)} == {"lint.abi-glibc"}


def test_every_framework_of_the_package_is_checked(tmp_path: Path) -> None:
    """A framework field naming two frameworks: each has its own findings."""
    built = build("arm64", tmp_path / "build")
    root = app(tmp_path / "both", "arm64", "ubuntu-touch-24.04-1.x, ubuntu-sdk-20.04",
               {"lib/aarch64-linux-gnu/bin/hello-ssl": built["hello-ssl"]})
    found = [f for f in findings(root) if f.check.startswith("lint.abi")]
    assert {f.check for f in found} == {"lint.abi-glibc", "lint.abi-soname"}
    assert all("'ubuntu-sdk-20.04' (arm64)" in f.message for f in found)


def test_frameworks_without_facts_get_no_abi_finding(tmp_path: Path) -> None:
    built = build("arm64", tmp_path / "build")
    for framework in ("ubuntu-touch-26.04-1.x",):
        assert facts_for(framework, "arm64") is None
        root = app(tmp_path / framework, "arm64", framework,
                   {"lib/aarch64-linux-gnu/bin/hello-qt": built["hello-qt"]})
        assert not [f for f in findings(root) if f.check.startswith("lint.abi")
                    or f.check == "lint.qt-version"]


def test_code_for_x86_with_the_real_qt(tmp_path: Path) -> None:
    """amd64 code built against this machine's real Qt 5.15 carries the Qt_5.15 tag: the
    tag's finding for 20.04 (no second one from its symbols), none for 24.04."""
    source = tmp_path / "qt.cpp"
    source.write_text("#include <QByteArray>\nint main() { return QByteArray::fromBase64Encoding("
                      "QByteArray(\"aGk=\")).decoded.size() != 2; }\n")
    cflags = subprocess.run(["pkg-config", "--cflags", "--libs", "Qt5Core"], capture_output=True,
                            text=True, check=True).stdout.split()
    program = tmp_path / "hello"
    subprocess.run(["g++", "-fPIC", "-o", str(program), str(source), *cflags], check=True)
    assert subprocess.run([str(program)]).returncode == 0
    old = app(tmp_path / "old", "amd64", "ubuntu-sdk-20.04", {"hello": program})
    qt = [f for f in findings(old) if f.check == "lint.qt-version"]
    assert len(qt) == 1 and "Qt 5.15" in qt[0].message
    new = app(tmp_path / "new", "amd64", "ubuntu-touch-24.04-1.x", {"hello": program})
    assert findings(new) == []


def test_hostile_compiled_code_gives_findings(tmp_path: Path) -> None:
    """Truncated, self-contradicting or oversized tables: a warning each, no traceback."""
    real = Path("/bin/true").read_bytes()
    cut = bytearray(real)
    cut[40:48] = (1 << 40).to_bytes(8, "little")  # section headers far away: ignored
    damaged = bytes(cut[:len(cut) // 2])
    files = {"bin/cut": F(real[:16384], 0o755), "bin/damaged": F(damaged, 0o755),
             "bin/header": F(real[:64], 0o755)}
    found = review_package(craft(tmp_path / "h.click", manifest=BARE, files=files),
                           frameworks_dir="/nonexistent")
    unreadable = [f for f in found if f.check == "lint.abi-unreadable"]
    assert {f.file for f in unreadable} == {"bin/cut", "bin/damaged", "bin/header"}
    assert all(f.severity == "warning" and "\n" not in f.message for f in unreadable)
    done = subprocess.run([sys.executable, "-m", "click_build", "review",
                           str(tmp_path / "h.click")], capture_output=True, text=True)
    assert done.returncode == 0 and "Traceback" not in done.stderr  # warnings only


def test_names_from_the_file_are_shown_on_one_line(tmp_path: Path) -> None:
    """A needed library whose name holds a newline and a terminal escape: the finding
    shows them escaped, on one line."""
    program = build("amd64", tmp_path / "build")["hello-ssl"].read_bytes()
    hostile = program.replace(b"libssl.so.3\0", b"l\x1b[2J\nxx.so\0")
    assert hostile != program
    found = review_package(craft(tmp_path / "n.click", manifest=BARE,
                                 files={"bin/hello": F(hostile, 0o755)}),
                           frameworks_dir="/nonexistent")
    (soname,) = [f for f in found if f.check == "lint.abi-soname"]
    assert "needs l\\x1b[2J\\x0axx.so," in soname.message
    assert all(c.isprintable() for c in soname.message + soname.hint)


def test_tables_beyond_the_kept_prefix(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The review keeps the first elfdyn.PREFIX bytes of each file (16 MiB): tables beyond
    are a warning that says so.  Here the prefix is made 256 bytes."""
    assert elfdyn.PREFIX == 16 << 20
    monkeypatch.setattr(elfdyn, "PREFIX", 256)
    found = review_package(craft(tmp_path / "p.click", manifest=BARE,
                                 files={"bin/true": F(Path("/bin/true").read_bytes(), 0o755)}),
                           frameworks_dir="/nonexistent")
    (finding,) = [f for f in found if f.check == "lint.abi-unreadable"]
    assert "beyond the first 256 bytes" in finding.message


def test_more_kinds_of_code_than_the_review_tells_apart(tmp_path: Path) -> None:
    """1030 programs that look for their library beside themselves, each in its own
    folder: 1024 kinds are checked (each finding names its folder's program), the rest
    are one warning."""
    helper = build("amd64", tmp_path / "build")["hello-helper"].read_bytes()
    files = {f"p{i:04d}/bin/hello": F(helper, 0o755) for i in range(1030)}
    found = review_package(craft(tmp_path / "m.click", manifest=BARE, files=files),
                           frameworks_dir="/nonexistent")
    (soname,) = [f for f in found if f.check == "lint.abi-soname"]
    assert "and 1019 more" in soname.message  # 1024 programs lack libhelper.so.1
    (rest,) = [f for f in found if f.check == "lint.abi-unreadable"]
    assert "more than 1024 kinds" in rest.message and "and 1 more" in rest.message


def test_the_frameworks_with_facts() -> None:
    """20.04 and both 24.04 lines, every variant, on every architecture of a phone;
    every name is a framework of the table."""
    assert set(families()) == {n for n in FRAMEWORKS
                               if n.startswith(("ubuntu-sdk-20.04", "ubuntu-touch-24.04"))}
    for framework in families():
        for arch in ARCHES:
            assert facts_for(framework, arch) is not None
