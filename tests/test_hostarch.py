"""One answer to "what is this machine's architecture", for builds and the installer."""

from __future__ import annotations

import os
import sys
from collections.abc import Iterator

import pytest
from conftest import run

from click_build import hostarch
from click_build.errors import ClickError
from click_build.hostarch import host_architecture


@pytest.fixture(autouse=True)
def _ask_afresh() -> Iterator[None]:
    hostarch._known.clear()
    yield
    hostarch._known.clear()


def _machine(monkeypatch: pytest.MonkeyPatch, machine: str) -> None:
    real = os.uname()
    fake = os.uname_result((real.sysname, real.nodename, real.release, real.version, machine))
    monkeypatch.setattr(os, "uname", lambda: fake)


def test_it_is_what_dpkg_says() -> None:
    assert host_architecture() == run(["dpkg", "--print-architecture"]).stdout.strip()


@pytest.mark.parametrize(("machine", "wide", "narrow"), [
    ("x86_64", "amd64", "i386"), ("aarch64", "arm64", "armhf"), ("armv7l", "armhf", "armhf"),
    ("armv8l", "armhf", "armhf"), ("i686", "i386", "i386"), ("ppc64le", "ppc64el", "powerpc"),
])
def test_a_32_bit_userland_on_a_64_bit_kernel_is_told_apart(
        monkeypatch: pytest.MonkeyPatch, machine: str, wide: str, narrow: str) -> None:
    _machine(monkeypatch, machine)
    assert host_architecture() == wide
    hostarch._known.clear()
    monkeypatch.setattr(sys, "maxsize", 2**31 - 1)
    assert host_architecture() == narrow


def test_an_unknown_machine_is_dpkgs_to_name(monkeypatch: pytest.MonkeyPatch,
                                             tmp_path: os.PathLike[str]) -> None:
    _machine(monkeypatch, "mystery64")
    fake = os.path.join(tmp_path, "dpkg")
    with open(fake, "w") as f:
        f.write("#!/bin/sh\necho mystery64el\n")
    os.chmod(fake, 0o755)
    monkeypatch.setenv("PATH", os.fspath(tmp_path))
    assert host_architecture() == "mystery64el"
    hostarch._known.clear()
    monkeypatch.setenv("PATH", os.path.join(tmp_path, "nothing"))
    with pytest.raises(ClickError, match="cannot tell the Debian architecture of machine "
                                         "'mystery64'"):
        host_architecture()


def test_the_installer_does_not_load_the_elf_tables_to_ask() -> None:
    code = ("import sys; import click_build.install.installer as i, click_build.hostarch as h; "
            "h.host_architecture(); print('click_build.elf' in sys.modules)")
    assert run([sys.executable, "-c", code]).stdout.strip() == "False"
