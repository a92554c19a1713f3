"""The values the generators draw from, read from the schemas rather than listed here.

The scenario schema (`parity/schema/scenario.schema.json`) names the finish kinds, the
permission answers, the cancel routes and the update kinds; the ACP schema names the
prompt content block types, the permission option kinds and the request methods.
Reading them here means a new finish kind or permission answer in the scenario model is
explored without touching the generators. Pure apart from reading the two schema files once.
"""

from __future__ import annotations

import functools
import json
from pathlib import Path
from typing import Any

from parity.checks.acp_schema import SchemaError, load_schema

SCENARIO_SCHEMA = Path(__file__).resolve().parents[1] / "schema" / "scenario.schema.json"


@functools.cache
def scenario_schema() -> dict[str, Any]:
    data: dict[str, Any] = json.loads(SCENARIO_SCHEMA.read_text(encoding="utf-8"))
    return data


def _enum(definition: dict[str, Any]) -> tuple[str, ...]:
    return tuple(str(v) for v in definition["enum"])


def finish_kinds() -> tuple[str, ...]:
    """`stop`, `tool-calls`, `max-tokens`: the scenario model's finish reasons."""
    return _enum(scenario_schema()["$defs"]["llmEntry"]["properties"]["finish"])


def permission_replies() -> tuple[str, ...]:
    """The answers the client can give at once (`allow-once`, ..., `error`)."""
    return _enum(scenario_schema()["$defs"]["permissionReply"])


CANCEL_METHODS = {"session_cancel": "session/cancel", "cancel_request": "$/cancel_request"}
"""The ACP method each cancel route sends (`parity.driver.prompt`); a test holds it to
the scenario schema's routes."""


def cancel_routes(ignored: frozenset[str] = frozenset()) -> tuple[str, ...]:
    """How a prompt is cancelled: `session_cancel`, `cancel_request`; without the routes
    whose method is `ignored` (a target's `ignores`)."""
    steps = scenario_schema()["$defs"]["step"]
    found = _find_key(steps, "via")
    routes = _enum(found) if found else ("session_cancel",)
    return tuple(r for r in routes if CANCEL_METHODS.get(r) not in ignored)


def _find_key(node: Any, key: str) -> dict[str, Any] | None:
    """The first mapping under `key` anywhere in `node` (the step schema nests deeply)."""
    if isinstance(node, dict):
        if isinstance(node.get(key), dict) and "enum" in node[key]:
            return dict(node[key])
        for value in node.values():
            found = _find_key(value, key)
            if found is not None:
                return found
    elif isinstance(node, list):
        for value in node:
            found = _find_key(value, key)
            if found is not None:
                return found
    return None


@functools.cache
def acp_schema() -> dict[str, Any] | None:
    """The pinned ACP schema, or None where it was never fetched (generation then keeps
    to what the scenario model alone can say)."""
    try:
        return load_schema()
    except SchemaError:
        return None


def content_block_types() -> tuple[str, ...]:
    """The `type` of each ACP `ContentBlock` variant (text, image, audio, ...)."""
    schema = acp_schema()
    if schema is None:
        return ("text",)
    block = schema["$defs"].get("ContentBlock", {})
    types: list[str] = []
    for variant in block.get("oneOf", block.get("anyOf", [])):
        const = variant.get("properties", {}).get("type", {}).get("const")
        if isinstance(const, str):
            types.append(const)
    return tuple(types) or ("text",)


def permission_option_kinds() -> tuple[str, ...]:
    """ACP's `PermissionOptionKind` values (`allow_once`, `allow_always`, ...): an agent
    may use them as its options' ids, and a client may select one the agent never
    offered (`{option: allow_always}`)."""
    schema = acp_schema()
    kind = schema["$defs"].get("PermissionOptionKind", {}) if schema else {}
    consts = [v.get("const") for v in kind.get("oneOf", [])]
    return tuple(c for c in consts if isinstance(c, str)) or ("allow_always",)


def agent_requests(ignored: frozenset[str] = frozenset()) -> dict[str, dict[str, Any]]:
    """Method -> `$defs` entry of every request a client may send the agent, but the
    `ignored` ones."""
    return {m: d for m, d in _methods("Request").items() if m not in ignored}


def agent_notifications(ignored: frozenset[str] = frozenset()) -> dict[str, dict[str, Any]]:
    """Method -> `$defs` entry of every notification a client may send the agent, but
    the `ignored` ones."""
    return {m: d for m, d in _methods("Notification").items() if m not in ignored}


def _methods(suffix: str) -> dict[str, dict[str, Any]]:
    schema = acp_schema()
    if schema is None:
        return {}
    out: dict[str, dict[str, Any]] = {}
    for name, definition in sorted(schema["$defs"].items()):
        if not (isinstance(definition, dict) and name.endswith(suffix)):
            continue
        method = definition.get("x-method")
        if isinstance(method, str) and definition.get("x-side") == "agent":
            out[method] = definition
    return out
