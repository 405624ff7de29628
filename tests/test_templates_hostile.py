"""`click-build new` as an attacker would answer it (issue 11): answers are data.

CI scripts fill ``--set`` from untrusted text (branch names, issue titles), and
``~/.cookiecutterrc`` or a typed answer may hold anything.  Whatever an answer
holds, it is either written exactly as given or refused with one
``click-build: error:`` line; nothing in it is ever evaluated as a template, run
by a shell, or turned into a path outside the output folder.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import CLICK_BUILD, ROOT, assert_clean_error, run
from templates_support import KINDS, answer_on_terminal, new, project_of, source_manifest
from terminal import Terminal

#: Template syntax, template injection that would reach Python, shell syntax.
PAYLOADS = {
    "title": "{{ 7*7 }} {% raw %} {# x",
    "description": "{{ cycler.__init__.__globals__.os.system('touch PWNED') }} {% endraw %}",
    "maintainer_name": "{{ cookiecutter.__class__ }} $(touch PWNED) `touch PWNED`; x|y &",
}


def no_marker_anywhere(*roots: Path) -> None:
    for root in roots:
        assert not list(root.rglob("PWNED")), root
    assert not Path("PWNED").exists() and not (ROOT / "PWNED").exists()


@pytest.mark.parametrize("kind", KINDS)
def test_template_syntax_in_answers_is_written_literally(tmp_path: Path, kind: str) -> None:
    out = tmp_path / "out"
    answers = {**PAYLOADS, "app_name": "app"}
    if kind == "python":
        answers["app_name"] = "myapp"
    new(out, kind, answers)
    project = project_of(out)
    manifest = source_manifest(project)
    assert manifest["title"] == PAYLOADS["title"]
    assert manifest["description"] == PAYLOADS["description"]
    assert manifest["maintainer"] == f"{PAYLOADS['maintainer_name']} <you@example.com>"
    desktop = (project / f"{project.name}.desktop").read_text(encoding="utf-8")
    assert f"Name={PAYLOADS['title']}\n" in desktop
    readme = (project / "README.md").read_text(encoding="utf-8")
    assert readme.startswith(f"# {PAYLOADS['title']}\n")
    for path in project.rglob("*"):
        if path.is_file():
            text = path.read_text(encoding="utf-8", errors="replace")
            assert "OrderedDict" not in text and "<class" not in text, path
    no_marker_anywhere(tmp_path)


def test_the_literal_title_reaches_the_package(tmp_path: Path) -> None:
    new(tmp_path / "src", "qml", {"title": PAYLOADS["title"], "app_name": "app"})
    project = project_of(tmp_path / "src")
    run([sys.executable, "-m", "build", "-n", "-x", "--wheel", "-o", str(tmp_path / "dist")],
        cwd=project)
    (click,) = (tmp_path / "dist").glob("*.click")
    info = json.loads(run([*CLICK_BUILD, "info", str(click)]).stdout)
    assert info["title"] == PAYLOADS["title"]


def test_answers_from_the_cookiecutter_config_are_data(tmp_path: Path) -> None:
    (tmp_path / ".cookiecutterrc").write_text(
        "default_context:\n"
        "  title: \"{{ 6*7 }}\"\n"
        "  namespace: jane\n"
        "  version: 2.0\n")  # YAML reads a number: still the version "2.0"
    out = tmp_path / "out"
    run([*CLICK_BUILD, "new", "qml", "--no-input", "-o", str(out), "--set", "app_name=app"],
        env={"HOME": str(tmp_path)})
    manifest = json.loads((out / "app" / "manifest.json").read_text())
    assert (manifest["title"], manifest["name"], manifest["version"]) == \
        ("{{ 6*7 }}", "app.jane", "2.0")


def test_config_answers_are_the_text_written(tmp_path: Path) -> None:
    """YAML would read ``version: 1.10`` as the number 1.1 and ``yes`` as True: the
    answers are the text in the file, as for --set."""
    (tmp_path / ".cookiecutterrc").write_text(
        "default_context:\n  version: 1.10\n  title: yes\n  description: null\n")
    out = tmp_path / "out"
    run([*CLICK_BUILD, "new", "qml", "--no-input", "-o", str(out), "--set", "app_name=app"],
        env={"HOME": str(tmp_path)})
    manifest = json.loads((out / "app" / "manifest.json").read_text())
    assert (manifest["version"], manifest["title"], manifest["description"]) == \
        ("1.10", "yes", "null")


@pytest.mark.parametrize(("config", "fragment"), [
    ("default_context:\n  title: [a, b]\n", "title: ['a', 'b'] (from "),
    ("default_context:\n  namespace: {x: 1}\n", "namespace: {'x': '1'} (from "),
    ("default_context: [a, b]\n", "default_context must be a mapping"),
    ("default_context: jane\n", "default_context must be a mapping"),
])
def test_a_config_answer_that_is_not_text_is_refused_in_one_line(
        tmp_path: Path, config: str, fragment: str) -> None:
    (tmp_path / ".cookiecutterrc").write_text(config)
    out = tmp_path / "out"
    result = run([*CLICK_BUILD, "new", "qml", "--no-input", "-o", str(out)],
                 env={"HOME": str(tmp_path)}, check=False)
    assert_clean_error(result, fragment)
    assert not out.exists()


#: Text in every script: Persian needs the zero-width non-joiner, emoji families and
#: Devanagari conjuncts the zero-width joiner, French a no-break space before ':'.
WORLD_TEXT = {
    "title": "\u0645\u06cc\u200c\u062e\u0648\u0627\u0647\u0645 \U0001f468\u200d\U0001f469\u200d\U0001f467",
    "description": "Th\u00e9\u00a0: minuteur\u3000\u0915\u094d\u200d\u0937 \u200fx",
    "maintainer_name": "Zo\u00eb\u00a0Doe",
}


def test_text_of_every_script_is_an_answer(tmp_path: Path, original_click: str) -> None:
    """str.isprintable() refused format characters and spaces other than ' ': a Persian
    or emoji title could not be given.  It builds a package the original accepts."""
    new(tmp_path / "src", "qml", {**WORLD_TEXT, "app_name": "app"})
    project = project_of(tmp_path / "src")
    manifest = source_manifest(project)
    assert (manifest["title"], manifest["description"]) == \
        (WORLD_TEXT["title"], WORLD_TEXT["description"])
    run([sys.executable, "-m", "build", "-n", "-x", "--wheel", "-o", str(tmp_path / "dist")],
        cwd=project)
    (click,) = (tmp_path / "dist").glob("*.click")
    run([original_click, "verify", "--force-missing-framework", "--allow-unauthenticated",
         str(click)])
    info = json.loads(run([*CLICK_BUILD, "info", str(click)]).stdout)
    assert info["title"] == WORLD_TEXT["title"]


@pytest.mark.parametrize("title", ["a\u202eb", "a\u2066b", "a\tb", "a\u2029b", "a\x85b"])
def test_controls_and_bidi_overrides_stay_refused(tmp_path: Path, title: str) -> None:
    result = new(tmp_path, "qml", {"title": title, "app_name": "app"}, check=False)
    assert_clean_error(result, "title:", "must be one line, without control characters")


@pytest.mark.parametrize("name", ["class", "import", "async"])
def test_a_python_keyword_is_no_python_app_name(tmp_path: Path, name: str) -> None:
    """The python template's tests say ``from APP import ...``: with a keyword they did
    not even parse (SyntaxError), nor could the app's own code import its module."""
    result = new(tmp_path, "python", {"app_name": name}, check=False)
    assert_clean_error(result, f"app_name: '{name}' would make the Python module")
    assert not list(tmp_path.iterdir())
    new(tmp_path, "qml", {"app_name": name})  # only Python cares


