"""The command line as a whole: dispatch table, lazy start-up, one-line errors."""

from __future__ import annotations

import argparse
import importlib
import json
import subprocess
import sys

import pytest
from conftest import assert_clean_error

from click_build import __version__
from click_build.commands import COMMANDS, MODULES


def test_dispatch_table_matches_what_modules_register() -> None:
    for module in MODULES:
        parser = argparse.ArgumentParser()
        sub = parser.add_subparsers()
        importlib.import_module(f"click_build.commands.{module}").register(sub)
        for name in sub.choices:
            assert COMMANDS.get(name) == module, (name, module)
    assert set(COMMANDS.values()) == set(MODULES)


def test_only_the_running_command_module_is_imported() -> None:
    probe = (
        "import sys; from click_build.cli import main\n"
        "try:\n    main(['build', '--help'])\nexcept SystemExit:\n    pass\n"
        "print(sorted(m for m in sys.modules if m.startswith('click_build.commands.')))"
    )
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True,
                         check=True).stdout
    assert out.strip().splitlines()[-1] == "['click_build.commands.build']"


def test_version_help_and_errors(cli) -> None:
    assert cli("--version").stdout.strip() == f"click-build {__version__}"
    listing = cli("--help").stdout
    for name in ("build", "install", "review", "sign", "new", "merge"):
        assert f"    {name} " in listing
    assert "_cmake" not in listing
    bogus = cli("bogus", check=False)
    assert_clean_error(bogus, "unknown command 'bogus'; the commands are: build, ")
    assert "_cmake" not in bogus.stderr
    assert_clean_error(cli("revew", check=False), "(did you mean 'review'?)")
    assert_clean_error(cli("install", check=False), "install:")


@pytest.mark.parametrize(("args", "line"), [
    (["build", "--strct", "."], "build: unrecognized arguments: --strct; did you mean --strict? "
                                "(see 'click-build build --help')"),
    (["run", "--timout", "5"], "run: unrecognized arguments: --timout; did you mean --timeout?"),
    (["build", "-q", "."], "build: unrecognized arguments: -q; an option of click-build itself "
                           "goes before the command: click-build -q build ..."),
    (["device", "list", "--adb", "-x"], "device list: unrecognized arguments: -x (see "
                                        "'click-build device list --help')"),
    (["info", "--bogus=3", "x"], "info: unrecognized arguments: --bogus=3 (see "),
    (["--bogus"], "unrecognized arguments: --bogus (see 'click-build --help')"),
])
def test_an_unknown_option_is_reported_by_its_command_with_a_guess(
        cli, tmp_path, args: list[str], line: str) -> None:
    result = cli(*args, cwd=tmp_path, check=False)
    assert result.returncode == 2
    assert_clean_error(result, f"click-build: error: {line}")


def test_closed_output_descriptors_give_no_traceback(tmp_path) -> None:
    """Scripts start tools with standard output or error closed (``cmd >&-``): the
    command still runs, says what it must where it can, and exits as it would."""
    from conftest import CLICK_BUILD

    def sh(redirect: str, *args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(["sh", "-c", f'"$@" {redirect}', "sh", *CLICK_BUILD, *args],
                              capture_output=True, text=True, check=False)

    closed_out = sh(">&-", "--version")
    assert (closed_out.returncode, closed_out.stdout, closed_out.stderr) == (0, "", "")
    closed_err = sh("2>&-", "--version")
    assert (closed_err.returncode, closed_err.stdout) == (0, f"click-build {__version__}\n")
    missing = str(tmp_path / "missing.click")
    failed = sh(">&-", "info", missing)
    assert failed.returncode == 1
    assert_clean_error(failed, "missing.click")
    assert sh(">&- 2>&-", "info", missing).returncode == 1


def test_the_process_ends_without_the_interpreters_teardown(tmp_path) -> None:
    """docs/architecture.md, "Start-up": once its output is flushed the command ends with
    os._exit, so an atexit handler never runs, and what it printed is all there."""
    from conftest import BASE_MANIFEST

    tree = tmp_path / "app"
    tree.mkdir()
    (tree / "manifest.json").write_text(json.dumps(dict(BASE_MANIFEST, hooks={})))
    (tree / "main.qml").write_text("import QtQuick 2.7\nItem {}\n")
    probe = ("import atexit, runpy, sys\n"
             "atexit.register(lambda: print('teardown ran'))\n"
             "sys.argv = ['click-build', *sys.argv[1:]]\n"
             "runpy.run_module('click_build', run_name='__main__', alter_sys=True)\n")
    built = subprocess.run([sys.executable, "-c", probe, "build", str(tree), "-o",
                            str(tmp_path)], capture_output=True, text=True, check=False)
    assert built.returncode == 0, built.stderr
    assert built.stdout.endswith("Successfully built package in "
                                 f"'{tmp_path / 'com.example.hello_1.0_all.click'}'.\n")
    assert "teardown ran" not in built.stdout + built.stderr
    failed = subprocess.run([sys.executable, "-c", probe, "info", str(tmp_path / "none.click")],
                            capture_output=True, text=True, check=False)
    assert failed.returncode == 1 and "teardown ran" not in failed.stdout
    assert_clean_error(failed, "none.click")


def test_empty_user_says_what_was_empty(cli, make_app, tmp_path) -> None:
    """--user "$USER" in a shell without USER (a container): one line naming --user and the
    way to name yourself, before anything is written."""
    app = make_app()
    built = tmp_path / "out"
    cli("build", app, "-o", built)
    (package,) = built.glob("*.click")
    root = tmp_path / "db"
    expected = ('click-build: error: --user was given an empty user name (is $USER unset?); '
                '--user "$(id -un)" names you\n')
    for args in (["install", "--root", root, "--user", "", "--allow-unauthenticated",
                  "--force-missing-framework", package],
                 ["list", "--root", root, "--user", ""],
                 ["unregister", "--root", root, "--user", "", "com.example.hello"]):
        result = cli(*args, check=False)
        assert_clean_error(result)
        assert result.stderr == expected, args
    assert not root.exists()
