"""Scaffold a new app from the cookiecutter templates shipped inside click-build.

The templates live in this repository and ship in the package, so ``click-build
new`` never touches the network and always matches the installed click-build
(the version it pins in the generated ``build-system.requires``).  Every answer
is checked against the manifest rules *before* cookiecutter writes anything, so
a bad answer leaves no half-made project behind; the templates' own
``pre_gen_project`` hooks run the same checks when they are used with plain
``cookiecutter``.  cookiecutter itself is an optional extra, imported lazily.
"""

from __future__ import annotations

import contextlib
import difflib
import json
import keyword
import logging
import os
import re
import shutil
import sys
import tempfile
import unicodedata
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path

from . import _console
from .errors import ConfigError
from .framework_table import FRAMEWORKS as FRAMEWORK_TABLE
from .manifest import validate
from .versions import version_problem

__all__ = [
    "FRAMEWORKS",
    "AnswerError",
    "Template",
    "accepted_answers",
    "answer_problems",
    "answer_warnings",
    "find_template",
    "list_templates",
    "next_steps",
    "package_file",
    "parse_assignments",
    "pre_gen_hook",
    "render",
    "templates_dir",
]

#: Frameworks a new app may target: every one the table marks available, the ``-qml``
#: variants included (each template's own list, first its default, is what it offers).
FRAMEWORKS = tuple(name for name, state in FRAMEWORK_TABLE.items() if state == "available")

# \Z, not $: "$" also matches before a final newline ("app\n" is no app name).
APP_NAME_RE = re.compile(r"^[a-z0-9][a-z0-9-]*\Z")
NAMESPACE_RE = re.compile(r"^[a-z0-9][a-z0-9-]*(\.[a-z0-9][a-z0-9-]*)*\Z")
EMAIL_RE = re.compile(r"^[^\s<>@,;\"$]+@[A-Za-z0-9](?:[A-Za-z0-9-]*[A-Za-z0-9])?"
                      r"(?:\.[A-Za-z0-9](?:[A-Za-z0-9-]*[A-Za-z0-9])?)+\Z")
#: Versions that are both Debian and plain PEP 440 (the python template keeps its
#: version in [project].version, which setuptools checks).
PEP440_RE = re.compile(r"^[0-9]+(\.[0-9]+)*((a|b|rc)[0-9]+)?(\.post[0-9]+)?(\.dev[0-9]+)?\Z")
#: Hooks make file names from the app id NAME_APP_VERSION (``${id}.desktop``,
#: the AppArmor profile): the stores' review refuses ids over 230 characters
#: and warns over 100 (click-reviewers-tools' AA_PROFILE_NAME_MAXLEN/ADVLEN).
MAX_APP_ID = 230
ADVISED_APP_ID = 100

#: The answers every template asks for, in the order they are asked.
ANSWER_KEYS = (
    "title", "app_name", "namespace", "description",
    "maintainer_name", "maintainer_email", "version", "framework",
)

#: What a template folder may hold that is never part of a template.
BYTECODE = shutil.ignore_patterns("__pycache__", "*.pyc", "*.pyo")
#: How much of a refused answer an error message quotes.
SHOWN_CHARS = 60

log = logging.getLogger(__name__)


def _shown(value: object) -> str:
    """An answer as an error message quotes it: repr (so control characters and
    lone surrogates are visible and printable), cut short."""
    text = repr(value)
    if len(text) <= SHOWN_CHARS:
        return text
    return f"{text[:SHOWN_CHARS]}... ({len(str(value))} characters)"


