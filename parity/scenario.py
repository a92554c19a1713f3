"""Scenario files: YAML -> a typed `Scenario`.

The YAML is checked against `parity/schema/scenario.schema.json` (the same schema
editors use), then turned into the dataclasses below. Step kinds, LLM entries and tool
declarations keep their validated YAML mapping in `params` (key names as written in the
file, snake_case): the schema is the single source of truth for their shape, and
`docs/scenarios.md` is the reference for users.
"""

from __future__ import annotations

import copy
import difflib
import functools
import json
import re
from collections.abc import Collection, Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath
from typing import Any, Literal

import jsonschema
import yaml
from yaml.nodes import MappingNode, Node, ScalarNode, SequenceNode

Profile = Literal["exact", "semantic", "none"]

DEFAULT_TARGETS: tuple[str, ...] = ("native", "plus")

DEFAULT_CATALOG: dict[str, Any] = {
    "protocol": "parity-stream/1",
    "providers": [
        {
            "id": "mock",
            "name": "Mock",
            "models": [
                {
                    "id": "mock",
                    "name": "Mock Reasoner",
                    "description": "Mock model with selectable reasoning.",
                    "inputModalities": ["text"],
                    "contextWindow": 1024,
                    "reasoning": {
                        "efforts": [
                            {"id": "low", "name": "Low"},
                            {"id": "high", "name": "High"},
                        ],
                        "defaultEffort": "high",
                    },
                }
            ],
        }
    ],
}
"""The catalog a scenario gets when it declares none (contract §7.1, stream spec)."""


@dataclass(frozen=True)
class Where:
    """A place in a scenario file, for error messages and reports."""

    file: str
    line: int = 0
    column: int = 0

    def __str__(self) -> str:
        return f"{self.file}:{self.line}:{self.column}" if self.line else self.file


@dataclass
class Tool:
    """A fixture tool: parity-stream `tools` for DSH-family targets, MCP for others."""

    name: str
    description: str
    parameters: dict[str, Any]
    content: list[dict[str, Any]]
    """Result content blocks (a `result: text` shorthand becomes one text block)."""
    is_error: bool = False
    delay_ms: int = 0
    hang: bool = False
    approval: Literal["none", "ask"] = "none"


@dataclass
class LlmEntry:
    """One scripted model response (or, with `match`, a side-request answer)."""

    params: dict[str, Any]
    """The validated YAML mapping: text, reasoning, tool_calls, usage, finish, error,
    then, delay_ms, chunks, match, ..."""
    where: Where


@dataclass
class Step:
    """One client step. `kind` is the step's single key in YAML (`prompt`, ...).

    `params` is the step's mapping as written (an empty mapping for `initialize:`,
    `list_sessions:` or `restart:` without a value). Two kinds have a non-mapping value
    in YAML and get a mapping here: `send_raw` -> `{"line": <text>}` and `parallel` ->
    `{"steps": [Step, ...]}`. Placeholders (`{workdir}`, `{home}`, `{session:s1}`) are
    left in place; the driver substitutes them when it sends the step.
    """

    kind: str
    params: dict[str, Any]
    where: Where


@dataclass
class Rule:
    """A `diverge` or `mask` entry: a path selector with its mandatory reason."""

    path: str
    reason: str
    targets: list[str] | None = None
    where: Where | None = None


@dataclass
class Scenario:
    """A loaded, valid scenario. Optional keys the file left out keep their defaults."""

    name: str
    """Path below `scenarios/` without the suffix, e.g. `baseline/text-turn`."""
    path: Path
    description: str
    targets: list[str] = field(default_factory=lambda: list(DEFAULT_TARGETS))
    compare: Profile = "exact"
    diverge: list[Rule] = field(default_factory=list)
    masks: list[Rule] = field(default_factory=list)
    catalog: dict[str, Any] = field(default_factory=lambda: dict(DEFAULT_CATALOG))
    tools: list[Tool] = field(default_factory=list)
    files: dict[str, str] = field(default_factory=dict)
    llm: list[LlmEntry] = field(default_factory=list)
    client: dict[str, Any] = field(default_factory=dict)
    """capabilities, permission, elicitation, fs, terminal (see the schema)."""
    steps: list[Step] = field(default_factory=list)
    timeouts: dict[str, float] = field(default_factory=dict)
    """startup, response, run (seconds); defaults applied by the driver."""
    warnings: list[ScenarioError] = field(default_factory=list)
    """Findings that do not make the file invalid (see docs/scenarios.md)."""


# ---------------------------------------------------------------------------------------
# Errors
# ---------------------------------------------------------------------------------------

Severity = Literal["error", "warning"]
KeyPath = tuple[str | int, ...]


