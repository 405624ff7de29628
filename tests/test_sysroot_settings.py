"""``[tool.click-build.sysroot]`` and ``toolchains = "sysroot"``: the settings, their
errors (one line each, hostile package names refused before apt sees them), and which
root a target is built against.  No root is made here: tests/test_sysroot_backend.py
builds against real ones."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from backend_helpers import EXAMPLES, assert_one_error, copy_project, pybuild

from click_build.backend.settings import load_project
from click_build.errors import ConfigError
from click_build.sysroot.choose import choose_root
from click_build.sysroot.profiles import profile_for
from click_build.sysroot.store import root_id

FW = "ubuntu-touch-24.04-1.x"


def _project(tmp_path: Path, table: str) -> Path:
    root = tmp_path / "p"
    root.mkdir(exist_ok=True)
    (root / "pyproject.toml").write_text(
        '[build-system]\nrequires = ["click-build"]\nbuild-backend = "click_build.backend"\n'
        f'[tool.click-build]\nkind = "cmake"\n{table}\n')
    return root


def test_the_sysroot_table_and_its_command_line_keys(tmp_path: Path) -> None:
    root = _project(tmp_path, '[tool.click-build.sysroot]\npackages = ["libqrencode-dev"]\n'
                              'bundle = ["libqrencode4"]\n'
                              '[tool.click-build.toolchains]\n"arm64" = "sysroot"')
    s = load_project(root, {}, environ={}).settings
    assert (s.sysroot.profile, s.sysroot.packages, s.sysroot.bundle) == \
        ("", ["libqrencode-dev"], ["libqrencode4"])
    assert s.toolchains == {"arm64": "sysroot"}
    s = load_project(root, {"click-build.sysroot.profile": "debian-12",
                            "click-build.sysroot.packages": "libfmt-dev;libyaml-cpp-dev",
                            f"click-build.toolchains.{FW}/armhf": "sysroot"},
                     environ={"CLICK_BUILD_SYSROOT_BUNDLE": "libfmt9"}).settings
    assert s.sysroot.profile == "debian-12"
    assert s.sysroot.packages == ["libfmt-dev", "libyaml-cpp-dev"]
    assert s.sysroot.bundle == ["libfmt9"]
    assert s.toolchains == {"arm64": "sysroot", f"{FW}/armhf": "sysroot"}


@pytest.mark.parametrize(("table", "config", "fragment"), [
    ('[tool.click-build.sysroot]\nprofile = "debian12"', {},
     "tool.click-build.sysroot.profile: 'debian12' is not a profile (did you mean 'debian-12'?)"),
    ("", {"click-build.sysroot.profile": "fedora"},
     "tool.click-build.sysroot.profile: 'fedora' is not a profile; the profiles are "
     "ubuntu-20.04, ubuntu-24.04, debian-12"),
    ('[tool.click-build.sysroot]\npackages = "libfoo-dev"', {},
     "tool.click-build.sysroot.packages: must be a list of strings"),
    ('[tool.click-build.sysroot]\npackages = ["-oDir::Etc=/tmp"]', {},
     "tool.click-build.sysroot.packages: '-oDir::Etc=/tmp' is not a Debian package name"),
    ("", {"click-build.sysroot.packages": "qtbase5-dev;--allow-unauthenticated"},
     "tool.click-build.sysroot.packages: '--allow-unauthenticated' is not a Debian package"),
    ('[tool.click-build.sysroot]\nbundle = ["libfoo; rm -rf ~"]', {},
     "tool.click-build.sysroot.bundle: 'libfoo; rm -rf ~' is not a Debian package name"),
    ('[tool.click-build.sysroot]\nbundle = ["../../etc/passwd"]', {},
     "tool.click-build.sysroot.bundle: '../../etc/passwd' is not a Debian package name"),
    ('[tool.click-build.sysroot]\nbundle = ["Libfoo"]', {},
     "tool.click-build.sysroot.bundle: 'Libfoo' is not a Debian package name"),
    ('[tool.click-build.sysroot]\npackage = ["x"]', {},
     "tool.click-build.sysroot.package: unknown setting (did you mean 'packages'?)"),
    ("", {"click-build.sysroot.bundles": "x"},
     "-C click-build.sysroot.bundles: unknown setting"),
])
def test_bad_sysroot_settings(tmp_path: Path, table: str, config: dict[str, str],
                              fragment: str) -> None:
    root = _project(tmp_path, table)
    with pytest.raises(ConfigError) as e:
        load_project(root, config, environ={})
    assert fragment in str(e.value)
    assert "\n" not in str(e.value)


def _stored(cache: Path, profile: str, arch: str, extra: tuple[str, ...] = (),
            url: str = "http://deb.debian.org/debian") -> Path:
    """A complete root as ``sysroot create`` leaves it (its sysroot.json), without files."""
    chosen = profile_for(FW, arch, profile, extra)
    folder = cache / root_id(chosen, {s.archive: url for s in chosen.sources})
    (folder / "root").mkdir(parents=True)
    (folder / "sysroot.json").write_text(json.dumps({
        "profile": profile, "framework": FW, "arch": arch, "label": chosen.label,
        "packages": list(chosen.packages), "extra_packages": list(extra), "installed": []}))
    return folder


def test_the_root_sysroot_create_made_is_chosen_else_the_default_profile(
        tmp_path: Path) -> None:
    cache = tmp_path / "cache"
    # nothing made: the framework's default profile, to be made
    choice = choose_root(FW, "arm64", cache=cache)
    assert choice.stored is None and choice.profile.name == "ubuntu-24.04"
    assert choice.describe == "a new ubuntu-24.04 arm64 root (made now, once)"
    # a debian-12 root made by `sysroot create` (from a mirror of its own): that one,
    # for this framework's variants too, and it says it is approximate
    made = _stored(cache, "debian-12", "arm64", url="http://mirror.example/debian")
    for framework in (FW, f"{FW}-qml"):
        choice = choose_root(framework, "arm64", cache=cache)
        assert choice.stored is not None and choice.stored.folder == made
        assert choice.label.startswith("debian-12 arm64 (approximate: Debian 12 stands in")
    # not for another architecture, nor with other packages
    assert choose_root(FW, "armhf", cache=cache).stored is None
    other = choose_root(FW, "arm64", packages=["libqrencode-dev"], cache=cache)
    assert other.stored is None and other.profile.extra_packages == ("libqrencode-dev",)
    with_qr = _stored(cache, "debian-12", "arm64", ("libqrencode-dev",))
    assert choose_root(FW, "arm64", packages=["libqrencode-dev"], cache=cache).stored.folder \
        == with_qr  # type: ignore[union-attr]
    # the phone's own profile wins over the stand-in when both were made
    own = _stored(cache, "ubuntu-24.04", "arm64", url="http://ports.example/ubuntu-ports")
    assert choose_root(FW, "arm64", cache=cache).stored.folder == own  # type: ignore[union-attr]
    # a profile in the settings narrows the choice to its roots
    assert choose_root(FW, "arm64", "debian-12", cache=cache).stored.folder == made  # type: ignore[union-attr]


@pytest.mark.parametrize(("framework", "arch", "profile", "fragment"), [
    (FW, "amd64", None, "no sysroot for architecture 'amd64': the phone's are arm64, armhf"),
    ("ubuntu-sdk-16.04", "arm64", None, "no sysroot profile for framework 'ubuntu-sdk-16.04'"),
    ("ubuntu-sdk-20.04", "arm64", "debian-12",
     "profile debian-12 makes roots for ubuntu-touch-24.04-1.x, not ubuntu-sdk-20.04; for "
     "ubuntu-sdk-20.04 use ubuntu-20.04"),
])
def test_a_target_without_a_root_is_refused_before_anything_runs(
        tmp_path: Path, framework: str, arch: str, profile: str | None, fragment: str) -> None:
    """Through the frontend: one error line that names the target, nothing built."""
    project = copy_project(EXAMPLES / "hello-cpp", tmp_path / "p")
    args = ["-C", f"click-build.framework={framework}", "-C",
            f"click-build.architecture={arch}", "-C",
            f"click-build.toolchains.{framework}/{arch}=sysroot"]
    if profile:
        args += ["-C", f"click-build.sysroot.profile={profile}"]
    result = pybuild(project, "--wheel", *args, check=False,
                     env={"CLICK_BUILD_SYSROOT_CACHE": str(tmp_path / "cache")})
    assert_one_error(result, f"toolchains: {framework}/{arch} = \"sysroot\": {fragment}")
    assert not (project / "build").exists() and not (tmp_path / "cache").exists()
