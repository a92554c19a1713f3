"""The ACP SDK's schema parse of a standard method's params, before dispatch (§1.0; pure).

Native's ACP TypeScript SDK (1.4.0 in the reference native 0.2.1-rc.2) parses every
standard method's params with its generated zod 4 schema first: a failure is answered
with -32602 `Invalid params` and, as `data`, zod's `format()` tree of all the issues; on
success the handler gets zod's *output*, not the raw params. `parse` does both from the
compact table `schema_table.py` (generated from the pinned ACP schema by
`schema_gen.py`, as 1.4.0 reads it): the same issues, in the same order, in zod 4's
English wording, and the same output. The bridge's own checks (relative cwd, the MCP
texts) run after it on that output, as in native.

zod semantics kept here: an object checks each declared key in the schema's order and
its output holds only those keys (others are stripped); a missing required key is
checked as `undefined`; `optional` accepts undefined (an absent key takes the schema's
`default`), `nullish` also null; a caught key (`x-deserialize-default-on-error`) never
fails: a refused value becomes its fallback, and a missing *required* caught key is the
non-aborting custom issue `Required value is missing`; a `skip` array drops the items
its item schema refuses; a union answers the first option without issues, else the one
option whose issues are all non-fatal, else one `invalid_union` issue that `format()`
flattens into every option's issues; `A.and(B)` reports A's issues then B's and merges
their outputs; an integer schema reports `expected int` for a fraction and checks its
bounds after.
"""

from __future__ import annotations

import copy
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


Result = tuple[Any, list[Issue]]
"""zod's output of a value (`UNDEFINED` when absent) and its issues."""


def issues(node: Any, value: Any) -> list[Issue]:
    """Every issue of `value` against a table node (`schema_gen.Node`), in zod's order."""
    return run(node, value)[1]


def run(node: Any, value: Any) -> Result:
    """zod's parse of `value` by a table node: (output, issues)."""
    if isinstance(node, str):
        if node.startswith("#"):
            return run(DEFS[node[1:]], value)
        return value, _leaf(node, value)
    kind = node[0]
    if kind == "int":
        return value, _int(node[1], node[2], value)
    if kind == "literal":
        if _same(value, node[1]):
            return value, []
        return value, [Issue((), f"Invalid input: expected {_js(node[1])}")]
    if kind == "enum":
        values = node[1]
        if any(_same(value, v) for v in values):
            return value, []
        if len(values) == 1:
            return value, [Issue((), f"Invalid input: expected {_js(values[0])}")]
        return value, [Issue((), "Invalid option: expected one of " + "|".join(map(_js, values)))]
    if kind in ("array", "skip"):
        return _array(node[1], value, skip=kind == "skip")
    if kind == "object":
        return _object(node[1], value)
    if kind == "union":
        return _union(node[1], value)
    if kind == "and":
        left, left_issues = run(node[1], value)
        right, right_issues = run(node[2], value)
        return _merge(left, right), left_issues + right_issues
    raise ValueError(f"unknown schema node: {node!r}")


def _leaf(kind: str, value: Any) -> list[Issue]:
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


def _array(item: Any, value: Any, *, skip: bool) -> Result:
    if not isinstance(value, list):
        return value, [_expected("array", value)]
    out: list[Any] = []
    found: list[Issue] = []
    for n, element in enumerate(value):
        parsed, bad = run(item, element)
        if bad and skip:
            continue  # vecSkipError: a refused item is dropped, never an issue
        out.append(parsed)
        found.extend(i.under(n) for i in bad)
    return out, found


def _object(properties: Any, value: Any) -> Result:
    if not isinstance(value, dict):
        return value, [_expected("object", value)]
    out: dict[str, Any] = {}
    found: list[Issue] = []
    for key, child, presence, *rest in properties:
        extras: dict[str, Any] = rest[0] if rest else {}
        parsed, bad = _property(child, presence, extras, value.get(key, UNDEFINED))
        found.extend(i.under(key) for i in bad)
        if parsed is not UNDEFINED:
            out[key] = parsed
    return out, found


_MISSING = Issue((), "Required value is missing", fatal=False)


def _property(child: Any, presence: str, extras: dict[str, Any], item: Any) -> Result:
    """One object key: presence (`schema_gen.Node`), default and catch applied."""
    caught = "catch" in extras
    if item is UNDEFINED:
        if presence in ("optional", "nullish"):
            return _fresh(extras.get("default", UNDEFINED)), []
        if caught:  # requiredDefaultOnError
            return UNDEFINED, [_MISSING]
    if item is None and presence in ("nullish", "nullable"):
        return None, []
    parsed, bad = run(child, item)
    if bad and caught:
        fallback: dict[str, Any] = {"default": extras.get("default"), "empty": []}
        fallback["absent"] = UNDEFINED
        return _fresh(fallback[extras["catch"]]), []
    return parsed, bad


def _fresh(value: Any) -> Any:
    """A copy of a table value for the output (handlers may change theirs)."""
    return value if value is UNDEFINED else copy.deepcopy(value)


def _union(options: Any, value: Any) -> Result:
    results: list[list[Issue]] = []
    for option in options:
        parsed, found = run(option, value)
        if not found:
            return parsed, []
        results.append(found)
    unaborted = [found for found in results if not any(i.fatal for i in found)]
    if len(unaborted) == 1:
        return value, unaborted[0]
    return value, [Issue((), "Invalid input", union=tuple(tuple(found) for found in results))]


def _merge(left: Any, right: Any) -> Any:
    """zod's intersection output: two objects merge key by key, else the left one."""
    if isinstance(left, dict) and isinstance(right, dict):
        merged = dict(left)
        for key, value in right.items():
            merged[key] = _merge(merged[key], value) if key in merged else value
        return merged
    return left


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


def parse(method: str, params: Any) -> Any:
    """zod's output of `params` for a standard method (the params themselves for a
    method the table does not know); the SDK's -32602 `Invalid params` (zod data) when
    the schema refuses them."""
    name = METHODS.get(method)
    if name is None:
        return params
    parsed, found = run(DEFS[name], params)
    if found:
        raise schema_failure(format_issues(found))
    return parsed


def schema_failure(data: dict[str, Any]) -> RpcError:
    """-32602 `Invalid params` with a `format()` tree as data."""
    return invalid_params(data=data)
