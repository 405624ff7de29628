"""The review against the stores' own tool, click-reviewers-tools' ``click-review``.

Every crafted package of tests/test_review.py goes through ``click-review``
too, and the outcome must be the one recorded here: the stores refuse or
reject what we call an error, with the exceptions listed (checks of ours the
stores do not make, and what they only hold for a manual review, which we
report as warnings).  scripts/setup installs the tool in .venv-review.
"""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest
from conftest import CLICK_REVIEW
from deadlines import seconds
from review_cases import CASES
from review_craft import craft

#: check id -> what click-review does with that check's crafted package:
#: "refused" (stops with an ERROR line), "error", "warning" or "pass".
STORE: dict[str, str] = {
    # refused or rejected by the stores, as by us
    **{check: "error" for check in (
        "desktop.exec-absolute", "desktop.icon", "desktop.launcher-obsolete",
        "desktop.missing-key", "desktop.path-key", "desktop.touch", "desktop.type",
        "desktop.webapp-args",
        "hooks.bad-value", "hooks.missing-key", "hooks.push-helper-peers",
        "lint.arch-all-compiled", "lint.arch-unsupported", "lint.control", "lint.qt-version",
        "lint.control-mismatch", "lint.framework-obsolete", "lint.framework-unknown",
        "lint.hook-missing-apparmor", "lint.hook-unknown", "lint.maintainer",
        "lint.description-missing", "qml.lomiri-framework",
        "lint.manifest-field", "lint.package-invalid", "lint.symlink-external",
        "security.debug", "security.policy-group-duplicate", "security.policy-group-unknown",
        "security.policy-mismatch", "security.policy-version", "security.template-groups",
        "security.template-unknown",
        # a framework only this machine has: the stores do not know it (we say info)
        "lint.framework-local",
    )},
    **{check: "refused" for check in (
        "desktop.unreadable", "hooks.unreadable", "lint.hook-exclusive",
        "lint.hook-target-missing", "lint.manifest-key", "lint.no-apps", "security.field",
        "security.unreadable",
    )},
    # held for a manual review (NEEDS REVIEW errors there and here)
    **{check: "error" for check in (
        "lint.hook-review", "security.policy-group-reserved", "security.redflag-field",
        "security.template-unconfined",
    )},
    # warnings there too
    **{check: "warning" for check in (
        "hooks.unknown-key", "lint.arch-unneeded", "lint.framework-deprecated",
        "lint.framework-prerelease", "lint.vcs", "security.ignored-field",
        "security.template-redundant", "lint.description-short", "qml.application-name",
        "desktop.exec-missing",
    )},
    # checks of ours that click-review does not make
    **{check: "pass" for check in (
        "desktop.exec-arg-missing", "desktop.exec-not-executable", "lint.arch-mismatch",
        "lint.build-leftover", "lint.hook-missing-desktop", "lint.installed-size",
        "lint.setuid", "lint.symlink-dangling", "lint.world-writable",
        "lint.framework-variant", "lint.abi-glibc", "lint.abi-soname", "lint.abi-unreadable",
    )},
}
_OUTCOMES = {0: "pass", 1: "refused", 2: "error", 3: "warning"}


def click_review(package: Path) -> str:
    if not CLICK_REVIEW.exists():
        pytest.fail(f"{CLICK_REVIEW} is missing; run ./scripts/setup as root")
    result = subprocess.run([str(CLICK_REVIEW), str(package)], capture_output=True, text=True,
                            timeout=seconds(300))
    outcome = _OUTCOMES.get(result.returncode, f"exit {result.returncode}")
    if outcome == "refused":
        assert "ERROR" in result.stdout + result.stderr, result
    return outcome


def test_every_check_has_a_recorded_store_outcome() -> None:
    assert set(STORE) == set(CASES)


@pytest.mark.oracle
def test_store_tool_passes_the_good_package(tmp_path: Path) -> None:
    assert click_review(craft(tmp_path / "good.click")) == "pass"


