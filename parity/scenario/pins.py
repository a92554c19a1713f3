"""Pinned differences: what each side of a declared difference does, and which agent
versions a known difference holds for.

A declared difference (a project-level known difference, or a scenario `diverge` entry
with `sides`) states each side as one of:

- `absent`: the selector selects nothing in that side's view;
- `{equals: V}`: every selected value is exactly `V` (type and value, as JSON carries them);
- `{one_of: [V, ...]}`: every selected value is exactly one of these;
- `{schema: S}`: every selected value validates against the JSON Schema `S`, which may
  refer to the ACP schema's definitions as `{$ref: "acp#/$defs/ToolKind"}`;
- `{acp: Name}`: every selected value is an ACP `Name` (`$defs/Name` of the pinned ACP
  schema, `parity.checks.acp_schema`): the side of a difference ACP leaves to each agent.

A side other than `absent` also holds where the selector selects nothing (a scenario
without a prompt has no `usage_update` to pin). A side that does not hold is drift,
reported like any difference (`parity.checks.diff`). Versions are PEP 440 specifier
sets (`==0.1.0rc8`, `>=0.1.0rc1,<0.2`); `0.1.0-rc.8` as an agent reports it is the
same version as `0.1.0rc8`.
"""

from __future__ import annotations

import functools
import json
from collections.abc import Mapping
from typing import Any

import jsonschema
import referencing
import referencing.exceptions
import referencing.jsonschema
from packaging.specifiers import InvalidSpecifier, SpecifierSet
from packaging.version import InvalidVersion, Version

from parity.core.exact import json_equal

ABSENT = "absent"
SIDE_FORMS = ("absent", "equals", "one_of", "schema", "acp")
OTHERS = "others"
"""The `sides` key for whatever target is on the other side of a comparison."""
EACH = "each"
"""The `sides` key of a family-wide known difference: what every target of the family
does there (each side of every comparison between two of them)."""
ACP_URI = "acp"
"""The URI the ACP schema is registered under: `{$ref: "acp#/$defs/ToolKind"}`."""


def _json(value: Any) -> str:
    return json.dumps(value, sort_keys=True, ensure_ascii=False, allow_nan=True)


def side_problem(side: Any) -> str | None:
    """Why a side's declaration is malformed, or None (validation's message)."""
    if side == ABSENT:
        return None
    if not isinstance(side, Mapping) or len(side) != 1:
        return (
            "a side is `absent`, or one of {equals: V}, {one_of: [V, ...]}, {schema: S}, "
            "{acp: Name}"
        )
    ((form, value),) = side.items()
    if form not in SIDE_FORMS[1:]:
        return f"unknown side form {form!r}: use equals, one_of, schema or acp (or `absent`)"
    if form == "acp" and (not isinstance(value, str) or not value):
        return "acp names a definition of the ACP schema, e.g. {acp: ToolKind}"
    if form == "one_of" and (not isinstance(value, list) or not value):
        return "one_of lists the values a side may have (at least one)"
    if form == "schema":
        if not isinstance(value, Mapping):
            return "schema is a JSON Schema object"
        return _schema_problem(_json(value))
    return None


@functools.lru_cache(maxsize=1024)
def _schema_problem(schema: str) -> str | None:
    # Checking a schema against the 2020-12 metaschema is the costliest part of reading
    # known differences (the file declares the same `{acp: ...}`-style schemas on many
    # entries, and every run reads it): each distinct schema is checked once per process.
    try:
        jsonschema.Draft202012Validator.check_schema(json.loads(schema))
    except jsonschema.SchemaError as exc:
        return f"invalid JSON Schema: {exc.message}"
    return None


def acp_registry(acp_schema: Mapping[str, Any]) -> referencing.Registry[Any]:
    """A registry holding the ACP schema at `acp`, for sides that refer to it."""
    resource = referencing.jsonschema.DRAFT202012.create_resource(dict(acp_schema))
    registry: referencing.Registry[Any] = referencing.Registry().with_resource(ACP_URI, resource)
    return registry


def _acp_ref(name: Any) -> str:
    return f"{ACP_URI}#/$defs/{name}"


