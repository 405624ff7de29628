"""Start-up: what ``install`` and ``build`` import and start (issue 15).

A trivial install is mostly interpreter start-up and imports, so a heavy module
that creeps onto the path costs every install.  The modules listed were
measured with ``python -X importtime -c 'import NAME'`` (3.11, cumulative, on
this project's shared 2-core machine under load, so read them as relative):
email.message 182 ms, http.client 107, importlib.metadata 61, dataclasses 53,
urllib.request 46, tempfile 32, pathlib 31, logging 20, hashlib 21 (its
OpenSSL binding), inspect 19, tarfile 13 (and our own reader replaces it),
subprocess 12, socket 10, typing 8; json 6, whose C half (``_json``) the path
uses through ``jsontext.py``.
``build`` imports hashlib only for trees of more than 4 MiB: OpenSSL's md5
hashes twice as fast as the built-in one, which pays for loading it from there.

The privilege drop of an install run as root is one ``fork`` (the unpacker
becomes ``clickpkg``), never an ``exec`` of a second interpreter.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import BASE_MANIFEST
from deadlines import seconds
from install_support import current_user, make_env

REPO = Path(__file__).resolve().parent.parent

HEAVY = frozenset({
    "tarfile", "subprocess", "email", "http", "urllib", "jsonschema", "fastjsonschema",
    "hashlib", "_hashlib", "shutil", "tempfile", "typing", "dataclasses", "inspect",
    "threading", "socket", "ssl", "pathlib", "logging", "zipfile", "importlib.metadata",
    "platform", "uuid", "asyncio", "xml", "lzma", "bz2", "datetime", "pkgutil",
})

#: Runs click-build in this interpreter, records every process it starts (in the
#: children too: each event is appended to a file at once), which modules made ``re``
#: compile a pattern, then the modules loaded.  Nothing is imported beyond what ``python -m click_build`` imports.
_PROBE = """\
import os, sys
out = os.open(sys.argv[1], os.O_WRONLY | os.O_APPEND)
def hook(event, args):
    if event in ("os.fork", "os.exec", "os.posix_spawn", "os.spawn", "os.system",
                 "subprocess.Popen", "os.forkpty"):
        os.write(out, ("event " + event + "\\n").encode())
sys.addaudithook(hook)
import re
_compile = re._compile
def compile_noted(pattern, flags):  # note which module makes re compile a pattern
    if not isinstance(pattern, re.Pattern) and (type(pattern), pattern, flags) not in re._cache:
        frame = sys._getframe(1)
        while frame.f_globals.get("__name__") == "re":
            frame = frame.f_back
        os.write(out, ("compiled " + str(frame.f_globals.get("__name__")) + "\\n").encode())
    return _compile(pattern, flags)
re._compile = compile_noted
import runpy
import click_build.cli
click_build.cli.end_process = sys.exit  # come back here, not end the process at once
sys.argv = ["click-build", *sys.argv[2:]]
code = 0
try:
    runpy.run_module("click_build", run_name="__main__", alter_sys=True)
except SystemExit as e:
    code = e.code if isinstance(e.code, int) else 1
