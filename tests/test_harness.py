"""The suite's own machinery: limits scaled for a busy machine, waiting for facts, a
leaked process or file failing the test that leaked it, helpers shared without test
modules importing each other."""

from __future__ import annotations

import ast
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import deadlines
import pytest
from conftest import ROOT, process_ended
from deadlines import seconds, wait_for


def test_limits_scale_with_the_slowdown() -> None:
    assert deadlines.SLOWDOWN >= 1
    assert seconds(30) == 30 * deadlines.SLOWDOWN
    unset = {k: v for k, v in os.environ.items() if k != deadlines.VARIABLE}
    for env, factor in ((unset, "5.0"), ({**unset, deadlines.VARIABLE: "12"}, "12.0")):
        probe = subprocess.run([sys.executable, "-c", "import deadlines; print(deadlines.SLOWDOWN)"],
                               capture_output=True, text=True, check=True,
                               env={**env, "PYTHONPATH": str(ROOT / "tests")})
        assert probe.stdout == f"{factor}\n"


@pytest.mark.parametrize("raw", ["fast", "0.5", "0", "-3", "nan", "1e9"])
def test_a_slowdown_that_is_not_a_factor_is_refused(raw: str) -> None:
    probe = subprocess.run([sys.executable, "-c", "import deadlines"], capture_output=True,
                           text=True, env={**os.environ, deadlines.VARIABLE: raw,
                                           "PYTHONPATH": str(ROOT / "tests")})
    assert probe.returncode != 0
    assert f"CLICK_BUILD_TEST_SLOWDOWN={raw!r}: give how many times slower" in probe.stderr


def test_wait_for_returns_the_fact_once_it_holds() -> None:
    start = time.monotonic()
    assert wait_for(lambda: time.monotonic() - start > 0.05 and "held", "a moment") == "held"


