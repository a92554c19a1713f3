"""Generator of `acp_plus/protocol/schema_table.py`: the ACP JSON schema -> the compact table
`schema_check.py` parses request params with (dev time only; acp-plus never reads the
JSON schema at run time).

    python -m acp_plus.protocol.schema_gen [SCHEMA_JSON]   # default: parity/schema/acp/schema.json

The input is the project's pinned ACP schema (`parity/checks/acp_schema.py`: the v1
schema of the ACP TypeScript SDK 2.4.0, Apache-2.0, parity/schema/acp/schema.json). Each
node is translated the way the reference native's SDK (ACP TypeScript SDK 1.4.0, in
native dsh-acp 0.2.1-rc.2, zod 4.4.3) translates its own schema into zod: `required` ->
the bare type, otherwise `.optional()` (`.optional().default(d)` with a `default`), a
nullable type `.nullish()`, `oneOf`/`anyOf` -> `z.union`, a variant that adds a `type`
const to a `$ref` -> `Ref.and(z.object({type: z.literal(..)}))`, `properties` beside
`anyOf` -> `z.intersection(union, object)`, a bounded integer -> `z.int().gte().lte()`,
an int64 -> `z.number()`, and the two leniencies:

- `x-deserialize-default-on-error`: a value the property's schema refuses is replaced
  by a fallback (zod `.catch`) instead of failing the request: the `default` when the
  property has one, `[]` for a non-null array, else absent. A *required* such property
  still refuses a missing key, with the custom issue `Required value is missing`.
- `x-deserialize-skip-invalid-items`: an array drops the items its item schema
  refuses (and never fails because of one).

Object keys keep the schema's order: zod checks them in that order, so it is the order
of the issues. Where the pinned schema differs from 1.4.0's, the generator follows
1.4.0 (`BASELINE_*` below; each is a difference between the two schemas, and the live
native agrees): `x-deserialize-default-on-null` (2.4.0 only) is ignored; session/new,
load and resume's `mcpServers` and `additionalDirectories` have default-on-error and
skip-invalid-items; `McpServer` has the unstable `acp` variant; `ClientSessionCapabilities`
has no `notices`. (1.4.0's `ClientCapabilities` also has `plan`, `nes` and
`positionEncodings`; like every capability they are caught, so they never fail a
request, and acp-plus reads none of them.)

Native 0.1.0-rc.8's SDK (0.25.1) had neither leniency on most keys: its answers that
differ are version facts in known-differences.yaml (`native-rc8-schema-*`).
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

Node = str | tuple[Any, ...]
"""A table node: a leaf kind (`"string"`, `"boolean"`, `"number"`, `"record"`,
`"unknown"`), `"#Name"` for a `$defs` entry, or a tuple: `("int", min, max)`,
`("literal", value)`, `("enum", values)`, `("array", items)`, `("skip", items)` (an
array that drops refused items), `("union", options)`, `("and", left, right)`,
`("object", ((key, node, presence[, extras]), ...))` with presence `required`,
`optional`, `nullish` or `nullable`, and extras `{"default": value}` (the value of an
absent key) and `{"catch": "default" | "empty" | "absent"}` (a refused value becomes the
default, `[]`, or absent)."""

METHODS = (
    "initialize",
    "authenticate",
    "session/new",
    "session/load",
    "session/resume",
    "session/list",
    "session/close",
    "session/prompt",
    "session/set_mode",
    "session/set_config_option",
    "session/cancel",
)
"""The standard ACP methods acp-plus serves (and the one notification it reads)."""

BASELINE_DEFS: dict[str, Any] = {
    # 1.4.0's unstable ACP-transport MCP server (zMcpServerAcp).
    "McpServerAcp": {
        "type": "object",
        "properties": {
            "name": {"type": "string"},
            "serverId": {"type": "string"},
            "_meta": {
                "type": ["object", "null"],
                "x-deserialize-default-on-error": True,
                "additionalProperties": True,
            },
        },
        "required": ["name", "serverId"],
    },
}
BASELINE_VARIANTS: dict[str, tuple[int, Any]] = {
    "McpServer": (
        2,
        {
            "type": "object",
            "properties": {"type": {"type": "string", "const": "acp"}},
            "required": ["type"],
            "allOf": [{"$ref": "#/$defs/McpServerAcp"}],
        },
    ),
}
_LENIENT_ARRAY = {"x-deserialize-default-on-error": True, "x-deserialize-skip-invalid-items": True}
BASELINE_PROPERTIES: dict[tuple[str, str], dict[str, Any]] = {
    (request, key): _LENIENT_ARRAY
    for request in ("NewSessionRequest", "LoadSessionRequest", "ResumeSessionRequest")
    for key in ("mcpServers", "additionalDirectories")
}
"""Annotations 1.4.0's schema adds to a property of the pinned one."""
BASELINE_DROPPED: dict[str, tuple[str, ...]] = {"ClientSessionCapabilities": ("notices",)}
"""Properties the pinned schema has and 1.4.0's does not."""