os.write(out, ("module " + "\\nmodule ".join(sorted(sys.modules)) + "\\n").encode())
os._exit(code)
"""


def probe(tmp_path: Path, *args: str, env: dict[str, str] | None = None
          ) -> tuple[subprocess.CompletedProcess[str], list[str], set[str], set[str]]:
    """(result, process events, top-level names of the modules loaded, modules that
    made ``re`` compile) of ``click-build ARGS`` run from the checkout without
    site-packages, as a wheel would run."""
    record = tmp_path / "probe.txt"
    record.write_text("")
    result = subprocess.run(
        [sys.executable, "-S", "-c", _PROBE, str(record), *args], capture_output=True,
        text=True, timeout=seconds(120), check=False,
        env={**os.environ, **(env or {}), "PYTHONPATH": str(REPO)})
    events, modules, compilers = [], set(), set()
    for line in record.read_text().splitlines():
        kind, _, name = line.partition(" ")
        if kind == "event":
            events.append(name)
        elif kind == "compiled":
            compilers.add(name)
        else:
            modules.add(name)
            modules.add(name.split(".")[0])
    return result, events, modules, compilers


def _app(tmp_path: Path) -> Path:
    tree = tmp_path / "app"
    tree.mkdir()
    (tree / "main.qml").write_text("import QtQuick 2.7\nItem {}\n")
    (tree / "manifest.json").write_text(json.dumps(dict(BASE_MANIFEST, hooks={})))
    return tree


def test_build_imports_nothing_heavy_and_starts_nothing(tmp_path: Path) -> None:
    result, events, modules, _ = probe(tmp_path, "build", "-o", str(tmp_path / "out"),
                                    str(_app(tmp_path)))
    assert result.returncode == 0, result.stderr
    assert list((tmp_path / "out").glob("*.click"))
    assert "click_build.build" in modules and "click_build.review" in modules  # it ran
    assert "click_build.i18n" not in modules  # an app without po/ has nothing to translate
    assert sorted(modules & HEAVY) == []
    assert "argparse" in modules  # argparse reads every line but a plain install's ...
    assert not {"locale", "gettext"} & modules  # ... with its strings untranslated
    assert events == []


def test_a_big_tree_hashes_with_openssl(tmp_path: Path) -> None:
    from click_build.md5check import OPENSSL_MD5_FROM

    tree = _app(tmp_path)
    (tree / "big.bin").write_bytes(os.urandom(OPENSSL_MD5_FROM))
    result, _, modules, _ = probe(tmp_path, "build", "--review", "off", "-o",
                               str(tmp_path / "out"), str(tree))
    assert result.returncode == 0, result.stderr
    assert "_hashlib" in modules
    (package,) = (tmp_path / "out").glob("*.click")
    checked = subprocess.run(["click", "verify", "--force-missing-framework",
                              "--allow-unauthenticated", str(package)],
                             capture_output=True, text=True, check=False)
    assert checked.returncode == 0, checked.stderr  # the original checks every md5


@pytest.mark.skipif(os.geteuid() != 0, reason="the privilege drop needs root")
def test_install_imports_nothing_heavy_and_drops_privileges_by_one_fork(tmp_path: Path) -> None:
    import pwd

    pwd.getpwnam("clickpkg")  # the drop happens only when the account exists
    built = probe(tmp_path, "build", "--no-validate", "-o", str(tmp_path), str(_app(tmp_path)))
    assert built[0].returncode == 0, built[0].stderr
    package, = tmp_path.glob("*.click")
    world = make_env(tmp_path / "env")
    result, events, modules, compilers = probe(
        tmp_path, "install", f"--root={world.root}", "--allow-unauthenticated",
        "--force-missing-framework", f"--user={current_user()}", str(package),
        env=world.vars())
    assert result.returncode == 0, result.stderr
    version = world.root / str(BASE_MANIFEST["name"]) / str(BASE_MANIFEST["version"])
    assert (version / "main.qml").stat().st_uid == pwd.getpwnam("clickpkg").pw_uid  # dropped
    assert "click_build.install.installer" in modules
    assert sorted(modules & HEAVY) == []
    assert "argparse" not in modules  # a plain install line: commands/shortcut.py reads it
    assert "json" not in modules  # manifests are read and written by jsontext.py (_json)
    assert not {"locale", "gettext"} & modules
    assert "click_build.signing.verify" not in modules  # an unsigned package needs no gpg plumbing
    assert "click_build.archive" not in modules  # the writers: an install only reads (arread)
    assert events == ["os.fork"]
    # the checks every install makes compile no regex of ours
    assert sorted(n for n in compilers if n.startswith("click_build")) == []


def test_the_entry_point_leaves_gettext_whole_for_later_importers() -> None:
    """argparse loads against a stand-in gettext; the real module is still there to
    import afterwards, and a library importer's argparse keeps translating."""
    entry = ("import sys, click_build.cli as m\n"
             "m.untranslated_argparse()\n"
             "assert 'gettext' not in sys.modules, 'the stand-in stayed'\n"
             "import argparse, gettext\n"
             "assert callable(gettext.translation), gettext\n"
             "assert argparse._('usage: ') == 'usage: '\n")
    library = ("import click_build.cli, argparse, gettext\n"
               "assert argparse._ is gettext.gettext\n")
    for code in (entry, library):
        result = subprocess.run([sys.executable, "-S", "-c", code], capture_output=True,
                                text=True, env={**os.environ, "PYTHONPATH": str(REPO)},
                                check=False)
        assert result.returncode == 0, result.stderr
