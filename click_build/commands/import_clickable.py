"""``import-clickable``: Clickable's project config as click-build settings in pyproject.toml."""

from __future__ import annotations

import argparse
import os

__all__ = ["register"]

_EPILOG = """\
Each key becomes a setting, or is listed with the reason it is left out (the packages
Clickable installs into its container, say, which click-build takes from this machine).
Nothing in the file runs: its prebuild, build and postbuild commands become settings
that a build runs, as CMake runs CMakeLists.txt. Settings pyproject.toml already has
are kept; one that differs stops the import unless --force replaces it.

examples:
  click-build import-clickable                 the project in this folder
  click-build import-clickable ~/src/myapp --dry-run
  python -m build --wheel --no-isolation       then build it (or: click-build build .)

reading clickable.yaml needs PyYAML (pip install 'click-build[clickable]'); a
clickable.json needs nothing more. docs/clickable.md has the key-by-key table.
"""


def register(subparsers: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    p = subparsers.add_parser(
        "import-clickable", help="turn a Clickable project's clickable.yaml into settings",
        description=(
            "Read PROJECT-DIR's clickable.yaml (or clickable.yml, clickable.json:\n"
            "Clickable's project config) and write the equivalent [build-system] and\n"
            "[tool.click-build] tables into PROJECT-DIR/pyproject.toml."),
        epilog=_EPILOG, formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument("directory", metavar="PROJECT-DIR", nargs="?", default=".",
                   help="the project folder (default: the current folder)")
    p.add_argument("-c", "--config", metavar="FILE",
                   help="the config file in PROJECT-DIR to read (default: the first of "
                        "clickable.yaml, clickable.yml, clickable.json)")
    p.add_argument("--force", action="store_true",
                   help="replace settings pyproject.toml already has with a different value")
    p.add_argument("-n", "--dry-run", action="store_true",
                   help="print the pyproject.toml it would write; write nothing")
    p.set_defaults(func=run_import)


def run_import(args: argparse.Namespace) -> int:
    from pathlib import Path

    from .. import _console
    from ..backend.clickable_config import convert, find_config, read_config
    from ..backend.pyproject_edit import plan_edit, write_atomically
    from ..errors import ConfigError

    folder = Path(args.directory)
    if not folder.is_dir():
        raise ConfigError(f"{args.directory}: not a folder")
    if args.config and (os.sep in args.config or args.config in (".", "..")):
        raise ConfigError(f"--config {args.config}: name a file in {args.directory}")
    path = find_config(folder, args.config)
    imported = convert(read_config(path, folder), folder, path.name)
    requires = "click-build[cmake]" if imported.needs_cmake else "click-build"
    target = folder / "pyproject.toml"
    edit = plan_edit(target, imported.table, requires, args.force)
    if args.dry_run:
        print(edit.text, end="")
        return 0
    write_atomically(target, edit.text)
    rows = [(f"{_safe(n.key)}: {n.shown}", n) for n in [*imported.carried, *imported.left_out]]
    width = min(max((len(r) for r, _ in rows), default=0), 40)
    what = "wrote" if edit.created else "updated"
    _console.info(f"Read {path.name}; {what} {target}:")
    for row, note in rows[:len(imported.carried)]:
        _console.info(f"  {row:<{width}}  -> {note.result}")
    if edit.kept:
        _console.info(f"  (already there: {', '.join(edit.kept)})")
    if edit.replaced:
        _console.info(f"  (replaced, --force: {', '.join(edit.replaced)})")
    if imported.left_out:
        _console.info("Not carried over:")
        for row, note in rows[len(imported.carried):]:
            _console.info(f"  {row:<{width}}  -- {note.result}")
    _console.info("Build it with: python -m build --wheel (or click-build build "
                  f"{args.directory})")
    return 0


def _safe(key: str) -> str:
    """A key of the file as a terminal may show it: invisible characters escaped."""
    import json

    text = key if key.isprintable() else json.dumps(key)[1:-1]
    return text if len(text) <= 60 else text[:57] + "..."