@dataclass(frozen=True)
class ScenarioError:
    """One problem found in a scenario file, with where it is and how to fix it."""

    file: str
    line: int
    column: int
    key: str
    """The key path it concerns, e.g. `steps[2].prompt`; empty for the whole file."""
    message: str
    hint: str = ""
    severity: Severity = "error"
    """`warning`s are reported but do not make the file invalid."""

    def __str__(self) -> str:
        where = f"{self.file}:{self.line}:{self.column}" if self.line else self.file
        text = f"{where}: {self.key or '(top level)'}: "
        text += "warning: " if self.severity == "warning" else ""
        text += self.message
        return f"{text} ({self.hint})" if self.hint else text


class ScenarioInvalid(Exception):
    """A scenario file has errors; `errors` holds every one of them (warnings too)."""

    def __init__(self, errors: Sequence[ScenarioError]) -> None:
        self.errors = list(errors)
        super().__init__("\n".join(str(e) for e in self.errors))


# ---------------------------------------------------------------------------------------
# Public API
# ---------------------------------------------------------------------------------------

SCHEMA_PATH = Path(__file__).parent / "schema" / "scenario.schema.json"
"""The JSON Schema of scenario files (draft 2020-12); the single source of truth for shapes."""


def discover(root: Path) -> list[Path]:
    """All scenario files below `root/scenarios`, sorted, as paths under `root`."""
    base = root / "scenarios"
    return sorted(p for p in base.rglob("*.yaml") if p.is_file()) if base.is_dir() else []


def scenario_name(path: Path, root: Path | None = None) -> str:
    """The scenario's name: its path below `scenarios/` without the suffix.

    `root` may be the project root (holding `scenarios/`) or the scenarios directory
    itself; without it, the nearest ancestor directory named `scenarios` is used, and
    failing that the bare file stem.
    """
    resolved = path.resolve()
    bases = [root / "scenarios", root] if root is not None else []
    bases += [a for a in resolved.parents if a.name == "scenarios"][:1]
    for base in bases:
        try:
            relative = resolved.relative_to(base.resolve())
        except ValueError:
            continue
        return relative.with_suffix("").as_posix()
    return path.stem


def load_scenario(path: Path, root: Path | None = None) -> Scenario:
    """Read, validate and type one scenario file.

    Raises `ScenarioInvalid` listing every error in the file (with warnings), and
    `OSError` only if the file cannot be read. Warnings of a valid file are kept in
    `Scenario.warnings`.
    """
    text = path.read_text(encoding="utf-8")
    return build_scenario(text, path, root)


def build_scenario(text: str, path: Path, root: Path | None = None) -> Scenario:
    """`load_scenario` for text already in memory (`path` names it in messages)."""
    findings, data, node = check_text(text, str(path))
    if any(f.severity == "error" for f in findings):
        raise ScenarioInvalid(findings)
    assert node is not None  # a file without errors has a document
    return _build(data, node, path, scenario_name(path, root), findings)


def check_text(
    text: str, file: str, known_targets: Collection[str] | None = None
) -> tuple[list[ScenarioError], Any, Node | None]:
    """Every finding for one file's text, sorted by position, with its data and node tree.

    Pure: parses YAML, applies the JSON Schema, then the cross-checks the schema cannot
    express; with `known_targets`, every target named must be one of them. Never raises
    for bad input.
    """
    node, data, findings = _parse(text, file)
    if node is None:
        return findings, data, node
    findings += _schema_findings(data, node, file)
    findings += _cross_findings(data, node, file, known_targets)
    findings.sort(key=lambda f: (f.line, f.column, f.severity, f.key, f.message))
    return _dedupe(findings), data, node


def validate_paths(paths: Iterable[Path | str]) -> list[ScenarioError]:
    """Check files and directories (every `*.yaml` below them); all findings, in order.

    Target names are checked against the target registry of each file's project (the
    nearest directory with `parity.toml` or `pyproject.toml`).
    """
    findings: list[ScenarioError] = []
    registries: dict[Path, frozenset[str] | str] = {}
    for path in _expand(paths):
        if not path.is_file():
            findings.append(ScenarioError(str(path), 0, 0, "", "no such file or directory"))
            continue
        try:
            text = path.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError) as exc:
            findings.append(ScenarioError(str(path), 0, 0, "", f"cannot read: {exc}"))
            continue
        registry = _registry(path, registries)
        if isinstance(registry, str):  # the registry itself is broken: say so, check the rest
            hint = "run `parity targets` for details"
            findings.append(ScenarioError(str(path), 0, 0, "targets", registry, hint, "warning"))
        known = registry if isinstance(registry, frozenset) else None
        findings += check_text(text, str(path), known)[0]
    return findings


