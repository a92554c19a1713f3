"""acp-plus's `ralph` family against native 0.1.0-rc.8's, as recorded, and its loop.

The definition, the system-prompt paragraphs, the round prompts and the texts a run ends
with are read from rc.8's snapshots of real runs (`snapshots/tools/ralph-*/native-rc8.yaml`),
never from a copy written here. The loop runs real child agents (`Subagents.start_for_caller`)
against the in-test parity-stream server.
"""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest
import yaml
from plus_stream_server import HANG_AFTER_PARTIAL, ParityServer, tool_call_response

from acp_plus.core.agent import Agent, Route
from acp_plus.core.approvals import ApprovalChain
from acp_plus.core.context import ModelContext
from acp_plus.core.llm.base import Router
from acp_plus.core.llm.parity_stream import ParityStreamProvider
from acp_plus.core.store import SessionStore
from acp_plus.core.subagents import Host, Subagents
from acp_plus.core.tools.base import ToolContext, ToolRegistry
from acp_plus.core.tools.fixture import fixture_tools
from acp_plus.core.tools.ralph_family import RalphTool, ralph_tools
from acp_plus.core.tools.ralph_text import (
    GUIDANCE,
    REPORT_SCHEMA,
    RalphError,
    bounded,
    check_report,
    max_rounds,
    objective,
    render_result,
    round_prompt,
)
from acp_plus.core.tools.structured import INSTRUCTION, StructuredTools
from acp_plus.core.tools.structured import TOOL_NAME as NAME
from parity.view.dump import load_view

REPO = Path(__file__).parents[4]
SNAPSHOTS = REPO / "snapshots" / "tools"
ROUTE = Route("mock", "mock")


def _rc8(scenario: str) -> list[dict[str, Any]]:
    view = load_view((SNAPSHOTS / scenario / "native-rc8.yaml").read_text())
    return [r for r in view["model"] if r["path"] == "/stream"]


MAIN = _rc8("ralph-main")
ERRORS = _rc8("ralph-errors")


def _results(requests: list[dict[str, Any]]) -> dict[str, tuple[str, bool]]:
    """The parent's last request: each call's result text and isError, by call id."""
    last = [r for r in requests if "agent" not in r][-1]
    return {
        m["toolCallId"]: (m["content"][0]["text"], m["isError"])
        for m in last["body"]["messages"]
        if m["role"] == "tool"
    }


def test_the_definition_and_guidance_are_rc8s_byte_for_byte() -> None:
    (tool,) = ralph_tools(Subagents())
    ours = {"name": tool.name, "description": tool.description, "parameters": tool.parameters}
    assert MAIN[0]["body"]["tools"] == [ours]
    assert MAIN[0]["body"]["system"].endswith("\n\n" + GUIDANCE[0])


def test_a_rounds_child_is_offered_structured_output_and_told_to_call_it() -> None:
    child = next(r for r in MAIN if r.get("agent") == 1)
    assert child["body"]["system"].endswith(GUIDANCE[0] + "\n\n" + INSTRUCTION)
    offered = {t["name"]: t for t in child["body"]["tools"]}
    assert sorted(offered) == ["ralph", NAME]
    registry = StructuredTools(ToolRegistry(ralph_tools(Subagents())), REPORT_SCHEMA)
    assert registry.specs() == child["body"]["tools"]


def test_each_round_prompt_is_rc8s_with_the_handoff_as_the_worker_wrote_it() -> None:
    first, second = (next(r for r in MAIN if r.get("agent") == n) for n in (1, 2))
    goal = objective("  Fix the typos in notes.md  ")
    assert first["body"]["messages"][0]["content"][0]["text"] == round_prompt(goal, 1, 3, None)
    scenario = yaml.safe_load((REPO / "scenarios/tools/ralph-main.yaml").read_text())
    handoff = scenario["llm"][1]["tool_calls"][0]["arguments"]
    assert list(handoff) != list(REPORT_SCHEMA["properties"])  # the worker's own key order
    assert second["body"]["messages"][0]["content"][0]["text"] == round_prompt(goal, 2, 3, handoff)
    default = next(r for r in MAIN if r.get("agent") == 3)
    assert "Ralph round: 1 of 256." in default["body"]["messages"][0]["content"][0]["text"]


def test_the_run_texts_are_rc8s() -> None:
    results = _results(MAIN)
    scenario = yaml.safe_load((REPO / "scenarios/tools/ralph-main.yaml").read_text())
    reports = [e["tool_calls"][0]["arguments"] for e in scenario["llm"] if e.get("agent")]
    assert results["call-1"] == (render_result("complete", 2, reports[1]), False)
    assert results["call-2"] == (render_result("blocked", 1, reports[2]), False)
    assert results["call-3"] == (render_result("budget-limited", 2, reports[4]), False)


def _r(status: str, summary: str, evidence: list[str], steps: list[str], blocker: str) -> Any:
    return {
        "status": status,
        "summary": summary,
        "evidence": evidence,
        "nextSteps": steps,
        "blocker": blocker,
    }


