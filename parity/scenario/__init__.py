"""Scenario files: YAML -> a typed, validated `Scenario`, the first stage of the flow.

`model` (the types), `load` (text -> findings, a valid file -> `Scenario`), the checking
passes `yaml_positions`, `schema_findings`, `checks` and `step_checks` (their findings are
`errors.ScenarioError`s), and `selectors`, the path grammar masks and diverge rules are
written in. The public surface below loads on first use (`parity.lazy`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from parity.lazy import surface

if TYPE_CHECKING:
    from parity.scenario.errors import ScenarioError, ScenarioInvalid
    from parity.scenario.load import build_scenario, check_text, discover, load_scenario
    from parity.scenario.model import (
        DEFAULT_CATALOG,
        ExpectedProblem,
        LlmEntry,
        Rule,
        Scenario,
        Step,
        Tool,
        Where,
    )

__all__ = [
    "DEFAULT_CATALOG",
    "ExpectedProblem",
    "LlmEntry",
    "Rule",
    "Scenario",
    "ScenarioError",
    "ScenarioInvalid",
    "Step",
    "Tool",
    "Where",
    "build_scenario",
    "check_text",
    "discover",
    "load_scenario",
]

__getattr__ = surface(
    __name__,
    {
        "DEFAULT_CATALOG": "parity.scenario.model",
        "ExpectedProblem": "parity.scenario.model",
        "LlmEntry": "parity.scenario.model",
        "Rule": "parity.scenario.model",
        "Scenario": "parity.scenario.model",
        "Step": "parity.scenario.model",
        "Tool": "parity.scenario.model",
        "Where": "parity.scenario.model",
        "ScenarioError": "parity.scenario.errors",
        "ScenarioInvalid": "parity.scenario.errors",
        "build_scenario": "parity.scenario.load",
        "check_text": "parity.scenario.load",
        "discover": "parity.scenario.load",
        "load_scenario": "parity.scenario.load",
    },
)
