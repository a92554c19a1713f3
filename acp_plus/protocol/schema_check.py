"""The ACP SDK's schema check of a standard method's params, before dispatch (§1.0; pure).

Native's ACP TypeScript SDK parses every standard method's params with its generated
zod 4 schema first and answers a failure with -32602 `Invalid params` and, as `data`,
zod's `format()` tree of all the issues. `check` does the same from the compact table
`schema_table.py` (generated from the pinned ACP schema by `schema_gen.py`, with native
0.1.0-rc.8's baseline adjustments): the same issues, in the same order, in zod 4's
English wording. The bridge's own checks (relative cwd, additionalDirectories, the MCP
texts) run after it, as in native.

zod semantics kept here: an object checks each declared key in order and ignores
others; a missing required key is checked as `undefined`; `optional` accepts undefined,
`nullish` also null, `catch` anything; a union answers the first option without issues,
else the one option whose issues are all non-fatal, else one `invalid_union` issue that
`format()` flattens into every option's issues; `A.and(B)` reports A's issues then B's;
an integer schema reports `expected int` for a fraction and checks its bounds after.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

from acp_plus.protocol.schema_table import DEFS, METHODS
from acp_plus.wire.errors import RpcError, invalid_params
from acp_plus.wire.frames import UNDEFINED

Path = tuple[str | int, ...]

_MAX_SAFE = 2**53 - 1


@dataclass(frozen=True)
class Issue:
    """One zod issue: where, what (zod 4's English message), and whether it aborts.

    `union` holds each option's issues for an `invalid_union`; `format()` flattens them.
    """

    path: Path
    message: str
    fatal: bool = True
    union: tuple[tuple[Issue, ...], ...] = ()

    def under(self, key: str | int) -> Issue:
        return Issue((key, *self.path), self.message, self.fatal, self.union)


def parsed_type(value: Any) -> str:
    """zod's `parsedType` of a JSON value (or `UNDEFINED`), as JavaScript sees it."""
    if value is UNDEFINED:
        return "undefined"
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int | float):
        return "nan" if isinstance(value, float) and math.isnan(value) else "number"
    if isinstance(value, str):
        return "string"
    if isinstance(value, list):
        return "array"
    return "object"


def _js(value: Any) -> str:
    """zod's `stringifyPrimitive`."""
    if isinstance(value, str):
        return f'"{value}"'
    if isinstance(value, bool):
        return "true" if value else "false"
    return "null" if value is None else str(value)


def _expected(kind: str, value: Any) -> Issue:
    return Issue((), f"Invalid input: expected {kind}, received {parsed_type(value)}")


