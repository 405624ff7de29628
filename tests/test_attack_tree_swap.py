"""Issue 27, class 5: a tree another user can write, packed by root (as CI does).

The attacker owns the app's tree and waits for the build to have walked it;
then a file, or a folder above one, becomes a symbolic link to ``/etc/shadow``
(or ``/etc``), or a FIFO.  A build that opened files by path would pack the
link's target.  The moment is forced, not raced: the build runs in a driver
process whose walk (``staging.stage_tree``, or one folder's entry during the
walk, ``staging._enter``) stops on a pipe until the attacker, a real other
account, has made the swap.  Every route is driven through its real entry
point (``click-build build``, the PEP 517 hooks ``build_wheel`` and
``build_sdist``, the CMake click target's ``click-build _cmake package``), and
so is everything that reads the tree's files again after the walk: the cmake
kind's copy of the sources, an ``include`` the walk left out (the swap then
comes after the includes are found), the desktop file the translations are
merged into: the build must stop with one error line naming the file, write
nothing, and show no byte of the target.
As root packing the unprivileged user's tree, and as that user packing a tree
another account (root here) can write, targeting the user's own secret.
"""

from __future__ import annotations

import io
import json
import os
import pwd
import shutil
import subprocess
import sys
import tarfile
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest
from conftest import BASE_MANIFEST, ORIGINAL_CLICK, write_tree
from deadlines import seconds

pytestmark = pytest.mark.slow

TOKEN = "SECRET-TOKEN-of-the-victim-7f3a"

#: Runs one build with a hook in the walk; the spec (JSON) says which route and where.
DRIVER = r'''
import json, os, sys
spec = json.loads(sys.argv[1])

def attacker_strikes():
    os.write(spec["ready"], b"go")
    os.close(spec["ready"])
    if os.read(spec["done"], 2) != b"ok":
        raise SystemExit("the attacker did not finish")

import click_build.build as build
import click_build.staging as staging

if spec["hook"] == "walk":  # inside the walk: before it enters one folder
    real_enter = staging._enter
    def _enter(parent, name, seen, path):
        if name == spec["folder"]:
            attacker_strikes()
        return real_enter(parent, name, seen, path)
    staging._enter = _enter
elif spec["hook"] == "staged":  # after the backend's walk and its includes
    import click_build.backend.files as files
    import click_build.backend.sdist as sdist
    real_staged = files.stage_with_includes
    def stage_with_includes(*args, **kwargs):
        entries = real_staged(*args, **kwargs)
        attacker_strikes()
        return entries
    files.stage_with_includes = sdist.stage_with_includes = stage_with_includes
else:  # between the walk and everything that reads the files
    real_stage = staging.stage_tree
    walks = []
    def stage_tree(*args, **kwargs):
        entries = real_stage(*args, **kwargs)
        if not walks:
            walks.append(1)
            attacker_strikes()
        return entries
    staging.stage_tree = build.stage_tree = stage_tree

if spec["route"] in ("project", "sdist"):
    os.chdir(spec["tree"])
    from click_build.backend import build_sdist, build_wheel
    (build_sdist if spec["route"] == "sdist" else build_wheel)(spec["out"])
    sys.exit(0)
sys.argv = ["click-build", *spec["argv"]]
from click_build.cli import run
run()
'''

FILE_TO_LINK = 'rm data.txt && ln -s "$FILE" data.txt'
FOLDER_TO_LINK = 'mv conf conf.old && ln -s "$DIR" conf'
#: name -> (hook, the attacker's shell script run in the tree, the file the error names)
ATTACKS = {
    "file-to-link": ("after", FILE_TO_LINK, "data.txt"),
    "folder-to-link": ("after", FOLDER_TO_LINK, "conf/shadow"),
    "file-to-fifo": ("after", "rm data.txt && mkfifo data.txt", "data.txt"),
    "desktop-to-link": ("after", 'rm hello.desktop && ln -s "$FILE" hello.desktop',
                        "hello.desktop"),  # read by the checks, packed from those bytes
    "apparmor-to-link": ("after", 'rm hello.apparmor && ln -s "$FILE" hello.apparmor',
                         "hello.apparmor"),  # read by the AppArmor step
    "folder-during-walk": ("walk", FOLDER_TO_LINK, "conf"),
}


