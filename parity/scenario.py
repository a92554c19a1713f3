"""Scenario files: YAML -> a typed `Scenario`.

The YAML is checked against `parity/schema/scenario.schema.json` (the same schema
editors use), then turned into the dataclasses below. Step kinds, LLM entries and tool
declarations keep their validated YAML mapping in `params` (key names as written in the
file, snake_case): the schema is the single source of truth for their shape, and
`docs/scenarios.md` is the reference for users.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

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
    """One client step. `kind` is the step's single key in YAML (`prompt`, ...)."""

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