def test_wait_for_says_what_never_came(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(deadlines, "SLOWDOWN", 1.0)
    start = time.monotonic()
    with pytest.raises(AssertionError, match=r"waited 0 s for the moon to turn blue"):
        wait_for(lambda: False, "the moon to turn blue", within=0.2)
    assert time.monotonic() - start >= 0.2


LEAKY = '''
import subprocess, sys

class Holder:
    def __init__(self):
        self.me = self  # a reference cycle: only the garbage collector frees it
        self.proc = subprocess.Popen([sys.executable, "-c", "pass"], stdout=subprocess.PIPE)

def test_leaks():
    Holder()

def test_innocent():
    pass
'''


def test_a_leak_fails_the_test_that_leaked_it(tmp_path: Path) -> None:
    """A Popen left unwaited with its pipe open, held in a reference cycle: the
    ResourceWarning fails that test's teardown, not the next test."""
    (tmp_path / "test_leak.py").write_text(LEAKY)
    (tmp_path / "conftest.py").write_text(  # the suite's conftest, under another name
        f"import importlib.util, sys\nsys.path.insert(0, {str(ROOT / 'tests')!r})\n"
        f"spec = importlib.util.spec_from_file_location('suite', {str(ROOT / 'tests/conftest.py')!r})\n"
        "suite = importlib.util.module_from_spec(spec)\n"
        "spec.loader.exec_module(suite)\n"
        "_leaks_fail_the_test_that_leaked = suite._leaks_fail_the_test_that_leaked\n"
        "pytest_collection_finish = suite.pytest_collection_finish\n")
    result = subprocess.run(
        [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-p", "no:xdist",
         "-W", "error", "-rA", "-q", "test_leak.py"],
        cwd=tmp_path, capture_output=True, text=True, timeout=seconds(60))
    assert "ERROR test_leak.py::test_leaks - " in result.stdout, result.stdout
    assert "ResourceWarning" in result.stdout, result.stdout
    assert "PASSED test_leak.py::test_innocent" in result.stdout, result.stdout
    assert "ERROR test_leak.py::test_innocent" not in result.stdout, result.stdout
    assert "2 passed, 1 error" in result.stdout, result.stdout  # test_leaks: its teardown


def test_test_modules_share_helpers_through_support_modules() -> None:
    """A test module never imports another (a helper taken from one drags in its
    module-level work and ties the two together): shared helpers and fixtures live in
    conftest.py and the support modules beside it."""
    found = []
    for path in sorted((ROOT / "tests").glob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            names = ([alias.name for alias in node.names] if isinstance(node, ast.Import)
                     else [node.module or ""] if isinstance(node, ast.ImportFrom) else [])
            found += [f"{path.name}:{node.lineno}: {name}" for name in names
                      if name.split(".")[0].startswith("test_")]
    assert found == []


#: A Clickable container's shell, and a caller's own build settings.
CALLERS_SHELL = {
    "ARCH": "armhf", "ARCH_TRIPLET": "arm-linux-gnueabihf",
    "CLICK_FRAMEWORK": "ubuntu-sdk-16.04", "SDK_FRAMEWORK": "ubuntu-sdk-16.04",
    "BUILD_DIR": "/nonexistent/build", "INSTALL_DIR": "/nonexistent/install",
    "CLICK_LD_LIBRARY_PATH": "/nonexistent/install/lib/arm-linux-gnueabihf",
    "SOURCE_DATE_EPOCH": "86400", "CLICK_BUILD_REVIEW": "off", "CLICK_BUILD_DEFLATE": "zlib",
}


@pytest.mark.slow
def test_the_callers_build_variables_do_not_steer_the_suite(tmp_path: Path) -> None:
    """The README's test command in a shell with Clickable's variables exported: conftest
    clears them for the suite, so a build test still gets the package of a clean shell
    (architecture all, the default framework's AppArmor policy).  The suite's own knobs
    are read, then cleared too: click-build warned of CLICK_BUILD_TEST_SLOWDOWN as an
    unknown setting, failing every test that holds its stderr to one line."""
    from conftest import steering

    assert all(steering(name) for name in CALLERS_SHELL)
    tests = ["tests/test_backend.py::test_qml_example_builds_and_verifies",
             "tests/test_backend.py::test_sdist_is_pep625_and_rebuilds_identical_click",
             "tests/test_backend_settings.py::test_other_click_build_variables_are_not_called_typos",
             "tests/test_harness.py::test_the_slowdown_is_read_before_it_is_cleared",
             "tests/test_harness.py::test_python_keeps_its_bytecode_caches"]
    result = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-n", "0", "-p", "no:cacheprovider",
         f"--basetemp={tmp_path / 'nested'}", *tests],
        cwd=ROOT, env={**os.environ, **CALLERS_SHELL, "CLICK_BUILD_TEST_SLOWDOWN": "7",
                       "PYTHONDONTWRITEBYTECODE": "1"},
        capture_output=True, text=True, timeout=seconds(300))
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-3000:]
    assert "5 passed" in result.stdout


def test_the_slowdown_is_read_before_it_is_cleared() -> None:
    """Run on its own by the test above, with CLICK_BUILD_TEST_SLOWDOWN=7."""
    from conftest import KNOBS
    from deadlines import SLOWDOWN

    assert "CLICK_BUILD_TEST_SLOWDOWN" not in os.environ
    assert SLOWDOWN == float(KNOBS.get("CLICK_BUILD_TEST_SLOWDOWN", "5"))


def test_python_keeps_its_bytecode_caches() -> None:
    """Run on its own by the test above, with PYTHONDONTWRITEBYTECODE=1: the suite and the
    Python processes it starts still write bytecode caches (conftest says why)."""
    assert not sys.dont_write_bytecode
    child = subprocess.run([sys.executable, "-c", "import sys; print(sys.dont_write_bytecode)"],
                           capture_output=True, text=True, check=True, timeout=seconds(60))
    assert child.stdout == "False\n"


