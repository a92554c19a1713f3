"""Generator of `acp_plus/protocol/schema_table.py`: the ACP JSON schema -> the compact table
`schema_check.py` validates request params with (dev time only; acp-plus never reads
the JSON schema at run time).

    python -m acp_plus.protocol.schema_gen [SCHEMA_JSON]   # default: parity/schema/acp/schema.json

The input is the project's pinned ACP schema (`parity/checks/acp_schema.py`: the v1
schema of the ACP TypeScript SDK 2.4.0, Apache-2.0, parity/schema/acp/schema.json). Each
node is translated the way the SDK's generated zod schemas translate JSON schema
(`required` -> the bare type, otherwise `.optional()`, a nullable type `.nullish()`,
`oneOf`/`anyOf` -> `z.union`, a variant that adds a `type` const to a `$ref` ->
`Ref.and(z.object({type: z.literal(..)}))`, `properties` beside `anyOf` ->
`z.intersection(union, object)`, a bounded integer -> `z.int().gte().lte()`, an int64
-> `z.number()`, `_meta` -> `z.record(..).nullish()`).

The baseline is native dsh-acp 0.1.0-rc.8, whose SDK (0.25.1) was generated from an
older schema. Where the pinned schema is more lenient or lacks a variant, the
generator follows the native (`BASELINE` below); each adjustment is a fact seen live:

1. `x-deserialize-default-on-null` is ignored: 0.25.1 has none, so `mcpServers: null`
   is refused (`expected array, received null`).
2. `x-deserialize-default-on-error` (zod `.catch`) is honoured only on a nullable
   `$ref` property and on an array property, where 0.25.1 has it too; elsewhere
   (`_meta`, `clientCapabilities`, `fs`, `auth`, booleans with a default, nullable
   scalars) a bad value is refused (`clientCapabilities: 5` -> `expected object`).
3. `McpServer` has 0.25.1's unstable `acp` variant (`{id, name}` and `type: "acp"`)
   before the stdio one: `mcpServers: [5]` gives 2+2+2+1 issues.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

Node = str | tuple[Any, ...]
"""A table node: a leaf kind (`"string"`, `"boolean"`, `"number"`, `"record"`,
`"unknown"`), `"#Name"` for a `$defs` entry, or a tuple: `("int", min, max)`,
`("literal", value)`, `("enum", values)`, `("array", items)`, `("union", options)`,
`("and", left, right)`, `("object", ((key, node, presence), ...))` with presence
`required`, `optional`, `nullish`, `nullable` or `catch`."""

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
    # 3. 0.25.1's unstable ACP-transport MCP server (zMcpServerAcp).
    "McpServerAcp": {
        "type": "object",
        "properties": {
            "_meta": {"type": ["object", "null"], "additionalProperties": True},
            "id": {"type": "string"},
            "name": {"type": "string"},
        },
        "required": ["id", "name"],
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
    props: list[tuple[str, Node, str]] = []
    for key in sorted(node.get("properties", {})):
        prop = node["properties"][key]
        inner, nullable = _nullable(prop)
        catch = prop.get("x-deserialize-default-on-error") is True and (
            (nullable and "$ref" in inner) or inner.get("type") == "array"
        )
        if catch:
            presence = "catch"
        elif key in required:
            presence = "nullable" if nullable else "required"
        elif nullable:
            presence = "nullish"
        else:
            presence = "optional"  # also a property with a `default`
        props.append((key, _convert(inner, pending), presence))
    return ("object", tuple(props))


def render(methods: dict[str, str], table: dict[str, Node]) -> str:
    """The text of `schema_table.py`: one line per object property."""
    lines = [
        '"""Generated by `python -m acp_plus.protocol.schema_gen` from the pinned ACP schema (ACP',
        "TypeScript SDK 2.4.0's schema/v1/schema.json, Apache-2.0, from the Agent Client",
        "Protocol project) with native 0.1.0-rc.8's baseline adjustments (schema_gen.py",
        'says which). Do not edit by hand: regenerate. Node forms: `schema_gen.Node`."""',
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