def _registry(path: Path, cache: dict[Path, frozenset[str] | str]) -> frozenset[str] | str:
    """Target names declared for `path`'s project, or why they cannot be read."""
    from parity.targets import TargetConfigError, find_root, load_config  # harness layer

    root = find_root(path.parent)
    if root not in cache:
        try:
            cache[root] = frozenset(load_config(root).targets)
        except (TargetConfigError, OSError) as exc:
            cache[root] = f"cannot read the target registry: {exc}"
    return cache[root]


def validate_main(paths: list[str]) -> int:
    """`parity validate [PATHS]`: print every finding; 2 if any error, else 0.

    Without paths, checks every scenario below `./scenarios`. Never shows a traceback:
    an unexpected failure is printed as one line and counts as an error.
    """
    try:
        targets: list[Path | str] = list(paths) if paths else list(discover(Path.cwd()))
        if not targets:
            print("parity validate: no scenario files found below ./scenarios")
            return 2
        files = _expand(targets)
        findings = validate_paths(targets)
    except Exception as exc:  # a validator bug must still end in one readable line
        print(f"parity validate: internal error: {type(exc).__name__}: {exc}")
        return 2
    for finding in findings:
        print(finding)
    errors = sum(f.severity == "error" for f in findings)
    print(f"checked {len(files)} file(s): {errors} error(s), {len(findings) - errors} warning(s)")
    return 2 if errors else 0


def _expand(paths: Iterable[Path | str]) -> list[Path]:
    """Files as given; directories replaced by their `*.yaml` files (hidden dirs skipped)."""
    out: list[Path] = []
    for raw in paths:
        path = Path(raw)
        if path.is_dir():
            out += sorted(
                p
                for p in path.rglob("*.yaml")
                if not any(part.startswith(".") for part in p.relative_to(path).parts)
            )
        else:
            out.append(path)
    return out


# ---------------------------------------------------------------------------------------
# YAML: parse once, keep the node tree for positions
# ---------------------------------------------------------------------------------------


def _parse(text: str, file: str) -> tuple[Node | None, Any, list[ScenarioError]]:
    loader = yaml.SafeLoader(text)
    try:
        node = loader.get_single_node()
        # Key checks run on the composed tree, before construction flattens `<<` merges
        # into it (a merged key overridden locally is not a duplicate).
        findings = list(_yaml_findings(node, (), file)) if node is not None else []
        data = loader.construct_document(node) if node is not None else None
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        line, column = (mark.line + 1, mark.column + 1) if mark else (0, 0)
        message = f"invalid YAML: {exc.problem or exc.context or 'cannot parse'}"
        hint = f"{exc.context}" if exc.context and exc.problem else ""
        return None, None, [ScenarioError(file, line, column, "", message, hint)]
    except yaml.YAMLError as exc:
        return None, None, [ScenarioError(file, 1, 1, "", f"invalid YAML: {exc}")]
    finally:
        loader.dispose()
    if node is None:
        hint = "a scenario needs at least `description` and `steps`"
        return None, None, [ScenarioError(file, 1, 1, "", "empty file", hint)]
    return node, data, findings


def _yaml_findings(node: Node, path: KeyPath, file: str) -> Iterator[ScenarioError]:
    """Duplicate and non-string keys: the loaded data can no longer show them."""
    seen: set[int] = set()

    def walk(node: Node, path: KeyPath) -> Iterator[ScenarioError]:
        if id(node) in seen:  # aliases share nodes; report each node once
            return
        seen.add(id(node))
        if isinstance(node, MappingNode):
            first: dict[str, Node] = {}
            for key, value in node.value:
                if not isinstance(key, ScalarNode):
                    yield _at(file, key, _key_text(path), "mapping keys must be plain strings")
                    continue
                if key.tag != "tag:yaml.org,2002:str" and key.value != "<<":
                    hint = f"YAML reads unquoted {key.value!r} as a {key.tag.rsplit(':', 1)[-1]}"
                    hint += "; quote it"
                    yield _at(
                        file, key, _key_text(path), f"key {key.value!r} is not a string", hint
                    )
                if key.value in first:
                    line = first[key.value].start_mark.line + 1
                    msg = f"duplicate key {key.value!r}; first at line {line}"
                    yield _at(file, key, _key_text(path), msg, "YAML keeps only the later value")
                first[key.value] = key
                yield from walk(value, (*path, key.value))
        elif isinstance(node, SequenceNode):
            for index, item in enumerate(node.value):
                yield from walk(item, (*path, index))

    yield from walk(node, path)


