"""Shared fixtures: app trees in tmp_path, the CLI as a real process, the oracles."""

from __future__ import annotations

import contextlib
import fcntl
import gc
import json
import os
import platform
import shutil
import signal
import subprocess
import sys
import tempfile
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from deadlines import seconds

ROOT = Path(__file__).resolve().parent.parent
CLICK_BUILD = [sys.executable, "-m", "click_build"]
ORIGINAL_CLICK = "/usr/bin/click"
#: The app stores' own review tool (click-reviewers-tools), put there by scripts/setup.
CLICK_REVIEW = ROOT / ".venv-review" / "bin" / "click-review"
#: Where pyproject.toml makes zlib-ng a dependency of click-build (its wheels' platforms).
ZLIB_NG_EXPECTED = (sys.implementation.name == "cpython" and sys.version_info < (3, 15)
                    and platform.machine() in ("x86_64", "AMD64", "aarch64", "arm64", "ARM64"))
#: The wheels ``pip wheel`` writes beside click-build's own: its dependencies here.
DEPENDENCY_WHEELS = {"zlib_ng"} if ZLIB_NG_EXPECTED else set()

BASE_MANIFEST: dict[str, object] = {
    "name": "com.example.hello",
    "version": "1.0",
    "framework": "ubuntu-sdk-20.04",
    "maintainer": "Jane Doe <jane@example.com>",
    "title": "Hello",
    "description": "Says hello to the world",  # the stores (and so the review) require one
    "hooks": {"hello": {"desktop": "hello.desktop", "apparmor": "hello.apparmor"}},
}


SYSTEM_LOCK = Path(tempfile.gettempdir()) / "click-build-tests-system.lock"

#: Python keeps its bytecode caches while the suite runs, whatever the caller's shell says
#: (PYTHONDONTWRITEBYTECODE, which this machine's shells set; cleared for the processes
#: the tests start by ``_clean_environment``).  In a checkout only ever tested with it set,
#: the caches of the tests and of the modules changed since were never written: every
#: worker rewrote every test module, every Python process the tests start compiled again
#: what it imported, and the fast subset took 370 CPU seconds instead of 300.
sys.dont_write_bytecode = False

# Fixture projects carry their own tests (autopilot's test_*.py): not ours to collect.
collect_ignore_glob = ["packages/*"]

#: The support modules whose fixtures tests use: registered here, once.  A session fixture
#: imported into each test module instead is a new fixture per module, made again in each
#: (a gpg keyring, a user account, a wheel and venv of the checkout, over and over).
pytest_plugins = ["attack_support", "project_attack", "run_support", "signing", "user_env"]


#: Variables that steer a build (Clickable's, which choose the architecture, the framework
#: and the folders; reproducibility's; CMake's and ClickBuild's inputs; colour), cleared for
#: the whole suite so that a shell which has them set (a Clickable container, a CI job)
#: gives the results of a clean one.  A test that means one sets it itself (``env=``,
#: ``monkeypatch.setenv``).  ``CLICK_BUILD_*`` are click-build's settings; the suite's own
#: knobs, ``CLICK_BUILD_TEST_*``, are read first (:data:`KNOBS`), then cleared too.
STEERING: tuple[str, ...] = (
    "ARCH", "ARCH_TRIPLET", "CLICK_ARCH", "CLICK_ARCH_TRIPLET", "CLICK_FRAMEWORK",
    "SDK_FRAMEWORK", "CLICK_FRAMEWORK_BASE", "APPARMOR_POLICY", "BUILD_DIR", "INSTALL_DIR",
    "ROOT", "SRC_DIR", "NUM_PROCS", "CLICK_LD_LIBRARY_PATH", "CLICK_QML2_IMPORT_PATH",
    "CLICK_PATH", "SOURCE_DATE_EPOCH", "QT_RCC_SOURCE_DATE_OVERRIDE", "CLICK_FRAMEWORKS_DIR",
    "CLICK_HOOKS_DIR", "DESTDIR", "CMAKE_PREFIX_PATH", "CMAKE_TOOLCHAIN_FILE", "CLICK_SYSROOT",
    "CMAKE_GENERATOR", "ClickBuild_DIR", "ClickBuild_ROOT", "MAKEFLAGS", "NO_COLOR",
    "FORCE_COLOR",
)


def machine_cache(name: str) -> Path:
    """A folder of downloads the suite keeps between its runs on this machine (CI starts
    each run in a fresh clone): /var/cache/click-build-tests/NAME as root, else under
    ~/.cache/click-build-tests."""
    if os.geteuid() == 0:
        return Path("/var/cache/click-build-tests") / name
    return Path(os.path.expanduser("~/.cache/click-build-tests")) / name


@contextlib.contextmanager
def machine_cache_held(name: str) -> Iterator[Path]:
    """``machine_cache(name)``, made when missing, with a lock on it held: two workers,
    or two runs, never update one apt cache together (apt would refuse, not wait)."""
    folder = machine_cache(name)
    folder.mkdir(parents=True, exist_ok=True)
    with open(folder / ".lock", "a") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        yield folder


