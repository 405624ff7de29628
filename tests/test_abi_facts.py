"""The framework facts (click_build/framework-abi/): what they say, where they say it came
from, that docs/review.md tells the same, that the wheel ships them, that the facts the
findings rest on hold on real loaders, and that scripts/framework-abi makes them again.
"""

from __future__ import annotations

import importlib.machinery
import importlib.util
import json
import re
import subprocess
import sys
import zipfile
from pathlib import Path
from types import ModuleType

import pytest
from abi_programs import build
from conftest import ROOT, machine_cache_held
from user_env import UserEnv

from click_build.abi_facts import DATA_DIR, facts_for, families
from click_build.versions import compare_versions

DATA = Path(DATA_DIR)
#: The Qt library packages the script reads (docs/review.md lists their modules).
QT_PACKAGES = [choice for choice in re.findall(
    r'"([a-z0-9|-]+)"', (ROOT / "scripts" / "framework-abi").read_text().split("QT_PACKAGES = (")[1]
    .split(")")[0])]
FILES = sorted(DATA.glob("*_*.json"))
SCRIPT = ROOT / "scripts" / "framework-abi"
#: The script's apt caches, kept between runs on this machine (conftest.machine_cache).
ABI_CACHE = "framework-abi"


def load(path: Path) -> dict[str, object]:
    data: dict[str, object] = json.loads(path.read_text())
    return data


def script() -> ModuleType:
    loader = importlib.machinery.SourceFileLoader("framework_abi_script", str(SCRIPT))
    spec = importlib.util.spec_from_loader(loader.name, loader)
    assert spec is not None
    module = importlib.util.module_from_spec(spec)
    loader.exec_module(module)
    return module


def test_one_file_per_family_and_architecture() -> None:
    assert [p.name for p in FILES] == [f"{family}_{arch}.json"
                                       for family in ("ubuntu-sdk-20.04", "ubuntu-touch-24.04")
                                       for arch in ("amd64", "arm64", "armhf")]
    for path in FILES:
        data = load(path)
        assert path.name == f"{data['family']}_{data['architecture']}.json"
        assert {families()[f] for f in data["frameworks"]} == {data["family"]}  # type: ignore[union-attr]


@pytest.mark.parametrize("path", FILES, ids=[p.stem for p in FILES])
def test_every_fact_says_where_it_came_from(path: Path) -> None:
    data = load(path)
    assert re.fullmatch(r"\d{4}-\d\d-\d\d", str(data["generated"]))
    assert str(data["generator"]).startswith("scripts/framework-abi")
    versions, sonames, qt = data["versions"], data["sonames"], data["qt"]
    assert isinstance(versions, dict) and isinstance(sonames, dict) and isinstance(qt, dict)
    for fact in (*versions.values(), sonames, qt):
        assert fact["source"] and isinstance(fact["approximate"], bool)
    # made without Ubuntu's archives: every fact approximate, and read from a Debian release
    assert data["stand_in"] in ("Debian bullseye", "Debian trixie")
    assert all(f["approximate"] for f in (*versions.values(), sonames, qt))
    assert "Debian trixie" in qt["symbols_source"] and ".symbols" in qt["symbols_source"]
    for choice in QT_PACKAGES:  # qtbase's and qtdeclarative's libraries, each read
        assert any(f"{name} " in qt["symbols_source"] for name in choice.split("|")), choice
    for table in qt["newer"].values():
        assert all(compare_versions(v, qt["release"]) > 0 for v in table.values())


