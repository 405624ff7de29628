"""`click-build new` and the app templates: rendering, answer checks, and the
generated files read by the tools that consume them (the original click,
desktop-file-validate, gettext, qmltestrunner with Lomiri Components, node)."""

from __future__ import annotations

import json
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest
from conftest import CLICK_BUILD, ROOT, assert_clean_error, need, run
from templates_support import (
    ANSWER_SETS,
    DEFAULT_FRAMEWORKS,
    KINDS,
    UNUSUAL,
    answer_on_terminal,
    answers_for,
    new,
    project_of,
    run_qml_tests,
    source_manifest,
    source_version,
)

from click_build import __version__
from click_build.new import answer_problems, list_templates
from click_build.template_jinja import apparmor_policy_version

#: Files of the project that are not part of the app (left out of the package).
NOT_IN_PACKAGE = ["pyproject.toml", "README.md", "po", "tests"]


@pytest.fixture(scope="module")
def rendered(tmp_path_factory: pytest.TempPathFactory) -> dict[tuple[str, str], Path]:
    """Every template rendered once with each answer set (shared by the read-only tests)."""
    projects = {}
    for kind in KINDS:
        for label in ANSWER_SETS:
            out = tmp_path_factory.mktemp(f"{kind}-{label}")
            new(out, kind, answers_for(kind, label))
            projects[kind, label] = project_of(out)
    return projects


CASES = [(kind, label) for kind in KINDS for label in ANSWER_SETS]


def test_templates_are_the_four_kinds() -> None:
    assert set(KINDS) <= {"qml", "html5", "python", "cpp"}
    assert {"qml", "html5"} <= set(KINDS)


def test_list_names_every_template(cli) -> None:
    out = cli("new", "--list").stdout
    for template in list_templates():
        assert f"{template.kind}  " in out or out.startswith(template.kind)
        assert template.summary and template.summary in out


@pytest.mark.slow  # renders each template twice, by cookiecutter
@pytest.mark.parametrize(("kind", "label"), CASES)
def test_manifest_and_hook_files_follow_the_answers(
    rendered: dict[tuple[str, str], Path], kind: str, label: str
) -> None:
    project = rendered[kind, label]
    answers = {**json.loads((ROOT / "templates" / kind / "cookiecutter.json").read_text()),
               **answers_for(kind, label)}
    app = project.name
    if label == "defaults":
        assert app == "hello-world"
    else:
        assert app == answers["app_name"]
    manifest = source_manifest(project)
    framework = answers["framework"] if label == "unusual" else DEFAULT_FRAMEWORKS[kind]
    assert manifest["name"] == f"{app}.{answers['namespace']}"
    assert manifest["title"] == answers["title"]
    assert source_version(project) == answers["version"]
    if kind == "python":  # one place for the version: pyproject.toml
        assert "version" not in manifest
    assert manifest["framework"] == framework
    assert manifest["maintainer"] == f"{answers['maintainer_name']} <{answers['maintainer_email']}>"
    if kind == "cpp":  # CMake adds the hooks and the architecture
        assert "hooks" not in manifest and manifest["architecture"] == "@CLICK_ARCH@"
        cmake = (project / "CMakeLists.txt").read_text(encoding="utf-8")
        assert f"DESKTOP {app}.desktop\n  APPARMOR {app}.apparmor)" in cmake
    else:
        assert manifest["hooks"] == {app: {"desktop": f"{app}.desktop",
                                           "apparmor": f"{app}.apparmor"}}
    for target in (f"{app}.desktop", f"{app}.apparmor", manifest["icon"]):
        assert (project / str(target)).is_file()
    # Readable UTF-8 JSON, not \u escapes (our tojson), and valid by our rules.
    text = next(project.glob("manifest.json*")).read_text(encoding="utf-8")
    assert "\\u00e9" not in text and "\\u003c" not in text
    assert not answer_problems({**answers, "app_name": app, "framework": framework,
                                "version": source_version(project)})
    apparmor = json.loads((project / f"{app}.apparmor").read_text())
    assert apparmor["policy_version"] == apparmor_policy_version(framework)
    assert apparmor["policy_version"] == {"ubuntu-touch-24.04-1.x": 2404.1,
                                          "ubuntu-sdk-20.04": 20.04}[framework.removesuffix("-qml")]
    assert isinstance(apparmor["policy_groups"], list)