class Bench:
    """The victim's tree, the target the attacker points at, and who plays whom."""

    def __init__(self, base: Path, mode: str, user: str, lib: Path | None) -> None:
        self.base, self.mode, self.user = base, mode, user
        self.pw = pwd.getpwnam(user)
        self.switch = os.geteuid() == 0  # a real second account plays one of the parts
        self.python, self.env = [sys.executable], dict(os.environ)
        if mode == "root":
            self.target_dir = Path("/etc")
        else:
            self.target_dir = base / "secret"  # the victim's own: only they can read it
            self.target_dir.mkdir()
            (self.target_dir / "shadow").write_text(f"{TOKEN}\n")
            if lib is not None:  # click-build, build and scikit-build-core for the user
                self.python = ["/usr/bin/python3", "-P"]
                self.env = {"PATH": "/usr/bin:/bin", "HOME": self.pw.pw_dir,
                            "PYTHONPATH": str(lib)}
        self.target = self.target_dir / "shadow"
        # The attacker makes the files the size of the target (anyone may stat it), so
        # that a check of sizes alone would not notice the swap.
        size = self.target.stat().st_size
        self.tree = write_tree(base / "app", {
            "manifest.json": json.dumps(BASE_MANIFEST),
            "hello.desktop": "[Desktop Entry]\nName=Hello\nExec=qmlscene main.qml\n"
                             "Icon=icon.svg\nType=Application\nX-Lomiri-Touch=true\n",
            "hello.apparmor": json.dumps({"policy_groups": [], "policy_version": 20.04}),
            "main.qml": "import QtQuick 2.7\nRectangle { width: 100; height: 100 }\n",
            "icon.svg": "<svg xmlns='http://www.w3.org/2000/svg'/>\n",
            "data.txt": b"d" * size,
            "conf/shadow": b"s" * size,
        })
        self.out = base / "out"
        self.out.mkdir()
        if self.switch and mode == "root":  # the tree is the unprivileged user's
            self._chown(self.tree)
        if self.switch and mode == "user":  # the user builds: everything but the tree
            self._chown(base)  # is theirs; the secret only they may read
            self.target_dir.chmod(0o700)
            self.target.chmod(0o600)

    def project(self, settings: str | None, files: dict[str, str] | None = None) -> None:
        """``files`` added to the tree (its owner's), and with ``settings`` (the lines of
        its ``[tool.click-build]``) the tree made a project of the PEP 517 backend."""
        if settings is not None:
            files = {"pyproject.toml": '[build-system]\nrequires = ["click-build"]\n'
                                       'build-backend = "click_build.backend"\n\n'
                                       f'[tool.click-build]\n{settings}\nreview = "off"\n',
                     **(files or {})}
        write_tree(self.tree, dict(files or {}))
        if self.switch:
            self._chown(self.tree)

    def _chown(self, top: Path) -> None:
        for path in [top, *top.rglob("*")]:
            os.chown(path, self.pw.pw_uid, self.pw.pw_gid, follow_symlinks=False)

    def secrets(self) -> list[bytes]:
        """What must never show: the target's lines (as root can read them)."""
        lines = [line for line in self.target.read_bytes().splitlines() if len(line) > 8]
        return lines or [TOKEN.encode()]

    def as_attacker(self, script: str) -> None:
        env = {"FILE": str(self.target), "DIR": str(self.target_dir), "PATH": "/usr/bin:/bin"}
        cmd = ["sh", "-ec", script]
        if self.switch and self.mode == "root":  # the tree's owner, not root
            cmd = ["setpriv", f"--reuid={self.pw.pw_uid}", f"--regid={self.pw.pw_gid}",
                   "--clear-groups", "--reset-env", "--", "/usr/bin/env",
                   *[f"{k}={v}" for k, v in env.items()], *cmd]
        subprocess.run(cmd, cwd=self.tree, env=env, check=True, timeout=seconds(60))

    def build(self, route: str, hook: str, attack: str | None,
              *extra: str) -> subprocess.CompletedProcess[str]:
        """One build by the victim on ``route``; ``attack`` runs at the hook."""
        ready_r, ready_w = os.pipe()
        done_r, done_w = os.pipe()
        argv = {"tree": ["build", str(self.tree), "-o", str(self.out), *extra],
                "cmake": ["_cmake", "package", str(self.tree), "--output-dir", str(self.out),
                          "--summary", str(self.base / "summary.json")]}.get(route, [])
        spec = {"ready": ready_w, "done": done_r, "hook": hook, "folder": "conf",
                "route": route, "tree": str(self.tree), "out": str(self.out), "argv": argv}
        cmd = [*self.python, "-c", DRIVER, json.dumps(spec)]
        if self.switch and self.mode == "user":
            cmd = ["setpriv", f"--reuid={self.pw.pw_uid}", f"--regid={self.pw.pw_gid}",
                   "--clear-groups", "--", *cmd]
        log = self.base / "driver.log"
        with open(log, "w") as out, subprocess.Popen(
                cmd, stdout=out, stderr=subprocess.STDOUT, text=True, env=self.env,
                pass_fds=(ready_w, done_r), cwd=self.base) as proc:
            os.close(ready_w)
            os.close(done_r)
            try:
                reached = os.read(ready_r, 2) == b"go"  # EOF: the driver ended first
                if reached and attack is not None:
                    self.as_attacker(attack)
                if reached:
                    os.write(done_w, b"ok")
            finally:
                os.close(ready_r)
                os.close(done_w)
            status = proc.wait(timeout=seconds(300))
        output = log.read_text()
        assert reached, f"the build never reached the hook:\n{output}"
        return subprocess.CompletedProcess(cmd, status, output, output)


