"""The folders click-build itself writes in an app folder (build folders, ``run``'s
private database, ``device run``'s package): never part of the app.  Core (standard
library only): ``click-build build`` of a plain folder leaves them out too."""

from __future__ import annotations

import os

__all__ = ["COMMAND_DIRS", "DEFAULT_BUILD_DIR", "clean", "own_folder_patterns"]

#: The build folder when ``build-dir`` is not set.
DEFAULT_BUILD_DIR = "build/click-{arch}"
#: Where ``run`` (its private database, :func:`click_build.run.private.default_root`)
#: and ``device run`` (its package) write in a project, whatever ``build-dir`` says.
COMMAND_DIRS = ("build/click-run", "build/click-device")


def own_folder_patterns(root: str | os.PathLike[str], build_dir: str = "",
                        outdir: str | os.PathLike[str] | None = None) -> list[str]:
    """``build_dir_patterns`` whatever the kind, for the app folder ``root``.

    ``build_dir`` is the setting (unset: ``build/click-*``); the folders of
    ``run`` and ``device run`` are left out whatever it says.  ``click-build
    build`` of a folder that is not a project leaves these out as well: they
    are click-build's own, not the app's.
    """
    import fnmatch
    import glob

    template = build_dir or DEFAULT_BUILD_DIR
    rel = template.replace("{arch}", "*").strip("/")
    ours = [] if os.path.isabs(template) or rel.startswith("..") else [rel]
    ours += [d for d in COMMAND_DIRS if not any(fnmatch.fnmatchcase(d, p) for p in ours)]
    if outdir is not None:
        top, out = os.path.realpath(root), os.path.realpath(outdir)
        if out.startswith(top.rstrip(os.sep) + os.sep):
            ours.append(glob.escape(os.path.relpath(out, top).replace(os.sep, "/")))
    patterns = ["/" + p for p in ours]
    parents = sorted({p.rsplit("/", n)[0] for p in ours for n in range(1, p.count("/") + 1)},
                     key=lambda p: -p.count("/"))  # the deepest first
    for parent in parents:
        folder = os.path.join(root, parent)
        if os.path.islink(folder) or not os.path.isdir(folder) or any(c in parent for c in "*?["):
            continue
        children = [f"{parent}/{name}" for name in os.listdir(folder)]
        if all(any(fnmatch.fnmatchcase(c, p.lstrip("/")) for p in patterns)
               for c in children):
            patterns.append("/" + glob.escape(parent))  # nothing but our folders in there
    return patterns


def clean(path: str | os.PathLike[str]) -> None:
    """Remove what click-build made at ``path`` (a folder with all it holds): a link is
    unlinked, never followed; nothing there is no error."""
    import shutil
    import stat

    try:
        st = os.lstat(path)
    except FileNotFoundError:
        return
    if stat.S_ISDIR(st.st_mode):
        shutil.rmtree(path)
    else:
        os.unlink(path)