def test_the_facts_the_findings_rest_on() -> None:
    old, new = facts_for("ubuntu-sdk-20.04", "arm64"), facts_for("ubuntu-touch-24.04-2.x", "armhf")
    assert old is not None and new is not None
    assert {k: v[1] for k, v in old.ceilings.items()} == {
        "GLIBC": "2.31", "GLIBCXX": "3.4.28", "CXXABI": "1.3.12"}
    assert {k: v[1] for k, v in new.ceilings.items()} == {
        "GLIBC": "2.39", "GLIBCXX": "3.4.33", "CXXABI": "1.3.15"}
    assert (old.qt_release, new.qt_release) == ("5.12.8", "5.15.13")
    assert {"libssl.so.1.1", "libicuuc.so.66", "libQt5Qml.so.5", "libc.so.6",
            "ld-linux-aarch64.so.1", "libstdc++.so.6", "libpython3.8.so.1.0"} <= old.sonames
    assert not {"libssl.so.3", "libQt5QmlModels.so.5", "libicuuc.so.67"} & old.sonames
    assert {"libssl.so.3", "libicuuc.so.74", "libQt5QmlModels.so.5", "ld-linux-armhf.so.3",
            "libpython3.12.so.1.0"} <= new.sonames
    # ~900 Qt symbols came after 5.12, on every architecture: QByteArray::fromBase64Encoding
    assert len(old.qt_newer) > 800
    assert old.qt_newer[b"_ZN10QByteArray18fromBase64EncodingERKS_6QFlagsINS_12Base64OptionEE"] \
        == ("libQt5Core.so.5", "5.15.1")


def test_the_docs_table_is_the_data() -> None:
    """docs/review.md's table of frameworks and their facts says what the files say."""
    text = (ROOT / "docs" / "review.md").read_text()
    rows = re.findall(r"^\| (`ubuntu-[^|]+) \| (Ubuntu \d\d\.\d\d) \| ([\d.]+) \| `GLIBCXX_([\d.]+)`, "
                      r"`CXXABI_([\d.]+)` \([^)]*\) \| ([\d.]+) \| ([^|]+) \|$", text, re.M)
    assert len(rows) == 2
    for names, base, glibc, glibcxx, cxxabi, qt, libraries in rows:
        for name in re.findall(r"`(ubuntu-[^`]+)`", names):
            facts = facts_for(name, "arm64")
            assert facts is not None, name
            assert facts.base == base and facts.qt_release == qt
            assert [facts.ceilings[p][1] for p in ("GLIBC", "GLIBCXX", "CXXABI")] == [
                glibc, glibcxx, cxxabi]
            data = load(DATA / f"{facts.family}_arm64.json")
            debian = {"Debian bullseye": "Debian 11", "Debian trixie": "Debian 13"}
            assert libraries.startswith(debian[str(data["stand_in"])] + "'s list")
            renamed = " ".join(data["sonames"]["renamed"])  # type: ignore[index]
            for named in re.findall(r"(ICU \d+|Python [\d.]+|libjpeg \d|nettle)", libraries):
                word = named.split()
                spelled = {"ICU": f"libicuuc.so.{word[-1]}", "Python": f"libpython{word[-1]}",
                           "libjpeg": f"libjpeg.so.{word[-1]}", "nettle": "libnettle.so.7"}
                assert spelled[word[0]] in renamed, named


@pytest.mark.slow
def test_the_wheel_ships_the_facts(user_env: UserEnv, tmp_path: Path) -> None:
    with zipfile.ZipFile(user_env.wheel) as wheel:
        shipped = {n for n in wheel.namelist() if n.startswith("click_build/framework-abi/")}
    assert shipped == {f"click_build/framework-abi/{p.name}" for p in DATA.glob("*.json")}
    found = user_env.sh(
        "python -c \"from click_build.abi_facts import facts_for; "
        "print(facts_for('ubuntu-sdk-20.04', 'arm64').qt_release)\"", cwd=tmp_path).stdout
    assert found == "5.12.8\n"


# ------------------------------------------- the facts hold on real loaders ---