@pytest.mark.parametrize(("kind", "label"), CASES)
def test_project_files(rendered: dict[tuple[str, str], Path], kind: str, label: str) -> None:
    project = rendered[kind, label]
    pyproject = tomllib.loads((project / "pyproject.toml").read_text())
    requires = pyproject["build-system"]["requires"]
    assert requires[0] == {"cpp": "click-build[cmake]"}.get(kind, "click-build") + f"=={__version__}"
    assert pyproject["build-system"]["build-backend"] == "click_build.backend"
    expected_kind = {"cpp": "cmake"}.get(kind, kind)
    assert pyproject["tool"]["click-build"]["kind"] == expected_kind
    readme = (project / "README.md").read_text(encoding="utf-8")
    title = answers_for(kind, label).get("title", "Hello World")
    assert readme.startswith(f"# {title}\n")
    assert "python -m build" in readme and "click-build install" in readme
    gitignore = (project / ".gitignore").read_text()
    assert "*.click" in gitignore and "/dist/" in gitignore
    (pot,) = (project / "po").glob("*.pot")
    assert pot.name == f"{source_manifest(project)['name']}.pot"
    assert list((project / "tests").iterdir()), "every template ships a test"
    desktop = (project / f"{project.name}.desktop").read_text(encoding="utf-8")
    assert "X-Lomiri-Touch=true\n" in desktop and "Type=Application\n" in desktop
    if kind == "html5":
        assert "Exec=webapp-container www/index.html\n" in desktop
        apparmor = json.loads((project / f"{project.name}.apparmor").read_text())
        # Local content: the default template and the web engine, nothing more.
        assert "template" not in apparmor and apparmor["policy_groups"] == ["webview"]
    if kind == "python":
        module = project.name.replace("-", "_")
        assert pyproject["project"]["name"] == project.name
        assert pyproject["tool"]["setuptools"]["packages"] == [module]
        assert (project / "src" / module / "__init__.py").is_file()
        assert "setuptools>=68" in requires
        main = (project / "qml/Main.qml").read_text(encoding="utf-8")
        assert "import io.thp.pyotherside" in main and f'importModule("{module}"' in main
    if kind in ("qml", "python"):
        assert "Exec=qmlscene %U qml/Main.qml\n" in desktop
    if kind in ("qml", "python", "cpp"):
        main = (project / "qml/Main.qml").read_text(encoding="utf-8")
        assert "import Lomiri.Components 1.3" in main and "MainView {" in main
        assert f'applicationName: "{source_manifest(project)["name"]}"' in main
    if kind == "cpp":
        assert f"Exec={project.name}\n" in desktop


@pytest.mark.parametrize(("kind", "label"), CASES)
def test_desktop_file_validates(rendered: dict[tuple[str, str], Path], kind: str,
                                label: str) -> None:
    """desktop-file-validate accepts it, except Click's relative Icon convention
    (the desktop hook rewrites that path when the app is installed)."""
    project = rendered[kind, label]
    result = run([need("desktop-file-validate"), str(project / f"{project.name}.desktop")],
                 check=False)
    lines = [line for line in result.stdout.splitlines() if line.strip()]
    assert all('for key "Icon"' in line and "relative path" in line for line in lines), lines


@pytest.mark.parametrize(("kind", "label"), CASES)
def test_translation_template_makes_a_catalog(
    rendered: dict[tuple[str, str], Path], kind: str, label: str, tmp_path: Path
) -> None:
    """The po/ skeleton works with gettext: msginit makes a language, msgfmt compiles it."""
    project = rendered[kind, label]
    (pot,) = (project / "po").glob("*.pot")
    po = tmp_path / "de.po"
    run([need("msginit"), "--no-translator", "-i", str(pot), "-o", str(po), "-l", "de_DE.UTF-8"])
    run([need("msgfmt"), "--check", str(po), "-o", str(tmp_path / "de.mo")])
    text = po.read_text(encoding="utf-8")
    greeting = {"python": "Hello from Python {version}!",
                "cpp": "Hello from C++!"}.get(kind, "Hello World!")
    assert f'msgid "{greeting}"' in text
    if label == "unusual":
        assert json.dumps(UNUSUAL["title"], ensure_ascii=False) in text


