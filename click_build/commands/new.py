"""``new``: start an app from one of the templates shipped with click-build."""

from __future__ import annotations

import argparse
import os

__all__ = ["register"]

_EPILOG = """\
templates (KIND):
  qml      QML app with Lomiri Components (pure QML, nothing to compile)
  html5    HTML5/JavaScript app run by the web app container
  python   QML front end with a Python back end (PyOtherSide), built with setuptools
  cpp      C++/Qt Quick app built by CMake

questions (asked on a terminal, or given with --set KEY=VALUE):
  title             the name under the icon, one line
  app_name          short name, lower-case letters, digits and '-' (default: from the title)
  namespace         your developer name or reverse domain, e.g. jane or com.example;
                    the package name is APP_NAME.NAMESPACE
  description       one line about the app
  maintainer_name   your name
  maintainer_email  your e-mail address
  version           a Debian version such as 1.0.0 (python: also PEP 440)
  framework         the Ubuntu Touch release: ubuntu-touch-24.04-1.x (default) or
                    ubuntu-sdk-20.04; for qml their smaller -qml variants (its default
                    ubuntu-touch-24.04-1.x-qml); any available framework is taken
Every answer is checked before anything is written, and is used as written: template
syntax such as {{ }} in an answer is never evaluated.

examples:
  click-build new qml                      ask the questions, make ./APP_NAME
  click-build new html5 --no-input --set title='Notes' --set namespace=jane
  click-build new --list                   show the templates

then, in the new folder (its README.md has the details for its template):
  pip install build                        once (python: also 'setuptools>=68', cpp: scikit-build-core)
  python -m build --wheel --no-isolation   the package lands in dist/
  click-build review dist/*.click
  click-build install --root ~/click-test --all-users --allow-unauthenticated \\
      --force-missing-framework dist/APP_NAME.NAMESPACE_VERSION_ARCH.click
(ARCH is all, or this machine's architecture for cpp, as in amd64.)
"""


def register(subparsers: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    p = subparsers.add_parser(
        "new", help="start a new app from a template",
        description=(
            "Create a new Ubuntu Touch app project from a template shipped with\n"
            "click-build (no network needed). The project builds into a .click with\n"
            "'python -m build --wheel' and installs with 'click-build install'."
        ),
        epilog=_EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument(
        "kind", metavar="KIND", nargs="?",
        help="the template: qml, html5, python or cpp (see --list)",
    )
    p.add_argument("--list", action="store_true", help="list the templates and exit")
    p.add_argument(
        "--no-input", action="store_true",
        help="ask nothing: use the defaults and the --set answers",
    )
    p.add_argument(
        "-o", "--output-dir", metavar="DIR", default=".",
        help="create the project folder inside DIR (default: the current directory)",
    )
    p.add_argument(
        "--set", metavar="KEY=VALUE", action="append", default=[], dest="answers",
        help="answer one question up front (repeatable), e.g. --set title='My App'",
    )
    p.set_defaults(func=run_new)


def run_new(args: argparse.Namespace) -> int:
    from .. import _console
    from ..errors import ConfigError
    from ..new import find_template, list_templates, next_steps, parse_assignments, render

    if args.list:
        templates = list_templates()
        width = max(len(t.kind) for t in templates)
        for template in templates:
            print(f"{template.kind:<{width}}  {template.summary}")
        return 0
    if not args.kind:
        raise ConfigError("new: name a template (KIND), or use --list to see them")
    template = find_template(args.kind)
    answers = parse_assignments(args.answers, template)
    project = render(template.kind, args.output_dir, answers, no_input=args.no_input)
    shown = os.path.relpath(project)
    if shown.startswith(".."):
        shown = str(project)
    _console.info(f"Created the {template.kind} app in '{shown}'. Next:")
    for line in next_steps(project, template.kind, shown):
        _console.info(line)
    _console.info("Its README.md says how to run, test and translate it.")
    return 0