def _config_answers(questions: Iterable[str]) -> dict[str, str]:
    """The answers in the user's cookiecutter config's ``default_context``, as written.

    cookiecutter reads the file with ``yaml.safe_load``, which turns ``version: 1.10``
    into the number 1.1 and ``title: yes`` into True; read again with YAML's
    BaseLoader, every scalar stays the text the user typed.  Call it after
    ``get_user_config()``, which has found the file well-formed.
    """
    import yaml  # type: ignore[import-untyped]

    # cookiecutter's own lookup: $COOKIECUTTER_CONFIG, else ~/.cookiecutterrc if any.
    path = os.environ.get("COOKIECUTTER_CONFIG", os.path.expanduser("~/.cookiecutterrc"))
    if "COOKIECUTTER_CONFIG" not in os.environ and not os.path.exists(path):
        return {}
    try:
        with open(path, encoding="utf-8") as f:
            config = yaml.load(f, Loader=yaml.BaseLoader) or {}
    except (OSError, yaml.YAMLError) as e:
        raise ConfigError(f"{path}: cannot be read: {e}".splitlines()[0]) from None
    context = (config.get("default_context") or {}) if isinstance(config, dict) else {}
    if not isinstance(context, dict):
        raise ConfigError(f"{path}: default_context must be a mapping of question: answer "
                          "(e.g. 'namespace: jane' on an indented line under it)")
    answers: dict[str, str] = {}
    problems = []
    for key in questions:
        if key not in context:
            continue
        value = context[key]
        if isinstance(value, str):
            answers[key] = value
        else:
            problems.append(f"{key}: {_shown(value)} (from {path}) must be text, not a list "
                            "or mapping")
    if problems:
        raise AnswerError(problems)
    return answers


class AnswerError(ConfigError):
    """One or more answers cannot make a valid app (all reported, on one line)."""

    def __init__(self, problems: list[str]) -> None:
        self.problems = problems
        super().__init__("; ".join(problems))


@dataclass(frozen=True)
class Template:
    """One app template: a cookiecutter template folder under ``templates/``."""

    kind: str
    path: Path
    summary: str
    defaults: Mapping[str, object] = field(repr=False, compare=False)

    @property
    def questions(self) -> list[str]:
        """The answer keys a user may set (cookiecutter's private keys excluded)."""
        return [k for k in self.defaults if not k.startswith("_")]


def templates_dir() -> Path:
    """Where the templates are: inside the installed package, else the source tree."""
    here = Path(__file__).resolve().parent
    candidates = [here / "templates", here.parent / "templates"]
    try:
        from importlib.resources import files

        mapped = Path(str(files("click_build.templates")))
        candidates.insert(0, mapped)
    except (ImportError, TypeError, ValueError):
        pass
    for candidate in candidates:
        if (candidate / "qml" / "cookiecutter.json").is_file():
            return candidate
    raise ConfigError(
        "the app templates are missing from this click-build installation; reinstall it"
    )


def _load(path: Path) -> Template:
    try:
        defaults = json.loads((path / "cookiecutter.json").read_text(encoding="utf-8"))
    except (OSError, ValueError) as e:
        raise ConfigError(f"{path / 'cookiecutter.json'}: cannot be read: {e}") from None
    return Template(path.name, path, str(defaults.get("_summary", "")), defaults)


def list_templates() -> list[Template]:
    """Every template shipped, sorted by kind."""
    root = templates_dir()
    return [
        _load(p) for p in sorted(root.iterdir()) if (p / "cookiecutter.json").is_file()
    ]


def find_template(kind: str) -> Template:
    """The template for ``kind``, or a ConfigError that lists the known kinds."""
    templates = {t.kind: t for t in list_templates()}
    if kind in templates:
        return templates[kind]
    close = difflib.get_close_matches(kind, templates, n=1)
    hint = f" (did you mean {close[0]!r}?)" if close else ""
    raise ConfigError(
        f"unknown template {kind!r}{hint}; choose one of: {', '.join(templates)}"
    )


