"""The typed scenario: what a valid scenario file means, as plain dataclasses.

`parity.scenario.load` builds these from validated YAML. Step kinds, LLM entries and tool
declarations keep their validated YAML mapping in `params` (key names as written in the
file, snake_case): the JSON Schema (`parity/schema/scenario.schema.json`) is the single
source of truth for their shape, and `docs/scenarios.md` is the reference for users.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from parity.scenario.errors import ScenarioError
from parity.scenario.families import FAMILIES, families_of, ordered

Profile = Literal["exact", "semantic", "none"]

DEFAULT_TARGETS: tuple[str, ...] = ("native", "plus", "native-rc8")

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
"""The catalog a scenario gets when it declares none (docs/contract.md §7.1; the catalog's
shape is `GET {base}/catalog` in docs/parity-stream.md)."""


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
    after: dict[str, Any] | None = None
    """The step's `after` trigger: it is sent only once that has fired (None: at once)."""


STEP_AFTER = "after"
"""The one key a step may hold beside its kind (`Step.after`)."""


@dataclass
class Rule:
    """A `diverge` or `mask` entry: a path selector with its mandatory reason; also a
    project-level known difference (`parity.scenario.known`), which names its target in
    `targets`, its `id`, and the agent `versions` it holds for."""

    path: str
    reason: str
    targets: list[str] | None = None
    where: Where | None = None
    sides: dict[str, Any] | None = None
    """What each side does at `path` (diverge only): target name or `others` -> a pin
    (`parity.scenario.pins`); a side that stops doing it is drift."""
    id: str = ""
    """A known difference's id (empty for a scenario's own rules)."""
    scenarios: list[str] | None = None
    """A known difference's scenario names or fnmatch patterns; None: every scenario."""
    versions: str | None = None
    """A known difference's PEP 440 specifier set, matched against the version its
    target's run reports (`parity.scenario.pins.reported_version`); None: every version."""
    family: str | None = None
    """A family-wide known difference's family: it applies to comparisons between two of
    its `targets` (the family's targets in this project), whose side is `each`."""
    follows: str = ""
    """A known difference's cause: the id of the entry it follows from. It applies only
    in a comparison where that entry explained a difference (`parity.checks.diff`)."""

    @property
    def label(self) -> str:
        """How reports name the rule: `known difference <id>` or the selector."""
        return f"known difference {self.id!r}" if self.id else f"diverge rule {self.path!r}"


@dataclass
class ExpectedProblem:
    """An `expect_problems` entry: a run problem (`parity.checks.problems`) the scenario
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
    captured: dict[str, Any] | None = None
    """Set by `parity capture` (docs/capture.md): `target` and how it was recorded."""
    compare: Profile = "exact"
    diverge: list[Rule] = field(default_factory=list)
    masks: list[Rule] = field(default_factory=list)
    expect_problems: list[ExpectedProblem] = field(default_factory=list)
    """Run problems that are expected (and must occur) on the targets they name."""
    catalog: dict[str, Any] = field(default_factory=lambda: dict(DEFAULT_CATALOG))
    tools: list[Tool] = field(default_factory=list)
    mcp_resources: dict[str, Any] | None = None
    """What the harness's MCP bridge serves as resources (docs/scenarios.md); None: the
    bridge is a tools-only server."""
    builtin_tools: tuple[str, ...] | None = None
    """The `builtin_tools` key as written (`all` is `("all",)`); None when absent."""
    files: dict[str, str] = field(default_factory=dict)
    home_files: dict[str, str] = field(default_factory=dict)
    """Files written into the run's home (the agents' HOME) before the agent starts."""
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
    def fake_catalog(self) -> dict[str, Any]:
        """The catalog the fake LLM serves this scenario's runs: its `catalog`, plus
        `mcpResources` (what the MCP bridge reads) when it declares `mcp_resources`."""
        if self.mcp_resources is None:
            return self.catalog
        return {**self.catalog, "mcpResources": self.mcp_resources}

    @property
    def builtin_families(self) -> tuple[str, ...]:
        """The built-in tool families every target runs with, in native's order
        (`parity.scenario.families`): the `builtin_tools` key, else what a captured
        scenario's capture offered (all or none), else the families of the built-in
        tools the script calls (none when it calls none)."""
        if self.builtin_tools is not None:
            return ordered(self.builtin_tools)
        if self.captured is not None and "builtin_tools" in self.captured:
            return FAMILIES if self.captured["builtin_tools"] else ()
        return families_of(
            call["name"]
            for entry in self.llm
            for call in entry.params.get("tool_calls") or []
            if isinstance(call, dict)
            and call.get("builtin") is True
            and isinstance(call.get("name"), str)
        )

    @property
    def calls_builtin_tools(self) -> bool:
        """Whether the script calls an agent's own tool (`builtin: true`). Only then do
        DSH-family targets show the model their built-in tools; otherwise both sides
        offer just the fixture tools, so their model views compare (docs/native.md). A
        captured scenario says what its capture offered (docs/capture.md)."""
        if self.captured is not None and "builtin_tools" in self.captured:
            return bool(self.captured["builtin_tools"])
        return any(
            isinstance(call, dict) and call.get("builtin") is True
            for entry in self.llm
            for call in entry.params.get("tool_calls") or []
        )

    @property
    def profile(self) -> Literal["exact", "semantic"]:
        """The normalization profile of this scenario's views: its `compare`, except that
        `compare: none` (no parity checks) still snapshots each target, in the exact
        profile."""
        return "exact" if self.compare == "none" else self.compare

    def script_for(self, target: str) -> list[LlmEntry]:
        """The `llm` entries that serve `target`: an entry whose `match.targets` names other
        targets only is left out of that target's script (one scenario can serve agents
        that, say, ask for a session title and agents that do not). A captured scenario's
        recorded requests stay only in the captured target's script: other agents send
        other requests, and are checked against the snapshots instead."""
        own = self.captured is not None and self.captured.get("target") == target
        out = []
        for entry in self.llm:
            match = entry.params.get("match")
            scoped = match.get("targets") if isinstance(match, Mapping) else None
            if scoped is None or target in scoped:
                if "request" in entry.params and not own:
                    params = {k: v for k, v in entry.params.items() if k != "request"}
                    entry = LlmEntry(params, entry.where)
                out.append(entry)
        return out