@pytest.fixture(scope="module")
def debian_libc(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """glibc 2.31 (Debian 11, the release of Ubuntu 20.04's glibc) and glibc 2.41 (Debian
    13) for amd64, unpacked: their loaders run this machine's programs."""
    tool = script()
    roots = {}
    with machine_cache_held(ABI_CACHE) as cache:
        for suite in ("bullseye", "trixie"):
            apt = tool.Apt(cache / f"debian-{suite}-amd64", "amd64",
                           [f"deb [arch=amd64 signed-by={tool.DEBIAN_KEYRING}] {tool.DEBIAN} "
                            f"{suite} main"])
            apt.update()
            version = apt.candidates(["libc6"])["libc6"]
            deb = apt.download([("libc6", version)])["libc6"]
            root = tmp_path_factory.mktemp(suite)
            subprocess.run(["dpkg-deb", "-x", str(deb), str(root)], check=True)
            roots[suite] = root
    return roots


def _run_with(root: Path, program: Path) -> subprocess.CompletedProcess[str]:
    lib = next(p for p in (root / "lib/x86_64-linux-gnu", root / "usr/lib/x86_64-linux-gnu")
               if (p / "libc.so.6").exists())
    loader = next(p for p in (root / "lib64/ld-linux-x86-64.so.2", lib / "ld-linux-x86-64.so.2",
                              root / "usr/lib64/ld-linux-x86-64.so.2") if p.exists())
    return subprocess.run([str(loader), "--library-path", str(lib), str(program)],
                          capture_output=True, text=True)


@pytest.mark.slow
def test_the_loader_of_an_older_glibc_refuses_a_newer_program(
        debian_libc: dict[str, Path], tmp_path: Path) -> None:
    """lint.abi-glibc's claim: Debian 12's programs need GLIBC_2.34, which glibc 2.31's
    loader refuses by that name; a newer glibc runs them."""
    hello = build("amd64", tmp_path)["hello"]
    refused = _run_with(debian_libc["bullseye"], hello)
    assert refused.returncode != 0 and "version `GLIBC_2.34' not found" in refused.stderr
    ran = _run_with(debian_libc["trixie"], hello)
    assert ran.returncode == 0 and ran.stdout == "hello\n"


def test_the_loader_stops_at_a_missing_library(tmp_path: Path) -> None:
    """lint.abi-soname's claim: a needed library nowhere to be found stops the program."""
    built = build("amd64", tmp_path)
    (tmp_path / "libhelper.so.1").unlink()  # found through $ORIGIN/../private: not there
    done = subprocess.run([str(built["hello-helper"])], capture_output=True, text=True)
    assert done.returncode != 0
    assert "libhelper.so.1: cannot open shared object file" in done.stderr


# ------------------------------------------------------ made again by the script ---

@pytest.mark.slow
def test_the_script_makes_the_facts_again(tmp_path: Path) -> None:
    """scripts/framework-abi run now for 20.04 on armhf (its downloads kept between runs on
    this machine): the same versions, Qt release and Qt table, and the same libraries but
    for what the Debian archive changed since (a point release may add or drop a few)."""
    with machine_cache_held(ABI_CACHE) as cache:
        done = subprocess.run([sys.executable, str(SCRIPT), "--family", "ubuntu-sdk-20.04",
                               "--arch", "armhf", "--out", str(tmp_path), "--cache", str(cache)],
                              capture_output=True, text=True, timeout=1800)
    assert done.returncode == 0, done.stderr[-3000:]
    made = load(tmp_path / "ubuntu-sdk-20.04_armhf.json")
    shipped = load(DATA / "ubuntu-sdk-20.04_armhf.json")
    for key in ("family", "frameworks", "architecture", "base", "stand_in", "versions"):
        assert made[key] == shipped[key], key
    made_qt, shipped_qt = made["qt"], shipped["qt"]
    assert isinstance(made_qt, dict) and isinstance(shipped_qt, dict)
    assert made_qt["release"] == shipped_qt["release"]
    for library, table in shipped_qt["newer"].items():
        assert table.items() <= made_qt["newer"][library].items(), library
    names = set(made["sonames"]["names"])  # type: ignore[index]
    old = set(shipped["sonames"]["names"])  # type: ignore[index]
    assert len(names ^ old) <= len(old) // 20, sorted(names ^ old)
    assert json.loads((tmp_path / "index.json").read_text()) == {
        f: "ubuntu-sdk-20.04" for f in shipped["frameworks"]}  # type: ignore[union-attr]


def test_the_framework_table_agrees_on_glibc() -> None:
    """framework_table's per-series glibc (wheels for Python apps) is the facts' glibc."""
    from click_build.framework_table import framework_facts

    for framework in families():
        facts = facts_for(framework, "arm64")
        assert facts is not None
        major, minor = facts.ceilings["GLIBC"][0]
        assert (major, framework_facts(framework).glibc_minor) == (2, minor), framework