def parse_assignments(items: Iterable[str], template: Template) -> dict[str, str]:
    """``key=value`` strings -> answers, checked against the template's questions."""
    out: dict[str, str] = {}
    for item in items:
        key, sep, value = item.partition("=")
        key = key.strip()
        if not sep or not key:
            raise ConfigError(f"--set {item!r}: expected KEY=VALUE, e.g. --set title='My App'")
        if key not in template.questions:
            close = difflib.get_close_matches(key, template.questions, n=1)
            hint = f"did you mean {close[0]!r}? " if close else ""
            raise ConfigError(
                f"--set {key}: the {template.kind} template has no such question "
                f"({hint}it asks: {', '.join(template.questions)})"
            )
        choices = template.defaults[key]
        if isinstance(choices, list) and value not in accepted_answers(key, choices):
            raise ConfigError(
                f"--set {key}={value}: choose one of: {', '.join(accepted_answers(key, choices))}"
            )
        out[key] = value
    return out


def accepted_answers(key: str, choices: Iterable[object]) -> list[str]:
    """The answers a choice question takes: the template's own choices (what it offers
    at a prompt), and for ``framework`` every available framework as well."""
    offered = [str(c) for c in choices]
    if key == "framework":
        offered += [f for f in FRAMEWORKS if f not in offered]
    return offered


#: Unicode categories a one-line answer must not hold: controls (line breaks, tabs,
#: escapes), line and paragraph separators, lone surrogates.
_BREAKING_CATEGORIES = frozenset({"Cc", "Zl", "Zp", "Cs"})
#: Bidi embeddings, overrides and isolates: they reorder how the rest of a line is
#: shown (a title that reads differently from what it is); plain right-to-left text
#: never needs them.
_BIDI_CONTROLS = frozenset("\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069")


def _line_problem(value: object) -> str | None:
    if not isinstance(value, str) or not value.strip():
        return "must not be empty"
    # Not str.isprintable(): it refuses every format character and space but ' ', and
    # with them Persian's zero-width non-joiner, emoji ZWJ sequences, no-break spaces.
    if not value.isprintable() and any(
        c in _BIDI_CONTROLS or unicodedata.category(c) in _BREAKING_CATEGORIES
        for c in value
    ):
        return "must be one line, without control characters"
    if value != value.strip():
        return "must not start or end with spaces"
    return None


def _is_text(value: object) -> bool:
    if not isinstance(value, str):
        return False
    try:
        value.encode("utf-8")
    except UnicodeEncodeError:  # a lone surrogate, e.g. from undecodable argv bytes
        return False
    return True


