"""The table explore calls the agents' own tools from (`parity.explore.builtin_tools`)
is native's: for every tool a live native shows the model with every family on, the
same parameters, the same required ones. Native 0.2.1-rc.2 for every tool it has, and
0.1.0-rc.8 for `ralph`, which only it mounts. Live: each native where it runs here."""

from __future__ import annotations

import textwrap
from pathlib import Path
from typing import Any

import pytest

from parity.config.project import load_config
from parity.engine.postrun import normalized
from parity.engine.runner import Runner
from parity.explore.builtin_tools import MCP_RESOURCE_TOOLS, TOOLS
from parity.scenario.families import TOOL_FAMILY
from parity.scenario.load import build_scenario

REPO = Path(__file__).resolve().parents[2]


def _shown_tools(target: str, tmp_path: Path, mcp: bool = False) -> dict[str, Any]:
    """Tool name -> its parameters' schema, as `target` shows them with every family
    (and, with `mcp`, a session with the harness's MCP bridge)."""
    text = textwrap.dedent(
        """\
        description: every built-in tool the agent shows the model
        targets: [native, plus]
        builtin_tools: all
        llm: [{text: hello}]
        steps:
          - initialize: {}
          - new_session: {as: s1, fixture_tools: FIXTURE}
          - prompt: {session: s1, text: hi}
        """
    ).replace("FIXTURE", "mcp" if mcp else "auto")
    if mcp:
        text += "mcp_resources: {resources: [{uri: 'mem://x', name: x}]}\n"
    scenario = build_scenario(text, tmp_path / "scenarios" / "all-tools.yaml")
    with Runner(load_config(REPO)) as runner:
        why = runner.unavailable(target)
        if why is not None:
            pytest.skip(f"{target} cannot run here: {why}")
        view = normalized(scenario, runner.execute(scenario, target))
    body = next(m["body"] for m in view["model"] if m.get("body"))
    return {tool["name"]: tool["parameters"] for tool in body["tools"]}


def _same_parameters(shown: dict[str, Any], names: set[str]) -> None:
    for name in sorted(names):
        schema = shown[name]
        params = TOOLS[name]
        assert set(params) == set(schema.get("properties", {})), name
        required = {p for p, (_, needed) in params.items() if needed}
        assert required == set(schema.get("required", [])), name


def test_the_table_has_native_021s_parameters(tmp_path: Path) -> None:
    shown = _shown_tools("native", tmp_path)
    assert set(shown) == set(TOOL_FAMILY) - {"ralph"}  # every family's tools but ralph
    _same_parameters(shown, set(shown))


def test_the_mcp_resource_tools_have_native_021s_parameters(tmp_path: Path) -> None:
    shown = _shown_tools("native", tmp_path, mcp=True)
    assert set(MCP_RESOURCE_TOOLS) <= set(shown)
    _same_parameters(shown, set(MCP_RESOURCE_TOOLS))


def test_ralph_has_native_rc8s_parameters(tmp_path: Path) -> None:
    shown = _shown_tools("native-rc8", tmp_path)
    _same_parameters(shown, {"ralph"})
