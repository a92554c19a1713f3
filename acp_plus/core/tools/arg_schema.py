"""A built-in tool's arguments checked against its parameter schema, as native does before
it runs the tool, with native's violation texts. Pure.

Native validates the parsed arguments of its own tools against the JSON Schema it shows
the model and refuses the call with `invalid arguments: <violations joined by "; ">`
(each violation names the property path, `arguments` for the root). The walk order is
native's: an object's missing required properties first (in `required` order), then each
declared property present in the value, in `properties` order. Only the schema subset
the built-in tools use is handled: object, string, number, integer, boolean, array and
null nodes, and `enum`.
"""

from __future__ import annotations

import math
from typing import Any

from acp_plus.core.js_json import js_json


def _label(path: str) -> str:
    return path or "arguments"


def _child(path: str, key: str) -> str:
    return key if not path else f"{path}.{key}"


def _is_number(value: Any) -> bool:
    # JSON booleans are Python ints; JavaScript's typeof keeps them apart.
    return isinstance(value, int | float) and not isinstance(value, bool)


def _scalar(node: dict[str, Any], value: Any, path: str) -> list[str]:
    allowed = node.get("enum")
    if allowed is not None and not any(
        type(value) is type(item) and value == item for item in allowed
    ):
        return [f'"{_label(path)}" must be one of {js_json(allowed)}']
    return []


def _check(node: dict[str, Any], value: Any, path: str) -> list[str]:
    kind = node.get("type")
    label = _label(path)
    if kind == "object":
        if not isinstance(value, dict):
            return [f'"{label}" must be an object']
        found = [
            f'missing required property "{_child(path, key)}"'
            for key in node.get("required", [])
            if key not in value
        ]
        for key, child in node.get("properties", {}).items():
            if key in value:
                found += _check(child, value[key], _child(path, key))
        return found
    if kind == "array":
        if not isinstance(value, list):
            return [f'"{label}" must be an array']
        items = node.get("items")
        found = []
        if items is not None:
            for index, item in enumerate(value):
                found += _check(items, item, f"{path}[{index}]")
        return found
    if kind == "string":
        return (
            _scalar(node, value, path)
            if isinstance(value, str)
            else [f'"{label}" must be a string']
        )
    if kind == "number":
        if not _is_number(value):
            return [f'"{label}" must be a number']
        if isinstance(value, float) and not math.isfinite(value):
            return [f'"{label}" must be a finite JSON number']
        return _scalar(node, value, path)
    if kind == "integer":
        if not _is_number(value) or not float(value).is_integer():
            return [f'"{label}" must be an integer']
        return _scalar(node, value, path)
    if kind == "boolean":
        return (
            _scalar(node, value, path)
            if isinstance(value, bool)
            else [f'"{label}" must be a boolean']
        )
    if kind == "null":
        return [] if value is None else [f'"{label}" must be null']
    return []


def violations(schema: dict[str, Any], args: Any) -> list[str]:
    """Every way `args` breaks `schema`, in native's order; empty when it conforms."""
    return _check(schema, args, "")


def invalid_arguments(schema: dict[str, Any], args: Any) -> str | None:
    """Native's error message for arguments that break `schema`, or None."""
    found = violations(schema, args)
    return f"invalid arguments: {'; '.join(found)}" if found else None


__all__ = ["invalid_arguments", "violations"]