def answer_problems(answers: Mapping[str, object]) -> list[str]:
    """Why these answers cannot make a valid app (empty when they can).

    Checks each answer with a message that names it, then the manifest the
    answers make with :func:`click_build.manifest.validate`, so anything the
    builder would refuse later is refused now.
    """
    problems: list[str] = []

    def bad(key: str, what: str) -> None:
        problems.append(f"{key}: {_shown(answers.get(key))} {what}")

    for key in ANSWER_KEYS:
        if key not in answers:
            problems.append(f"{key}: is missing")
        elif not _is_text(answers[key]):
            bad(key, "must be text that can be written as UTF-8")
    if problems:
        return problems
    for key in ("title", "description", "maintainer_name"):
        problem = _line_problem(answers[key])
        if problem:
            bad(key, problem)
    app, namespace = answers["app_name"], answers["namespace"]
    if not isinstance(app, str) or not APP_NAME_RE.match(app):
        bad("app_name", "must be lower-case letters, digits and '-', starting with a "
                        "letter or digit (e.g. 'hello-world')")
    elif answers.get("_kind") == "python":
        module = app.replace("-", "_")
        if not app[0].isalpha():
            bad("app_name", "must start with a letter: the python template makes a Python "
                            "module of the same name")
        elif keyword.iskeyword(module):  # ``from class import ...`` does not even parse
            bad("app_name", f"would make the Python module {module!r}, a Python keyword "
                            "that no import statement can name; choose another name")
        elif module in sys.stdlib_module_names:
            bad("app_name", f"would make the Python module {module!r}, which hides the "
                            "standard library's; choose another name")
    if not isinstance(namespace, str) or not NAMESPACE_RE.match(namespace):
        bad("namespace", "must be your reverse domain or developer name: lower-case "
                         "labels of letters, digits and '-' joined by dots "
                         "(e.g. 'yourname' or 'com.example')")
    if not isinstance(answers["maintainer_name"], str) or re.search(
        r"[<>@]", answers["maintainer_name"]
    ):
        bad("maintainer_name", "must be a plain name, without '<', '>' or '@'")
    email = answers["maintainer_email"]
    if not isinstance(email, str) or not EMAIL_RE.match(email):
        bad("maintainer_email", "must be an e-mail address such as 'you@example.com'")
    if answers["framework"] not in FRAMEWORKS:
        bad("framework", f"must be one of: {', '.join(FRAMEWORKS)}")
    version = answers["version"]
    problem = version_problem(version) if isinstance(version, str) else "must be a string"
    if problem:
        bad("version", f"is not a valid Debian version ({problem}), e.g. '1.0.0'")
    elif answers.get("_kind") == "python" and not PEP440_RE.match(str(version)):
        bad("version", "must also be a PEP 440 version such as '1.0.0' or '1.0rc1': the "
                       "python template keeps it in pyproject.toml, where setuptools reads it")
    if problems:
        return problems

    name = f"{app}.{namespace}"
    manifest = {
        "name": name,
        "version": answers["version"],
        "framework": answers["framework"],
        "maintainer": f"{answers['maintainer_name']} <{email}>",
        "title": answers["title"],
        "hooks": {app: {"desktop": f"{app}.desktop", "apparmor": f"{app}.apparmor"}},
    }
    for error in validate(manifest).errors:
        field_name, _, what = error.partition(": ")
        key = {"name": "app_name/namespace"}.get(field_name, field_name)
        problems.append(f"{key}: {what}")
    if not problems:
        app_id = f"{name}_{app}_{answers['version']}"
        if len(app_id.encode()) > MAX_APP_ID:
            problems.append(
                f"app_name/namespace/version: the app id {_shown(app_id)} is "
                f"{len(app_id.encode())} bytes; keep it to {MAX_APP_ID} or fewer (hooks make "
                "file names from it)"
            )
    return problems


def answer_warnings(answers: Mapping[str, object]) -> list[str]:
    """What valid answers may still cost the app (the stores' review warns)."""
    warnings = []
    app_id = (f"{answers.get('app_name')}.{answers.get('namespace')}_"
              f"{answers.get('app_name')}_{answers.get('version')}")
    if len(app_id) > ADVISED_APP_ID:
        warnings.append(f"the app id {_shown(app_id)} is {len(app_id)} characters; the stores' "
                        f"review warns above {ADVISED_APP_ID} (shorten app_name, namespace or "
                        "version)")
    framework, kind = str(answers.get("framework")), answers.get("_kind")
    if kind != "qml" and framework.endswith("-qml"):  # the review advises it for pure QML
        warnings.append(f"framework {framework!r} is for pure QML apps, and the {kind} "
                        f"template's is not: choose {framework.removesuffix('-qml')!r}")
    return warnings


def pre_gen_hook(context_json: str) -> int:
    """The templates' ``pre_gen_project`` hook: check the answers of a plain
    ``cookiecutter`` run before it writes any file; the exit status for the hook."""
    answers = json.loads(context_json)
    problems = answer_problems(answers)
    # click-build new has checked and warned already.
    warnings = [] if problems or answers.get("_click_build_new") else answer_warnings(answers)
    for line in [f"warning: {w}" for w in warnings] + [f"error: {p}" for p in problems]:
        print(line, file=sys.stderr)
    return 1 if problems else 0


def _quiet_cookiecutter() -> None:
    """cookiecutter logs hook failures with tracebacks; we report errors ourselves."""
    logger = logging.getLogger("cookiecutter")
    logger.handlers[:] = [logging.NullHandler()]
    logger.propagate = False