@pytest.fixture(params=["root", "user"])
def bench(request: pytest.FixtureRequest, real_user: str,
          portable_lib: Path | None) -> Iterator[Bench]:
    mode = request.param
    if mode == "root" and os.geteuid() != 0:
        pytest.skip("root packing another user's tree needs root")
    if mode == "root":
        base = Path(tempfile.mkdtemp(prefix="cb-swap."))
        base.chmod(0o755)
        user = real_user
    else:
        home = Path(pwd.getpwnam(real_user).pw_dir)
        base = Path(tempfile.mkdtemp(prefix="swap.", dir=home if os.geteuid() == 0 else None))
        user = real_user
    try:
        yield Bench(base, mode, user, portable_lib)
    finally:
        shutil.rmtree(base, ignore_errors=True)


def _refused(bench: Bench, result: subprocess.CompletedProcess[str], names: str) -> None:
    assert result.returncode != 0, result.stdout
    assert "Traceback" not in result.stdout, result.stdout
    errors = [line for line in result.stdout.splitlines() if "click-build: error:" in line]
    assert len(errors) == 1, result.stdout
    assert f"{bench.tree / names}: changed while the package was being built" in errors[0]
    assert os.listdir(bench.out) == []  # no package, no temporary file
    for secret in bench.secrets():
        assert secret.decode(errors="replace") not in result.stdout


@pytest.mark.parametrize("attack", sorted(ATTACKS))
def test_a_swap_after_the_walk_packs_nothing_of_the_target(bench: Bench, attack: str) -> None:
    hook, script, names = ATTACKS[attack]
    result = bench.build("tree", hook, script)
    _refused(bench, result, names)


@pytest.mark.parametrize("route", ["project", "cmake"])
def test_every_route_checks_what_it_packs(bench: Bench, route: str) -> None:
    """The backend (the qml kind's walk) and the CMake click target's helper."""
    if route == "project":
        bench.project('kind = "qml"')
    result = bench.build(route, "after", FILE_TO_LINK)
    _refused(bench, result, "data.txt")


#: A cmake-kind project that installs the tree's files: CMake runs on a copy of the sources.
CMAKE_PROJECT = {"CMakeLists.txt": (
    "cmake_minimum_required(VERSION 3.16)\nproject(hello NONE)\n"
    "install(FILES hello.desktop hello.apparmor main.qml icon.svg data.txt DESTINATION .)\n"
    "install(DIRECTORY conf DESTINATION .)\n")}
#: ``conf/shadow`` is the app's desktop file, merged with a translation.
TRANSLATED = {
    "manifest.json": json.dumps({**BASE_MANIFEST, "hooks": {"hello": {
        "desktop": "conf/shadow", "apparmor": "hello.apparmor"}}}),
    "conf/shadow": "[Desktop Entry]\nName=Hello\nExec=qmlscene main.qml\nIcon=icon.svg\n"
                   "Type=Application\nX-Lomiri-Touch=true\n",
    "po/de.po": 'msgid ""\nmsgstr "Content-Type: text/plain; charset=UTF-8\\n"\n\n'
                'msgid "Hello"\nmsgstr "Hallo"\n'}
