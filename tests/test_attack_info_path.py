"""``info PATH`` (a file inside an installed app) reads the manifest of the version
holding it.  A link planted below that version, at ``.click``, ``.click/info`` or the
manifest, is refused as it is for ``info NAME``: run as root, following it would
print a JSON file of root's that the link leads to.
"""

from __future__ import annotations

import json
import os
import shutil

import pytest
from attack_support import APP, BAIT, World, assert_ok, assert_refused

PLANTS = {
    "manifest": f".click/info/{APP}.manifest",
    "info": ".click/info",
    "admin": ".click",
}


@pytest.mark.parametrize("where", sorted(PLANTS))
def test_info_of_a_path_never_follows_a_planted_link(world: World, where: str) -> None:
    world.installed()
    version = world.root / APP / "1.0"
    inside = version / "app.desktop"
    assert_ok(world.run("info", inside))
    rel = PLANTS[where]
    # the bait is laid out as the real thing would be, so following the link finds it
    bait = world.outside / "planted"
    shutil.copytree(version / ".click", bait / ".click")
    for name in (bait / ".click" / "info").iterdir():
        if name.name.endswith(".manifest"):
            name.write_text(json.dumps({"name": APP, "secret": BAIT}))
    world.give_away(world.outside)
    path = version / rel
    shutil.move(str(path), str(world.root / ".moved-aside"))
    os.symlink(bait / rel, path)
    world.give_away(world.root)
    assert_refused(world.run("info", inside), f"{path} is a symbolic link")
