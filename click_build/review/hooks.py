"""hooks: the JSON files of the url-dispatcher, content-hub, push-helper and
accounts hooks, checked against what each service reads.
"""

from __future__ import annotations

import json

# The manifest's strict JSON rules (no duplicate keys, no NaN) apply to hook files too.
from ..manifest import _no_constant, _no_duplicates
from ._collect import MAX_PARSED_FILE
from .findings import Context

__all__ = ["check", "load_json"]

_URLS_EXAMPLE = '[{"protocol": "https", "domain-suffix": "example.com"}]'
_HUB_EXAMPLE = '{"source": ["pictures"]}'
_PUSH_EXAMPLE = '{"exec": "push-helper"}'
_ACCOUNTS_EXAMPLE = '{"services": [{"provider": "google", "description": "..."}]}'
CONTENT_HUB_KEYS = ("destination", "share", "source")
ACCOUNT_KEYS = ("plugin", "scope", "services", "translations")
ACCOUNT_SERVICE_KEYS = ("auth", "description", "name", "provider", "settings")
ACCOUNT_PLUGIN_KEYS = ("auth", "icon", "name", "qml", "settings")


def load_json(ctx: Context, path: str, check: str, what: str,
              example: str) -> tuple[bool, object]:
    """(True, the parsed JSON) of a hook file, or (False, None) once the reason is reported."""
    assert ctx.data is not None
    resolved = ctx.data.resolve(path)
    if resolved is not None and resolved in ctx.data.too_large:
        ctx.report.add(check, path, f"is larger than {MAX_PARSED_FILE >> 10} KiB; not a {what}",
                       "point the hook at the right file")
        return False, None
    raw = ctx.data.content(path)
    if raw is None:
        return False, None  # missing: reported by lint.hook-target-missing
    try:
        return True, json.loads(raw.decode("utf-8"), object_pairs_hook=_no_duplicates,
                          parse_constant=_no_constant)
    except UnicodeDecodeError as e:
        reason = f"is not valid UTF-8 (byte {e.start})"
    except json.JSONDecodeError as e:
        reason = f"is not valid JSON: {e.msg} at line {e.lineno} column {e.colno}"
    except (ValueError, RecursionError) as e:
        reason = f"is not valid JSON: {e}"
    ctx.report.add(check, path, reason, f"write it as JSON, e.g. {example}")
    return False, None


def _unknown(ctx: Context, path: str, where: str, keys: list[str], known: tuple[str, ...]) -> None:
    unknown = [k for k in keys if k not in known]
    if unknown:
        ctx.report.add("hooks.unknown-key", path,
                       f"{where} has keys the service ignores: {', '.join(unknown)}",
                       f"remove them or correct their spelling; known keys: {', '.join(known)}")


def _nonempty_str(value: object) -> bool:
    return isinstance(value, str) and value.strip() != ""


def _check_urls(ctx: Context, app: str, path: str, data: object) -> None:
    add = ctx.report.add
    if not isinstance(data, list):
        add("hooks.bad-value", path, "must be a list of URL patterns",
            f"write it like {_URLS_EXAMPLE}")
        return
    if not data:
        add("hooks.missing-key", path, "lists no URL patterns", f"write it like {_URLS_EXAMPLE}")
    for i, item in enumerate(data):
        if not isinstance(item, dict):
            add("hooks.bad-value", path, f"entry {i + 1} is not an object",
                f"write it like {_URLS_EXAMPLE}")
            continue
        if "protocol" not in item:
            add("hooks.missing-key", path, f"entry {i + 1} has no protocol",
                f"add the URL scheme the app opens, e.g. {_URLS_EXAMPLE}")
        for key in ("protocol", "domain-suffix"):
            if key in item and not _nonempty_str(item[key]):
                add("hooks.bad-value", path, f"entry {i + 1}: {key} must be a non-empty string",
                    f"write it like {_URLS_EXAMPLE}")
        _unknown(ctx, path, f"entry {i + 1}", sorted(item), ("domain-suffix", "protocol"))


def _check_content_hub(ctx: Context, app: str, path: str, data: object) -> None:
    add = ctx.report.add
    if not isinstance(data, dict):
        add("hooks.bad-value", path, "must be a JSON object", f"write it like {_HUB_EXAMPLE}")
        return
    if not any(k in data for k in CONTENT_HUB_KEYS):
        add("hooks.missing-key", path,
            f"declares none of {', '.join(CONTENT_HUB_KEYS)}",
            f"say which content the app offers or accepts, e.g. {_HUB_EXAMPLE}")
    for key in CONTENT_HUB_KEYS:
        if key not in data:
            continue
        value = data[key]
        if not isinstance(value, list) or not value or not all(_nonempty_str(v) for v in value):
            add("hooks.bad-value", path,
                f"{key} must be a non-empty list of content types",
                f"write it like {_HUB_EXAMPLE} (types such as pictures, documents, music, "
                "videos, contacts, links)")
    _unknown(ctx, path, "the file", sorted(data), CONTENT_HUB_KEYS)