@pytest.mark.oracle
@pytest.mark.parametrize(("kind", "label"), [c for c in CASES if c[0] in ("qml", "html5")])
def test_core_build_passes_the_original_click_verify(
    cli, original_click: str, rendered: dict[tuple[str, str], Path], kind: str, label: str,
    tmp_path: Path,
) -> None:
    """`click-build build` on the tree (no backend involved) gives a package both
    verifiers accept."""
    project = rendered[kind, label]
    ignores = [a for pattern in NOT_IN_PACKAGE for a in ("-I", pattern)]
    result = cli("build", project, "-o", tmp_path, *ignores)
    assert "Successfully built package" in result.stdout
    (click,) = tmp_path.glob("*.click")
    run([original_click, "verify", "--force-missing-framework", "--allow-unauthenticated",
         str(click)])
    cli("verify", "--force-missing-framework", "--allow-unauthenticated", click)
    contents = cli("contents", click).stdout
    assert f"./{project.name}.desktop" in contents and "./assets/logo.svg" in contents
    assert "pyproject.toml" not in contents and "./tests/" not in contents


@pytest.mark.slow
@pytest.mark.parametrize(("kind", "label"), [c for c in CASES if c[0] in ("qml", "python")])
def test_qml_app_runs_its_own_tests_with_lomiri_components(
    rendered: dict[tuple[str, str], Path], kind: str, label: str
) -> None:
    """The generated QML test loads Main.qml with the real Lomiri Components (and,
    for python, the real PyOtherSide calling src/) and drives the page."""
    result = run_qml_tests(rendered[kind, label])
    test = {"qml": "test_greeting_counts_taps", "python": "test_python_answers"}[kind]
    assert f"PASS   : qmltestrunner::Main::{test}()" in result.stdout
    assert "Totals: 3 passed, 0 failed" in result.stdout


@pytest.mark.parametrize("label", list(ANSWER_SETS))
def test_python_app_runs_its_own_pytest(rendered: dict[tuple[str, str], Path],
                                        label: str) -> None:
    project = rendered["python", label]
    result = run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider"], cwd=project)
    assert "3 passed" in result.stdout  # the greeting test came with translations


@pytest.mark.parametrize("label", list(ANSWER_SETS))
def test_html5_app_runs_its_own_tests_with_node(
    rendered: dict[tuple[str, str], Path], label: str
) -> None:
    project = rendered["html5", label]
    result = run([need("node"), "--test", "tests/"], cwd=project)
    assert "# pass 3" in result.stdout and "# fail 0" in result.stdout


@pytest.mark.parametrize("label", list(ANSWER_SETS))
def test_html5_page_escapes_the_title(rendered: dict[tuple[str, str], Path],
                                      label: str) -> None:
    page = (rendered["html5", label] / "www/index.html").read_text(encoding="utf-8")
    if label == "unusual":
        assert "<b>" not in page
        assert "<title>Café «Ünïcødé» 日本語 &#34;quoted&#34; \\ &lt;b&gt;&amp;amp; 🙂</title>" in page
    else:
        assert "<title>Hello World</title>" in page


# --- refusing bad answers -------------------------------------------------

BAD_ANSWERS = [
    ({"app_name": "Hello"}, "app_name: 'Hello' must be lower-case"),
    ({"app_name": "hello_world"}, "app_name: 'hello_world'"),
    ({"app_name": "-hello"}, "app_name: '-hello'"),
    ({"app_name": "héllo"}, "app_name: 'héllo'"),
    ({"title": "🙂"}, "app_name: ''"),  # nothing to make a default app name from
    ({"namespace": "Com.Example"}, "namespace: 'Com.Example' must be"),
    ({"namespace": "com..example"}, "namespace: 'com..example'"),
    ({"namespace": "com.example."}, "namespace: 'com.example.'"),
    ({"namespace": "com_example"}, "namespace: 'com_example'"),
    ({"maintainer_email": "nobody"}, "maintainer_email: 'nobody' must be an e-mail"),
    ({"maintainer_email": "a b@example.com"}, "maintainer_email:"),
    ({"maintainer_email": "me@localhost"}, "maintainer_email:"),
    ({"maintainer_name": "Jane <jane@x.org>"}, "maintainer_name:"),
    ({"maintainer_name": " "}, "maintainer_name: ' ' must not be empty"),
    ({"version": "abc"}, "version: 'abc' is not a valid Debian version"),
    ({"version": "1.0_1"}, "version: '1.0_1'"),
    ({"version": "1.0 beta"}, "version: '1.0 beta'"),
    ({"title": "two\tparts"}, "title:"),
    ({"description": ""}, "description: '' must not be empty"),
    ({"app_name": "a" * 120, "namespace": "b" * 120}, "the app id"),
]
PYTHON_BAD_ANSWERS = [
    ({"app_name": "1app"}, "app_name: '1app' must start with a letter"),
    ({"app_name": "json"}, "hides the standard library's"),
    ({"app_name": "class"}, "app_name: 'class' would make the Python module 'class', a "
                            "Python keyword"),
    ({"app_name": "lambda"}, "a Python keyword"),
    ({"version": "1.0~rc1"}, "must also be a PEP 440 version"),
    ({"version": "2:1.0"}, "must also be a PEP 440 version"),
]


