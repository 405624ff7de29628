"""`click-build review` and the review that runs after `click-build build`."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

from conftest import Cli, assert_clean_error, write_tree
from review_craft import GOOD_FILES, F, craft

GOOD_TREE = {path: m.raw for path, m in GOOD_FILES.items() if isinstance(m, F)}
MANIFEST = {
    "name": "com.example.hello", "version": "1.0",
    "framework": "ubuntu-sdk-20.04-qml",  # a pure-QML app: the -qml variant is enough
    "maintainer": "Jane Doe <jane@example.com>", "title": "Hello",
    "description": "A friendly app",
    "hooks": {"hello": {"desktop": "hello.desktop", "apparmor": "hello.apparmor"}},
}


def app(root: Path, **changes: str | bytes) -> Path:
    tree: dict[str, str | bytes] = {**GOOD_TREE, **changes}
    tree["manifest.json"] = json.dumps(MANIFEST)
    return write_tree(root, tree)


def review_lines(stderr: str) -> list[str]:
    return [line for line in stderr.splitlines() if "review:" in line]


def test_build_of_a_good_app_reports_nothing(cli: Cli, tmp_path: Path) -> None:
    src = app(tmp_path / "good")
    result = cli("build", src, "-o", tmp_path, cwd=tmp_path)
    assert "Successfully built package" in result.stdout
    assert review_lines(result.stderr) == []
    assert (tmp_path / "com.example.hello_1.0_all.click").exists()


def test_manifest_keys_and_description_as_docs_manifest_says(cli: Cli, tmp_path: Path) -> None:
    """docs/manifest.md: `x-*` keys build; any other unknown key, or no description,
    is a review error that fails the build; --no-validate builds anyway."""
    def build(name: str, manifest: dict[str, object], *flags: str) -> subprocess.CompletedProcess[str]:
        src = write_tree(tmp_path / name, {**GOOD_TREE, "manifest.json": json.dumps(manifest)})
        return cli("build", *flags, src, "-o", tmp_path / name, cwd=tmp_path, check=False)

    assert build("own", {**MANIFEST, "x-source": "https://example.com"}).returncode == 0
    unknown = build("unknown", {**MANIFEST, "foo": 1})
    assert unknown.returncode == 1 and "foo: the stores reject this key" in unknown.stderr
    typo = build("typo", {**MANIFEST, "titel": "x"})
    assert "titel: unknown key (did you mean 'title'?)" in typo.stderr
    assert typo.returncode == 1 and "[lint.manifest-key]" in typo.stderr
    bare = build("bare", {k: v for k, v in MANIFEST.items() if k != "description"})
    assert bare.returncode == 1 and "[lint.description-missing]" in bare.stderr
    anyway = build("anyway", {**MANIFEST, "foo": 1}, "--no-validate")
    assert anyway.returncode == 0 and list((tmp_path / "anyway").glob("*.click"))


def test_build_fails_on_review_errors_unless_told(cli: Cli, tmp_path: Path) -> None:
    """Review errors fail the build (issue 12: the stores reject such packages, and
    Clickable fails too); --no-validate keeps the original's behaviour: findings are
    printed as warnings and the package is written."""
    desktop = "[Desktop Entry]\nName=Hello\nExec=hello-app\nIcon=assets/logo.svg\n" \
              "Type=Application\nX-Lomiri-Touch=true\n"
    src = app(tmp_path / "bad", **{"hello.desktop": desktop,
                                   "hello.apparmor": '{"policy_groups": ["networking", '
                                                     '"contacts"], "policy_version": 20.04}'})
    failed = cli("build", src, "-o", tmp_path, cwd=tmp_path, check=False)
    assert failed.returncode == 1
    assert failed.stderr.splitlines()[-1].startswith(
        "click-build: error: review: 1 error, 1 warning in com.example.hello_1.0_all.click")
    assert not (tmp_path / "com.example.hello_1.0_all.click").exists()
    result = cli("build", "--no-validate", src, "-o", tmp_path, cwd=tmp_path)
    assert result.returncode == 0
    lines = review_lines(result.stderr)
    assert any("[desktop.exec-missing]" in line and "review: warning:" in line
               for line in lines)
    assert any("[security.policy-group-reserved]" in line for line in lines)
    assert "1 error, 1 warning" in lines[-1]
    for line in result.stderr.splitlines():
        assert line.startswith("click-build: warning: "), line
    assert (tmp_path / "com.example.hello_1.0_all.click").exists()
    quiet = cli("-q", "build", "--no-validate", src, "-o", tmp_path, cwd=tmp_path)
    assert quiet.stdout == "" and len(review_lines(quiet.stderr)) == 3


def test_review_command_text_and_exit_status(cli: Cli, tmp_path: Path) -> None:
    good = craft(tmp_path / "good.click")
    result = cli("review", good)
    assert result.stdout == f"{good}: no problems found\n" and result.stderr == ""
    bad = craft(tmp_path / "bad.click", files={**GOOD_FILES, "hello.desktop": F(
        "[Desktop Entry]\nName=Hello\nExec=qmlscene qml/Main.qml\nIcon=logo\n"
        "Type=Application\nX-Lomiri-Touch=true\nPath=/tmp\n")})
    result = cli("review", bad, check=False)
    assert result.returncode == 1
    assert "error: hello.desktop: sets Path" in result.stdout
    assert "    fix: remove the Path line" in result.stdout
    assert "error: hello.desktop: Icon 'logo' is not a file in the package" in result.stdout
    assert result.stdout.endswith(f"{bad}: 2 errors\n")


def test_review_strict_fails_on_warnings(cli: Cli, tmp_path: Path) -> None:
    pkg = craft(tmp_path / "w.click", files={**GOOD_FILES, "hello.apparmor": F(
        '{"policy_groups": ["networking"], "policy_version": 20.04, "comment": "x"}')})
    assert cli("review", pkg).returncode == 0
    strict = cli("review", "--strict", pkg, check=False)
    assert strict.returncode == 1 and "[security.ignored-field]" in strict.stdout


def test_review_json(cli: Cli, tmp_path: Path) -> None:
    pkg = craft(tmp_path / "j.click", files={**GOOD_FILES, "hello.apparmor": F(
        '{"policy_groups": ["networking", "debug"], "policy_version": 20.04}')})
    result = cli("review", "--json", pkg, check=False)
    assert result.returncode == 1
    report = json.loads(result.stdout)
    assert report["passed"] is False
    assert report["counts"] == {"error": 1, "warning": 0, "info": 0}
    (finding,) = report["findings"]
    assert finding["check"] == "security.debug" and finding["file"] == "hello.apparmor"
    assert finding["severity"] == "error" and finding["hint"] and finding["message"]
    good = json.loads(cli("review", "--json", craft(tmp_path / "g.click")).stdout)
    assert good["passed"] is True and good["findings"] == []


def test_review_of_something_else_is_one_clean_error(cli: Cli, tmp_path: Path) -> None:
    junk = tmp_path / "junk.click"
    junk.write_bytes(b"!<arch>\nnot really")
    assert_clean_error(cli("review", junk, check=False), "junk.click")
    assert_clean_error(cli("review", tmp_path / "missing.click", check=False), "cannot open")
    assert_clean_error(cli("review", check=False))


def test_review_help(cli: Cli) -> None:
    text = cli("review", "--help").stdout
    for option in ("--json", "--strict", "--frameworks-dir", "PACKAGE-FILE", "check id"):
        assert option in text
    assert "docs/" not in text  # not in the wheel: the help stands on its own


def test_a_pure_qml_app_gets_the_qml_variant_advice_by_every_route(cli: Cli,
                                                                  tmp_path: Path) -> None:
    """A single-framework build and a review of the package both point a pure-QML app to
    its -qml variant, with the fix; advice (info), so neither exit status changes."""
    src = app(tmp_path / "src")
    (src / "manifest.json").write_text(json.dumps({**MANIFEST, "framework": "ubuntu-sdk-20.04"}))
    fix = 'set "framework": "ubuntu-sdk-20.04-qml" in manifest.json'
    built = cli("build", src, "-o", tmp_path, cwd=tmp_path)
    lines = built.stdout.splitlines()
    (at,) = [i for i, line in enumerate(lines) if "[lint.framework-variant]" in line]
    # One screen line, and its fix on the next.
    assert lines[at:at + 2] == ["review: manifest: pure QML: a smaller framework will do "
                                "[lint.framework-variant]", f"    fix: {fix}"]
    assert all(len(line) <= 80 for line in lines[at:at + 2])
    assert review_lines(built.stderr) == []  # advice is not a warning
    package = tmp_path / "com.example.hello_1.0_all.click"
    for args in ((), ("--strict",)):
        result = cli("review", *args, package)
        assert "info: manifest: pure QML: a smaller framework will do" in result.stdout
        assert f"    fix: {fix}" in result.stdout
        assert result.stdout.endswith(f"{package}: 1 info\n")
    report = json.loads(cli("review", "--json", package).stdout)
    assert report["passed"] is True and report["counts"]["info"] == 1
    assert [f["check"] for f in report["findings"]] == ["lint.framework-variant"]
    assert cli("-q", "build", src, "-o", tmp_path / "q", cwd=tmp_path).stdout == ""