def _at(
    file: str,
    node: Node | None,
    key: str,
    message: str,
    hint: str = "",
    severity: Severity = "error",
) -> ScenarioError:
    line, column = (node.start_mark.line + 1, node.start_mark.column + 1) if node else (0, 0)
    return ScenarioError(file, line, column, key, message, hint, severity)


def _locate(root: Node, path: KeyPath, *, key: bool = False) -> Node:
    """The node at `path` (its key node with `key=True`), or the deepest one that exists."""
    node = root
    for depth, part in enumerate(path):
        child: Node | None = None
        key_node: Node | None = None
        if isinstance(node, MappingNode):
            for k, v in node.value:  # the last duplicate wins, as in the loaded data
                if isinstance(k, ScalarNode) and k.value == str(part):
                    key_node, child = k, v
        elif isinstance(node, SequenceNode) and isinstance(part, int):
            child = node.value[part] if 0 <= part < len(node.value) else None
        if child is None:
            return node
        if key and depth == len(path) - 1 and key_node is not None:
            return key_node
        node = child
    return node


def _key_text(path: Sequence[str | int]) -> str:
    """`steps[2].prompt.cancel`; keys that are not identifiers are quoted: `files["a.txt"]`."""
    text = ""
    for part in path:
        if isinstance(part, int):
            text += f"[{part}]"
        elif re.fullmatch(r"[A-Za-z_][A-Za-z0-9_-]*", part):
            text += f".{part}" if text else part
        else:
            text += f"[{json.dumps(part)}]"
    return text


def _dedupe(findings: list[ScenarioError]) -> list[ScenarioError]:
    out: list[ScenarioError] = []
    for finding in findings:
        if finding not in out:
            out.append(finding)
    return out


# ---------------------------------------------------------------------------------------
# JSON Schema findings, translated into messages a scenario author can act on
# ---------------------------------------------------------------------------------------


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

_RULE_REASON_HINT = "every diverge/mask entry says why the difference is expected"

# One raw finding before positioning: key path, message, hint, point at the key node?
_Raw = tuple[KeyPath, str, str, bool]


def _schema_findings(data: Any, root: Node, file: str) -> list[ScenarioError]:
    out: list[ScenarioError] = []
    for error in _validator().iter_errors(data):
        for path, message, hint, at_key in _translate(error):
            node = _locate(root, path, key=at_key)
            owner = path[:-1] if at_key else path
            out.append(_at(file, node, _key_text(owner), message, hint))
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
            hint = _did_you_mean(extra, allowed) or f"allowed keys: {', '.join(allowed) or 'none'}"
            if kinds:  # `- prompt: {...}` followed by a sibling key: mis-indented parameter
                hint = (
                    f"a step has one key; if {extra!r} belongs to {kinds[0]!r}, indent it under it"
                )
            out.append(((*path, extra), f"unknown key {extra!r}", hint, True))
        return out
    if kind == "required" and isinstance(instance, dict):
        missing = [name for name in value if name not in instance]
        hint = _RULE_REASON_HINT if "reason" in missing and _is_rule(path) else ""
        return [(path, f"missing required key {name!r}", hint, False) for name in missing]
    if kind == "type":
        return [(path, f"expected {_type_words(value)}, got {_describe(instance)}", "", False)]
    if kind == "enum":
        choices = ", ".join(str(c) for c in value)
        hint = _did_you_mean(instance, [str(c) for c in value]) if isinstance(instance, str) else ""
        return [(path, f"expected one of {choices}; got {_describe(instance)}", hint, False)]
    if kind == "const":
        return [(path, f"expected {value!r}, got {_describe(instance)}", "", False)]
    if kind == "minLength" and value == 1:
        hint = _RULE_REASON_HINT if _is_rule(path[:-1]) and path[-1:] == ("reason",) else ""
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
    types = branch.get("type")
    if types is None:
        return True
    return any(_json_type_ok(t, value) for t in ([types] if isinstance(types, str) else types))


def _branch_words(branch: dict[str, Any]) -> str:
    if "anyOf" in branch:
        return " or ".join(_branch_words(_resolve(b)) for b in branch["anyOf"])
    if "enum" in branch:
        return "one of " + ", ".join(str(c) for c in branch["enum"])
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


def _did_you_mean(word: Any, choices: Sequence[str]) -> str:
    if not isinstance(word, str):
        return ""
    close = difflib.get_close_matches(word, choices, n=1, cutoff=0.6)
    return f"did you mean {close[0]!r}?" if close else ""


def _is_rule(path: KeyPath) -> bool:
    return len(path) == 2 and path[0] in ("diverge", "masks") and isinstance(path[1], int)


