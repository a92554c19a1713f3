"""JSON Schema findings for scenario files, in messages a scenario author can act on.

`parity/schema/scenario.schema.json` is the single source of truth for shapes; this
module applies it and translates each jsonschema error (which speaks of `anyOf`
branches and `additionalProperties`) into a plain message with a hint, positioned at
the offending key.
"""

from __future__ import annotations

import functools
import json
from pathlib import Path
from typing import Any

import jsonschema
from yaml.nodes import Node

from parity.scenario.errors import RULE_REASON_HINT, KeyPath, ScenarioError, did_you_mean
from parity.scenario.yaml_positions import finding_at, key_text, locate

SCHEMA_PATH = Path(__file__).resolve().parents[1] / "schema" / "scenario.schema.json"
"""The JSON Schema of scenario files (draft 2020-12); the single source of truth for shapes.
It stays at `parity/schema/`, where editors find it through the `$schema` line of every
scenario file."""


@functools.cache
def schema() -> dict[str, Any]:
    """The scenario JSON Schema, parsed (cached)."""
    loaded: dict[str, Any] = json.loads(SCHEMA_PATH.read_text(encoding="utf-8"))
    return loaded


@functools.cache
def _validator() -> jsonschema.Draft202012Validator:
    return jsonschema.Draft202012Validator(schema())


UPDATE_KINDS: tuple[str, ...] = tuple(schema()["$defs"]["updateKind"]["enum"])
"""The ACP session/update kinds a `cancel`/`wait` trigger may name (from the schema)."""

# One raw finding before positioning: key path, message, hint, point at the key node?
_Raw = tuple[KeyPath, str, str, bool]


def schema_findings(
    data: Any,
    root: Node,
    file: str,
    validator: jsonschema.Draft202012Validator | None = None,
) -> list[ScenarioError]:
    """Every schema violation in `data`, positioned through its node tree `root`; by
    default against the scenario schema (the project's known-differences file passes
    its own)."""
    out: list[ScenarioError] = []
    for error in (validator or _validator()).iter_errors(data):
        for path, message, hint, at_key in _translate(error):
            node = locate(root, path, key=at_key)
            owner = path[:-1] if at_key else path
            out.append(finding_at(file, node, key_text(owner), message, hint))
    return out


def _translate(error: jsonschema.ValidationError) -> list[_Raw]:
    """One jsonschema error -> findings with a plain message and, where possible, a hint."""
    path: KeyPath = tuple(error.absolute_path)
    kind = error.validator
    value: Any = error.validator_value
    instance: Any = error.instance
    sub = error.schema if isinstance(error.schema, dict) else {}
    if kind in ("anyOf", "oneOf"):
        return _translate_alternatives(error, path)
    if kind == "additionalProperties" and isinstance(instance, dict):
        allowed = sorted(sub.get("properties", {}))
        kinds = [k for k in instance if k in allowed] if _is_step(path) else []
        out: list[_Raw] = []
        for extra in instance:
            if not isinstance(extra, str) or extra in allowed:
                continue
            hint = did_you_mean(extra, allowed) or f"allowed keys: {', '.join(allowed) or 'none'}"
            if kinds:  # `- prompt: {...}` followed by a sibling key: mis-indented parameter
                hint = (
                    f"a step has one key; if {extra!r} belongs to {kinds[0]!r}, indent it under it"
                )
            out.append(((*path, extra), f"unknown key {extra!r}", hint, True))
        return out
    if kind == "required" and isinstance(instance, dict):
        missing = [name for name in value if name not in instance]
        hint = RULE_REASON_HINT if "reason" in missing and _is_rule(path) else ""
        return [(path, f"missing required key {name!r}", hint, False) for name in missing]
    if kind == "type":
        return [(path, f"expected {_type_words(value)}, got {_describe(instance)}", "", False)]
    if kind == "enum":
        choices = ", ".join(str(c) for c in value)
        hint = did_you_mean(instance, [str(c) for c in value]) if isinstance(instance, str) else ""
        return [(path, f"expected one of {choices}; got {_describe(instance)}", hint, False)]
    if kind == "const":
        return [(path, f"expected {value!r}, got {_describe(instance)}", "", False)]
    if kind == "minLength" and value == 1:
        hint = RULE_REASON_HINT if _is_rule(path[:-1]) and path[-1:] == ("reason",) else ""
        return [(path, "must not be empty", hint, False)]
    if kind == "minItems":
        return [(path, f"needs at least {value} item(s), got {len(instance)}", "", False)]
    if kind == "uniqueItems":
        dupes = sorted({str(x) for x in instance if instance.count(x) > 1})
        return [(path, f"items must be unique; repeated: {', '.join(dupes)}", "", False)]
    if kind in ("minimum", "exclusiveMinimum", "maximum"):
        op = {"minimum": ">=", "exclusiveMinimum": ">", "maximum": "<="}[kind]
        return [(path, f"must be {op} {value}, got {instance!r}", "", False)]
    if kind == "pattern":
        return [(path, f"{instance!r} is not a valid name", sub.get("description", ""), False)]
    if kind == "maxProperties" and _is_step(path):
        if any(k not in sub.get("properties", {}) for k in instance):
            return []  # the unknown key's finding already explains the step
        keys = ", ".join(str(k) for k in instance)
        hint = "each step is `- <kind>: {params}`; indent the parameters under the kind"
        return [
            (
                path,
                f"a step has exactly one key (its kind), got {len(instance)}: {keys}",
                hint,
                False,
            )
        ]
    if kind == "minProperties" and _is_step(path):
        return [(path, "empty step", "write `- <kind>: {params}`, e.g. `- initialize: {}`", False)]
    if kind == "minProperties":
        return [(path, "must not be empty", "", False)]
    return [(path, error.message, "", False)]


