"""The command line behaves as Unix tools do: several packages at once, quiet end in
a pipe, output folders made on demand, typos answered with a guess (completion:
test_completion.py)."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest
from conftest import BASE_MANIFEST, CLICK_BUILD, Cli, assert_clean_error, write_tree
from review_craft import GOOD_FILES, GOOD_MANIFEST, F, craft, elf_bytes


@pytest.fixture
def packages(tmp_path: Path) -> tuple[Path, Path, Path]:
    """A good package, one the review rejects, and a file that is no package."""
    good = craft(tmp_path / "good_1.0_all.click")
    bad = craft(tmp_path / "bad_1.0_all.click",
                manifest={k: v for k, v in GOOD_MANIFEST.items() if k != "description"})
    junk = tmp_path / "junk.click"
    junk.write_bytes(b"!<arch>\nnot a package")
    return good, bad, junk


def test_review_several_packages(cli: Cli, packages: tuple[Path, Path, Path]) -> None:
    good, bad, _ = packages
    result = cli("review", good, bad, check=False)
    assert result.returncode == 1
    assert f"{good}: no problems found\n" in result.stdout
    assert f"{bad}: 1 error\n" in result.stdout
    assert result.stdout.index(str(good)) < result.stdout.index("[lint.description-missing]")
    assert cli("review", good, good).returncode == 0
    reports = json.loads(cli("review", "--json", good, bad, check=False).stdout)
    assert [(r["package"], r["passed"]) for r in reports] == [(str(good), True), (str(bad), False)]
    one = json.loads(cli("review", "--json", good).stdout)
    assert one["package"] == str(good)  # one package: the object, as before


def test_an_unreadable_package_among_several_is_named(cli: Cli,
                                                       packages: tuple[Path, Path, Path]) -> None:
    good, _, junk = packages
    for command in ("review", "verify", "info", "contents"):
        args = ["--allow-unauthenticated", "--force-missing-framework"] \
            if command == "verify" else []
        result = cli(command, *args, junk, good, check=False)
        assert result.returncode == 1, command
        assert "Traceback" not in result.stderr
        lines = [line for line in result.stderr.splitlines() if line.strip()]
        errors = [line for line in lines if not line.startswith("click-build: warning: ")]
        assert errors and all(line.startswith(f"click-build: error: {junk}") for line in errors), \
            (command, result.stderr)
        assert str(junk) not in result.stdout or command in ("info", "contents")


def test_verify_info_contents_several(cli: Cli, packages: tuple[Path, Path, Path],
                                      tmp_path: Path) -> None:
    good, bad, _ = packages
    flags = ("--allow-unauthenticated", "--force-missing-framework")
    assert cli("verify", *flags, good, bad).stdout == ""
    info = cli("info", good, bad).stdout
    assert info.startswith(f"==> {good} <==\n") and f"\n\n==> {bad} <==\n" in info
    second = json.loads(info.split(f"==> {bad} <==\n")[1])
    assert second["name"] == GOOD_MANIFEST["name"] and "description" not in second
    listing = cli("contents", good, bad).stdout
    assert listing.count("./hello.desktop\n") == 2 and f"==> {bad} <==" in listing
    assert cli("contents", good).stdout.startswith("drwxr-xr-x")  # one: no heading


def test_contents_into_head_ends_quietly(tmp_path: Path) -> None:
    files = {**GOOD_FILES, **{f"data/file{i:05}.txt": F("x") for i in range(3000)}}
    big = craft(tmp_path / "big.click", files=files)
    command = " ".join(CLICK_BUILD) + f" contents {big}"
    result = subprocess.run(
        ["bash", "-c", f'{command} | head -n 1; echo "status=${{PIPESTATUS[0]}}"'],
        capture_output=True, text=True)
    assert result.stderr == ""
    assert result.stdout.splitlines()[-1] == "status=141"  # as `yes | head -n 1`
    yes = subprocess.run(["bash", "-c", 'yes | head -n 1 >/dev/null; echo ${PIPESTATUS[0]}'],
                         capture_output=True, text=True)
    assert yes.stdout.strip() == "141"


def test_install_of_several_packages_is_one_clear_error(cli: Cli, tmp_path: Path,
                                                        packages: tuple[Path, Path, Path]) -> None:
    good, bad, _ = packages
    root = tmp_path / "root"
    result = cli("install", "--root", root, "--allow-unauthenticated",
                 "--force-missing-framework", good, bad, check=False)
    assert_clean_error(result, "install takes one package file, not 2")
    assert not root.exists() or not any(root.iterdir())


def test_install_without_user_says_how_to_register(cli: Cli, tmp_path: Path,
                                                   packages: tuple[Path, Path, Path]) -> None:
    good, _, _ = packages
    root = tmp_path / "root"
    out = cli("install", "--root", root, "--allow-unauthenticated",
              "--force-missing-framework", good).stdout
    name, version = GOOD_MANIFEST["name"], GOOD_MANIFEST["version"]
    assert f'run "click-build register {name} {version}"' in out
    assert "click register" not in out.replace("click-build register", "")


def test_build_and_merge_make_their_output_folder(cli: Cli, tmp_path: Path) -> None:
    app = write_tree(tmp_path / "app", {
        "manifest.json": json.dumps(BASE_MANIFEST),
        "hello.desktop": "[Desktop Entry]\nName=Hello\nExec=qmlscene main.qml\nIcon=icon.svg\n"
                         "Type=Application\nX-Lomiri-Touch=true\n",
        "hello.apparmor": '{"policy_groups": [], "policy_version": 20.04}',
        "main.qml": "import QtQuick 2.7\nRectangle {}\n", "icon.svg": "<svg/>\n",
    })
    cli("build", "--no-validate", app, "-o", tmp_path / "new" / "dist")
    assert (tmp_path / "new/dist/com.example.hello_1.0_all.click").is_file()
    lib = {"arm64": ("aarch64-linux-gnu", elf_bytes(183)),
           "armhf": ("arm-linux-gnueabihf", elf_bytes(40, 32, flags=0x5000400))}
    inputs = [craft(tmp_path / f"in_{arch}.click", manifest={**GOOD_MANIFEST,
                                                             "architecture": arch},
                    files={**GOOD_FILES, f"lib/{triplet}/libhello.so": F(code)})
              for arch, (triplet, code) in lib.items()]
    merged = cli("merge", *inputs, "-o", tmp_path / "fat" / "dist")
    assert (tmp_path / "fat/dist/com.example.hello_1.0_multi.click").is_file()
    # The inputs' framework is not installed here; merge's help says it need not be.
    assert merged.stderr == ""


def test_misspelt_manifest_field_gets_a_guess(cli: Cli, tmp_path: Path) -> None:
    data = {k: v for k, v in BASE_MANIFEST.items() if k != "maintainer"}
    data["mantainer"] = BASE_MANIFEST["maintainer"]
    app = write_tree(tmp_path / "app", {"manifest.json": json.dumps(data)})
    assert_clean_error(cli("build", app, "-o", tmp_path, check=False),
                       "maintainer: is required but missing ('mantainer' is there: did you "
                       "mean 'maintainer'?)")
