"""docs/signing.md's Verify commands, run as pasted on this PC (no Ubuntu Touch framework)."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

from conftest import ROOT, Cli
from signing import NO_SYSTEM_KEYS, Keys, sign
from user_env import shell_blocks


def verify_block() -> str:
    text = (ROOT / "docs" / "signing.md").read_text()
    section = text.split("\n## Verify\n", 1)[1].split("\n## ", 1)[0]
    (block,) = shell_blocks(section)
    return block


def run_block(block: str, cwd: Path, home: Path) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, **NO_SYSTEM_KEYS, "HOME": str(home),
           "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}"}
    return subprocess.run(["bash", "-e", "-c", block], cwd=cwd, env=env, capture_output=True,
                          text=True)


def test_verify_commands_work_as_pasted_on_a_pc(cli: Cli, keys: Keys,
                                                unsigned_click: Path,
                                                tmp_path: Path) -> None:
    package = tmp_path / "tea-timer.jane_1.0.0_all.click"
    shutil.copy(unsigned_click, package)
    sign(cli, package, keys.store)
    shutil.copy(keys.store.keyring, tmp_path / "example-store.gpg")
    block = verify_block()
    result = run_block(block, tmp_path, tmp_path)
    assert result.returncode == 0, result.stderr
    listed = cli("list", "--root", tmp_path / "click-test", "--all").stdout
    assert "\t1.0" in listed
    # Without the flag the framework check refuses, as the original click does.
    bare = run_block(block.replace("--force-missing-framework", ""), tmp_path, tmp_path)
    assert bare.returncode != 0 and "not present on system" in bare.stderr
    # And a key nobody trusts is refused even with it.
    sign(cli, package, keys.evil)
    assert run_block(block, tmp_path, tmp_path).returncode != 0