def _defaults(kind: str) -> dict[str, object]:
    defaults = json.loads((ROOT / "templates" / kind / "cookiecutter.json").read_text())
    return {**defaults, "app_name": "hello-world", "framework": defaults["framework"][0]}


@pytest.mark.parametrize(("kind", "answers", "fragment"), [
    *(("qml", answers, fragment) for answers, fragment in BAD_ANSWERS),
    *(("python", answers, fragment) for answers, fragment in PYTHON_BAD_ANSWERS),
])
def test_answer_checks(kind: str, answers: dict[str, str], fragment: str) -> None:
    """Each rule, in-process (the CLI and the hooks call the same function)."""
    if answers.get("title") == "🙂":  # the CLI derives the empty app name
        answers = {**answers, "app_name": ""}
    problems = answer_problems({**_defaults(kind), **answers})
    assert any(fragment in p for p in problems), problems
    assert not answer_problems(_defaults(kind))


@pytest.mark.parametrize(("kind", "answers", "fragment"), [
    *((kind, answers, fragment) for kind in KINDS
      for answers, fragment in (BAD_ANSWERS[0], BAD_ANSWERS[4], BAD_ANSWERS[-1])),
    *(("python", answers, fragment) for answers, fragment in PYTHON_BAD_ANSWERS[:2]),
])
def test_bad_answers_write_nothing(tmp_path: Path, kind: str, answers: dict[str, str],
                                   fragment: str) -> None:
    out = tmp_path / "out"
    out.mkdir()
    result = new(out, kind, answers, check=False)
    assert_clean_error(result, fragment)
    assert list(out.iterdir()) == []


def test_every_bad_answer_is_reported_at_once(tmp_path: Path) -> None:
    result = new(tmp_path, "qml", {"app_name": "X", "namespace": "Y", "version": "v1",
                                   "maintainer_email": "z"}, check=False)
    assert_clean_error(result, "app_name:", "namespace:", "version:", "maintainer_email:")
    assert list(tmp_path.iterdir()) == []


def test_missing_output_dir_is_not_created_for_bad_answers(tmp_path: Path) -> None:
    result = new(tmp_path / "a" / "b", "qml", {"app_name": "Nope"}, check=False)
    assert_clean_error(result, "app_name:")
    assert list(tmp_path.iterdir()) == []


def test_output_dir_is_created_when_needed(tmp_path: Path) -> None:
    new(tmp_path / "a" / "b", "html5", {})
    assert (tmp_path / "a/b/hello-world/manifest.json").is_file()


@pytest.mark.parametrize(("args", "fragment"), [
    (["qmll"], "unknown template 'qmll' (did you mean 'qml'?)"),
    (["qml", "--set", "tittle=x"], "did you mean 'title'?"),
    (["qml", "--set", "_kind=cpp"], "has no such question"),
    (["qml", "--set", "title"], "expected KEY=VALUE"),
    (["qml", "--set", "framework=ubuntu-sdk-16.04"],
     "choose one of: ubuntu-touch-24.04-1.x-qml, ubuntu-sdk-20.04-qml, ubuntu-sdk-20.04, "),
    (["cpp", "--set", "framework=ubuntu-touch-24.04"], "choose one of: ubuntu-touch-24.04-1.x, "),
    ([], "name a template"),
])
def test_bad_arguments(tmp_path: Path, args: list[str], fragment: str) -> None:
    result = run([*CLICK_BUILD, "new", *args, "--no-input", "-o", str(tmp_path)], check=False)
    assert_clean_error(result, fragment)
    assert list(tmp_path.iterdir()) == []


