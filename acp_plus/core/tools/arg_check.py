"""A tool call's arguments checked against the tool's parameter schema, as native does
before a tool runs: every violation in schema-walk order, in native's words, joined into
one `invalid arguments: ...` error (`arguments_error`).

The schema subset native checks: `object` (properties, required, `additionalProperties:
false`), `array` (items), the scalars with `enum` and `const`, and `oneOf` (exactly one
branch must match; a workflow child's structured output may use it). A path is dotted
(`todos[0].status`); the root is called `arguments`, or what `path` names.
"""

from __future__ import annotations

import json
import math
from typing import Any


def _path(path: str) -> str:
    return path or "arguments"


def _child(path: str, key: str) -> str:
    return key if not path else f"{path}.{key}"


def _js(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))


_TYPE_CHECKS: dict[str, tuple[str, Any]] = {
    "string": ("a string", lambda v: isinstance(v, str)),
    "boolean": ("a boolean", lambda v: isinstance(v, bool)),
    "number": (
        "a number",  # JSON gives no non-finite number: `tool_arguments` refuses them
        lambda v: isinstance(v, int | float) and not isinstance(v, bool),
    ),
    "integer": (
        "an integer",
        lambda v: (
            isinstance(v, int | float)
            and not isinstance(v, bool)
            and math.isfinite(v)
            and float(v).is_integer()
        ),
    ),
    "null": ("null", lambda v: v is None),
}


def violations(schema: dict[str, Any], value: Any, path: str = "") -> list[str]:
    """Every way `value` breaks `schema`, in native's order and wording."""
    kind = schema.get("type")
    where = f'"{_path(path)}"'
    branches = schema.get("oneOf")
    if isinstance(branches, list):
        matched = sum(1 for branch in branches if not violations(branch, value, path))
        if matched == 1:
            return []
        return [f"{where} must match exactly one oneOf branch (matched {matched})"]
    if kind == "object":
        if not isinstance(value, dict):
            return [f"{where} must be an object"]
        properties: dict[str, Any] = schema.get("properties") or {}
        found = [
            f'missing required property "{_child(path, key)}"'
            for key in schema.get("required") or []
            if value.get(key) is None and key not in value
        ]
        for key, child in properties.items():
            if key in value:
                found += violations(child, value[key], _child(path, key))
        if schema.get("additionalProperties") is False:
            found += [
                f'"{_child(path, key)}" is not a declared property (additionalProperties: false)'
                for key in value
                if key not in properties
            ]
        return found
    if kind == "array":
        if not isinstance(value, list):
            return [f"{where} must be an array"]
        items = schema.get("items")
        found = []
        if isinstance(items, dict):
            for index, entry in enumerate(value):
                found += violations(items, entry, f"{path}[{index}]")
        return found
    if kind in _TYPE_CHECKS:
        noun, check = _TYPE_CHECKS[kind]
        if not check(value):
            return [f"{where} must be {noun}"]
        allowed = schema.get("enum")
        if isinstance(allowed, list) and not any(_same(value, entry) for entry in allowed):
            return [f"{where} must be one of {_js(allowed)}"]
        if "const" in schema and not _same(value, schema["const"]):
            return [f"{where} must be {_js(schema['const'])}"]
    return []


def _same(value: Any, entry: Any) -> bool:
    """JavaScript's `===` on JSON scalars: `true` is not `1`, `1.0` is `1`."""
    return isinstance(value, bool) == isinstance(entry, bool) and value == entry


def arguments_error(schema: dict[str, Any], value: Any) -> str | None:
    """Native's error for a call whose arguments break the schema, or None."""
    found = violations(schema, value)
    return f"invalid arguments: {'; '.join(found)}" if found else None


__all__ = ["arguments_error", "violations"]