def test_commands_get_ctrl_c_even_when_the_suite_was_started_with_it_ignored(
        tmp_path: Path) -> None:
    """A suite started in the background (SIGINT ignored, inherited by every command)
    still gives its commands Ctrl-C's default, or a test that presses it hangs."""
    (tmp_path / "test_child.py").write_text(
        "import subprocess, sys\n"
        "def test_child():\n"
        "    out = subprocess.run([sys.executable, '-c', 'import signal; "
        "print(signal.getsignal(signal.SIGINT))'], capture_output=True, text=True).stdout\n"
        "    assert 'default_int_handler' in out, out\n")
    (tmp_path / "conftest.py").write_text(  # the suite's conftest, under another name
        f"import importlib.util, sys\nsys.path.insert(0, {str(ROOT / 'tests')!r})\n"
        f"spec = importlib.util.spec_from_file_location('suite', {str(ROOT / 'tests/conftest.py')!r})\n"
        "suite = importlib.util.module_from_spec(spec)\n"
        "spec.loader.exec_module(suite)\n"
        "pytest_configure = suite.pytest_configure\n")
    command = [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-p", "no:xdist",
               "-q", "test_child.py"]
    ignoring = subprocess.run(  # as `cmd &` in a script starts it
        command, cwd=tmp_path, capture_output=True, text=True, timeout=seconds(60),
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_IGN))
    assert "1 passed" in ignoring.stdout, ignoring.stdout
    (tmp_path / "conftest.py").write_text("")  # and without the suite's conftest it fails
    bare = subprocess.run(command, cwd=tmp_path, capture_output=True, text=True,
                          timeout=seconds(60),
                          preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_IGN))
    assert "1 failed" in bare.stdout, bare.stdout


@pytest.mark.parametrize("teardown", [True, False], ids=["ended", "killed"])
def test_the_x_server_ends_with_the_test_process(teardown: bool) -> None:
    """A private Xvfb ends with the test process that started it, whether it ended (its
    teardown stops it) or was killed outright (no teardown: the X server is told, as
    the worker running it dies; it stayed before)."""
    code = ("import sys, time\nfrom xdisplay import private_display\n"
            "with private_display() as display:\n"
            "    print(display, flush=True)\n    sys.stdin.readline()\n")
    test = subprocess.Popen([sys.executable, "-c", code], cwd=ROOT / "tests", text=True,
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE)
    with test:
        assert test.stdout is not None and test.stdin is not None
        assert test.stdout.readline().startswith(":")
        tid = test.pid
        with open(f"/proc/{tid}/task/{tid}/children", encoding="ascii") as f:
            [server] = [int(pid) for pid in f.read().split()]
        with open(f"/proc/{server}/cmdline", "rb") as f:
            assert os.path.basename(f.read().split(b"\0")[0]) == b"Xvfb"
        if teardown:
            test.stdin.write("\n")
            test.stdin.flush()
        else:
            test.kill()
        test.wait(seconds(60))
    wait_for(lambda: process_ended(server), "the X server to end", within=30)


def test_the_gpg_agents_of_a_killed_run_are_stopped_by_the_next() -> None:
    """The signing keys' folders name the test process that made them; the next run
    stops the agents of a process that is gone and removes its folders, and leaves a
    running one's alone."""
    from conftest import need
    from signing import KEYS_PREFIX, kill_agent, sweep_dead_runs

    need("gpg-connect-agent")
    gone = subprocess.Popen(["true"])
    gone.wait()
    top = Path(tempfile.mkdtemp(prefix="cbh-", dir="/tmp"))  # short: the agent's socket
    home = top / f"{KEYS_PREFIX}{gone.pid}-x" / "store"
    try:
        home.mkdir(parents=True, mode=0o700)
        running = top / f"{KEYS_PREFIX}{os.getpid()}-y"
        running.mkdir()
        said = subprocess.run(["gpg-connect-agent", "--homedir", str(home), "getinfo pid", "/bye"],
                              capture_output=True, text=True, check=True, timeout=seconds(60))
        [agent] = [int(line[2:]) for line in said.stdout.splitlines() if line.startswith("D ")]
        assert not process_ended(agent)
        sweep_dead_runs(top)
        assert sorted(p.name for p in top.iterdir()) == [running.name]
        wait_for(lambda: process_ended(agent), "the agent to end", within=30)
    finally:
        if home.is_dir():
            kill_agent(home)
        shutil.rmtree(top)