@pytest.mark.parametrize(
    ("call", "report"),
    [
        ("call-9", _r("continue", "L", [], [], "")),
        ("call-10", _r("complete", " p", ["x"], [], "")),
        ("call-11", _r("complete", "D", [""], [], "")),
        ("call-12", _r("blocked", "S", [], [], "k ")),
        ("call-13", _r("complete", "D", ["x"], ["M"], "")),
        ("call-14", _r("blocked", "S", [], [], "")),
    ],
)
def test_a_refused_report_fails_the_run_with_rc8s_engine_text(
    call: str, report: dict[str, Any]
) -> None:
    with pytest.raises(RalphError) as refused:
        check_report(report)
    assert _results(ERRORS)[call] == (f"Error: {refused.value}", True)


def test_the_size_limits_are_rc8s() -> None:
    scenario = yaml.safe_load((REPO / "scenarios/tools/ralph-limits.yaml").read_text())
    big, long = (e["tool_calls"][0]["arguments"] for e in scenario["llm"] if e.get("agent"))
    results = _results(_rc8("ralph-limits"))
    with pytest.raises(RalphError) as refused:
        check_report(big)
    assert results["call-1"] == (f"Error: {refused.value}", True)
    check_report(long)  # at the limit, compact
    assert results["call-2"] == (render_result("complete", 1, long), False)
    assert results["call-2"][0].endswith("\n\u2026 [truncated]")


def test_the_handoff_and_the_result_are_bounded() -> None:
    big = {
        "status": "continue",
        "summary": "s" * 100,
        "evidence": [],
        "nextSteps": ["n"],
        "blocker": "",
    }
    check_report(big, max_handoff=200)
    with pytest.raises(
        RalphError,
        match=r"exceeds maxHandoffChars \(179 > 100\)\n    at validateReport "
        r"\(workflow:ralph-loop:57:11\)",
    ):
        check_report(big, max_handoff=100)
    assert bounded("x" * 30, 20) == "x" * 6 + "\n\u2026 [truncated]"
    assert bounded("x" * 30, 5) == "\n\u2026 [t"
    assert bounded("x" * 20, 20) == "x" * 20


@pytest.mark.parametrize(
    ("requested", "rounds"),
    [(None, 256), (1, 1), (256, 256), (3.0, 3)],
)
def test_the_round_cap_defaults_to_the_ceiling(requested: Any, rounds: int) -> None:
    assert max_rounds(requested) == rounds


@pytest.mark.parametrize(
    ("requested", "message"),
    [
        (0, "Ralph maxRounds must be a positive safe integer"),
        (1.5, "Ralph maxRounds must be a positive safe integer"),
        (True, "Ralph maxRounds must be a positive safe integer"),
        (2.0**53, "Ralph maxRounds must be a positive safe integer"),
        (257, "Ralph maxRounds 257 exceeds the deployment ceiling 256"),
    ],
)
def test_a_round_cap_native_refuses(requested: Any, message: str) -> None:
    with pytest.raises(RalphError, match=f"^{message}$"):
        max_rounds(requested)


# -- the loop, with real child agents ------------------------------------------------------


RECORDED: list[dict[str, Any]] = []


async def _tool(server: ParityServer, tmp_path: Path) -> tuple[RalphTool, list[Agent]]:
    provider = ParityStreamProvider(server.url)
    router = Router([provider])
    store = SessionStore(tmp_path / "home")
    agents = Subagents()
    children: list[Agent] = []
    fixtures = await fixture_tools(provider)
    tool = RalphTool(agents)
    tools = ToolRegistry([*fixtures, tool])

    def spawn(fork: bool, cwd: str | None, schema: dict[str, Any] | None) -> Agent:
        # As server/children.py builds a structured child: the tool, the demand last.
        assert schema is not None
        log = store.create(str(tmp_path), origin="subagent")
        context = ModelContext(identity="You are a child.", guidance=(*GUIDANCE, INSTRUCTION))
        own = StructuredTools(tools, schema)
        agent = Agent(log, router, own, ApprovalChain(), tmp_path, lambda e: None, context=context)
        children.append(agent)
        # Each child hosts children of its own, as server/children.py makes them.
        agents.host(log.id, Host(spawn, lambda: ROUTE, lambda c, s: None, agent.commit, reopen))
        return agent

    def reopen(child_id: str) -> Agent:
        return spawn(False, None, None)

    RECORDED.clear()
    host = Host(spawn, lambda: ROUTE, lambda c, s: None, RECORDED.append, reopen)
    agents.host("parent", host)
    return tool, children


def _report(call_id: str, status: str, steps: list[str], **extra: Any) -> dict[str, Any]:
    args = {"status": status, "summary": "S", "evidence": ["e"], "nextSteps": steps, "blocker": ""}
    return {
        "chunks": [
            *tool_call_response(NAME, call_id, args | extra),
            {"type": "finish", "reason": {"kind": "tool-calls"}},
        ]
    }


