"""security: each app's AppArmor JSON, as the store's security review reads it.

The file must be a JSON object of known fields; its policy_version must exist
and match the framework; its template and policy groups must exist in that
policy version.  Reserved groups, the 'unconfined' template and red-flag
fields are allowed only after a manual review, so they are flagged.
"""

from __future__ import annotations

from ..framework_table import POLICIES, Policy, policy, policy_key, policy_version_for
from .findings import Context
from .hooks import load_json

__all__ = ["check"]

ALL_FIELDS = frozenset({
    "abstractions", "author", "binary", "comment", "copyright", "name", "policy_groups",
    "policy_vendor", "policy_version", "read_path", "template", "template_variables",
    "write_path",
})
LIST_FIELDS = ("abstractions", "policy_groups", "read_path", "write_path")
IGNORED_FIELDS = ("author", "comment", "copyright", "name")
REDFLAG_FIELDS = ("abstractions", "binary", "read_path", "template_variables", "write_path")
REDUNDANT_TEMPLATES = ("default", "ubuntu-sdk")
#: template -> (groups it requires, groups it allows); the store's rules.
TEMPLATE_GROUPS: dict[str, tuple[frozenset[str], frozenset[str]]] = {
    "ubuntu-webapp": (frozenset({"networking"}), frozenset({
        "accounts", "audio", "camera", "connectivity", "content_exchange",
        "content_exchange_source", "keep-display-on", "location", "microphone", "networking",
        "video", "webview"})),
    "ubuntu-push-helper": (frozenset({"push-notification-client"}),
                           frozenset({"push-notification-client"})),
    "ubuntu-account-plugin": (frozenset({"accounts", "networking"}),
                              frozenset({"accounts", "networking", "audio", "webview"})),
    "ubuntu-scope-network": (frozenset(), frozenset({"accounts", "networking"})),
}
_EXAMPLE = '{"policy_groups": ["networking"], "policy_version": 20.04}'


def _type_problem(key: str, value: object) -> str | None:
    if key in LIST_FIELDS:
        if not isinstance(value, list):
            return "must be a list"
        if key == "policy_groups" and not all(isinstance(v, str) for v in value):
            return "must be a list of strings"
    elif key == "template_variables":
        if not isinstance(value, dict):
            return "must be an object"
    elif key == "policy_version":
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            return "must be a JSON number such as 20.04, not a string"
        if not -1e9 < value < 1e9:
            return "is not a policy version (a number such as 20.04)"
    elif not isinstance(value, str):
        return "must be a string"
    return None


def _check_file(ctx: Context, app: str, path: str, data: dict[str, object]) -> None:
    add = ctx.report.add
    for key in sorted(data):
        if key not in ALL_FIELDS:
            add("security.field", path, f"has the unsupported field {key!r}",
                f"remove it; the fields are: {', '.join(sorted(ALL_FIELDS))}")
            continue
        problem = _type_problem(key, data[key])
        if problem:
            add("security.field", path, f"{key} {problem}", f"write it like {_EXAMPLE}")
    ignored = [k for k in IGNORED_FIELDS if k in data]
    if ignored:
        add("security.ignored-field", path, f"has fields AppArmor ignores: {', '.join(ignored)}",
            "remove them")
    flagged = [k for k in REDFLAG_FIELDS if k in data]
    if flagged:
        add("security.redflag-field", path,
            f"uses {', '.join(flagged)}, which the stores review by hand",
            "use policy groups instead where you can; explain the need when you upload")
    version = data.get("policy_version")
    if "policy_version" not in data:
        add("security.field", path, "has no policy_version",
            f"add the framework's policy version, e.g. {_EXAMPLE}")
        return
    if _type_problem("policy_version", version):
        return
    assert isinstance(version, (int, float))
    vendor = data.get("policy_vendor", "ubuntu")
    if not isinstance(vendor, str):
        return
    pol = policy(vendor, version)
    if vendor not in POLICIES:
        add("security.policy-version", path, f"policy_vendor {vendor!r} does not exist",
            "remove policy_vendor (the default, 'ubuntu', is the only vendor for apps)")
        return
    if pol is None:
        known = ", ".join(sorted(POLICIES[vendor], key=float))
        add("security.policy-version", path,
            f"policy_version {version} does not exist (known: {known})",
            "use the policy version of your framework, e.g. 20.04 for ubuntu-sdk-20.04")
        return
    match = policy_version_for(ctx.frameworks)
    if match is not None and float(version) != match[1]:
        add("security.policy-mismatch", path,
            f"policy_version {version} does not match framework {match[0]!r}, which needs "
            f"{policy_key(match[1])}",
            f"set \"policy_version\": {policy_key(match[1]).removesuffix('.0')} (or change the "
            "framework)")
    _check_template_and_groups(ctx, path, data, pol, policy_key(version))


