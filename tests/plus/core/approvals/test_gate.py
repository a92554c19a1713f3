"""The gate in the loop: a deny is never asked, whatever the tool; grants; backups' policy."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from dataclasses import replace
from pathlib import Path
from typing import Any, ClassVar

import pytest
from plus_stream_server import ParityServer, text_response, tool_call_response

from acp_plus.core.agent import Agent, Route
from acp_plus.core.approvals import ApprovalChain, ApprovalRequest
from acp_plus.core.approvals.gate import Decision, Gate
from acp_plus.core.approvals.grants import grant_event, grants, matching
from acp_plus.core.approvals.settings import ApprovalSettings, BackupSettings, Rule
from acp_plus.core.events import ApprovalOutcome
from acp_plus.core.llm.base import Router
from acp_plus.core.llm.parity_stream import ParityStreamProvider
from acp_plus.core.store import SessionStore
from acp_plus.core.tools.base import ToolContext, ToolRegistry, ToolResult
from acp_plus.core.tools.builtin import builtin_tools

GO = [{"type": "text", "text": "go"}]


class FakeTool:
    """A tool that asks nothing and records its runs (an MCP tool's shape)."""

    parameters: ClassVar[dict[str, Any]] = {"type": "object"}
    description = "fake"

    def __init__(self, name: str, ask: str | None = None) -> None:
        self.name = name
        self.ask = ask
        self.runs: list[dict[str, Any]] = []

    def approval_reason(self, args: dict[str, Any], ctx: ToolContext) -> str | None:
        return self.ask

    async def run(self, args: dict[str, Any], ctx: ToolContext) -> ToolResult:
        self.runs.append(args)
        return ToolResult.text("ran")


def _finish(chunks: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [*chunks, {"type": "finish", "kind": "tool-calls"}]


@pytest.fixture
async def parts(server: ParityServer, tmp_path: Path) -> AsyncIterator[dict[str, Any]]:
    router = Router([ParityStreamProvider(server.url)])
    try:
        yield {"router": router, "server": server, "tmp": tmp_path}
    finally:
        await router.aclose()


def _agent(
    parts: dict[str, Any], tools: list[Any], settings: ApprovalSettings
) -> tuple[Agent, list[ApprovalRequest]]:
    tmp: Path = parts["tmp"]
    (tmp / "ws").mkdir(exist_ok=True)
    log = SessionStore(tmp / "home").create(str(tmp / "ws"))
    asked: list[ApprovalRequest] = []

    async def client(req: ApprovalRequest) -> ApprovalOutcome | None:
        asked.append(req)
        return "allowed-once"

    agent = Agent(
        log,
        parts["router"],
        ToolRegistry(tools),
        ApprovalChain([client]),
        tmp / "ws",
        lambda e: None,
    )
    agent.gate = Gate(settings, agent.commit, agent.log.events, agent.cwd, tmp / "home" / "b")
    return agent, asked


def _results(agent: Agent) -> list[str]:
    return [e["content"][0]["text"] for e in agent.log.events() if e["type"] == "tool/result"]


async def test_a_deny_rule_fails_every_kind_of_tool_without_asking(parts: dict[str, Any]) -> None:
    mcp, asking = FakeTool("mcp__srv__drop"), FakeTool("fixture_drop", ask="tool asks")
    settings = ApprovalSettings(
        rules=(Rule("deny", "dropping is off limits", tool="*drop", name="d"),)
    )
    agent, asked = _agent(parts, [mcp, asking], settings)
    server: ParityServer = parts["server"]
    server.script += [
        _finish(tool_call_response("mcp__srv__drop", "c1", {})),
        _finish(tool_call_response("fixture_drop", "c2", {})),
        text_response("done"),
    ]
    await agent.run_turn(GO, Route("mock", "mock"))
    assert _results(agent) == ["Error: dropping is off limits"] * 2
    assert mcp.runs == asking.runs == [] and asked == []
    decided = [e for e in agent.log.events() if e["type"] == "approval/decided"]
    assert [(d["source"], d["rule"], d["outcome"]) for d in decided] == [
        ("rule", "d", "rejected")
    ] * 2
    assert not any(e["type"] == "approval/asked" for e in agent.log.events())


async def test_a_deny_beats_a_grant_and_an_ask_rule_asks(parts: dict[str, Any]) -> None:
    tool = FakeTool("mcp__srv__put")
    settings = ApprovalSettings(
        rules=(
            Rule("deny", "not there", tool="mcp__*", path="secret*"),
            Rule("ask", "guard asks", tool="mcp__*", name="asker"),
        ),
        ledger=True,
    )
    agent, asked = _agent(parts, [tool], settings)
    agent.commit(grant_event(1, "plan", {"tool": "mcp__*", "description": "all"}))

    async def by_grant(request: ApprovalRequest, turn: int) -> Decision | None:
        g = matching(grants(agent.log.events()), request.tool, request.arguments, agent.cwd)
        return None if g is None else Decision("allowed-once", {"source": "grant", "grant": g.n})

    assert agent.gate is not None
    agent.gate.deciders.append(by_grant)
    server: ParityServer = parts["server"]
    server.script += [
        _finish(tool_call_response("mcp__srv__put", "c1", {"path": "secret.txt"})),
        _finish(tool_call_response("mcp__srv__put", "c2", {"path": "ok.txt"})),
        text_response("done"),
    ]
    await agent.run_turn(GO, Route("mock", "mock"))
    assert _results(agent) == ["Error: not there", "ran"]
    assert tool.runs == [{"path": "ok.txt"}] and asked == []  # the grant answered
    asked_events = [e for e in agent.log.events() if e["type"] == "approval/asked"]
    assert [(e["reason"], e["rule"]) for e in asked_events] == [("guard asks", "asker")]
    last = [e for e in agent.log.events() if e["type"] == "approval/decided"][-1]
    assert (last["source"], last["grant"]) == ("grant", 1)


async def test_write_and_edit_are_backed_up_and_a_failed_backup_refuses(
    parts: dict[str, Any],
) -> None:
    settings = ApprovalSettings(backups=BackupSettings(enabled=True, max_bytes=8))
    tools = builtin_tools(parts["tmp"] / "home")
    agent, _ = _agent(parts, tools, settings)
    (agent.cwd / "small").write_text("v1")
    (agent.cwd / "big").write_text("x" * 9)
    server: ParityServer = parts["server"]
    server.script += [
        # Native's policy: an existing file is read before it is overwritten.
        _finish(tool_call_response("read", "c0", {"file_path": "small"})),
        _finish(tool_call_response("write", "c1", {"file_path": "small", "content": "v2"})),
        _finish(tool_call_response("write", "c2", {"file_path": "big", "content": "y"})),
        text_response("done"),
    ]
    await agent.run_turn(GO, Route("mock", "mock"))
    results = _results(agent)[1:]
    assert (agent.cwd / "small").read_text() == "v2"
    assert results[1].startswith("Error: no backup of big could be made (")
    assert results[1].endswith("over the backup cap of 8); write was not run")
    assert (agent.cwd / "big").read_text() == "x" * 9
    saved = [e for e in agent.log.events() if e["type"] == "backup/saved"]
    assert [(e["n"], e["tool"], e["existed"]) for e in saved] == [(1, "write", True)]
    assert (parts["tmp"] / "home" / "b" / "1").read_text() == "v1"


async def test_continue_policy_runs_unprotected_and_says_so(parts: dict[str, Any]) -> None:
    settings = ApprovalSettings(
        backups=BackupSettings(enabled=True, max_bytes=1, on_failure="continue")
    )
    agent, _ = _agent(parts, builtin_tools(parts["tmp"] / "home"), settings)
    (agent.cwd / "big").write_text("xx")
    parts["server"].script += [
        _finish(tool_call_response("read", "c0", {"file_path": "big"})),
        _finish(tool_call_response("write", "c1", {"file_path": "big", "content": "y"})),
        text_response("done"),
    ]
    await agent.run_turn(GO, Route("mock", "mock"))
    result = [e for e in agent.log.events() if e["type"] == "tool/result"][-1]
    assert "had no backup" in json.dumps(result["content"])
    assert (agent.cwd / "big").read_text() == "y"


def test_settings_replace_keeps_the_rest() -> None:
    # `active` is what turns the whole feature on: nothing configured, nothing on.
    assert not ApprovalSettings().active
    assert replace(ApprovalSettings(), ledger=True).active
