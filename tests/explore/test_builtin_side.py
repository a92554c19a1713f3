"""Built-in tool calls in generated scenarios (`parity explore --builtin-tools`): every
tool and parameter can be drawn, the scenarios stay valid, and their families follow
from their calls."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, Phase, find, given, settings

from parity.explore.builtin_side import (
    RESOURCES,
    VALUES,
    WORKSPACE,
    builtin_call,
    callable_tools,
)
from parity.explore.builtin_tools import MCP_RESOURCE_TOOLS, TOOLS
from parity.explore.generate import MCP_RESPONSE_TIMEOUT, scenarios, to_yaml
from parity.scenario.families import FAMILIES, FAMILY_TOOLS, TOOL_FAMILY, tools_named
from parity.scenario.load import build_scenario, check_text

PAIR = ("native", "plus")
FAST = settings(max_examples=60, deadline=None, suppress_health_check=list(HealthCheck))


def _builtin_calls(scenario: dict[str, Any]) -> list[dict[str, Any]]:
    return [
        call
        for entry in scenario.get("llm", [])
        for call in entry.get("tool_calls", [])
        if call.get("builtin") is True
    ]


@FAST
@given(scenarios(PAIR, builtin=True))
def test_scenarios_with_builtin_calls_validate_and_run_with_their_families(
    scenario: dict[str, Any],
) -> None:
    text = to_yaml(scenario)
    findings, _, _ = check_text(text, "generated.yaml", known_targets=PAIR)
    assert [str(f) for f in findings if f.severity == "error"] == []
    assert scenario["files"] == dict(WORKSPACE)
    calls = _builtin_calls(scenario)
    for call in calls:
        assert set(call["arguments"]) <= set(TOOLS[call["name"]])
    families = build_scenario(text, Path("scenarios/found/x.yaml")).builtin_families
    assert set(families) == {f for f in FAMILIES for c in calls if c["name"] in FAMILY_TOOLS[f]}


@FAST
@given(scenarios(PAIR))
def test_without_the_option_no_builtin_call_is_drawn(scenario: dict[str, Any]) -> None:
    assert _builtin_calls(scenario) == []
    assert scenario["files"] == {"notes.txt": "hello\n"}


@pytest.mark.parametrize(
    ("tool", "param"), [(tool, param) for tool, params in TOOLS.items() for param in params]
)
def test_every_tool_and_parameter_can_be_drawn(tool: str, param: str) -> None:
    found = find(
        builtin_call("c1"),
        lambda call: call["name"] == tool and param in call["arguments"],
        settings=settings(max_examples=2000, database=None),
    )
    assert found["builtin"] is True and found["id"] == "c1"


def test_a_required_parameter_is_sometimes_left_out() -> None:
    """The agent must refuse a call without one: that answer is compared too."""
    find(
        builtin_call("c1"),
        lambda call: call["name"] == "write" and "content" not in call["arguments"],
        settings=settings(max_examples=2000, database=None),
    )


def test_every_tool_of_every_family_can_be_called() -> None:
    """Every family `builtin_tools` accepts is explored, by each of its tools (issue 35:
    goals, skills, subagents, workflow and ralph too), and every parameter's kind has
    values to draw."""
    assert set(TOOLS) == set(TOOL_FAMILY) | set(MCP_RESOURCE_TOOLS)
    assert {kind for params in TOOLS.values() for kind, _ in params.values()} <= set(VALUES)


@FAST
@given(scenarios(PAIR, builtin=True))
def test_a_scenario_calling_a_resource_tool_gives_its_sessions_the_mcp_bridge(
    scenario: dict[str, Any],
) -> None:
    """Native shows the MCP resource tools only in a session with an MCP server: such a
    scenario serves the bridge's resources to every session; any other serves none."""
    sessions = [s["new_session"] for s in scenario["steps"] if "new_session" in s]
    if {c["name"] for c in _builtin_calls(scenario)} & set(MCP_RESOURCE_TOOLS):
        assert scenario["mcp_resources"] == RESOURCES
        assert all(s["fixture_tools"] == "mcp" for s in sessions)
        assert scenario["timeouts"]["response"] == MCP_RESPONSE_TIMEOUT
    else:
        assert "mcp_resources" not in scenario
        assert all("fixture_tools" not in s for s in sessions)


def test_resource_tool_calls_can_be_drawn() -> None:
    # The first example that calls one is enough: shrinking it (Hypothesis's default for
    # `find`) cost over a minute of the suite and proves nothing more.
    find(
        scenarios(PAIR, builtin=True),
        lambda s: "mcp_resources" in s,
        settings=settings(max_examples=2000, database=None, phases=[Phase.generate]),
    )


LACKING = frozenset(tools_named(["read_image", "goal", "subagent", "workflow", "ralph"]))


@FAST
@given(scenarios(PAIR, builtin=True, lacking=LACKING))
def test_a_tool_a_target_lacks_is_never_called(scenario: dict[str, Any]) -> None:
    """A declared gap (`lacks_tools` in a target's table) is said once, not found again
    in every example that calls the tool (docs/explore.md)."""
    assert {call["name"] for call in _builtin_calls(scenario)} & LACKING == set()


def test_the_tools_left_are_every_other_tool() -> None:
    assert set(callable_tools(LACKING)) == set(TOOLS) - LACKING
    assert "create_goal" in LACKING and "read" in callable_tools(LACKING)