def _is_step(path: KeyPath) -> bool:
    return len(path) >= 2 and isinstance(path[-1], int) and path[-2] in ("steps", "parallel")


# ---------------------------------------------------------------------------------------
# Cross-checks the schema cannot express. Each reads the data defensively: the schema
# may already have found the shape wrong, and both kinds of finding are reported at once.
# ---------------------------------------------------------------------------------------

_SESSION_PLACEHOLDER = re.compile(r"\{session:([^}]*)\}")
_SESSION_PARAM_KINDS = frozenset(
    {"prompt", "load_session", "resume_session", "close_session", "set_config_option"}
    | {"set_mode", "cancel"}
)


@dataclass
class _Sink:
    """Collects cross-check findings, positioning each by its key path."""

    root: Node
    file: str
    found: list[ScenarioError] = field(default_factory=list)

    def add(
        self, path: KeyPath, message: str, hint: str = "", severity: Severity = "error"
    ) -> None:
        self.found.append(
            _at(self.file, _locate(self.root, path), _key_text(path), message, hint, severity)
        )

    def line(self, path: KeyPath) -> int:
        return _locate(self.root, path).start_mark.line + 1


def _cross_findings(
    data: Any, root: Node, file: str, known_targets: Collection[str] | None
) -> list[ScenarioError]:
    if not isinstance(data, dict):
        return []  # the schema reports a document that is not a mapping
    sink = _Sink(root, file)
    if known_targets is not None:
        _check_targets(data, sorted(known_targets), sink)
    _check_rules(data, sink)
    _check_tools(data, sink)
    _check_llm(data, sink)
    _check_files(data, sink)
    _check_steps(data, sink)
    return sink.found


def _items(value: Any) -> list[tuple[int, dict[str, Any]]]:
    """(index, mapping) for each mapping in a list; anything else yields nothing."""
    return (
        [(i, v) for i, v in enumerate(value) if isinstance(v, dict)]
        if isinstance(value, list)
        else []
    )


def _targets(data: dict[str, Any]) -> list[str]:
    targets = data.get("targets", list(DEFAULT_TARGETS))
    return [t for t in targets if isinstance(t, str)] if isinstance(targets, list) else []


def _selector_problem(selector: str) -> str | None:
    """Why `selector` does not parse, per the grammar in `parity.normalize`; None if it does."""
    try:  # imported late: normalize imports this module
        from parity.normalize import parse_selector
    except ImportError:  # the harness is being assembled; the schema check still applies
        return None
    try:
        parse_selector(selector)
    except ValueError as exc:
        return str(exc)
    return None


def _check_targets(data: dict[str, Any], known: list[str], sink: _Sink) -> None:
    targets = data.get("targets")
    for i, target in enumerate(targets if isinstance(targets, list) else []):
        if isinstance(target, str) and target not in known:
            hint = _did_you_mean(target, known) or f"known targets: {', '.join(known)}"
            sink.add(("targets", i), f"unknown target {target!r}", hint)


def _check_rules(data: dict[str, Any], sink: _Sink) -> None:
    targets = _targets(data)
    for section in ("diverge", "masks"):
        for i, rule in _items(data.get(section)):
            selector = rule.get("path")
            problem = (
                _selector_problem(selector) if isinstance(selector, str) and selector else None
            )
            if problem:
                hint = "see docs/scenarios.md, `masks` and `diverge`"
                sink.add((section, i, "path"), problem, hint)
            reason = rule.get("reason")
            if isinstance(reason, str) and reason and not reason.strip():
                sink.add((section, i, "reason"), "reason is blank", _RULE_REASON_HINT)
            named = rule.get("targets")
            for j, target in enumerate(named if isinstance(named, list) else []):
                if isinstance(target, str) and target not in targets:
                    listed = ", ".join(targets)
                    hint = _did_you_mean(target, targets) or f"this scenario runs {listed}"
                    sink.add(
                        (section, i, "targets", j),
                        f"target {target!r} is not in this scenario's targets",
                        hint,
                    )


def _check_tools(data: dict[str, Any], sink: _Sink) -> None:
    first: dict[str, int] = {}
    for i, tool in _items(data.get("tools")):
        name = tool.get("name")
        if isinstance(name, str):
            if name in first:
                sink.add(
                    ("tools", i, "name"),
                    f"duplicate tool name {name!r}",
                    f"first declared at tools[{first[name]}]",
                )
            first.setdefault(name, i)
        if "result" in tool and "content" in tool:
            sink.add(
                ("tools", i, "content"),
                "give `result` or `content`, not both",
                "`result: x` is short for one text block",
            )
        if tool.get("hang") is True and ("result" in tool or "content" in tool):
            sink.add(
                ("tools", i, "hang"),
                "a hanging tool never answers, so its result is never used",
                "drop `hang` or the result",
            )