CTX = ToolContext("parent", Path("/w"), "call-1", 1)


async def test_rounds_run_fresh_children_until_one_reports_completion(
    server: ParityServer, tmp_path: Path
) -> None:
    tool, children = await _tool(server, tmp_path)
    echo = tool_call_response("echo", "after", {}, index=1)
    done = _report("r2", "complete", [])
    done["chunks"][-1:-1] = echo  # a second call in the reporting message: never run
    server.script += [_report("r1", "continue", ["next"]), done]
    result = await tool.run({"objective": " Fix it ", "maxRounds": 3}, CTX)
    assert not result.is_error
    assert result.content[0]["text"].startswith("Ralph worker reported completion after 2 rounds.")
    first, second = server.streams()
    assert len(server.streams()) == 2  # the report concludes each child's turn
    assert [r.path for r in server.requests if r.path == "/tools/call"] == []
    assert first.body["messages"][0]["content"][0]["text"] == round_prompt("Fix it", 1, 3, None)
    assert first.body["sessionId"] != second.body["sessionId"]  # a fresh child per round
    assert first.body["system"].endswith(INSTRUCTION)
    # One-shot children, as rc.8's: neither listed nor kept in the parent's log.
    assert tool.agents.listing("parent") == [] and RECORDED == []
    refused = [e for e in children[1].log.events() if e["type"] == "tool/result"][-1]
    assert refused["isError"] and "is not executed" in refused["content"][0]["text"]


async def test_a_child_without_a_report_fails_its_round(
    server: ParityServer, tmp_path: Path
) -> None:
    tool, _ = await _tool(server, tmp_path)
    bad = _report("r1", "continue", ["n"], extra=1)
    server.script += [
        bad,
        _report("r2", "continue", ["n"]),
        {"chunks": [{"type": "finish", "reason": {"kind": "stop"}}]},
    ]
    result = await tool.run({"objective": "x", "maxRounds": 2}, CTX)
    assert result.is_error
    # Round 1's worker retried and continued; round 2's ended without a report.
    assert result.content[0]["text"].startswith(
        "Error: Ralph round 2 child failed before producing a structured report.\n"
        'Last successful handoff:\n{\n  "status": "continue",'
    )
    # The schema's refusal went back to the child, in rc.8's words, and it tried again.
    retry = server.streams()[1].body["messages"][-1]
    assert retry["content"][0]["text"] == (
        'Error: invalid arguments: "value.extra" is not a declared property '
        "(additionalProperties: false)"
    )


async def test_a_rounds_worker_may_run_nested_rounds(server: ParityServer, tmp_path: Path) -> None:
    """As rc.8 does (scenarios/tools/ralph-nested): the worker's own fresh child."""
    tool, children = await _tool(server, tmp_path)
    nested = tool_call_response("ralph", "n1", {"objective": "inner", "maxRounds": 1})
    server.script += [
        {"chunks": [*nested, {"type": "finish", "reason": {"kind": "tool-calls"}}]},
        _report("g1", "complete", []),
        _report("r1", "complete", []),
    ]
    result = await tool.run({"objective": "outer", "maxRounds": 1}, CTX)
    assert result.content[0]["text"].startswith("Ralph worker reported completion after 1 round.")
    outer, inner, _ = server.streams()
    assert inner.body["messages"][0]["content"][0]["text"] == round_prompt("inner", 1, 1, None)
    assert inner.body["sessionId"] == children[1].log.id != outer.body["sessionId"]
    inner_result = next(e for e in children[0].log.events() if e["type"] == "tool/result")
    assert not inner_result["isError"]


async def test_a_session_that_hosts_no_children_cannot_run_rounds(
    server: ParityServer, tmp_path: Path
) -> None:
    tool, _ = await _tool(server, tmp_path)
    inner = ToolContext("someone-else", Path("/w"), "call-1", 1)
    result = await tool.run({"objective": "x"}, inner)
    assert result.content[0]["text"] == (
        "Error: Ralph workflow failed: subagent tool requires a calling agent"
    )
    assert server.streams() == []


async def test_cancelling_the_call_stops_the_rounds_child(
    server: ParityServer, tmp_path: Path
) -> None:
    tool, children = await _tool(server, tmp_path)
    server.script += [HANG_AFTER_PARTIAL]
    run = asyncio.ensure_future(tool.run({"objective": "x", "maxRounds": 2}, CTX))
    await asyncio.wait_for(server.hanging.wait(), 5)
    run.cancel()
    with pytest.raises(asyncio.CancelledError):
        await run
    (child,) = children
    assert not child.running
    assert child.log.events()[-1]["type"] == "turn/end"
    assert child.log.events()[-1]["reason"]["kind"] == "aborted"
    assert len(server.streams()) == 1  # no round after it
    assert tool.cancelled_text == (
        "Error: Ralph workflow was cancelled (workflow run cancelled: workflow signal aborted)"
    )