#: What reads the tree's files again after the walk -> (route, hook, attack, the file the
#: error names, the project's settings (None: not a backend project), files added).
READERS: dict[str, tuple[str, str, str, str, str | None, dict[str, str]]] = {
    "sdist": ("sdist", "after", FOLDER_TO_LINK, "conf/shadow", 'kind = "qml"', {}),
    "cmake-kind-copy-file": ("project", "after", FILE_TO_LINK, "data.txt", 'kind = "cmake"',
                             CMAKE_PROJECT),
    "cmake-kind-copy-folder": ("project", "after", FOLDER_TO_LINK, "conf/shadow",
                               'kind = "cmake"', CMAKE_PROJECT),
    "include-file": ("project", "staged", 'rm conf/shadow && ln -s "$FILE" conf/shadow',
                     "conf/shadow", 'kind = "qml"\nexclude = ["/conf"]\n'
                     'include = ["/conf/shadow"]', {}),
    "include-folder": ("project", "staged", FOLDER_TO_LINK, "conf/shadow",
                       'kind = "qml"\nexclude = ["/conf"]\ninclude = ["/conf/shadow"]', {}),
    "translated-desktop": ("tree", "after", FOLDER_TO_LINK, "conf/shadow", None, TRANSLATED),
}


@pytest.mark.parametrize("reader", sorted(READERS))
def test_what_reads_the_files_again_reads_what_the_walk_saw(bench: Bench, reader: str) -> None:
    route, hook, attack, names, settings, files = READERS[reader]
    bench.project(settings, files)
    result = bench.build(route, hook, attack)
    _refused(bench, result, names)


def test_the_cmake_kinds_copy_of_the_sources_without_a_swap(bench: Bench) -> None:
    """The control: the copy CMake runs on holds the tree's files (opened by descriptor on
    both sides), and a second build copies nothing."""
    bench.project('kind = "cmake"', CMAKE_PROJECT)
    for _ in range(2):
        result = bench.build("project", "after", None)
        assert result.returncode == 0, result.stdout
    assert "* Sources mirrored into" in result.stdout and "(0 changed)" in result.stdout
    (click,) = bench.out.glob("*.click")
    with tarfile.open(fileobj=io.BytesIO(_data_tar(click))) as tar:
        shadow = tar.extractfile("./conf/shadow")
        assert shadow is not None and shadow.read() == (bench.tree / "conf/shadow").read_bytes()


def _data_tar(click: Path) -> bytes:
    return subprocess.run(["dpkg-deb", "--fsys-tarfile", str(click)], check=True,
                          capture_output=True).stdout


def test_without_a_swap_the_same_build_packs_and_verifies(bench: Bench) -> None:
    """The control: the hook itself changes nothing; dpkg-deb and the original read it."""
    result = bench.build("tree", "after", None)
    assert result.returncode == 0, result.stdout
    (click,) = bench.out.glob("*.click")
    with tarfile.open(fileobj=io.BytesIO(_data_tar(click))) as tar:
        shadow = tar.extractfile("./conf/shadow")
        assert shadow is not None and shadow.read() == (bench.tree / "conf/shadow").read_bytes()
    if os.path.exists(ORIGINAL_CLICK):
        subprocess.run([ORIGINAL_CLICK, "verify", "--force-missing-framework",
                        "--allow-unauthenticated", str(click)], check=True, capture_output=True)


def test_a_link_there_before_the_walk_is_packed_as_a_link(bench: Bench) -> None:
    """A link the tree holds when it is walked is a link in the package, never its
    target's bytes (the absolute link is a review error: built with --no-validate)."""
    bench.as_attacker('rm data.txt && ln -s "$FILE" data.txt && '
                      'mv conf conf.old && ln -s "$DIR" conf')
    result = bench.build("tree", "after", None, "--no-validate")
    assert result.returncode == 0, result.stdout
    (click,) = bench.out.glob("*.click")
    listing = subprocess.run(["dpkg-deb", "-c", str(click)], check=True, capture_output=True,
                             text=True).stdout
    assert f"./data.txt -> {bench.target}" in listing
    assert f"./conf -> {bench.target_dir}" in listing
    data = _data_tar(click)
    for secret in bench.secrets():
        assert secret not in data
    if os.path.exists(ORIGINAL_CLICK):
        subprocess.run([ORIGINAL_CLICK, "verify", "--force-missing-framework",
                        "--allow-unauthenticated", str(click)], check=True, capture_output=True)
