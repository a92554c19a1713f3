"""Scenario files: YAML -> a typed `Scenario`.

The YAML is checked against `parity/schema/scenario.schema.json` (the same schema
editors use), then turned into the dataclasses below. Step kinds, LLM entries and tool
declarations keep their validated YAML mapping in `params` (key names as written in the
file, snake_case): the schema is the single source of truth for their shape, and
`docs/scenarios.md` is the reference for users.

This module holds the types, loading and the public API. Checking a file's text takes
three passes in modules of their own: `parity.yaml_positions` (parsing, and key paths
to line:column), `parity.schema_findings` (the JSON Schema, in an author's words) and
`parity.scenario_checks` (what the schema cannot express); their findings are the
`ScenarioError`s of `parity.scenario_errors`. Public names that moved are re-exported.
"""

from __future__ import annotations

import copy
from collections.abc import Collection, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from yaml.nodes import Node

from parity.scenario_checks import cross_findings
from parity.scenario_errors import KeyPath as KeyPath
from parity.scenario_errors import ScenarioError as ScenarioError
from parity.scenario_errors import ScenarioInvalid as ScenarioInvalid
from parity.scenario_errors import Severity as Severity
from parity.schema_findings import SCHEMA_PATH as SCHEMA_PATH
from parity.schema_findings import UPDATE_KINDS as UPDATE_KINDS
from parity.schema_findings import schema as schema
from parity.schema_findings import schema_findings
from parity.yaml_positions import locate, parse

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
class ExpectedProblem:
    """An `expect_problems` entry: a run problem (`parity.problems`) the scenario
    declares expected, with its mandatory reason."""

    kind: str
    reason: str
    targets: list[str] | None = None
    match: str | None = None
    """Only problems whose message contains this text (case-sensitive)."""
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
    expect_problems: list[ExpectedProblem] = field(default_factory=list)
    """Run problems that are expected (and must occur) on the targets they name."""
    catalog: dict[str, Any] = field(default_factory=lambda: dict(DEFAULT_CATALOG))
    tools: list[Tool] = field(default_factory=list)
    files: dict[str, str] = field(default_factory=dict)
    expect_files: list[str] = field(default_factory=list)
    """Workdir files whose content after the run is part of every target's view."""
    llm: list[LlmEntry] = field(default_factory=list)
    client: dict[str, Any] = field(default_factory=dict)
    """capabilities, permission, elicitation, fs, terminal (see the schema)."""
    steps: list[Step] = field(default_factory=list)
    timeouts: dict[str, float] = field(default_factory=dict)
    """startup, response, run (seconds); defaults applied by the driver."""
    warnings: list[ScenarioError] = field(default_factory=list)
    """Findings that do not make the file invalid (see docs/scenarios.md)."""

    @property
    def calls_builtin_tools(self) -> bool:
        """Whether the script calls an agent's own tool (`builtin: true`). Only then do
        DSH-family targets show the model their built-in tools; otherwise both sides
        offer just the fixture tools, so their model views compare (docs/native.md)."""
        return any(
            isinstance(call, dict) and call.get("builtin") is True
            for entry in self.llm
            for call in entry.params.get("tool_calls") or []
        )


# ---------------------------------------------------------------------------------------
# Public API
# ---------------------------------------------------------------------------------------


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
    node, data, findings = parse(text, file)
    if node is None:
        return findings, data, node
    findings += schema_findings(data, node, file)
    findings += cross_findings(data, node, file, known_targets, DEFAULT_TARGETS)
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


def _dedupe(findings: list[ScenarioError]) -> list[ScenarioError]:
    out: list[ScenarioError] = []
    for finding in findings:
        if finding not in out:
            out.append(finding)
    return out


# ---------------------------------------------------------------------------------------
# Valid data -> typed Scenario
# ---------------------------------------------------------------------------------------


def _build(
    data: dict[str, Any], root: Node, path: Path, name: str, warnings: list[ScenarioError]
) -> Scenario:
    file = str(path)

    def where(key_path: KeyPath) -> Where:
        node = locate(root, key_path)
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
        expect_problems=[
            ExpectedProblem(
                e["kind"],
                e["reason"],
                list(e["targets"]) if "targets" in e else None,
                e.get("match"),
                where(("expect_problems", i)),
            )
            for i, e in enumerate(data.get("expect_problems", []))
        ],
        catalog=copy.deepcopy(data.get("catalog", DEFAULT_CATALOG)),
        tools=[_tool(t) for t in data.get("tools", [])],
        files=dict(data.get("files", {})),
        expect_files=list(data.get("expect_files", [])),
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