def _check_llm(data: dict[str, Any], sink: _Sink) -> None:
    declared = {t.get("name") for _, t in _items(data.get("tools"))}
    call_ids: dict[str, int] = {}
    for i, entry in _items(data.get("llm")):
        here: KeyPath = ("llm", i)
        if "chunks" in entry:
            mixed = [
                k
                for k in ("reasoning", "text", "tool_calls", "usage", "finish", "deltas", "error")
                if k in entry
            ]
            if mixed:
                sink.add(
                    (*here, "chunks"),
                    f"`chunks` cannot be combined with {', '.join(mixed)}",
                    "chunks are sent exactly as written; put everything into them or drop them",
                )
        error = entry.get("error")
        if isinstance(error, dict):
            if entry.get("then") == "hang":
                sink.add(
                    (*here, "then"), "an entry cannot both fail and hang", "drop `then` or `error`"
                )
            if "finish" in entry:
                sink.add(
                    (*here, "finish"), "an `error` entry ends with finish{error}", "drop `finish`"
                )
            if "status" in error:
                unsent = [
                    k
                    for k in ("reasoning", "text", "tool_calls", "usage", "deltas", "chunks")
                    if k in entry
                ]
                if unsent:
                    sink.add(
                        (*here, "error", "status"),
                        f"with `status` the request fails before any chunk: "
                        f"{', '.join(unsent)} never sent",
                        "drop `status` for a failure in the middle of the stream",
                    )
            elif "tool_calls" in entry:
                sink.add(
                    (*here, "tool_calls"),
                    "a mid-stream `error` streams only text and reasoning",
                    "drop `tool_calls`",
                )
        if entry.get("then") == "hang" and "chunks" not in entry:
            for key in ("usage", "finish"):
                if key in entry:
                    sink.add(
                        (*here, key), f"a hanging entry never sends its {key}", f"drop `{key}`"
                    )
        for j, call in _items(entry.get("tool_calls")):
            _check_tool_call(call, (*here, "tool_calls", j), declared, call_ids, sink)


def _check_tool_call(
    call: dict[str, Any], here: KeyPath, declared: set[Any], call_ids: dict[str, int], sink: _Sink
) -> None:
    call_id, name, arguments = call.get("id"), call.get("name"), call.get("arguments")
    if isinstance(call_id, str):
        if call_id in call_ids:
            sink.add(
                (*here, "id"),
                f"tool call id {call_id!r} is already used at line {call_ids[call_id]}",
                "agents and the parity diff link a call's updates by its id",
                "warning",
            )
        call_ids.setdefault(call_id, sink.line((*here, "id")))
    builtin = call.get("builtin") is True
    if isinstance(name, str) and builtin and name in declared:
        sink.add(
            (*here, "builtin"),
            f"{name!r} is a fixture tool declared in `tools`",
            "drop `builtin: true`, or rename the fixture tool",
        )
    elif isinstance(name, str) and not builtin and name not in declared:
        sink.add(
            (*here, "name"),
            f"tool {name!r} is not declared in `tools`",
            "for a target's own tool, say `builtin: true`; declare fixture tools under `tools`",
            "warning",
        )
    if isinstance(arguments, str):
        try:
            json.loads(arguments)
        except ValueError:
            sink.add(
                (*here, "arguments"),
                "arguments is not valid JSON",
                "it is sent verbatim",
                "warning",
            )


def _check_files(data: dict[str, Any], sink: _Sink) -> None:
    files = data.get("files")
    for rel in files if isinstance(files, dict) else {}:
        if not isinstance(rel, str):
            continue
        parts = PurePosixPath(rel).parts
        if (
            not rel
            or rel.startswith("/")
            or "\\" in rel
            or ".." in parts
            or re.match(r"[A-Za-z]:", rel)
        ):
            sink.add(
                ("files", rel),
                f"{rel!r} must be a relative path inside the workdir",
                "use forward slashes, no `..`",
            )


@dataclass
class _StepState:
    defined: dict[str, KeyPath] = field(default_factory=dict)
    everywhere: dict[str, KeyPath] = field(default_factory=dict)
    """Every `as:` in the file, to say "defined later" instead of "never defined"."""
    prompts: dict[str, KeyPath] = field(default_factory=dict)
    listed: bool = False
    script_entries: int | None = 0
    """Consumable llm entries; None when side entries make the count open-ended."""
    response_timeout: float = 15.0
    """Seconds a request step waits for its response (`timeouts.response`)."""


