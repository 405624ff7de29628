"""The sysroot profiles as configuration, checked offline: which archives, suites,
components, keys and packages make each root, the mirrors as settings, the cache key,
and the private apt's sources (Ubuntu's archive and UBports cannot be reached from the
test machines, so their roots are checked as what would be fetched)."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest
from conftest import CLICK_BUILD, assert_clean_error

from click_build.errors import SysrootError
from click_build.sysroot import aptroot, keys, profiles
from click_build.sysroot.keys import KEYS, pinned_keyring, primary_fingerprints
from click_build.sysroot.profiles import ARCHIVES, mirror_url, profile_for
from click_build.sysroot.store import root_id

KEYS_DIR = Path(keys.__file__).parent / "keys"


def _sources_list(profile: profiles.Profile, tmp_path: Path, urls: dict[str, str]) -> list[str]:
    (tmp_path / "etc" / "keys").mkdir(parents=True)
    fake = {ARCHIVES[s.archive].key: b"" for s in profile.sources}
    aptroot._sources(tmp_path, profile, urls, fake)
    return (tmp_path / "etc" / "sources.list").read_text().splitlines()


@pytest.mark.parametrize(("framework", "family"), [
    ("ubuntu-touch-24.04-1.x", "ubuntu-24.04"),
    ("ubuntu-touch-24.04-1.x-qml", "ubuntu-24.04"),  # a variant shares its framework's root
    ("ubuntu-sdk-20.04", "ubuntu-20.04"),
    ("ubuntu-sdk-20.04-papi", "ubuntu-20.04"),
])
def test_each_framework_defaults_to_its_faithful_ubuntu_profile(framework: str, family: str) -> None:
    for arch in ("arm64", "armhf"):
        profile = profile_for(framework, arch)
        assert profile.name == family
        assert profile.approximate == ""
        assert profile.label == f"{family} {arch}"


@pytest.mark.parametrize(("family", "series", "ubports", "stdcxx", "lomiri"), [
    ("ubuntu-24.04", "noble", "24.04-1.x", "libstdc++-13-dev", "qml-module-lomiri-components"),
    ("ubuntu-20.04", "focal", "focal", "libstdc++-9-dev", "qml-module-ubuntu-components"),
])
def test_ubuntu_profiles_take_the_ports_archive_and_ubports(
        tmp_path: Path, family: str, series: str, ubports: str, stdcxx: str, lomiri: str) -> None:
    profile = profile_for(profiles.FAMILIES[family].framework, "arm64", family)
    urls = {s.archive: mirror_url(ARCHIVES[s.archive], environ={}) for s in profile.sources}
    keyrings = tmp_path / "etc" / "keys"
    assert _sources_list(profile, tmp_path, urls) == [
        f"deb [arch=arm64 signed-by={keyrings / 'ubuntu.gpg'}] "
        f"http://ports.ubuntu.com/ubuntu-ports {suite} main universe"
        for suite in (series, f"{series}-updates", f"{series}-security")
    ] + [f"deb [arch=arm64 signed-by={keyrings / 'ubports.gpg'}] http://repo.ubports.com "
         f"{ubports} main"]
    assert profile.packages == tuple(sorted({
        "qtbase5-dev", "qtdeclarative5-dev", "qml-module-qtquick2", "qml-module-qtquick-window2",
        "libc6-dev", stdcxx, lomiri}))
    assert profile.qemu == "qemu-aarch64-static" and profile.triplet == "aarch64-linux-gnu"
    armhf = profile_for(profile.framework, "armhf", family)
    assert (armhf.qemu, armhf.triplet) == ("qemu-arm-static", "arm-linux-gnueabihf")


def test_debian_12_is_labelled_approximate_everywhere() -> None:
    arm64 = profile_for("ubuntu-touch-24.04-1.x", "arm64", "debian-12")
    assert arm64.label.startswith("debian-12 arm64 (approximate: Debian 12 stands in for Ubuntu "
                                  "24.04")
    armhf = profile_for("ubuntu-touch-24.04-1.x", "armhf", "debian-12")
    assert "32-bit time_t" in armhf.approximate and "32-bit time_t" not in arm64.approximate
    assert [(s.archive, s.suites, s.components) for s in arm64.sources] == [
        ("debian", ("bookworm", "bookworm-updates"), ("main",))]
    assert "libstdc++-12-dev" in arm64.packages


@pytest.mark.parametrize(("args", "message"), [
    (("ubuntu-sdk-20.04", "arm64", "debian-12"),
     "profile debian-12 makes roots for ubuntu-touch-24.04-1.x, not ubuntu-sdk-20.04; for "
     "ubuntu-sdk-20.04 use ubuntu-20.04"),
    (("ubuntu-sdk-16.04", "arm64", None), "no sysroot profile for framework 'ubuntu-sdk-16.04'"),
    (("ubuntu-sdk-20.04", "amd64", None), "no sysroot for architecture 'amd64'"),
    (("ubuntu-sdk-20.04", "arm64", "fedora"), "unknown sysroot profile 'fedora'"),
])
def test_a_profile_that_cannot_be_is_refused_with_the_choices(
        args: tuple[str, str, str | None], message: str) -> None:
    with pytest.raises(SysrootError, match=message.replace("(", r"\(").replace(")", r"\)")):
        profile_for(*args)


@pytest.mark.parametrize("name", ["Qt5", "-o", "a b", "x;rm", "libfoo:arm64", "../x", "é"])
def test_project_packages_are_package_names_only(name: str) -> None:
    """Settings are untrusted text: a package name reaches apt-get's command line."""
    with pytest.raises(SysrootError, match="is not a Debian package name"):
        profile_for("ubuntu-sdk-20.04", "arm64", packages=("libfoo-dev", name))