def _is_number(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


def _same(a: Any, b: Any) -> bool:
    """JavaScript's `===` on JSON primitives (so `true` is not `1`)."""
    return type(a) is type(b) and a == b


def issues(node: Any, value: Any) -> list[Issue]:
    """Every issue of `value` against a table node (`schema_gen.Node`), in zod's order."""
    if isinstance(node, str):
        return _leaf(node, value)
    kind = node[0]
    if kind == "int":
        return _int(node[1], node[2], value)
    if kind == "literal":
        if _same(value, node[1]):
            return []
        return [Issue((), f"Invalid input: expected {_js(node[1])}")]
    if kind == "enum":
        values = node[1]
        if any(_same(value, v) for v in values):
            return []
        if len(values) == 1:
            return [Issue((), f"Invalid input: expected {_js(values[0])}")]
        return [Issue((), "Invalid option: expected one of " + "|".join(map(_js, values)))]
    if kind == "array":
        if not isinstance(value, list):
            return [_expected("array", value)]
        return [i.under(n) for n, item in enumerate(value) for i in issues(node[1], item)]
    if kind == "object":
        return _object(node[1], value)
    if kind == "union":
        return _union(node[1], value)
    if kind == "and":
        return issues(node[1], value) + issues(node[2], value)
    raise ValueError(f"unknown schema node: {node!r}")


def _leaf(kind: str, value: Any) -> list[Issue]:
    if kind.startswith("#"):
        return issues(DEFS[kind[1:]], value)
    if kind == "string":
        return [] if isinstance(value, str) else [_expected("string", value)]
    if kind == "boolean":
        return [] if isinstance(value, bool) else [_expected("boolean", value)]
    if kind == "number":
        ok = _is_number(value) and math.isfinite(value)
        return [] if ok else [_expected("number", value)]
    if kind == "record":
        return [] if isinstance(value, dict) else [_expected("record", value)]
    if kind == "unknown":
        return []
    raise ValueError(f"unknown schema node: {kind!r}")


def _int(low: int | None, high: int | None, value: Any) -> list[Issue]:
    if not (_is_number(value) and math.isfinite(value)):
        return [_expected("number", value)]
    if not float(value).is_integer():
        return [Issue((), "Invalid input: expected int, received number")]
    found: list[Issue] = []
    # The safe-integer range and the bounds are checks: they do not abort.
    if abs(value) > _MAX_SAFE:
        if value > 0:
            found.append(Issue((), f"Too big: expected int to be <={_MAX_SAFE}", fatal=False))
        else:
            found.append(Issue((), f"Too small: expected int to be >=-{_MAX_SAFE}", fatal=False))
    if low is not None and value < low:
        found.append(Issue((), f"Too small: expected number to be >={low}", fatal=False))
    if high is not None and value > high:
        found.append(Issue((), f"Too big: expected number to be <={high}", fatal=False))
    return found


def _object(properties: Any, value: Any) -> list[Issue]:
    if not isinstance(value, dict):
        return [_expected("object", value)]
    found: list[Issue] = []
    for key, child, presence in properties:
        item = value.get(key, UNDEFINED)
        if presence == "catch":
            continue
        if item is UNDEFINED and presence in ("optional", "nullish"):
            continue
        if item is None and presence in ("nullish", "nullable"):
            continue
        found.extend(i.under(key) for i in issues(child, item))
    return found


def _union(options: Any, value: Any) -> list[Issue]:
    results: list[list[Issue]] = []
    for option in options:
        found = issues(option, value)
        if not found:
            return []
        results.append(found)
    unaborted = [found for found in results if not any(i.fatal for i in found)]
    if len(unaborted) == 1:
        return unaborted[0]
    return [Issue((), "Invalid input", union=tuple(tuple(found) for found in results))]


def format_issues(found: list[Issue]) -> dict[str, Any]:
    """zod's `format()`: the issues as a tree by path, `_errors` at each level."""
    tree: dict[str, Any] = {"_errors": []}

    def add(batch: tuple[Issue, ...] | list[Issue], base: Path) -> None:
        for issue in batch:
            full = base + issue.path
            if issue.union:
                for option in issue.union:
                    add(option, full)
                continue
            node = tree
            for key in full:
                node = node.setdefault(str(key), {"_errors": []})
            node["_errors"].append(issue.message)

    add(found, ())
    return _js_key_order(tree)


def _js_key_order(tree: dict[str, Any]) -> dict[str, Any]:
    """A JavaScript object's key order: integer-like keys first, ascending."""
    indices = sorted((k for k in tree if k.isdigit()), key=int)
    ordered = {k: tree[k] for k in indices}
    ordered.update((k, v) for k, v in tree.items() if not k.isdigit())
    return {k: _js_key_order(v) if isinstance(v, dict) else v for k, v in ordered.items()}


def check(method: str, params: Any) -> dict[str, Any] | None:
    """The `format()` data of `params`' issues for a standard method, or None when
    they pass (or the method is not one the table knows)."""
    name = METHODS.get(method)
    if name is None:
        return None
    found = issues(DEFS[name], params)
    return format_issues(found) if found else None


def validate(method: str, params: Any) -> None:
    """Raise the SDK's -32602 `Invalid params` (zod data) when `params` fail the schema."""
    data = check(method, params)
    if data is not None:
        raise schema_failure(data)


def schema_failure(data: dict[str, Any]) -> RpcError:
    """-32602 `Invalid params` with a `format()` tree as data."""
    return invalid_params(data=data)
