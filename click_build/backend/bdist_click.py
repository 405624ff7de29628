"""``python setup.py bdist_click``: the ``python`` kind for projects that keep a setup.py.

Registered as a ``distutils.commands`` entry point, so any setup.py sees it
once click-build is installed.  It runs ``build_py`` through setuptools
itself and hands the result to the same pipeline as the PEP 517 backend;
``[tool.click-build]`` in a pyproject.toml, when there is one, still applies.

What it does not take from ``setup()``: the version (the package's comes from
the manifest, or ``[project].version``) and ``install_requires`` (dependencies
are vendored only from ``[project].dependencies``).  Rather than build a
package that silently differs from what setup.py says, it stops on either.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import NoReturn

from setuptools import Command  # type: ignore[import-untyped, unused-ignore]

__all__ = ["bdist_click"]


class bdist_click(Command):  # type: ignore[misc, unused-ignore]  # noqa: N801
    """Build NAME_VERSION_ARCH.click: data files + the built packages + vendored dependencies."""

    description = "build a .click package (an Ubuntu Touch app) of this project"
    user_options = [
        ("dist-dir=", "d", "directory for the .click [default: dist]"),
        ("architecture=", "a", "'all', a Debian architecture, or 'auto' [default: auto]"),
        ("framework=", "f", "framework for @CLICK_FRAMEWORK@ placeholders"),
        ("manifest=", "m", "the app's manifest [default: manifest.json]"),
    ]

    def initialize_options(self) -> None:
        self.dist_dir: str | None = None
        self.architecture: str | None = None
        self.framework: str | None = None
        self.manifest: str | None = None

    def finalize_options(self) -> None:
        if self.dist_dir is None:
            self.dist_dir = "dist"

    def _refuse(self, lines: list[str]) -> NoReturn:
        from .._console import error_line

        raise SystemExit("\n".join(error_line(line) for line in lines))

    def _check_setup(self) -> None:
        requires = list(self.distribution.install_requires or [])
        if requires:
            self._refuse([
                f"setup.py: install_requires ({', '.join(requires)}): bdist_click does not put "
                "dependencies into the package; list them in pyproject.toml's "
                "[project].dependencies and build with 'python -m build --wheel', which "
                "installs them for the device's Python"])

    def _check_version(self, path: Path) -> None:
        """setup(version=...) must be the version the package got."""
        from ..package import open_click

        wanted = self.distribution.metadata.version
        if not getattr(self.distribution.metadata, "version", None) or wanted == "0.0.0":
            return  # setup() names no version
        with open_click(path) as pkg:
            built = pkg.version
        if built != wanted:
            path.unlink()
            self._refuse([
                f"setup.py: version {wanted!r} differs from the manifest's {built!r}: the "
                "package takes its version from the manifest (or [project].version); make "
                "them the same"])

    def run(self) -> None:
        from dataclasses import replace

        from ..errors import ClickError
        from .pipeline import build_package
        from .pysetup import source_excludes
        from .settings import PrebuiltPython, load_project

        self._check_setup()
        self.run_command("build_py")
        build_py = self.get_finalized_command("build_py")
        overrides: dict[str, object] = {"kind": "python"}
        for key in ("architecture", "framework", "manifest"):
            value = getattr(self, key)
            if value:
                overrides[key] = value
        assert self.dist_dir is not None
        os.makedirs(self.dist_dir, exist_ok=True)
        try:
            project = load_project(os.getcwd(), overrides=overrides, require_pyproject=False)
            project = replace(project, prebuilt=PrebuiltPython(
                Path(build_py.build_lib), tuple(source_excludes(self.distribution))))
            path = build_package(project, self.dist_dir)
        except ClickError as e:
            self._refuse(e.lines())
        self._check_version(Path(path))
        if self.verbose:  # not announce(): its levels differ between setuptools releases
            print(f"built {path}")