def _translate_alternatives(error: jsonschema.ValidationError, path: KeyPath) -> list[_Raw]:
    """Pick the alternative the author evidently meant and report its errors.

    The alternatives are told apart by type (string vs list vs mapping) and, for
    mappings, by their required keys. When no single one fits, say what would.
    """
    alternatives: Any = error.validator_value
    branches = [_resolve(b) for b in alternatives]
    instance: Any = error.instance
    fits = [i for i, b in enumerate(branches) if _type_fits(b, instance)]
    if isinstance(instance, dict) and len(fits) > 1:
        keyed = [i for i in fits if set(branches[i].get("required", ())) <= set(instance)]
        keyed = [i for i in keyed if branches[i].get("required")] or keyed
        clashing = [k for i in keyed for k in branches[i].get("required", ())]
        if len(keyed) > 1 and clashing:
            names = ", ".join(repr(k) for k in clashing)
            return [(path, f"give only one of the keys {names}", "", False)]
        if keyed:
            fits = keyed
        else:
            keys = [k for i in fits for k in branches[i].get("required", ())]
            if keys:
                names = " or ".join(repr(k) for k in keys)
                return [(path, f"needs one of the keys {names}", "", False)]
    if len(fits) == 1:
        chosen = [c for c in error.context if c.relative_schema_path[0] == fits[0]]
        found = [raw for c in chosen for raw in _translate(c)]
        if found:
            return found
    wanted = " or ".join(_branch_words(b) for b in branches)
    return [(path, f"expected {wanted}; got {_describe(instance)}", "", False)]


def _resolve(node: Any) -> dict[str, Any]:
    """Follow local `$ref`s (`#/$defs/...`) so a branch's type and keys can be read."""
    while isinstance(node, dict) and "$ref" in node:
        target: Any = schema()
        for part in node["$ref"].lstrip("#/").split("/"):
            target = target[part]
        node = target
    return node if isinstance(node, dict) else {}


_JSON_TYPES: dict[str, tuple[type, ...]] = {
    "object": (dict,),
    "array": (list,),
    "string": (str,),
    "integer": (int,),
    "number": (int, float),
    "boolean": (bool,),
    "null": (type(None),),
}


def _json_type_ok(name: str, value: Any) -> bool:
    if isinstance(value, bool) and name in ("integer", "number"):
        return False
    return isinstance(value, _JSON_TYPES.get(name, ()))


def _type_fits(branch: dict[str, Any], value: Any) -> bool:
    if "anyOf" in branch or "oneOf" in branch:
        alternatives: list[Any] = branch.get("anyOf") or branch.get("oneOf") or []
        return any(_type_fits(_resolve(b), value) for b in alternatives)
    if "enum" in branch:
        return any(type(c) is type(value) for c in branch["enum"])
    if "const" in branch:
        return type(branch["const"]) is type(value)
    types = branch.get("type")
    if types is None:
        return True
    return any(_json_type_ok(t, value) for t in ([types] if isinstance(types, str) else types))


def _branch_words(branch: dict[str, Any]) -> str:
    if "anyOf" in branch:
        return " or ".join(_branch_words(_resolve(b)) for b in branch["anyOf"])
    if "enum" in branch:
        return "one of " + ", ".join(str(c) for c in branch["enum"])
    if "const" in branch:
        return repr(branch["const"])
    if branch.get("type") == "object" and branch.get("required"):
        return "a mapping with " + ", ".join(repr(k) for k in branch["required"])
    if branch.get("type") == "array":
        return "a list"
    types = branch.get("type")
    return _type_words(types) if types else "something else"


def _type_words(types: Any) -> str:
    names = {"object": "a mapping", "array": "a list", "string": "a string", "null": "null"}
    names |= {"integer": "an integer", "number": "a number", "boolean": "true or false"}
    listed = [types] if isinstance(types, str) else list(types)
    return " or ".join(names.get(t, t) for t in listed)


def _describe(value: Any) -> str:
    if value is None:
        return "null (an empty value)"
    if isinstance(value, bool):
        return f"boolean {str(value).lower()}"
    if isinstance(value, int | float):
        return f"number {value}"
    if isinstance(value, str):
        return f"string {value!r}"
    if isinstance(value, list):
        return "a list"
    if isinstance(value, dict):
        return "a mapping"
    return type(value).__name__


def _is_rule(path: KeyPath) -> bool:
    return len(path) == 2 and path[0] in ("diverge", "masks") and isinstance(path[1], int)


def _is_step(path: KeyPath) -> bool:
    return len(path) >= 2 and isinstance(path[-1], int) and path[-2] in ("steps", "parallel")