#: The suite's own knobs as the suite was started with them (``CLICK_BUILD_TEST_SLOWDOWN``
#: is read by deadlines.py, imported above, ``_SYSROOTS`` by sysroot_support.py,
#: ``_CPU_LOG`` here).  They leave the environment with the steering variables: every
#: click-build the tests start would warn of one as a setting it does not know.
KNOBS: dict[str, str] = {name: value for name, value in os.environ.items()
                         if name.startswith("CLICK_BUILD_TEST_")}


def steering(name: str) -> bool:
    """Whether the environment variable ``name`` is cleared for the suite."""
    return name in STEERING or name.startswith("CLICK_BUILD_")


@pytest.fixture(autouse=True, scope="session")
def _clean_environment() -> Iterator[None]:
    """The caller's build-steering variables (:data:`STEERING`) out of ``os.environ``, which
    every helper passes on to the processes it starts, for the whole session; the
    compilers' cache (:func:`compiler_cache`) in."""
    with pytest.MonkeyPatch.context() as patch:
        for name in [n for n in os.environ if steering(n)]:
            patch.delenv(name)
        patch.delenv("PYTHONDONTWRITEBYTECODE", raising=False)  # see sys.dont_write_bytecode
        for name, value in compiler_cache().items():
            patch.setenv(name, value)
        yield


def compiler_cache() -> dict[str, str]:
    """With ccache installed, the suite's CMake builds compile through it (CMake's
    CMAKE_<LANG>_COMPILER_LAUNCHER): the same sources are compiled in many tests (each
    template and example, on every route), and a hit is the object the same compiler made
    from the same input.  Kept between runs on this machine; paths under the temporary
    folder are hashed relative to the build, so one project in two tests' folders hits.
    Builds a test runs as another user start from a clean environment: no cache."""
    ccache = shutil.which("ccache")
    if ccache is None:
        return {}
    return {"CMAKE_C_COMPILER_LAUNCHER": ccache, "CMAKE_CXX_COMPILER_LAUNCHER": ccache,
            "CCACHE_DIR": str(machine_cache("ccache")), "CCACHE_BASEDIR": tempfile.gettempdir()}


@pytest.fixture(autouse=True)
def _system_state_lock(request: pytest.FixtureRequest) -> Iterator[None]:
    """Tests in xdist group "system" change machine-wide state (/usr/share/click,
    /etc/debsig, test users): one at a time across every checkout on the machine."""
    marker = request.node.get_closest_marker("xdist_group")
    if marker is None or "system" not in marker.args:
        yield
        return
    with open(SYSTEM_LOCK, "a") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        yield


@pytest.fixture(autouse=True)
def _private_python_cache(tmp_path_factory: pytest.TempPathFactory,
                          monkeypatch: pytest.MonkeyPatch) -> None:
    """Each test's builds start with an empty cache of vendored Python dependencies
    (backend/vendor_cache.py), made on first use, never the developer's ~/.cache."""
    monkeypatch.setenv("CLICK_BUILD_PYTHON_CACHE",
                       str(tmp_path_factory.getbasetemp() / "python-cache" / os.urandom(8).hex()))


def pytest_configure(config: pytest.Config) -> None:
    """A suite started in the background by a script (``cmd &``, nohup: how CI runners
    often start it) inherits Ctrl-C ignored, and so would every command a test starts, so
    a test pressing Ctrl-C waited for a command that never stopped.  The commands get what
    a terminal gives them: Ctrl-C's default (a handler here is reset to it in a child)."""
    if signal.getsignal(signal.SIGINT) is signal.SIG_IGN:
        signal.signal(signal.SIGINT, signal.default_int_handler)


def pytest_collection_finish(session: pytest.Session) -> None:
    """What collection made (modules, test items) stays for the session: set it aside
    from the garbage collector, so that collecting after every test looks only at what
    tests made."""
    gc.collect()
    gc.freeze()


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_protocol(item: pytest.Item) -> Iterator[None]:
    """With ``CLICK_BUILD_TEST_CPU_LOG=FILE``, one line per test: the CPU seconds it took,
    its own and its finished commands' (setup and teardown included).  On 2 cores the
    suite's time is bound by its CPU, not its waits: this says where to trim."""
    log = KNOBS.get("CLICK_BUILD_TEST_CPU_LOG")
    if not log:
        yield
        return
    before = os.times()
    yield
    after = os.times()
    spent = sum(getattr(after, f) - getattr(before, f)
                for f in ("user", "system", "children_user", "children_system"))
    with open(log, "a", encoding="utf-8") as out:
        out.write(f"{spent:.2f} {item.nodeid}\n")


@pytest.fixture(autouse=True)
def _leaks_fail_the_test_that_leaked() -> Iterator[None]:
    """A process or file dropped unclosed warns (ResourceWarning, an error in this suite)
    when the garbage collector finds it, which for one held in a reference cycle is at
    some later test: collect when each test ends, so the warning fails the test that
    leaked it."""
    yield
    gc.collect()