def _check_steps(data: dict[str, Any], sink: _Sink) -> None:
    llm = [e for _, e in _items(data.get("llm"))]
    state = _StepState(script_entries=None if any("match" in e for e in llm) else len(llm))
    timeouts = data.get("timeouts")
    response = timeouts.get("response") if isinstance(timeouts, dict) else None
    if isinstance(response, int | float) and not isinstance(response, bool) and response > 0:
        state.response_timeout = float(response)
    for path, kind, params in _walk_steps(data.get("steps"), ("steps",)):
        if kind == "new_session" and isinstance(params, dict) and isinstance(params.get("as"), str):
            state.everywhere.setdefault(params["as"], (*path, kind, "as"))
    _check_step_list(data.get("steps"), ("steps",), state, frozenset(), sink)


def _walk_steps(steps: Any, path: KeyPath) -> Iterator[tuple[KeyPath, str, Any]]:
    for i, step in _items(steps):
        for kind, params in step.items():
            yield (*path, i), kind, params
            if kind == "parallel":
                yield from _walk_steps(params, (*path, i, kind))


def _check_step_list(
    steps: Any, path: KeyPath, state: _StepState, block: frozenset[str], sink: _Sink
) -> None:
    for i, step in _items(steps):
        _check_step_at(step, (*path, i), state, block, sink)


def _check_step_at(
    step: dict[str, Any], path: KeyPath, state: _StepState, block: frozenset[str], sink: _Sink
) -> None:
    """One step; `block` holds the names defined inside the enclosing parallel blocks."""
    if len(step) != 1:
        return  # the schema reports it
    ((kind, params),) = step.items()
    if kind == "parallel":
        _check_parallel(params, (*path, kind), state, block, sink)
    else:
        _check_one_step(kind, params, (*path, kind), state, block, sink)


def _check_parallel(
    params: Any, here: KeyPath, state: _StepState, block: frozenset[str], sink: _Sink
) -> None:
    branches = _items(params)
    inner = {
        p["as"]
        for _, s in branches
        for k, p in s.items()
        if k == "new_session" and isinstance(p, dict) and isinstance(p.get("as"), str)
    }
    before = dict(state.defined)
    added: dict[str, KeyPath] = {}
    for j, step in branches:
        if "restart" in step:
            sink.add((*here, j, "restart"), "`restart` cannot run in parallel with other steps")
        state.defined = dict(before)  # a branch sees only what was defined before the block
        _check_step_at(step, (*here, j), state, block | inner, sink)
        for name, where in state.defined.items():
            if name in before:
                continue
            if name in added:
                line = sink.line(added[name])
                sink.add(
                    where, f"session {name!r} is already defined at line {line}", "use another name"
                )
            added.setdefault(name, where)
    state.defined = before | added


def _check_one_step(
    kind: str, params: Any, here: KeyPath, state: _StepState, block: frozenset[str], sink: _Sink
) -> None:
    if kind in _SESSION_PARAM_KINDS and isinstance(params, dict):
        name = params.get("session")
        if isinstance(name, str):
            _use_session(name, (*here, "session"), state, block, sink)
    for path, text in _strings(params, here):
        for match in _SESSION_PLACEHOLDER.finditer(text):
            _use_session(match.group(1), path, state, block, sink, placeholder=True)
    if not isinstance(params, dict):
        return
    if kind == "new_session" and isinstance(params.get("as"), str):
        name = params["as"]
        if name in state.defined:
            line = sink.line(state.defined[name])
            sink.add(
                (*here, "as"),
                f"session {name!r} is already defined at line {line}",
                "use another name",
            )
        else:
            state.defined[name] = (*here, "as")
    elif kind == "prompt":
        _check_prompt(params, here, state, sink)
    elif kind == "list_sessions":
        if params.get("cursor") == "next" and not state.listed:
            sink.add(
                (*here, "cursor"),
                "`cursor: next` needs an earlier list_sessions step",
                "it sends the previous result's nextCursor",
            )
        state.listed = True


