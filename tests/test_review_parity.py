"""Our review and the stores' own tool (click-reviewers-tools) name the same
problems with the same severities.

Each of our check ids maps to the click-reviewers-tools checks that report the
same defect (``STORE_NAMES``).  On every crafted package of tests/test_review.py
and on apps modelled on real ones (tests/review_apps.py) both tools run, and:

- every error or warning ``click-review --json`` gives is one of our findings'
  store checks, at the same severity (the store's manual-review errors count as
  errors, as ours do);
- every finding of ours that has a store equivalent is among the store's results,
  at the same severity.

Store checks listed in ``STORE_ALSO`` fire beside the one we map, on one
defect, for the reason given.  Checks of ours that the store does not make are
in ``OURS_ONLY``.  The OpenStore reviews an upload by running this same tool
(``click-review --json``: openstore-api, src/utils/review-package.ts) and holds
it when a result carries ``manual_review``; that file adds no check of its own.
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest
from conftest import CLICK_REVIEW
from deadlines import seconds
from review_apps import APPS
from review_cases import CASES, FRAMEWORKS_DIR
from review_craft import craft

from click_build.review import CHECKS, Finding, review_package

#: our check id -> the store's checks (``section:name``) for the same defect.
STORE_NAMES: dict[str, set[str]] = {
    "lint.package-invalid": {"lint:md5sums"},
    "lint.control": {"lint:control_extra_fields"},
    "lint.control-mismatch": {"lint:control_version_match"},
    "lint.manifest-field": {"lint:title_present"},
    "lint.maintainer": {"lint:maintainer_format"},
    "lint.description-missing": {"lint:description_present"},
    "lint.description-short": {"lint:description"},
    "lint.framework-unknown": {"lint:framework"},
    "lint.framework-obsolete": {"lint:framework"},
    "lint.framework-deprecated": {"lint:framework"},
    "lint.framework-prerelease": {"lint:framework"},
    "lint.arch-unsupported": {"lint:control_architecture_valid",
                              "lint:manifest_architecture_valid"},
    "lint.arch-all-compiled": {"lint:control_architecture_valid_contents"},
    "lint.arch-unneeded": {"lint:architecture_specified_needed"},
    "lint.qt-version": {"functional:qt_version_framework"},
    "lint.symlink-external": {"lint:external_symlinks"},
    "lint.hook-missing-apparmor": {"lint:hooks", "desktop:peer_hooks_required"},
    "lint.hook-unknown": {"desktop:peer_hooks_disallowed", "security:peer_hooks_disallowed"},
    "lint.hook-review": {"lint:hooks_redflag", "desktop:peer_hooks_disallowed"},
    "lint.vcs": {"lint:vcs_files"},
    "desktop.missing-key": {"desktop:required_keys", "desktop:Icon"},
    "desktop.type": {"desktop:Type", "desktop:validates"},
    "desktop.touch": {"desktop:X-Lomiri-Touch"},
    "desktop.path-key": {"desktop:blacklisted_keys"},
    "desktop.exec-absolute": {"desktop:Exec"},
    "desktop.exec-missing": {"desktop:Exec"},
    "desktop.launcher-obsolete": {"desktop:Exec_webapp_container"},
    "desktop.webapp-args": {"desktop:Exec_webapp_args_required"},
    "desktop.icon": {"desktop:Icon"},
    "security.policy-version": {"security:policy_version_exists",
                                "security:policy_groups_exists",
                                "security:policy_version_matches_framework"},
    "security.policy-mismatch": {"security:policy_version_matches_framework"},
    "security.policy-group-unknown": {"security:policy_groups_valid"},
    "security.policy-group-duplicate": {"security:policy_groups_duplicates"},
    "security.policy-group-reserved": {"security:policy_groups_safe"},
    "security.debug": {"security:policy_groups_safe"},
    "security.template-unknown": {"security:template_exists"},
    "security.template-unconfined": {"security:template_valid"},
    "security.template-redundant": {"security:template_valid"},
    "security.template-groups": {"security:policy_groups_webapp"},
    "security.redflag-field": {"security:redflag_fields"},
    "security.ignored-field": {"security:ignored_fields"},
    "qml.lomiri-framework": {"functional:qml_application_uses_lomiri"},
    "qml.application-name": {"functional:qml_applicationName_matches_manifest"},
    "hooks.missing-key": {"url_dispatcher:required_entry"},
    "hooks.bad-value": {"content_hub:valid"},
    "hooks.unknown-key": {"content_hub:unknown"},
    "hooks.push-helper-peers": {"push_helper:other_hooks", "push_helper:peer_hooks_disallowed"},
}
#: Checks of ours the store does not make (it passes those packages).
OURS_ONLY = {
    "desktop.exec-arg-missing", "desktop.exec-not-executable", "lint.arch-mismatch",
    "lint.build-leftover", "lint.hook-missing-desktop", "lint.installed-size", "lint.setuid",
    "lint.symlink-dangling", "lint.world-writable", "lint.framework-variant",
    "lint.abi-glibc", "lint.abi-soname", "lint.abi-unreadable",
}
#: Crafted cases the store refuses outright (an ERROR line, no results to compare;
#: test_review_oracle.py checks that it refuses them).
REFUSED = {
    "desktop.unreadable", "hooks.unreadable", "lint.hook-exclusive", "lint.hook-target-missing",
    "lint.manifest-key", "lint.no-apps", "security.field", "security.unreadable",
}
#: A framework only this machine knows: the store cannot know it (ours is an info).
NOT_COMPARABLE = {"lint.framework-local"}
#: case -> store checks that fire as well on that one defect, and why we do not.
STORE_ALSO: dict[str, dict[str, str]] = {
    "lint.arch-unsupported": {
        "lint:architecture_specified_needed": "the store does not see a MIPS ELF as code"},
    "lint.framework-obsolete": {
        "functional:qt_qml_import_versions_framework":
            "QtQuick 2.7 is newer than 15.04's Qt; we report the framework itself"},
    "lint.framework-unknown": {
        "security:policy_version_matches_framework":
            "no policy can match an unknown framework; we report the framework itself"},
    "lint.hook-unknown": {
        "lint:hooks_known": "the store also warns about the name; we give one error"},
    "lint.manifest-field": {
        "lint:control_description_match": "no title, so the control's Description differs"},
}


def _severity(store_severity: str) -> str:
    return {"error": "error", "warn": "warning"}[store_severity]


def store_results(package: Path) -> set[tuple[str, str]] | None:
    """``(section:name, severity)`` of every error and warning, None if refused."""
    if not CLICK_REVIEW.exists():
        pytest.fail(f"{CLICK_REVIEW} is missing; run ./scripts/setup as root")
    result = subprocess.run([str(CLICK_REVIEW), "--json", str(package)], capture_output=True,
                            text=True, timeout=seconds(300))
    try:
        report = json.loads(result.stdout)
    except ValueError:
        return None
    return {(":".join(name.split(":")[:2]), _severity(severity))
            for section in report.values() for severity in ("error", "warn")
            for name in section.get(severity, {})}


def assert_same(ours: list[Finding], theirs: set[tuple[str, str]],
                also: dict[str, str]) -> None:
    ours_set = {(f.check, f.severity) for f in ours if f.severity != "info"}
    for name, severity in theirs:
        if name in also:
            continue
        assert any(name in STORE_NAMES.get(check, set()) and severity == ours_severity
                   for check, ours_severity in ours_set), \
            f"the store reports {name} ({severity}); we report {sorted(ours_set)}"
    for check, severity in ours_set:
        if check in OURS_ONLY:
            continue
        assert check in STORE_NAMES, f"{check}: map it to the store's check or list it"
        assert any(name in STORE_NAMES[check] and sev == severity for name, sev in theirs), \
            f"we report {check} ({severity}); the store reports {sorted(theirs)}"


def test_every_check_is_mapped_or_ours_only() -> None:
    assert set(STORE_NAMES) | OURS_ONLY | REFUSED | NOT_COMPARABLE == set(CHECKS)
    assert not set(STORE_NAMES) & OURS_ONLY


@pytest.mark.oracle
@pytest.mark.parametrize("check", sorted(set(CASES) - REFUSED - NOT_COMPARABLE))
def test_crafted_package_same_as_store(tmp_path: Path, check: str) -> None:
    kwargs, _ = CASES[check]
    package = craft(tmp_path / f"{check}.click", **kwargs)
    theirs = store_results(package)
    assert theirs is not None, "the store refused the package outright"
    assert_same(review_package(package, frameworks_dir=FRAMEWORKS_DIR), theirs,
                STORE_ALSO.get(check, {}))


@pytest.mark.oracle
@pytest.mark.parametrize("app", sorted(APPS))
def test_real_world_app_same_as_store(tmp_path: Path, app: str) -> None:
    package = craft(tmp_path / f"{app}.click", **APPS[app])
    theirs = store_results(package)
    assert theirs is not None, "the store refused the package outright"
    assert_same(review_package(package), theirs, {})


@pytest.mark.oracle
def test_real_world_apps_cover_the_new_store_checks(tmp_path: Path) -> None:
    """The apps are not all clean: they carry the mistakes the parity is about."""
    seen = set()
    for app, kwargs in APPS.items():
        seen |= {f.check for f in review_package(craft(tmp_path / f"{app}.click", **kwargs))}
    assert {"qml.lomiri-framework", "qml.application-name", "lint.description-missing",
            "security.policy-group-reserved", "security.template-unconfined"} <= seen