def test_new_leaves_no_file_in_the_temporary_folder(tmp_path: Path) -> None:
    """cookiecutter writes each rendered hook (the answers in it) to a temporary file it
    never removes; `new` must leave the temporary folder as it found it."""
    temporary = tmp_path / "tmp"
    temporary.mkdir()
    made = run([*CLICK_BUILD, "new", "python", "--no-input", "-o", str(tmp_path / "out")],
               env={"TMPDIR": str(temporary)})
    assert (tmp_path / "out/hello-world/manifest.json").is_file(), made.stderr
    assert list(temporary.iterdir()) == []


def test_existing_project_is_never_overwritten(tmp_path: Path) -> None:
    new(tmp_path, "qml", {})
    manifest = tmp_path / "hello-world/manifest.json"
    manifest.write_text("mine")
    result = new(tmp_path, "html5", {}, check=False)
    assert_clean_error(result, "already exists")
    assert manifest.read_text() == "mine"


def test_questions_need_a_terminal(tmp_path: Path) -> None:
    result = subprocess.run([*CLICK_BUILD, "new", "qml", "-o", str(tmp_path)],
                            stdin=subprocess.DEVNULL, capture_output=True, text=True)
    assert_clean_error(result, "--no-input")
    assert list(tmp_path.iterdir()) == []


def test_questions_are_asked_on_a_terminal(tmp_path: Path) -> None:
    """Interactive use: the prompts come up on a terminal and the answers land."""
    answers = ["Pty App", "", "jane", "", "Jane Doe", "jane@example.org", "0.1", "2"]
    assert answer_on_terminal(["new", "qml", "-o", str(tmp_path)], answers) == 0
    manifest = json.loads((tmp_path / "pty-app/manifest.json").read_text())
    assert manifest["name"] == "pty-app.jane"
    assert manifest["maintainer"] == "Jane Doe <jane@example.org>"
    assert manifest["version"] == "0.1"
    assert manifest["framework"] == "ubuntu-sdk-20.04-qml"  # the qml template's second choice


# --- plain cookiecutter on the template folders -----------------------------

@pytest.mark.parametrize("kind", KINDS)
def test_plain_cookiecutter_makes_the_same_project(tmp_path: Path, kind: str) -> None:
    ours, theirs = tmp_path / "ours", tmp_path / "theirs"
    answers = answers_for(kind, "unusual")
    new(ours, kind, answers)
    cookiecutter = Path(sys.executable).with_name("cookiecutter")
    run([str(cookiecutter), "--no-input", "-o", str(theirs), str(ROOT / "templates" / kind),
         *(f"{k}={v}" for k, v in answers.items())], env={"HOME": str(tmp_path)})
    files = sorted(p.relative_to(ours) for p in ours.rglob("*"))
    assert files == sorted(p.relative_to(theirs) for p in theirs.rglob("*"))
    for rel in files:
        if (ours / rel).is_file():
            assert (ours / rel).read_bytes() == (theirs / rel).read_bytes(), rel


@pytest.mark.parametrize("kind", KINDS)
def test_plain_cookiecutter_hook_refuses_bad_answers(tmp_path: Path, kind: str) -> None:
    """The pre_gen_project hook runs click-build's checks before any file is written."""
    out = tmp_path / "out"
    out.mkdir()
    cookiecutter = Path(sys.executable).with_name("cookiecutter")
    result = run([str(cookiecutter), "--no-input", "-o", str(out),
                  str(ROOT / "templates" / kind), "app_name=Bad_Name", "version=x"],
                 env={"HOME": str(tmp_path)}, check=False)
    assert result.returncode != 0
    assert "error: app_name: 'Bad_Name'" in result.stderr
    assert "error: version: 'x'" in result.stderr
    assert list(out.iterdir()) == []