def test_project_packages_join_the_profiles_and_make_another_root() -> None:
    plain = profile_for("ubuntu-touch-24.04-1.x", "arm64", "debian-12")
    more = profile_for("ubuntu-touch-24.04-1.x", "arm64", "debian-12", ("libsqlite3-dev",))
    assert set(more.packages) == {*plain.packages, "libsqlite3-dev"}
    urls = {"debian": "http://deb.debian.org/debian"}
    assert root_id(plain, urls) != root_id(more, urls)
    assert root_id(plain, urls) == root_id(profile_for("ubuntu-touch-24.04-1.x-qml", "arm64",
                                                       "debian-12"), urls)
    assert root_id(plain, urls) != root_id(plain, {"debian": "http://mirror.example/debian"})
    assert root_id(plain, urls).startswith("debian-12-arm64-")


def test_mirrors_are_settings() -> None:
    debian = ARCHIVES["debian"]
    assert mirror_url(debian, environ={}) == "http://deb.debian.org/debian"
    env = {"CLICK_BUILD_MIRROR_DEBIAN": "http://proxy.local:3142/debian/"}
    assert mirror_url(debian, environ=env) == "http://proxy.local:3142/debian"
    assert mirror_url(debian, {"debian": "file:///srv/mirror"}, env) == "file:///srv/mirror"
    assert [a.setting for a in ARCHIVES.values()] == [
        "CLICK_BUILD_MIRROR_DEBIAN", "CLICK_BUILD_MIRROR_UBUNTU_PORTS", "CLICK_BUILD_MIRROR_UBPORTS"]
    for bad in ("ftp://x/debian", "http://x/ debian", "http://x/deb]ian", "/srv/mirror",
                "http://x/debian\nrm -rf"):
        with pytest.raises(SysrootError, match="CLICK_BUILD_MIRROR_DEBIAN"):
            mirror_url(debian, {"debian": bad}, {})


def test_shipped_keys_are_exactly_the_pinned_ones() -> None:
    debian = primary_fingerprints((KEYS_DIR / "debian-archive.asc").read_bytes(), "debian")
    assert sorted(debian) == sorted(KEYS["debian"].fingerprints)
    ubuntu = primary_fingerprints((KEYS_DIR / "ubuntu-archive.asc").read_bytes(), "ubuntu")
    assert sorted(ubuntu) == sorted(KEYS["ubuntu"].fingerprints)
    assert "F6ECB3762474EDA9D21B7022871920D1991BC93C" in ubuntu  # the 2018 key: focal, noble
    assert sorted(primary_fingerprints(pinned_keyring(KEYS["ubuntu"], {}), "x")) == sorted(ubuntu)