def _check_push_helper(ctx: Context, app: str, path: str, data: object) -> None:
    add = ctx.report.add
    assert ctx.data is not None
    if not isinstance(data, dict):
        add("hooks.bad-value", path, "must be a JSON object", f"write it like {_PUSH_EXAMPLE}")
        return
    if "exec" not in data:
        add("hooks.missing-key", path, "has no exec",
            f"name the helper program, e.g. {_PUSH_EXAMPLE}")
    for key in ("exec", "app_id"):
        if key in data and not _nonempty_str(data[key]):
            add("hooks.bad-value", path, f"{key} must be a non-empty string",
                f"write it like {_PUSH_EXAMPLE}")
    program = data.get("exec")
    if _nonempty_str(program) and isinstance(program, str) and not program.startswith("/"):
        if ctx.data.kind(program) != "file":
            add("hooks.bad-value", path, f"exec names {program!r}, which is not in the package",
                "ship the helper at that path (relative to the package root)")
    _unknown(ctx, path, "the file", sorted(data), ("app_id", "exec"))
    others = sorted(set(ctx.hooks[app]) - {"push-helper", "apparmor"})
    if others:
        add("hooks.push-helper-peers", "manifest",
            f"app {app!r} has a push-helper and also {', '.join(others)}",
            "give the push helper an app of its own with only 'push-helper' and 'apparmor' "
            "hooks")


def _check_accounts(ctx: Context, app: str, path: str, data: object) -> None:
    add = ctx.report.add
    assert ctx.data is not None
    if not isinstance(data, dict):
        add("hooks.bad-value", path, "must be a JSON object",
            f"write it like {_ACCOUNTS_EXAMPLE}")
        return
    services, plugin = data.get("services"), data.get("plugin")
    if not services and not plugin:
        add("hooks.missing-key", path, "has neither services nor plugin",
            f"list the online accounts the app uses, e.g. {_ACCOUNTS_EXAMPLE}")
    if services is not None:
        if not isinstance(services, list):
            add("hooks.bad-value", path, "services must be a list",
                f"write it like {_ACCOUNTS_EXAMPLE}")
        else:
            for i, service in enumerate(services):
                where = f"services[{i}]"
                if not isinstance(service, dict):
                    add("hooks.bad-value", path, f"{where} is not an object",
                        f"write it like {_ACCOUNTS_EXAMPLE}")
                    continue
                if not _nonempty_str(service.get("provider")):
                    add("hooks.missing-key", path, f"{where} has no provider",
                        "name the account provider, e.g. \"provider\": \"google\"")
                _unknown(ctx, path, where, sorted(service), ACCOUNT_SERVICE_KEYS)
    if plugin is not None:
        if not isinstance(plugin, dict):
            add("hooks.bad-value", path, "plugin must be an object",
                "write it like {\"plugin\": {\"name\": ..., \"icon\": ..., \"qml\": ...}}")
        else:
            for key in ("name", "icon", "qml"):
                if not _nonempty_str(plugin.get(key)):
                    add("hooks.missing-key", path, f"plugin has no {key}",
                        "an account plugin needs name, icon and qml")
            qml = plugin.get("qml")
            if (_nonempty_str(qml) and isinstance(qml, str) and not qml.startswith("/")
                    and ctx.data.kind(qml) is None):
                add("hooks.bad-value", path, f"plugin.qml names {qml!r}, which is not in the "
                    "package", "ship the plugin's QML at that path")
            _unknown(ctx, path, "plugin", sorted(plugin), ACCOUNT_PLUGIN_KEYS)
    if "translations" in data and not isinstance(data["translations"], str):
        add("hooks.bad-value", path, "translations must be a string (a gettext domain)",
            "write it like \"translations\": \"myapp\"")
    if "scope" in data and not isinstance(data["scope"], bool):
        add("hooks.bad-value", path, "scope must be true or false", "write \"scope\": true")
    _unknown(ctx, path, "the file", sorted(data), ACCOUNT_KEYS)


_HOOKS = {
    "urls": (_check_urls, "url-dispatcher file", _URLS_EXAMPLE),
    "content-hub": (_check_content_hub, "content-hub file", _HUB_EXAMPLE),
    "push-helper": (_check_push_helper, "push-helper file", _PUSH_EXAMPLE),
    "accounts": (_check_accounts, "accounts file", _ACCOUNTS_EXAMPLE),
}

#: The hooks whose files this module reads.
JSON_HOOKS = tuple(_HOOKS)


def check(ctx: Context) -> None:
    """Every url-dispatcher, content-hub, push-helper and accounts hook file."""
    for app, hooks in sorted(ctx.hooks.items()):
        for hook, (checker, what, example) in _HOOKS.items():
            path = hooks.get(hook)
            if path is None:
                continue
            ok, data = load_json(ctx, path, "hooks.unreadable", what, example)
            if ok:
                checker(ctx, app, path, data)