@pytest.mark.slow
def test_new_works_from_the_built_wheel(tmp_path: Path) -> None:
    """Installed from the wheel (no source tree): the templates, their hooks and the
    Jinja extension ship, and every template renders what the source tree renders."""
    import shutil
    import zipfile

    source = tmp_path / "src"
    source.mkdir()
    for name in ("pyproject.toml", "README.md"):
        shutil.copy2(ROOT / name, source / name)
    for name in ("click_build", "cmake", "templates"):
        shutil.copytree(ROOT / name, source / name,
                        ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
    run([sys.executable, "-m", "build", "--wheel", "-n", "-x", "--outdir", str(tmp_path / "dist")],
        cwd=source)
    (wheel,) = (tmp_path / "dist").glob("*.whl")
    site = tmp_path / "site"
    with zipfile.ZipFile(wheel) as zf:
        zf.extractall(site)
    # Ahead of the editable install of the checkout (and away from it: python -m
    # puts the working directory first on sys.path).
    env = {"PYTHONPATH": str(site)}
    shipped = run([*CLICK_BUILD, "--templates-dir"], env=env, cwd=tmp_path).stdout.strip()
    assert Path(shipped) == site / "click_build" / "templates"
    listed = run([*CLICK_BUILD, "new", "--list"], env=env, cwd=tmp_path).stdout
    assert [line.split()[0] for line in listed.splitlines()] == sorted(KINDS)
    for kind in KINDS:
        answers = answers_for(kind, "unusual")
        new(tmp_path / "from-source" / kind, kind, answers)
        sets = [a for key, value in answers.items() for a in ("--set", f"{key}={value}")]
        run([*CLICK_BUILD, "new", kind, "--no-input", "-o", str(tmp_path / "from-wheel" / kind),
             *sets], env=env, cwd=tmp_path)
        ours = tmp_path / "from-source" / kind
        theirs = tmp_path / "from-wheel" / kind
        files = sorted(p.relative_to(ours) for p in ours.rglob("*"))
        assert files == sorted(p.relative_to(theirs) for p in theirs.rglob("*"))
        assert any(p.name == ".gitignore" for p in files)
        for rel in files:
            if (ours / rel).is_file():
                assert (ours / rel).read_bytes() == (theirs / rel).read_bytes(), rel


LONG_ID = {"app_name": "a-very-long-app-name-with-many-words-2024",
           "namespace": "org.example.some-very-long.developer-namespace"}


def test_long_app_id_is_warned_about_once(tmp_path: Path) -> None:
    result = new(tmp_path, "qml", LONG_ID)
    lines = [line for line in result.stderr.splitlines() if line.strip()]
    assert len(lines) == 1 and lines[0].startswith("click-build: warning: the app id "), lines
    assert "the stores' review warns above 100" in lines[0]
    cookiecutter = Path(sys.executable).with_name("cookiecutter")
    plain = run([str(cookiecutter), "--no-input", "-o", str(tmp_path / "plain"),
                 str(ROOT / "templates" / "qml"), *(f"{k}={v}" for k, v in LONG_ID.items())],
                env={"HOME": str(tmp_path)})
    assert plain.stderr.startswith("warning: the app id "), plain.stderr


def _namespace(size: int) -> str:
    """A valid namespace of exactly size characters: labels of up to 40 joined by dots."""
    labels, left = [], size
    while left > 0:
        label = min(40, left if left <= 40 else left - 2)  # never leave a label of 0
        labels.append("b" * label)
        left -= label + 1
    out = ".".join(labels)
    assert len(out) == size
    return out


@pytest.mark.parametrize(("id_length", "warned", "refused"), [
    (100, False, False), (101, True, False), (230, True, False), (231, True, True),
])
def test_app_id_limits(tmp_path: Path, id_length: int, warned: bool, refused: bool) -> None:
    """docs/templates.md: an app id (NAME_APP_VERSION) longer than 100 characters gets a
    warning; over 230 it is refused."""
    app = "a" * 10  # the app id is app.NAMESPACE_app_1.0.0
    answers = {"app_name": app, "version": "1.0.0",
               "namespace": _namespace(id_length - 2 * len(app) - len("._" + "_1.0.0"))}
    result = new(tmp_path, "qml", answers, check=False)
    assert ("the app id" in result.stderr) == (warned or refused), result.stderr
    if refused:
        assert_clean_error(result, f"is {id_length} bytes")
        assert list(tmp_path.iterdir()) == []
    else:
        assert result.returncode == 0, result.stderr
        assert (f"is {id_length} characters" in result.stderr) == warned


def test_hook_without_click_build_says_what_to_install(tmp_path: Path) -> None:
    """cookiecutter installed without click-build (e.g. by pipx): one clear line."""
    hook = (ROOT / "templates/qml/hooks/pre_gen_project.py").read_text()
    script = tmp_path / "hook.py"
    script.write_text(hook.replace("{{ cookiecutter | tojson | tojson }}", repr("{}")))
    # -S: no site-packages, so no click_build (which the venv has) to import.
    result = subprocess.run([sys.executable, "-I", "-S", str(script)], capture_output=True,
                            text=True, cwd=tmp_path)
    assert result.returncode == 1
    assert result.stderr == ("error: this template needs click-build beside cookiecutter: "
                             "pip install 'click-build[templates]'\n")
