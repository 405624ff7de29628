"""The app templates as the tests make them: the kinds, the answer sets, `click-build
new` with answers, the project it made, its manifest and version, its QML tests under
Xvfb, and answering its questions on a terminal."""

from __future__ import annotations

import json
import subprocess
import tomllib
from pathlib import Path

from conftest import CLICK_BUILD, need, run
from terminal import Terminal
from xdisplay import private_display

from click_build.new import list_templates

KINDS = [t.kind for t in list_templates()]
#: The kinds whose builds compile (CMake) or install real things (pip): their builds are slow.
SLOW_KINDS = {"python", "cpp"}

DEFAULTS: dict[str, str] = {}
UNUSUAL = {
    "title": 'Café «Ünïcødé» 日本語 "quoted" \\ <b>&amp; 🙂',
    "app_name": "a-very-long-app-name-with-many-words-2024",
    "namespace": "org.example.some-very-long.developer-namespace",
    "description": "Ça marche: <tags> & \"quotes\" \\ too @HOME@ ${HOME} @",
    "maintainer_name": "Zoë O'Brien-Łukasiewicz",
    "maintainer_email": "zoe.obrien+apps@mail.example.org",
    "version": "2:1.0~rc1+git20240101-3",
    "framework": "ubuntu-sdk-20.04",
}
ANSWER_SETS = {"defaults": DEFAULTS, "unusual": UNUSUAL}
#: The python template keeps the version in [project].version: it must be PEP 440 too.
PYTHON_UNUSUAL_VERSION = "2024.12.1rc3"


#: The framework a fresh project of each kind starts on: what the review recommends
#: (a pure QML app needs only the framework's -qml variant).
DEFAULT_FRAMEWORKS = {"qml": "ubuntu-touch-24.04-1.x-qml", "html5": "ubuntu-touch-24.04-1.x",
                      "python": "ubuntu-touch-24.04-1.x", "cpp": "ubuntu-touch-24.04-1.x"}


def answers_for(kind: str, label: str) -> dict[str, str]:
    answers = dict(ANSWER_SETS[label])
    if kind == "python" and "version" in answers:
        answers["version"] = PYTHON_UNUSUAL_VERSION
    if kind == "qml" and "framework" in answers:
        answers["framework"] += "-qml"  # the qml template's own choice for 20.04
    if kind == "cpp" and "framework" in answers:
        # C++ compiled on this machine links its Qt 5.15: that is 24.04's Qt.
        # 20.04 (Qt 5.12) is covered by test_cpp_project_builds_with_plain_cmake.
        answers["framework"] = "ubuntu-touch-24.04-1.x"
    return answers


def source_manifest(project: Path) -> dict[str, object]:
    """manifest.json, or the cpp template's manifest.json.in (CMake completes it)."""
    for name in ("manifest.json", "manifest.json.in"):
        if (project / name).is_file():
            return json.loads((project / name).read_text(encoding="utf-8"))  # type: ignore[no-any-return]
    raise AssertionError(f"{project} has no manifest")


def source_version(project: Path) -> str:
    """The version the project declares: its manifest, or [project] for python."""
    manifest = source_manifest(project)
    if "version" in manifest:
        return str(manifest["version"])
    return str(tomllib.loads((project / "pyproject.toml").read_text())["project"]["version"])


def new(out: Path, kind: str, answers: dict[str, str], *extra: str,
        check: bool = True) -> subprocess.CompletedProcess[str]:
    sets = [a for key, value in answers.items() for a in ("--set", f"{key}={value}")]
    return run([*CLICK_BUILD, "new", kind, "--no-input", "-o", str(out), *sets, *extra],
               check=check)


def project_of(out: Path) -> Path:
    (project,) = [p for p in out.iterdir() if p.is_dir()]
    return project


def run_qml_tests(project: Path) -> subprocess.CompletedProcess[str]:
    """qmltestrunner on the project's tests/ on a private Xvfb (software OpenGL)."""
    with private_display() as display:
        return run([need("qmltestrunner"), "-input", "tests"], cwd=project,
                   env={"DISPLAY": display, "QT_QPA_PLATFORM": "xcb",
                        "LIBGL_ALWAYS_SOFTWARE": "1"})


def answer_on_terminal(args: list[str], answers: list[str]) -> int:
    """Run ``click-build ARGS`` on a pseudo-terminal, typing one answer per prompt;
    its exit status."""
    with Terminal([*CLICK_BUILD, *args]) as terminal:
        for answer in answers:
            terminal.read_until(lambda shown: shown.rstrip().endswith((b":", b")")))
            terminal.type(answer.encode() + b"\r")
        terminal.read_to_end()
        return terminal.wait()


def section(readme: str, title: str) -> str:
    """The text of a README's ``## title`` section."""
    return readme.split(f"\n## {title}\n", 1)[1].split("\n## ", 1)[0]