def acp_refs(side: Any) -> list[str]:
    """The ACP definitions a side names (`{acp: Name}`, or `acp#/$defs/Name` refs)."""
    if not isinstance(side, Mapping) or len(side) != 1:
        return []
    ((form, value),) = side.items()
    if form == "acp":
        return [str(value)]
    found: list[str] = []
    prefix = f"{ACP_URI}#/$defs/"

    def walk(node: Any) -> None:
        if isinstance(node, Mapping):
            ref = node.get("$ref")
            if isinstance(ref, str) and ref.startswith(prefix):
                found.append(ref[len(prefix) :])
            for child in node.values():
                walk(child)
        elif isinstance(node, list):
            for child in node:
                walk(child)

    if form == "schema":
        walk(value)
    return found


def side_violation(
    side: Any, values: list[Any], registry: referencing.Registry[Any] | None = None
) -> str | None:
    """None when the values a rule's selector selects in one view (`values`, none when
    it selects nothing) are what `side` declares; else what they are instead, in words.
    `registry` resolves the ACP schema's definitions (`acp_registry`); a side that names
    one cannot be judged without it, and says so."""
    if side == ABSENT:
        if values:
            return f"declared absent, found {_show(values)}"
        return None
    ((form, expected),) = side.items()
    for value in values:
        if form == "equals" and not json_equal(value, expected):
            return f"declared equal to {_show([expected])}, found {_show([value])}"
        if form == "one_of" and not any(json_equal(value, v) for v in expected):
            return f"declared one of {_show(expected)}, found {_show([value])}"
        if form in ("schema", "acp"):
            schema = dict(expected) if form == "schema" else {"$ref": _acp_ref(expected)}
            if acp_refs(side) and registry is None:
                return "names the ACP schema, which is not loaded (see the run's schema error)"
            validator = jsonschema.Draft202012Validator(
                schema, registry=registry if registry is not None else referencing.Registry()
            )
            try:
                error = jsonschema.exceptions.best_match(validator.iter_errors(value))
            except referencing.exceptions.Unresolvable as exc:
                return f"refers to {exc.ref!r}, which the ACP schema does not define"
            if error is not None:
                where = "".join(f"[{p!r}]" for p in error.absolute_path)
                rule = f"{error.validator} {_show([error.validator_value], 120)}"
                return f"does not match the declared schema at {where or 'the value'}: {rule}"
    return None


def _show(values: list[Any], limit: int = 160) -> str:
    text = ", ".join(_json(v) for v in values)
    return text if len(text) <= limit else text[: limit - 3] + "..."


def versions_problem(spec: str) -> str | None:
    """Why a `versions` specifier set does not parse, or None."""
    try:
        SpecifierSet(spec)
    except InvalidSpecifier as exc:
        return f"not a PEP 440 specifier set ({exc}); e.g. '==0.1.0rc8' or '>=0.1.0rc1,<0.2'"
    return None


def version_holds(spec: str | None, version: str | None) -> bool | None:
    """Whether `version` is in `spec` (None: no spec, always); None when the version is
    unknown or not a PEP 440 version, so the entry cannot be judged."""
    if spec is None:
        return True
    if version is None:
        return None
    try:
        return _specifiers(spec).contains(Version(version), prereleases=True)
    except InvalidVersion:
        return None


@functools.cache
def _specifiers(spec: str) -> SpecifierSet:
    """A parsed specifier set (every comparison of a run asks the same few)."""
    return SpecifierSet(spec)


def reported_version(view: Mapping[str, Any]) -> str | None:
    """The version a run reports: the build stamp of the view's `agent` (the native
    launch kit's), else the `agentInfo.version` of an `initialize` result."""
    agent = view.get("agent")
    if isinstance(agent, Mapping) and isinstance(agent.get("version"), str):
        return str(agent["version"])
    for step in view.get("steps", []):
        result = step.get("result") if isinstance(step, Mapping) else None
        info = result.get("agentInfo") if isinstance(result, Mapping) else None
        if isinstance(info, Mapping) and isinstance(info.get("version"), str):
            return str(info["version"])
    return None