def process_ended(pid: int) -> bool:
    """Process ``pid`` has ended: gone, or a zombie nobody reaped yet (its parent died:
    init reaps it, or, in a container whose first process does not, nobody)."""
    try:
        with open(f"/proc/{pid}/stat", encoding="utf-8", errors="replace") as f:
            return f.read().rsplit(")", 1)[1].split()[0] == "Z"
    except OSError:
        return True


def write_tree(root: Path, files: dict[str, str | bytes]) -> Path:
    """Create files under root; a value starting with '->' makes a symlink."""
    root.mkdir(parents=True, exist_ok=True)
    for rel, content in files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        if isinstance(content, str) and content.startswith("->"):
            path.symlink_to(content[2:].strip())
        elif isinstance(content, bytes):
            path.write_bytes(content)
        else:
            path.write_text(content)
    return root


@pytest.fixture
def make_app(tmp_path: Path) -> Callable[..., Path]:
    """A small valid app tree; pass manifest overrides and extra files."""

    def make(
        name: str = "app",
        files: dict[str, str | bytes] | None = None,
        manifest: dict[str, object] | str | None = None,
        **overrides: object,
    ) -> Path:
        root = tmp_path / name
        tree = {
            "hello.desktop": "[Desktop Entry]\nName=Hello\nExec=qmlscene main.qml\n"
            "Icon=icon.svg\nType=Application\nX-Lomiri-Touch=true\n",
            "hello.apparmor": json.dumps({"policy_groups": [], "policy_version": 20.04}),
            "main.qml": "import QtQuick 2.7\nRectangle { width: 100; height: 100 }\n",
            "icon.svg": "<svg xmlns='http://www.w3.org/2000/svg'/>\n",
        }
        tree.update(files or {})
        write_tree(root, tree)
        if isinstance(manifest, str):
            (root / "manifest.json").write_text(manifest)
        else:
            data = dict(BASE_MANIFEST if manifest is None else manifest)
            data.update(overrides)
            (root / "manifest.json").write_text(json.dumps(data, indent=2))
        return root

    return make


def run(cmd: list[str], cwd: Path | None = None, env: dict[str, str] | None = None,
        check: bool = True) -> subprocess.CompletedProcess[str]:
    """``cmd`` with ``env`` added to this environment; a hang fails the test (after
    ``seconds(600)``, far beyond any build the suite makes) instead of stopping the suite."""
    full_env = dict(os.environ)
    full_env.update(env or {})
    result = subprocess.run(cmd, cwd=cwd, env=full_env, capture_output=True, text=True,
                            timeout=seconds(600))
    if check and result.returncode != 0:
        raise AssertionError(
            f"{cmd} failed ({result.returncode}):\n{result.stdout}\n{result.stderr}"
        )
    return result


@pytest.fixture
def public_tmp() -> Iterator[Path]:
    """A temporary directory other users can enter (pytest's tmp_path is private):
    as root the installer unpacks as clickpkg, and hooks run as their users."""
    with public_folder() as path:
        yield path


@contextlib.contextmanager
def public_folder(parent: str | None = None) -> Iterator[Path]:
    """A new folder every user can enter, in ``parent`` (default: the temporary folder),
    removed with what is in it on leaving."""
    path = Path(tempfile.mkdtemp(prefix="click-build-test.", dir=parent))
    path.chmod(0o755)
    try:
        yield path
    finally:
        shutil.rmtree(path, ignore_errors=True)


@pytest.fixture
def portable() -> Iterator[Path]:
    """A folder with click_build that any user can import (the checkout's venv is root's):
    put it on PYTHONPATH of the system Python."""
    from install_support import portable_cli

    for script in portable_cli():
        yield script.parent / "lib"


#: What the ``cli`` fixture is: ``cli(*args, cwd=, env=, check=True)``.
Cli = Callable[..., subprocess.CompletedProcess[str]]


@pytest.fixture
def cli() -> Cli:
    """Run ``click-build`` as a real process (``python -m click_build``)."""

    def call(*args: str | Path, cwd: Path | None = None, env: dict[str, str] | None = None,
             check: bool = True) -> subprocess.CompletedProcess[str]:
        return run([*CLICK_BUILD, *map(str, args)], cwd=cwd, env=env, check=check)

    return call


def assert_clean_error(result: subprocess.CompletedProcess[str], *fragments: str) -> None:
    """Non-zero exit, only 'click-build: error:' lines on stderr, no traceback."""
    assert result.returncode != 0, result
    assert "Traceback" not in result.stderr, result.stderr
    lines = [line for line in result.stderr.splitlines() if line.strip()]
    errors = [line for line in lines if line.startswith("click-build: error: ")]
    assert errors, result.stderr
    for line in lines:
        assert line.startswith(("click-build: error: ", "click-build: warning: ")), line
    for fragment in fragments:
        assert fragment in result.stderr, (fragment, result.stderr)


def need(tool: str) -> str:
    """Path of an external tool; the suite requires it (scripts/setup installs it)."""
    path = shutil.which(tool)
    if path is None:
        pytest.fail(f"{tool} is not installed; run ./scripts/setup as root")
    return path


@pytest.fixture
def original_click() -> str:
    return need("click")
