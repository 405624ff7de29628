"""Kind ``custom``: the project's own ``build`` commands stage the app.

As Clickable's ``custom`` builder: the commands run in the build folder
(``build/click-<arch>/build``) and install the app's files into ``$INSTALL_DIR``, the
staging folder, whose ``manifest.json`` (if they install one) is the app's manifest.
"""

from __future__ import annotations

from ..errors import BuildError, ConfigError
from .context import Staged, Staging, clean, real_dir
from .steps import SETTINGS, run_steps, stage_folder, staged_folder, step_environment

__all__ = ["stage_custom"]


def stage_custom(ctx: Staging) -> Staged:
    commands = ctx.project.settings.build
    if not commands:
        raise ConfigError(f"{SETTINGS}.build: kind 'custom' needs the shell commands that "
                          "build the app and install it into $INSTALL_DIR, such as "
                          "build = [\"./build.sh\"]")
    build = real_dir(ctx.work / "build")
    stage = stage_folder(ctx)
    clean(stage)
    stage.mkdir()
    run_steps(f"{SETTINGS}.build", commands, build, step_environment(ctx, build))
    staged = staged_folder(ctx, stage, None, "installed by the build commands")
    if not staged.entries:
        raise BuildError(f"{SETTINGS}.build: the commands installed nothing into "
                         f"$INSTALL_DIR ({stage}); they must put the app's files there")
    return staged