_INT_AS_NUMBER = ("int64", "uint64")


def request_defs(defs: dict[str, Any]) -> dict[str, str]:
    """Each served method -> its params `$defs` entry (the schema's `x-method`)."""
    found: dict[str, str] = {}
    for name, node in defs.items():
        method = node.get("x-method") if isinstance(node, dict) else None
        if method in METHODS and node.get("x-side") == "agent" and not name.endswith("Response"):
            found[method] = name
    return {method: found[method] for method in METHODS if method in found}


def build(schema: dict[str, Any]) -> tuple[dict[str, str], dict[str, Node]]:
    """(method -> def name, def name -> node) for the methods, with the baseline applied."""
    defs = dict(schema["$defs"])
    defs.update(BASELINE_DEFS)
    for name, (index, variant) in BASELINE_VARIANTS.items():
        node = dict(defs[name])
        key = "anyOf" if "anyOf" in node else "oneOf"
        variants = list(node[key])
        variants.insert(index, variant)
        node[key] = variants
        defs[name] = node
    # A schema without the def or the key (a test's small one) has nothing to adjust.
    for (name, key), extra in BASELINE_PROPERTIES.items():
        props = defs.get(name, {}).get("properties", {})
        if key in props:
            defs[name] = {**defs[name], "properties": {**props, key: {**props[key], **extra}}}
    for name, keys in BASELINE_DROPPED.items():
        props = defs.get(name, {}).get("properties", {})
        kept = {k: v for k, v in props.items() if k not in keys}
        if kept != props:
            defs[name] = {**defs[name], "properties": kept}
    methods = request_defs(defs)
    table: dict[str, Node] = {}
    pending = list(methods.values())
    while pending:
        name = pending.pop(0)
        if name in table:
            continue
        table[name] = _convert(defs[name], pending)
    return methods, dict(sorted(table.items()))


def _ref_name(node: dict[str, Any]) -> str:
    return str(node["$ref"]).rsplit("/", 1)[-1]


def _nullable(node: dict[str, Any]) -> tuple[dict[str, Any], bool]:
    """The node without its null alternative, and whether it had one."""
    kinds = node.get("type")
    if isinstance(kinds, list) and "null" in kinds:
        rest = [k for k in kinds if k != "null"]
        return {**node, "type": rest[0] if len(rest) == 1 else rest}, True
    options = node.get("anyOf")
    if isinstance(options, list) and {"type": "null"} in options:
        rest = [o for o in options if o != {"type": "null"}]
        inner = rest[0] if len(rest) == 1 else {"anyOf": rest}
        return inner, True
    return node, False


