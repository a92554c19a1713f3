"""Raw requests derived from the ACP schema: for each request a client may send an agent
(`x-side: agent` definitions), params that are valid, at a boundary, or invalid.

A small, deliberately partial JSON Schema -> value generator: it follows `$ref`, `allOf`,
`anyOf`/`oneOf`, `const`, `enum`, `type` (lists with `null` included) and object
`properties`/`required`. Values that must name something of the run to be meaningful are
the run's own: a `sessionId` is a session of the scenario (a placeholder), a path is the
workdir, so valid params reach the agent's logic instead of its first id check. Pure.
"""

from __future__ import annotations

from typing import Any

from hypothesis import strategies as st
from jsonschema import Draft202012Validator

MAX_DEPTH = 3
EXCLUDED = frozenset({"session/prompt"})
"""A raw prompt would consume script entries meant for the scenario's own turns."""

BOUNDARY_INTS = (0, -1, 1, 2**31, -(2**31), 2**53 + 1)
BOUNDARY_STRINGS = ("", " ", "\u0000", "é" * 3, "x" * 300)


def _resolve(node: Any, defs: dict[str, Any]) -> dict[str, Any]:
    """Follow `$ref` and single-entry `allOf` until a definition with content."""
    for _ in range(10):
        if not isinstance(node, dict):
            return {}
        if "$ref" in node:
            node = defs.get(str(node["$ref"]).rsplit("/", 1)[-1], {})
        elif "allOf" in node and len(node["allOf"]) == 1:
            node = {
                **{k: v for k, v in node.items() if k != "allOf"},
                **_resolve(node["allOf"][0], defs),
            }
        else:
            return node
    return {}


def _types(node: dict[str, Any]) -> list[str]:
    kind = node.get("type")
    if isinstance(kind, list):
        return [str(k) for k in kind]
    if isinstance(kind, str):
        return [kind]
    if "properties" in node:
        return ["object"]
    return []


def _named(key: str, sessions: tuple[str, ...]) -> st.SearchStrategy[Any] | None:
    """A value of the run for keys that name one (a session, a directory, a path)."""
    lowered = key.lower()
    if lowered == "sessionid" and sessions:
        return st.sampled_from([f"{{session:{s}}}" for s in sessions])
    if lowered in ("cwd", "path"):
        return st.sampled_from(["{workdir}", "{workdir}/sub"])
    if lowered == "mcpservers":
        return st.just([])
    if lowered == "protocolversion":
        return st.sampled_from([1, 0, 2])
    return None


def value(
    node: Any, defs: dict[str, Any], sessions: tuple[str, ...] = (), depth: int = 0
) -> st.SearchStrategy[Any]:
    """A value the schema `node` allows (best effort: unknown forms give `null`)."""
    node = _resolve(node, defs)
    if "const" in node:
        return st.just(node["const"])
    if "enum" in node:
        return st.sampled_from(list(node["enum"]))
    if "properties" in node:  # an object, whatever variants it also lists
        return _typed("object", node, defs, sessions, depth)
    for key in ("oneOf", "anyOf"):
        if key in node:
            return st.one_of([value(v, defs, sessions, depth) for v in node[key]])
    types = [t for t in _types(node) if t != "null"] or ["null"]
    return st.one_of([_typed(t, node, defs, sessions, depth) for t in types])


def _typed(
    kind: str, node: dict[str, Any], defs: dict[str, Any], sessions: tuple[str, ...], depth: int
) -> st.SearchStrategy[Any]:
    if kind == "object":
        return params(node, defs, sessions, depth + 1) if depth < MAX_DEPTH else st.just({})
    if kind == "array":
        if depth >= MAX_DEPTH:
            return st.just([])
        return st.lists(value(node.get("items", {}), defs, sessions, depth + 1), max_size=1)
    if kind == "string":
        return st.text(st.characters(codec="utf-8"), max_size=6)
    if kind == "integer":
        return st.integers(0, 100)
    if kind == "number":
        return st.sampled_from([0, 1.5, 100])
    if kind == "boolean":
        return st.booleans()
    return st.none()