def _check_template_and_groups(ctx: Context, path: str, data: dict[str, object], pol: Policy,
                               version: str) -> None:
    add = ctx.report.add
    template = data.get("template")
    if isinstance(template, str):
        if template in pol.reserved_templates:
            add("security.template-unconfined", path,
                f"template {template!r} turns confinement off; stores review it by hand",
                "drop the template and ask only for the policy groups the app needs")
        elif template in REDUNDANT_TEMPLATES:
            add("security.template-redundant", path,
                f"template {template!r} is the default; no need to name it",
                "remove the template line")
        elif not pol.knows_template(template):
            add("security.template-unknown", path,
                f"template {template!r} does not exist in policy version {version}",
                f"use one of: {', '.join(sorted(pol.templates))} (or none)")
    groups = data.get("policy_groups")
    if not isinstance(groups, list) or not all(isinstance(g, str) for g in groups):
        return
    seen: set[str] = set()
    for group in groups:
        if group in seen:
            add("security.policy-group-duplicate", path, f"lists policy group {group!r} twice",
                "list each group once")
            continue
        seen.add(group)
        if group == "debug" and pol.knows_group(group):
            add("security.debug", path,
                "uses the 'debug' policy group, which is not for published apps",
                "remove 'debug' from policy_groups before you publish")
        elif group in pol.reserved_groups:
            add("security.policy-group-reserved", path,
                f"policy group {group!r} is reserved: stores approve it only after a manual "
                "review", f"remove {group!r} unless the app cannot work without it; prefer "
                "content_exchange to reach the user's files")
        elif group not in pol.groups:
            add("security.policy-group-unknown", path,
                f"policy group {group!r} does not exist in policy version {version}",
                f"use groups from: {', '.join(sorted(pol.groups))}")
    rule = TEMPLATE_GROUPS.get(template) if isinstance(template, str) else None
    if rule is not None:
        required, allowed = rule
        missing = sorted(required - seen)
        extra = sorted(seen - allowed)
        if missing or extra:
            parts = ([f"lacks {', '.join(missing)}"] if missing else []) + (
                [f"may not use {', '.join(extra)}"] if extra else [])
            add("security.template-groups", path,
                f"template {template!r} {' and '.join(parts)}",
                f"with this template use {', '.join(sorted(allowed))}"
                + (f" including {', '.join(sorted(required))}" if required else ""))


def check(ctx: Context) -> None:
    """Every apparmor hook's file."""
    assert ctx.data is not None
    for app, hooks in sorted(ctx.hooks.items()):
        path = hooks.get("apparmor")
        if path is None:
            continue
        ok, data = load_json(ctx, path, "security.unreadable", "AppArmor file", _EXAMPLE)
        if not ok:
            continue
        if not isinstance(data, dict):
            ctx.report.add("security.unreadable", path, "is not a JSON object",
                           f"write it as an object, e.g. {_EXAMPLE}")
            continue
        _check_file(ctx, app, path, data)