def test_typed_answers_are_data(tmp_path: Path) -> None:
    answers = ["{{ 7*7 }}", "typed", "jane", "{% raw %}", "Jane", "jane@example.org",
               "1.0", "1"]
    assert answer_on_terminal(["new", "qml", "-o", str(tmp_path)], answers) == 0
    manifest = json.loads((tmp_path / "typed" / "manifest.json").read_text())
    assert manifest["title"] == "{{ 7*7 }}" and manifest["description"] == "{% raw %}"


def test_end_of_input_at_a_question_is_one_line(tmp_path: Path) -> None:
    """Ctrl-D at a prompt ended in an EOFError traceback."""
    with Terminal([*CLICK_BUILD, "new", "qml", "-o", str(tmp_path / "out")]) as terminal:
        terminal.read_until(lambda shown: shown.rstrip().endswith(b":"))
        terminal.type(b"\x04")  # the terminal's end of input (Ctrl-D)
        output = terminal.read_to_end()
        status = terminal.wait()
    text = output.decode("utf-8", "replace")
    assert status == 1, text
    assert "Traceback" not in text and "EOFError" not in text, text
    assert "click-build: error: the input ended before every question was answered" in text
    assert not (tmp_path / "out").exists()


def test_a_title_made_only_of_template_syntax_gives_a_plain_app_name(tmp_path: Path) -> None:
    """The default app name is made from the title's letters; nothing is evaluated."""
    new(tmp_path, "qml", {"title": "{{ 7*7 }}"})
    assert [p.name for p in tmp_path.iterdir()] == ["7-7"]
    assert json.loads((tmp_path / "7-7/manifest.json").read_text())["title"] == "{{ 7*7 }}"


