"""``python setup.py bdist_click``: the ``python`` kind for projects that keep a setup.py.

Registered as a ``distutils.commands`` entry point, so any setup.py sees it
once click-build is installed.  It runs ``build_py`` through setuptools
itself and hands the result to the same pipeline as the PEP 517 backend;
``[tool.click-build]`` in a pyproject.toml, when there is one, still applies.
"""

from __future__ import annotations

import os
from pathlib import Path

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

    def run(self) -> None:
        from ..errors import ClickError
        from .pipeline import build_package
        from .pysetup import source_excludes

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
            path = build_package(
                os.getcwd(), self.dist_dir, overrides=overrides,
                python_build_lib=Path(build_py.build_lib),
                python_sources=tuple(source_excludes(self.distribution)),
                require_pyproject=False,
            )
        except ClickError as e:
            raise SystemExit("\n".join(f"click-build: error: {line}" for line in e.lines())) from None
        self.announce(f"built {path}", level=2)