def _collect_answers(
    raw_context: Mapping[str, object],
    given: Mapping[str, object],
    no_input: bool,
) -> dict[str, object]:
    """The template's variables, with the user's answers taken as plain data.

    cookiecutter's own ``prompt_for_config`` renders every value as a Jinja
    template, the ``extra_context`` and ``default_context`` answers included,
    so ``--set title='{{ 7*7 }}'`` became ``49`` and ``{{ cookiecutter.__class__ }}``
    reached Python objects.  Here only the template's own defaults (such as
    ``app_name``'s ``{{ cookiecutter.title | slugify }}``) are rendered; an
    answer, given up front or typed at a prompt, is used exactly as written.
    """
    from cookiecutter.prompt import (  # type: ignore[import-untyped]
        read_user_choice,
        read_user_variable,
        render_variable,
    )
    from cookiecutter.utils import create_env_with_context  # type: ignore[import-untyped]

    env = create_env_with_context({"cookiecutter": raw_context})
    prompts = raw_context.get("__prompts__") or {}
    visible = [k for k in raw_context if not k.startswith("_")]
    answers: dict[str, object] = {}
    for key, raw in raw_context.items():
        if key == "__prompts__":
            continue
        if key.startswith("_") and not key.startswith("__"):
            answers[key] = raw
            continue
        if key.startswith("__"):  # derived by the template, never asked
            answers[key] = render_variable(env, raw, answers)
            continue
        prefix = f"  [dim][{visible.index(key) + 1}/{len(visible)}][/] "
        if isinstance(raw, list):
            options = [render_variable(env, option, answers) for option in raw]
            if key in given:
                if given[key] not in accepted_answers(key, options):
                    raise ConfigError(f"{key}: {_shown(given[key])}: choose one of: "
                                      f"{', '.join(accepted_answers(key, options))}")
                if given[key] in options:
                    options.remove(given[key])
                options.insert(0, given[key])
            answers[key] = options[0] if no_input else read_user_choice(
                key, options, prompts, prefix)
        else:
            default = given[key] if key in given else render_variable(env, raw, answers)
            answers[key] = default if no_input else read_user_variable(
                key, default, prompts, prefix)
    return answers


@contextlib.contextmanager
def _temporary_files_in(folder: str) -> Iterator[None]:
    """cookiecutter writes each rendered hook, answers included, to a temporary file it
    never removes: one left in /tmp per `new`.  Point them into our scratch folder,
    which goes away with everything in it."""
    before = tempfile.tempdir
    tempfile.tempdir = folder
    try:
        yield
    finally:
        tempfile.tempdir = before