def _check_prompt(params: dict[str, Any], here: KeyPath, state: _StepState, sink: _Sink) -> None:
    if "text" in params and "content" in params:
        sink.add(
            (*here, "content"),
            "give `text` or `content`, not both",
            "`text: x` is short for one text block",
        )
    name = params.get("as")
    if isinstance(name, str):
        if name in state.prompts:
            line = sink.line(state.prompts[name])
            sink.add((*here, "as"), f"prompt name {name!r} is already used at line {line}")
        state.prompts.setdefault(name, (*here, "as"))
    cancel = params.get("cancel")
    after = cancel.get("after") if isinstance(cancel, dict) else None
    wanted = after.get("llm_request") if isinstance(after, dict) else None
    delay = after.get("ms") if isinstance(after, dict) else None
    late = isinstance(delay, int) and delay >= state.response_timeout * 1000
    if late and not isinstance(delay, bool):
        sink.add(
            (*here, "cancel", "after", "ms"),
            f"the prompt's response timeout ({state.response_timeout:g} s) ends the step first",
            "shorten the delay or raise `timeouts.response`",
        )
    entries = state.script_entries
    if isinstance(wanted, int) and entries is not None and wanted > entries:
        sink.add(
            (*here, "cancel", "after", "llm_request"),
            f"the llm script has only {entries} entr{'y' if entries == 1 else 'ies'}",
            "the trigger would never fire: an exhausted script fails the request instead",
            "warning",
        )


def _use_session(
    name: str,
    path: KeyPath,
    state: _StepState,
    block: frozenset[str],
    sink: _Sink,
    *,
    placeholder: bool = False,
) -> None:
    if name in state.defined:
        return
    what = f"session {name!r}" + (" (in a {session:...} placeholder)" if placeholder else "")
    if name in block:
        hint = "its steps run concurrently; define the session in a step before the parallel block"
        sink.add(path, f"{what} is defined inside the same parallel block", hint)
    elif name in state.everywhere:
        line = sink.line(state.everywhere[name])
        sink.add(
            path,
            f"{what} is used before `new_session: {{as: {name}}}` defines it",
            f"it is defined later, at line {line}",
        )
    else:
        hint = (
            _did_you_mean(name, sorted(state.defined))
            or f"define it first with `- new_session: {{as: {name}}}`"
        )
        sink.add(path, f"{what} is never defined", hint)


def _strings(value: Any, path: KeyPath) -> Iterator[tuple[KeyPath, str]]:
    """Every string inside a step's parameters (where placeholders may appear)."""
    if isinstance(value, str):
        yield path, value
    elif isinstance(value, dict):
        for key, item in value.items():
            yield from _strings(item, (*path, str(key)))
    elif isinstance(value, list):
        for index, item in enumerate(value):
            yield from _strings(item, (*path, index))


# ---------------------------------------------------------------------------------------
# Valid data -> typed Scenario
# ---------------------------------------------------------------------------------------


def _build(
    data: dict[str, Any], root: Node, path: Path, name: str, warnings: list[ScenarioError]
) -> Scenario:
    file = str(path)

    def where(key_path: KeyPath) -> Where:
        node = _locate(root, key_path)
        return Where(file, node.start_mark.line + 1, node.start_mark.column + 1)

    def rules(section: str) -> list[Rule]:
        return [
            Rule(
                r["path"],
                r["reason"],
                list(r["targets"]) if "targets" in r else None,
                where((section, i)),
            )
            for i, r in enumerate(data.get(section, []))
        ]

    def step(raw: dict[str, Any], key_path: KeyPath) -> Step:
        ((kind, value),) = raw.items()
        params: dict[str, Any]
        if kind == "parallel":
            params = {"steps": [step(s, (*key_path, kind, j)) for j, s in enumerate(value)]}
        elif kind == "send_raw":
            params = {"line": value}
        else:
            params = value if value is not None else {}
        return Step(kind, params, where(key_path))

    return Scenario(
        name=name,
        path=path,
        description=data["description"],
        targets=list(data.get("targets", DEFAULT_TARGETS)),
        compare=data.get("compare", "exact"),
        diverge=rules("diverge"),
        masks=rules("masks"),
        catalog=copy.deepcopy(data.get("catalog", DEFAULT_CATALOG)),
        tools=[_tool(t) for t in data.get("tools", [])],
        files=dict(data.get("files", {})),
        llm=[LlmEntry(e, where(("llm", i))) for i, e in enumerate(data.get("llm", []))],
        client=dict(data.get("client", {})),
        steps=[step(s, ("steps", i)) for i, s in enumerate(data["steps"])],
        timeouts={k: float(v) for k, v in data.get("timeouts", {}).items()},
        warnings=[w for w in warnings if w.severity == "warning"],
    )


def _tool(raw: dict[str, Any]) -> Tool:
    content = raw.get("content")
    if content is None:
        content = [{"type": "text", "text": raw["result"]}] if "result" in raw else []
    return Tool(
        name=raw["name"],
        description=raw.get("description", ""),
        parameters=raw.get("parameters", {"type": "object", "properties": {}}),
        content=list(content),
        is_error=raw.get("is_error", False),
        delay_ms=raw.get("delay_ms", 0),
        hang=raw.get("hang", False),
        approval=raw.get("approval", "none"),
    )
