"""Refuse invalid answers before cookiecutter writes any file of the project.

The rules are click-build's own (click_build.new.answer_problems, which checks
the manifest the answers make), so plain `cookiecutter` and `click-build new`
accept exactly the same answers.
"""
import json
import sys

ANSWERS = json.loads({{ cookiecutter | tojson | tojson }})

try:
    from click_build.new import answer_problems, answer_warnings
except ImportError:
    sys.exit("error: this template needs click-build next to cookiecutter: "
             "pip install 'click-build[templates]'")

PROBLEMS = answer_problems(ANSWERS)
for warning in [] if PROBLEMS or ANSWERS.get("_click_build_new") else answer_warnings(ANSWERS):
    print(f"warning: {warning}", file=sys.stderr)
for problem in PROBLEMS:
    print(f"error: {problem}", file=sys.stderr)
sys.exit(1 if PROBLEMS else 0)