@pytest.mark.oracle
@pytest.mark.parametrize("check", sorted(CASES))
def test_store_tool_on_each_crafted_package(tmp_path: Path, check: str) -> None:
    kwargs, _ = CASES[check]
    assert click_review(craft(tmp_path / f"{check}.click", **kwargs)) == STORE[check]


_FACTS = """
import json, sys
from clickreviews.frameworks import FRAMEWORKS
from clickreviews.apparmor import APPARMOR_POLICIES
from clickreviews.cr_lint import ClickReviewLint
from clickreviews.cr_security import ClickReviewSecurity
from clickreviews.cr_desktop import ClickReviewDesktop
from clickreviews.cr_functional import QT_MIN_FRAMEWORKS
pkg = sys.argv[1]
lint, security, desktop = ClickReviewLint(pkg), ClickReviewSecurity(pkg), ClickReviewDesktop(pkg)
print(json.dumps({
    "frameworks": {k: (v if isinstance(v, str) else v.get("state")) for k, v in FRAMEWORKS.items()},
    "policies": APPARMOR_POLICIES["ubuntu"],
    "framework_policy": {k: v["policy_version"] for k, v in security.major_framework_policy.items()
                         if v.get("policy_vendor", "ubuntu") == "ubuntu"},
    "known_hooks": lint.known_hooks,
    "redflagged_hooks": lint.redflagged_hooks,
    "execs": desktop.expected_execs,
    "desktop_required": desktop.required_keys,
    "security_fields": security.all_fields,
    "redflag_fields": security.redflag_fields,
    "ignored_fields": security.ignored_fields,
    "qt": QT_MIN_FRAMEWORKS,
}))
"""


@pytest.mark.oracle
def test_tables_match_the_store_tool(tmp_path: Path) -> None:
    """Frameworks, policies, hooks and fields: ours against click-reviewers-tools' own data."""
    import json

    from click_build.framework_table import (
        FRAMEWORKS,
        POLICIES,
        POLICY_BY_PREFIX,
        QT_MIN_FRAMEWORK,
    )
    from click_build.review import desktop, lint, security

    python = CLICK_REVIEW.parent / "python"
    if not python.exists():
        pytest.fail(f"{python} is missing; run ./scripts/setup as root")
    facts = json.loads(subprocess.run(
        [str(python), "-c", _FACTS, str(craft(tmp_path / "good.click"))],
        capture_output=True, text=True, check=True, cwd=tmp_path).stdout)
    assert FRAMEWORKS == facts["frameworks"]
    assert set(POLICIES["ubuntu"]) == set(facts["policies"])
    for version, theirs in facts["policies"].items():
        ours = POLICIES["ubuntu"][version]
        assert ours.templates == set(theirs["templates"]["common"]), version
        assert ours.reserved_templates == set(theirs["templates"]["reserved"]), version
        assert ours.groups == set(theirs["policy_groups"]["common"]), version
        assert ours.reserved_groups == set(theirs["policy_groups"]["reserved"]), version
    assert {prefix: version for prefix, version in POLICY_BY_PREFIX} == {
        k: float(v) for k, v in facts["framework_policy"].items()}
    assert lint.KNOWN_HOOKS == set(facts["known_hooks"])
    assert set(lint.REVIEWED_HOOKS) == set(facts["redflagged_hooks"])
    assert set(facts["execs"]) <= set(desktop.LAUNCHERS)
    assert set(desktop.REQUIRED_KEYS) | {"X-Lomiri-Touch"} == set(facts["desktop_required"])
    assert security.ALL_FIELDS == set(facts["security_fields"])
    assert set(security.REDFLAG_FIELDS) == set(facts["redflag_fields"])
    assert set(security.IGNORED_FIELDS) == set(facts["ignored_fields"])
    assert QT_MIN_FRAMEWORK == facts["qt"]
