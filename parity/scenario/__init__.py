"""Scenario files: YAML -> a typed, validated `Scenario`, the first stage of the flow.

`model` (the types), `load` (text -> findings, a valid file -> `Scenario`), the checking
passes `yaml_positions`, `schema_findings`, `checks` and `step_checks` (their findings are
`errors.ScenarioError`s), and `selectors`, the path grammar masks and diverge rules are
written in. The package's public surface is below; harness code imports each name from
the module that defines it.
"""

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