@st.composite
def params(
    draw: st.DrawFn,
    node: dict[str, Any],
    defs: dict[str, Any],
    sessions: tuple[str, ...] = (),
    depth: int = 0,
) -> dict[str, Any]:
    """An object with every required property and some of the optional ones (`_meta`
    left out: agents must not read it, so it explores nothing)."""
    node = _resolve(node, defs)
    props: dict[str, Any] = dict(node.get("properties", {}))
    required = set(node.get("required", []))
    # An object whose variants add properties (`session/set_config_option`'s value):
    # one variant's properties and requirements join the object's own.
    variants = node.get("anyOf", node.get("oneOf", []))
    if variants and props:
        variant = _resolve(draw(st.sampled_from(variants)), defs)
        props.update(variant.get("properties", {}))
        required |= set(variant.get("required", []))
    out: dict[str, Any] = {}
    for key, schema in props.items():
        if key == "_meta" or (key not in required and not draw(st.booleans())):
            continue
        named = _named(key, sessions)
        out[key] = draw(named if named is not None else value(schema, defs, sessions, depth))
    return out


@st.composite
def boundary(
    draw: st.DrawFn, node: dict[str, Any], defs: dict[str, Any], sessions: tuple[str, ...]
) -> dict[str, Any]:
    """Valid params with one property pushed to an edge: null where allowed, an empty or
    odd string, an extreme integer, an empty list."""
    out = draw(params(node, defs, sessions))
    props: dict[str, Any] = _resolve(node, defs).get("properties", {})
    keys = sorted(k for k in props if k != "_meta")
    if not keys:
        return out
    key = draw(st.sampled_from(keys))
    kinds = _types(_resolve(props[key], defs))
    edges: list[Any] = []
    if "null" in kinds:
        edges.append(None)
    if "string" in kinds or not kinds:
        edges += BOUNDARY_STRINGS
    if "integer" in kinds or "number" in kinds:
        edges += BOUNDARY_INTS
    if "array" in kinds:
        edges.append([])
    if edges:
        out[key] = draw(st.sampled_from(edges))
    return out


@st.composite
def invalid(
    draw: st.DrawFn, node: dict[str, Any], defs: dict[str, Any], sessions: tuple[str, ...]
) -> Any:
    """Params the schema refuses: a required property missing, a property of the wrong
    type, or params that are not an object at all."""
    out = draw(params(node, defs, sessions))
    required = sorted(_resolve(node, defs).get("required", []))
    how = draw(st.sampled_from(("drop", "wrong-type", "not-object")))
    if how == "drop" and required:
        out.pop(draw(st.sampled_from(required)), None)
        return out
    if how == "wrong-type" and out:
        key = draw(st.sampled_from(sorted(out)))
        out[key] = draw(
            st.sampled_from([[], {}, 12, True, "text"]).filter(
                lambda v: type(v) is not type(out[key])
            )
        )
        return out
    return draw(st.sampled_from([[], "params", 7, None]))


_VALIDATORS: dict[str, Draft202012Validator] = {}


def conforms(method: str, node: dict[str, Any], defs: dict[str, Any], params: Any) -> bool:
    """Whether the ACP schema accepts `params` for `method`: the generators above are
    best effort, so what is labelled valid or invalid is checked against the schema."""
    if method not in _VALIDATORS:
        _VALIDATORS[method] = Draft202012Validator({"$defs": defs, **node})
    return bool(_VALIDATORS[method].is_valid(params))


@st.composite
def raw_request(
    draw: st.DrawFn,
    definitions: dict[str, dict[str, Any]],
    defs: dict[str, Any],
    sessions: tuple[str, ...],
) -> tuple[str, str, Any]:
    """(method, kind, params) for one request of `definitions` (method -> definition);
    kind is `valid`, `boundary` or `invalid` (kept for the finding's description)."""
    methods = sorted(m for m in definitions if m not in EXCLUDED)
    method = draw(st.sampled_from(methods))
    node = definitions[method]
    kind = draw(st.sampled_from(("valid", "boundary", "invalid")))
    if kind == "valid":
        valid = params(node, defs, sessions).filter(lambda p: conforms(method, node, defs, p))
        return method, kind, draw(valid)
    if kind == "boundary":
        return method, kind, draw(boundary(node, defs, sessions))
    wrong = invalid(node, defs, sessions).filter(lambda p: not conforms(method, node, defs, p))
    return method, kind, draw(wrong)