def test_the_debian_pins_are_keys_of_the_systems_debian_keyring() -> None:
    system = Path("/usr/share/keyrings/debian-archive-keyring.gpg")
    if not system.is_file():
        pytest.skip("no Debian keyring on this machine")
    found = primary_fingerprints(system.read_bytes(), str(system))
    assert set(KEYS["debian"].fingerprints) <= set(found)


def test_a_keyring_keeps_only_the_pinned_keys(tmp_path: Path) -> None:
    """Trust comes from the pins, not from a file: the system's Debian keyring also holds
    bullseye's and security keys; what apt and gpgv get is the pinned keys alone."""
    system = Path("/usr/share/keyrings/debian-archive-keyring.gpg")
    if not system.is_file():
        pytest.skip("no Debian keyring on this machine")
    env = {"CLICK_BUILD_KEYRING_DEBIAN": str(system)}
    kept = primary_fingerprints(pinned_keyring(KEYS["debian"], env), "kept")
    assert sorted(kept) == sorted(KEYS["debian"].fingerprints)
    other = tmp_path / "other.asc"
    other.write_bytes((KEYS_DIR / "ubuntu-archive.asc").read_bytes())
    with pytest.raises(SysrootError, match=f"{other} holds none of the debian archive keys "
                                           "click-build trusts .*CLICK_BUILD_KEYRING_DEBIAN"):
        pinned_keyring(KEYS["debian"], {"CLICK_BUILD_KEYRING_DEBIAN": str(other)})


def test_the_ubports_key_must_be_named(tmp_path: Path) -> None:
    """Its key could not be read from here, so none is shipped: the message says where
    to get it and which setting names it."""
    if any(Path(p).exists() for p in KEYS["ubports"].system_paths):
        pytest.skip("this machine has a UBports keyring")
    with pytest.raises(SysrootError, match=r"repo.ubports.com/keyring.gpg\) and set "
                                           "CLICK_BUILD_KEYRING_UBPORTS=FILE"):
        pinned_keyring(KEYS["ubports"], {})


def test_the_command_line_refuses_bad_requests_in_one_line(tmp_path: Path) -> None:
    env = {"CLICK_BUILD_SYSROOT_CACHE": str(tmp_path / "cache")}

    def cli(*args: str) -> subprocess.CompletedProcess[str]:
        import os

        return subprocess.run([*CLICK_BUILD, "sysroot", *args], capture_output=True, text=True,
                              env={**os.environ, **env})

    assert_clean_error(cli(), "sysroot: need a subcommand (create, list, path, toolchain")
    assert_clean_error(cli("create", "--arch", "i386"), "no sysroot for architecture 'i386'")
    assert_clean_error(cli("create", "--mirror", "debian"), "--mirror 'debian': give ARCHIVE=URL")
    assert_clean_error(cli("path", "--profile", "debian-12"),
                       "there is no debian-12 arm64 (approximate: ",
                       "make it with: click-build sysroot create --framework "
                       "ubuntu-touch-24.04-1.x --arch arm64 --profile debian-12")
    assert_clean_error(cli("toolchain", "--arch", "armhf", "--package", "Bad"),
                       "'Bad' is not a Debian package name")
    listing = cli("list")
    assert listing.returncode == 0
    assert listing.stdout.startswith(f"no sysroots in {tmp_path / 'cache'}")


def test_without_apt_the_builtin_way_is_taken(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Fedora, Arch, macOS: no apt-get or dpkg-deb on PATH, so auto is click-build's own."""
    import shutil

    from click_build.sysroot import _method

    tools = tmp_path / "bin"
    tools.mkdir()
    gpgv = shutil.which("gpgv")
    assert gpgv is not None
    (tools / "gpgv").symlink_to(gpgv)
    monkeypatch.setenv("PATH", str(tools))
    assert _method("auto") == "builtin"
    with pytest.raises(SysrootError, match="--method apt needs apt-get, dpkg-deb and gpgv"):
        _method("apt")
    (tools / "apt-get").symlink_to(shutil.which("apt-get", path="/usr/bin:/bin") or "/bin/true")
    (tools / "dpkg-deb").symlink_to(shutil.which("dpkg-deb", path="/usr/bin:/bin") or "/bin/true")
    assert _method("auto") == "apt"
