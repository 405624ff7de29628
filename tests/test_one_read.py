"""Each staged file is opened and read once per build, on every route (issue 15), for
any number of targets (issue 28).

The finishing stage learns the architecture from the ELF headers that the
md5/tar/gzip pass reads anyway, and the few files its checks parse (hook files,
the QML entry point) are packed from the bytes the checks read; a build for
several frameworks packs all its packages in that one pass.  ``strace``
counts the opens of every file of the tree, in click-build and every process
it starts; on the CMake route, in the Python processes the click target starts
(``cmake --install`` opens the files it copies into the stage).
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from cmake_support import cmake_env, configure
from conftest import BASE_MANIFEST, CLICK_BUILD, need, run, write_tree

pytestmark = pytest.mark.slow

#: ``PID openat(3</app/qml>, "Main.qml", O_RDONLY|O_NOFOLLOW) = 4</app/qml/Main.qml>``: a
#: successful open (``strace -y`` names the file a descriptor refers to), relative to a
#: folder's descriptor (as click-build opens the tree's files) or not: the path opened.
#: strace pads a short line's result to its 40th column, which a call resumed after
#: another thread's line is once joined: ``openat(...) <unfinished ...>`` then
#: ``<... openat resumed>)             = 5</app/data/big.bin>``.
_OPEN = re.compile(r'open(?:at)?\((?:[A-Z_]+|\d+(?:<[^>]*>)?), "(?:[^"\\]|\\.)*", '
                   r'([A-Z_|]+)[^)]*\) += \d+<((?:[^>\\]|\\.)*)>')
#: ``PID execve("/usr/bin/cmake", [...]`` (its result on this line or a "resumed" one).
_EXEC = re.compile(r'^(\d+) +execve\("((?:[^"\\]|\\.)*)"')
_EXEC_DONE = re.compile(r'^(\d+) +(?:<\.\.\. execve resumed>|execve\().* = 0$')
#: ``PID clone3(...) = CHILD``: a new process or thread, running its parent's program.
_SPAWN = re.compile(r'^(\d+) +(?:<\.\.\. )?(?:clone3?|fork|vfork)\b.* = (\d+)$')


def _tree(root: Path) -> Path:
    """An app with compiled code (so the ELF scan has work), a large file, hook files
    and an AppArmor file whose policy_version the finishing stage fills in."""
    write_tree(root, {
        # 24.04: the helper is this machine's /bin/true (glibc 2.36), which 20.04 cannot load
        "manifest.json": json.dumps({**BASE_MANIFEST, "framework": "ubuntu-touch-24.04-1.x"}),
        "hello.desktop": "[Desktop Entry]\nName=Hello\nExec=qmlscene qml/Main.qml\n"
                         "Icon=icon.svg\nType=Application\nX-Lomiri-Touch=true\n",
        "hello.apparmor": json.dumps({"policy_groups": []}),
        "qml/Main.qml": "import QtQuick 2.7\nRectangle { width: 100; height: 100 }\n",
        "qml/Other.qml": "import QtQuick 2.7\nItem {}\n",
        "icon.svg": "<svg xmlns='http://www.w3.org/2000/svg'/>\n",
        "data/big.bin": os.urandom(3 << 20),
        "data/empty": "",
    })
    true = shutil.which("true")
    assert true
    (root / "lib").mkdir()
    shutil.copy(true, root / "lib" / "helper")
    return root


_UNFINISHED = " <unfinished ...>"
_RESUMED = re.compile(r"^(\d+) +<\.\.\. \w+ resumed>(.*)$")


def _joined(lines: list[str]) -> list[str]:
    """strace's lines with each call whole: a call another thread interrupted is printed
    as ``PID call(... <unfinished ...>`` and later ``PID <... call resumed>...) = N``
    (on a busy machine, the deflate workers' opens often are)."""
    started: dict[str, str] = {}
    out = []
    for line in lines:
        if line.endswith(_UNFINISHED):
            started[line.split(" ", 1)[0]] = line[:-len(_UNFINISHED)]
        elif (m := _RESUMED.match(line)) and m.group(1) in started:
            out.append(started.pop(m.group(1)) + m.group(2))
        else:
            out.append(line)
    return out


def _opens(log: Path, top: Path, program: str = "") -> dict[str, int]:
    """How often each file under ``top`` was opened (folders, listed by scandir, aside);
    with ``program``, only by processes (and their threads) running a program whose
    file name contains it."""
    lines = _joined(log.read_text(errors="replace").splitlines())
    parent: dict[str, str] = {}
    for line in lines:
        if m := _SPAWN.match(line):
            parent[m.group(2)] = m.group(1)
    running: dict[str, str] = {}  # pid -> the program it execve'd
    pending: dict[str, str] = {}

    def program_of(pid: str | None) -> str:
        while pid is not None and pid not in running:
            pid = parent.get(pid)
        return running.get(pid, "") if pid is not None else ""

    counts: dict[str, int] = {}
    prefix = str(top) + os.sep
    for line in lines:
        if m := _EXEC.match(line):
            pending[m.group(1)] = m.group(2)
        if (m := _EXEC_DONE.match(line)) and m.group(1) in pending:
            running[m.group(1)] = pending.pop(m.group(1))
        m = _OPEN.search(line)
        if m is None or "O_DIRECTORY" in m.group(1):
            continue
        if program and program not in os.path.basename(program_of(line.split()[0])):
            continue
        path = os.path.normpath(m.group(2))
        if path.startswith(prefix):
            rel = path[len(prefix):]
            counts[rel] = counts.get(rel, 0) + 1
    return counts


def _staged(top: Path) -> list[str]:
    return sorted(str(p.relative_to(top)) for p in top.rglob("*")
                  if p.is_file() and not p.is_symlink()
                  and p.name not in ("manifest.json", "pyproject.toml"))


def _traced(cmd: list[str], log: Path, cwd: Path | None = None,
            env: dict[str, str] | None = None) -> None:
    strace = need("strace")
    env = {**(os.environ if env is None else env), "SOURCE_DATE_EPOCH": "1700000000"}
    calls = "trace=open,openat,execve,clone,clone3,fork,vfork"
    result = subprocess.run([strace, "-f", "-qq", "-y", "-e", calls, "-o", str(log), *cmd],
                            cwd=cwd, env=env, capture_output=True, text=True)
    assert result.returncode == 0, result.stdout + result.stderr


#: The tree of :func:`_tree` as a CMake project installs it (its manifest generated).
CMAKELISTS = """cmake_minimum_required(VERSION 3.19)
project(hello VERSION 1.0 LANGUAGES C)
find_package(ClickBuild CONFIG REQUIRED)
click_manifest(NAME com.example.hello TITLE Hello DESCRIPTION "Says hello to the world"
               MAINTAINER "Jane Doe <jane@example.com>" FRAMEWORK ubuntu-touch-24.04-1.x)
click_add_hook(hello DESKTOP hello.desktop APPARMOR hello.apparmor)
install(FILES icon.svg DESTINATION .)
install(DIRECTORY qml data DESTINATION .)
install(PROGRAMS lib/helper DESTINATION lib)
click_package()
"""


#: Two frameworks: the packages of one build for several targets (both 24.04: the helper,
#: this machine's /bin/true, needs a glibc newer than 20.04's, which the review refuses).
BOTH = ("ubuntu-touch-24.04-1.x", "ubuntu-touch-24.04-2.x")


@pytest.mark.parametrize("several", [False, True], ids=["one-target", "two-frameworks"])
@pytest.mark.parametrize("route", ["tree", "project", "pep517", "cmake"])
def test_each_staged_file_is_opened_once(tmp_path: Path, route: str, several: bool) -> None:
    if several and route == "cmake":
        pytest.skip("the CMake click target builds one package")
    app = _tree(tmp_path / "app")
    top = app
    if route == "cmake":
        need("cmake")
        need("ninja")
        (app / "manifest.json").unlink()
        (app / "CMakeLists.txt").write_text(CMAKELISTS)
        # C enabled, nothing compiled: configure guesses 'all'; the installed
        # program must decide the architecture, from the headers the packing reads.
        configure(app, tmp_path / "build")
        top = tmp_path / "build" / "click" / "stage"
    elif route != "tree":
        (app / "pyproject.toml").write_text(
            '[build-system]\nrequires = ["click-build"]\nbuild-backend = "click_build.backend"\n'
            '\n[tool.click-build]\nkind = "qml"\n')
    out = tmp_path / "out"
    out.mkdir()
    log = tmp_path / "strace.log"
    frameworks = [f"--framework={fw}" for fw in BOTH] if several else []
    if route == "pep517":
        settings = ["-C", f"click-build.frameworks={','.join(BOTH)}"] if several else []
        _traced([sys.executable, "-m", "build", "-n", "--wheel", *settings, "-o", str(out),
                 str(app)], log)
    elif route == "cmake":
        _traced(["cmake", "--build", str(tmp_path / "build"), "--target", "click"], log,
                env=cmake_env())
        out = tmp_path / "build"
    else:
        _traced([*CLICK_BUILD, "build", str(app), *frameworks, "-o", str(out)], log)
    host = run(["dpkg", "--print-architecture"]).stdout.strip()
    versions = ["1.0~2404", "1.0~2404.2"] if several else ["1.0"]
    clicks = sorted(out.glob("*.click"))
    # the ELF scan did decide, for each package
    assert [c.name for c in clicks] == sorted(f"com.example.hello_{v}_{host}.click" for v in versions)
    listings = [run(["dpkg-deb", "-c", str(c)]).stdout for c in clicks]
    # cmake --install writes the stage (and strips what it installs): click-build's reads count.
    opened = _opens(log, top.resolve(), "python" if route == "cmake" else "")
    assert len(_staged(top)) >= 8
    for rel in _staged(top):
        assert all(f"./{rel}" in listing for listing in listings)
        assert opened.get(rel, 0) == 1, (rel, opened)


def test_a_template_whose_hooks_name_the_architecture_reads_headers_first(
        tmp_path: Path) -> None:
    """The one exception docs/building.md states: hook paths that name the architecture
    (``@CLICK_ARCH_TRIPLET@``), which the compiled files decide, need it before packing,
    so each file's header is read first: every file with bytes is opened twice, an empty
    one once; the package is still the decided architecture's."""
    from click_build.elf import ARCH_TRIPLETS
    from click_build.hostarch import host_architecture

    host = host_architecture()
    app = _tree(tmp_path / "app")
    folder = app / "lib" / ARCH_TRIPLETS[host]
    folder.mkdir()
    for name in ("hello.desktop", "hello.apparmor"):
        (app / name).rename(folder / name)
    hooks = {"hello": {"desktop": "lib/@CLICK_ARCH_TRIPLET@/hello.desktop",
                       "apparmor": "lib/@CLICK_ARCH_TRIPLET@/hello.apparmor"}}
    data = json.loads((app / "manifest.json").read_text())
    (app / "manifest.json").unlink()
    (app / "manifest.json.in").write_text(json.dumps(
        {**data, "architecture": "@CLICK_ARCH@", "hooks": hooks}))
    out = tmp_path / "out"
    out.mkdir()
    log = tmp_path / "strace.log"
    _traced([*CLICK_BUILD, "build", str(app), "-m", "manifest.json.in", "-o", str(out)], log)
    assert [c.name for c in out.glob("*.click")] == [f"com.example.hello_1.0_{host}.click"]
    opened = _opens(log, app.resolve())
    staged = [rel for rel in _staged(app) if rel != "manifest.json.in"]
    assert len(staged) >= 8
    for rel in staged:
        assert opened.get(rel, 0) == (2 if (app / rel).stat().st_size else 1), (rel, opened)


def test_the_log_reader_counts_an_open_another_thread_interrupted(tmp_path: Path) -> None:
    """The lines of a CI run where the large file's open was counted 0 times: another
    thread's open came between its start and its result, and the result, alone on its
    line, was padded to strace's column."""
    log = tmp_path / "strace.log"
    log.write_text(
        '7 openat(AT_FDCWD</w>, "/app/data", O_RDONLY|O_CLOEXEC|O_DIRECTORY) = 4</app/data>\n'
        '7 openat(4</app/data>, "big.bin", O_RDONLY|O_NOFOLLOW|O_CLOEXEC <unfinished ...>\n'
        '8 openat(AT_FDCWD</w>, "/proc/sys/vm/overcommit_memory", O_RDONLY <unfinished ...>\n'
        '7 <... openat resumed>)             = 5</app/data/big.bin>\n'
        '8 <... openat resumed>)             = 6</proc/sys/vm/overcommit_memory>\n'
        '7 openat(4</app/data>, "empty", O_RDONLY|O_NOFOLLOW|O_CLOEXEC) = 6</app/data/empty>\n'
        '7 openat(4</app/data>, "gone", O_RDONLY|O_NOFOLLOW) = -1 ENOENT (No such file)\n')
    assert _opens(log, Path("/app")) == {"data/big.bin": 1, "data/empty": 1}