def render(
    kind: str,
    output_dir: str | Path = ".",
    overrides: Mapping[str, str] | None = None,
    no_input: bool = False,
) -> Path:
    """Render template ``kind`` into ``output_dir``; return the new project's path.

    Answers come from ``overrides``, then the user's cookiecutter config
    (``~/.cookiecutterrc`` default_context), then the template's defaults; with
    ``no_input`` nothing is asked.  Every answer is data: it is written as
    given, never evaluated as a template.  Nothing is written unless every
    answer is valid and the project directory does not exist yet.
    """
    template = find_template(kind)
    try:
        from cookiecutter.config import get_user_config  # type: ignore[import-untyped]
        from cookiecutter.exceptions import CookiecutterException  # type: ignore[import-untyped]
        from cookiecutter.generate import generate_context, generate_files  # type: ignore[import-untyped]
        from jinja2 import TemplateError
    except ImportError:
        raise ConfigError(
            "click-build new needs cookiecutter: pip install 'click-build[templates]'"
        ) from None
    if not no_input and not sys.stdin.isatty():
        raise ConfigError(
            "no terminal to ask the questions on: pass --no-input "
            "(and --set KEY=VALUE for the answers you want)"
        )
    _quiet_cookiecutter()
    try:
        get_user_config()  # refuses a missing or malformed config file
        raw_context = generate_context(
            context_file=str(template.path / "cookiecutter.json"))["cookiecutter"]
        given: dict[str, object] = dict(_config_answers(template.questions))
        given.update(overrides or {})
        answers = _collect_answers(raw_context, given, no_input)
    except EOFError:  # Ctrl-D at a question: the user's way out, as Ctrl-C
        raise ConfigError("the input ended before every question was answered; "
                          "nothing was written") from None
    except CookiecutterException as e:
        raise ConfigError(f"{template.kind} template: {e}") from None
    except TemplateError as e:  # a template default that does not render: our bug
        raise ConfigError(f"{template.kind} template: {e}") from None
    except UnicodeError:
        raise ConfigError("the answers must be UTF-8 text") from None
    context = {"cookiecutter": answers}
    problems = answer_problems(answers)
    if problems:
        raise AnswerError(problems)
    for warning in answer_warnings(answers):
        _console.warn(warning)
    output = Path(output_dir)
    project = output / str(answers["app_name"])
    if project.exists() or project.is_symlink():
        raise ConfigError(
            f"{project}: already exists; choose another app_name or output directory (-o)"
        )
    if output.exists() and not output.is_dir():
        raise ConfigError(f"{output}: is not a directory")
    answers["_template"] = str(template.path)
    answers["_output_dir"] = str(output.resolve())
    answers["_repo_dir"] = str(template.path)
    answers["_checkout"] = None
    answers["_click_build_new"] = True  # the hook: answers checked and warned about already
    # pip byte-compiles the installed templates (src/MODULE/__pycache__, hooks/
    # __pycache__): render from a copy without them, so no stale .pyc of another
    # Python ever lands in the new project.
    with tempfile.TemporaryDirectory(prefix="click-build-new.") as scratch:
        clean = Path(scratch) / template.kind
        shutil.copytree(template.path, clean, ignore=BYTECODE)
        try:
            with _temporary_files_in(scratch):
                result = generate_files(
                    repo_dir=str(clean),
                    context=context,
                    overwrite_if_exists=False,
                    output_dir=str(output),
                    accept_hooks=True,
                )
        except CookiecutterException as e:
            raise ConfigError(f"{template.kind} template: {e}") from None
    log.debug("rendered %s into %s", template.path, result)
    return Path(result)


#: What ``python -m build --wheel --no-isolation`` needs installed besides click-build,
#: per template: the rest of the project's ``build-system.requires``, and for cpp what
#: its ``click-build[cmake]`` brings.
BUILD_TOOLS: dict[str, tuple[str, ...]] = {
    "python": ("setuptools>=68",),
    "cpp": ("scikit-build-core>=0.10",),
}


def package_file(project: Path, kind: str) -> str:
    """``NAME_VERSION_ARCH.click``, the file a build of the new project writes into dist/.

    The version is the manifest's, else ``[project].version``; ARCH is ``all``, or this
    machine's architecture for the cpp template (its code is compiled here).
    """
    from .backend.settings import read_pyproject
    from .versions import epochless

    manifest = project / "manifest.json"
    if not manifest.is_file():
        manifest = project / "manifest.json.in"
    data = json.loads(manifest.read_text(encoding="utf-8"))
    version = data.get("version")
    if not version:
        metadata = read_pyproject(project).get("project")
        version = metadata.get("version") if isinstance(metadata, dict) else None
    if kind == "cpp":
        from .hostarch import host_architecture

        arch = host_architecture()
    else:
        arch = "all"
    return f"{data['name']}_{epochless(str(version))}_{arch}.click"


def next_steps(project: Path, kind: str, shown: str) -> list[str]:
    """The commands ``click-build new`` prints: they work as printed, in a venv made as
    docs/templates.md says, and after a version bump (the package is named)."""
    import shlex

    tools = " ".join(shlex.quote(t) for t in ("build", *BUILD_TOOLS.get(kind, ())))
    package = shlex.quote(f"dist/{package_file(project, kind)}")
    install = f"  pip install {tools}"
    return [
        f"  cd {shlex.quote(shown)}",
        install + " " * max(2, 43 - len(install)) + "# once, in your venv",
        "  python -m build --wheel --no-isolation   # the .click lands in dist/",
        f"  click-build review {package}",
        "  click-build install --root ~/click-test --all-users --allow-unauthenticated "
        f"--force-missing-framework {package}",
    ]