def _convert(node: dict[str, Any], pending: list[str]) -> Node:
    if "$ref" in node:
        name = _ref_name(node)
        pending.append(name)
        return f"#{name}"
    variants = node.get("oneOf") or node.get("anyOf")
    if variants is not None and "properties" in node:
        union = ("union", tuple(_variant(v, pending) for v in variants))
        return ("and", union, _object(node, pending))
    if variants is not None:
        return ("union", tuple(_variant(v, pending) for v in variants))
    if "allOf" in node:
        (only,) = node["allOf"]
        return _convert(only, pending)
    if "const" in node:
        return ("literal", node["const"])
    if "enum" in node:
        return ("enum", tuple(node["enum"]))
    kind = node.get("type")
    if kind in ("string", "boolean", "number"):
        return str(kind)
    if kind == "integer":
        if node.get("format") in _INT_AS_NUMBER:
            return "number"
        return ("int", node.get("minimum"), node.get("maximum"))
    if kind == "array":
        return ("array", _convert(node.get("items", {}), pending))
    if kind == "object":
        return _object(node, pending) if "properties" in node else "record"
    return "unknown"


def _variant(node: dict[str, Any], pending: list[str]) -> Node:
    """One `oneOf`/`anyOf` variant: a `$ref` plus a tag object becomes `Ref.and(tag)`."""
    if "allOf" in node and "properties" in node:
        (only,) = node["allOf"]
        tag = {k: v for k, v in node.items() if k != "allOf"}
        return ("and", _convert(only, pending), _object(tag, pending))
    return _convert(node, pending)


def _object(node: dict[str, Any], pending: list[str]) -> Node:
    required = set(node.get("required", ()))
    props: list[tuple[Any, ...]] = []
    for key, prop in node.get("properties", {}).items():
        inner, nullable = _nullable(prop)
        if key in required:
            presence = "nullable" if nullable else "required"
        else:
            presence = "nullish" if nullable else "optional"
        child = _convert(inner, pending)
        if prop.get("x-deserialize-skip-invalid-items") is True and child[0] == "array":
            child = ("skip", child[1])
        extras: dict[str, Any] = {}
        if "default" in prop and key not in required:
            extras["default"] = prop["default"]
        if prop.get("x-deserialize-default-on-error") is True:
            if "default" in extras:
                extras["catch"] = "default"
            elif not nullable and child[0] in ("array", "skip"):
                extras["catch"] = "empty"
            else:
                extras["catch"] = "absent"
        props.append((key, child, presence, extras) if extras else (key, child, presence))
    return ("object", tuple(props))


def render(methods: dict[str, str], table: dict[str, Node]) -> str:
    """The text of `schema_table.py`: one line per object property."""
    lines = [
        '"""Generated by `python -m acp_plus.protocol.schema_gen` from the pinned ACP schema (ACP',
        "TypeScript SDK 2.4.0's schema/v1/schema.json, Apache-2.0, from the Agent Client",
        "Protocol project) as native 0.2.1-rc.2's SDK (1.4.0) reads it (schema_gen.py says",
        'how). Do not edit by hand: regenerate. Node forms: `schema_gen.Node`."""',
        "",
        "# fmt: off",
        "# ruff: noqa: E501",
        "from typing import Any",
        "",
        "METHODS: dict[str, str] = {",
        *(f"    {m!r}: {n!r}," for m, n in methods.items()),
        "}",
        "",
        "DEFS: dict[str, Any] = {",
    ]
    for name, node in table.items():
        if isinstance(node, tuple) and node[0] == "object":
            lines.append(f"    {name!r}: ('object', (")
            lines.extend(f"        {prop!r}," for prop in node[1])
            lines.append("    )),")
        else:
            lines.append(f"    {name!r}: {node!r},")
    lines.append("}")
    return "\n".join(lines) + "\n"


def main(argv: list[str]) -> int:
    source = Path(argv[0]) if argv else Path("parity/schema/acp/schema.json")
    methods, table = build(json.loads(source.read_text(encoding="utf-8")))
    target = Path(__file__).with_name("schema_table.py")
    target.write_text(render(methods, table), encoding="utf-8")
    print(f"wrote {target} ({len(table)} definitions)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