@pytest.mark.parametrize(("answers", "fragment"), [
    ({"title": "two\nlines"}, "title: 'two\\nlines' must be one line"),
    ({"description": "a\rb"}, "description: 'a\\rb' must be one line"),
    ({"maintainer_name": "x\x1b[31m"}, "maintainer_name: 'x\\x1b[31m'"),
    ({"title": "line\u2028separator"}, "title:"),
    ({"app_name": "app\n"}, "app_name: 'app\\n' must be lower-case"),
    ({"namespace": "jane\n"}, "namespace: 'jane\\n' must be"),
    ({"maintainer_email": "a@example.com\n"}, "maintainer_email: 'a@example.com\\n'"),
    ({"app_name": "../evil"}, "app_name: '../evil'"),
    ({"app_name": "a/b"}, "app_name: 'a/b'"),
    ({"app_name": "/tmp/x"}, "app_name: '/tmp/x'"),
    ({"app_name": "."}, "app_name: '.'"),
    ({"namespace": "../.."}, "namespace: '../..'"),
    ({"namespace": "a/b"}, "namespace: 'a/b'"),
    ({"version": "1.0/../../x"}, "version:"),
    ({"app_name": "a" * 100_000}, "the app id 'aaaa"),
    ({"title": "{{ 7*7 }}" * 10_000, "app_name": "a" * 300}, "app id"),
])
def test_bad_answers_are_refused_in_one_line(tmp_path: Path, answers: dict[str, str],
                                             fragment: str) -> None:
    out = tmp_path / "out"
    out.mkdir()
    result = new(out, "qml", answers, check=False)
    assert_clean_error(result, fragment)
    assert len(result.stderr) < 2000, "a huge answer is not echoed whole"
    assert list(out.iterdir()) == []
    assert sorted(p.name for p in tmp_path.iterdir()) == ["out"]


def test_undecodable_bytes_are_refused_in_one_line(tmp_path: Path) -> None:
    """Bytes that are not UTF-8 reach Python as lone surrogates."""
    for key in ("title", "maintainer_email", "namespace", "version"):
        out = tmp_path / key
        out.mkdir()
        value = b"a\xff@example.com" if key == "maintainer_email" else b"a\xffb"
        argv = [*map(str.encode, CLICK_BUILD), b"new", b"qml", b"--no-input", b"-o",
                str(out).encode(), b"--set", key.encode() + b"=" + value]
        result = subprocess.run(argv, capture_output=True, text=True)
        assert_clean_error(result, f"{key}: ")
        assert list(out.iterdir()) == []


def test_a_huge_title_is_written_literally(tmp_path: Path) -> None:
    title = "{{ x }}" * 10_000  # 70 kB of template syntax: still one line of text
    new(tmp_path, "qml", {"title": title, "app_name": "big"})
    assert json.loads((tmp_path / "big/manifest.json").read_text())["title"] == title


def test_plain_cookiecutter_replay_is_data(tmp_path: Path) -> None:
    """A cookiecutter replay file holds answers: the templates and their hook take them
    as given (the hook re-checks them with click-build's rules)."""
    context = json.loads((ROOT / "templates/qml/cookiecutter.json").read_text())
    answers = {**{k: v for k, v in context.items() if not k.startswith("_")},
               "title": "{{ 7*7 }}", "app_name": "replayed",
               "framework": context["framework"][0],
               "__click_build_version": "0", "_kind": "qml",
               "_extensions": context["_extensions"]}
    replay = tmp_path / "qml.json"
    replay.write_text(json.dumps({"cookiecutter": answers}))
    cookiecutter = Path(sys.executable).with_name("cookiecutter")
    run([str(cookiecutter), "--replay-file", str(replay), "-o", str(tmp_path / "out"),
         str(ROOT / "templates" / "qml")], env={"HOME": str(tmp_path)})
    manifest = json.loads((tmp_path / "out/replayed/manifest.json").read_text())
    assert manifest["title"] == "{{ 7*7 }}"


def test_plain_cookiecutter_renders_its_command_line_answers(tmp_path: Path) -> None:
    """What docs/templates.md says of plain cookiecutter (not ours to change)."""
    cookiecutter = Path(sys.executable).with_name("cookiecutter")
    run([str(cookiecutter), "--no-input", "-o", str(tmp_path), str(ROOT / "templates/qml"),
         "title={{ 7*7 }}", "app_name=plain"], env={"HOME": str(tmp_path)})
    assert json.loads((tmp_path / "plain/manifest.json").read_text())["title"] == "49"
