"""acp-plus exits within 2 s of stdin EOF, with status 0, in every state of a turn, under
both providers: parity-stream (fixture tools through the fake's `/tools/call`) and the
OpenAI chat dialect (fixture tools through the harness's stdio MCP server), as the
`plus` and `plus-openai` targets run it."""

from __future__ import annotations

import asyncio
import time
from typing import Any

import pytest
from plus_agent import PYTHON, RawAgent, World, WorldFactory, processes_with, raw_agent, wait_for

from parity.fakellm.mcp_stdio import mcp_server_entry
from parity.scenario.model import Tool

HANG = Tool(
    name="wait_forever",
    description="Never returns.",
    parameters={"type": "object", "properties": {}},
    content=[],
    hang=True,
)
OPENAI = """
[providers.mock]
api = "openai-chat"
name = "Mock"
base_url = "{base}/v1"
api_key_env = "PARITY_FAKE_API_KEY"

[[providers.mock.models]]
id = "mock"
name = "Mock"
context_window = 1024
input_modalities = ["text"]
"""
STUBBORN = r"""
import json, signal, sys, time
signal.signal(signal.SIGTERM, signal.SIG_IGN)
for line in sys.stdin:
    msg = json.loads(line)
    if "id" not in msg:
        continue
    if msg["method"] == "initialize":
        result = {"protocolVersion": msg["params"]["protocolVersion"], "capabilities":
                  {"tools": {}}, "serverInfo": {"name": "stubborn", "version": "1"}}
    else:
        result = {"tools": []}
    print(json.dumps({"jsonrpc": "2.0", "id": msg["id"], "result": result}), flush=True)
time.sleep(60)  # stdin is closed: an MCP server that does not leave (nor on SIGTERM)
"""
"""An MCP server acp-plus cannot close politely: its teardown must not wait for it."""
OUTSIDE = "/etc/hostname"
"""A file outside the workspace: a write there that asks for a wider sandbox asks the client."""


def tool_call(name: str, arguments: dict[str, Any]) -> dict[str, Any]:
    return {"tool_calls": [{"id": "call-1", "name": name, "arguments": arguments}]}


STATES: dict[str, list[dict[str, Any]]] = {
    "idle": [],
    "mid-stream": [{"text": "partial answer", "deltas": 4, "then": "hang"}],
    "mid-tool": [tool_call("wait_forever", {})],
    "after-cancel": [tool_call("wait_forever", {})],
    "pending-permission": [
        tool_call(
            "write",
            {
                "file_path": OUTSIDE,
                "content": "x",
                "sandbox_permissions": "danger-full-access",
                "justification": "the user asked",
            },
        )
    ],
    "stubborn-mcp-server": [],
}


def make(world: WorldFactory, provider: str, llm: list[dict[str, Any]]) -> World:
    w = world(llm=llm, tools=[HANG], builtin_tools=True)
    if provider == "openai-chat":
        # The route's provider speaks the fake's chat dialect instead of parity-stream.
        text = w.config.read_text(encoding="utf-8")
        head = text.split("\n[providers.fixture]")[0]
        w.config.write_text(head + OPENAI.format(base=w.run.base_url), encoding="utf-8")
    return w


def tool_requests(w: World) -> int:
    return sum(1 for r in w.run.requests if r.path.endswith("/tools/call"))


async def reach(state: str, agent: RawAgent, w: World, mcp: list[dict[str, Any]]) -> None:
    """Drive the agent into `state` (the prompt, if any, stays unanswered)."""
    await agent.call("initialize", {"protocolVersion": 1})
    new = await agent.call("session/new", {"cwd": str(w.workdir), "mcpServers": mcp}, 30)
    if state in ("idle", "stubborn-mcp-server"):
        return
    session = new["result"]["sessionId"]
    prompt = await agent.request(
        "session/prompt", {"sessionId": session, "prompt": [{"type": "text", "text": "go"}]}
    )
    if state == "mid-stream":
        await wait_for(lambda: len(w.model_requests()) + len(chat(w)) == 1)
        await asyncio.sleep(0.3)
    elif state in ("mid-tool", "after-cancel"):
        await wait_for(lambda: tool_requests(w) == 1, timeout=10)
        if state == "after-cancel":
            await agent.send(
                {"jsonrpc": "2.0", "method": "session/cancel", "params": {"sessionId": session}}
            )
            response, _ = await agent.until_response(prompt)
            assert response["result"] == {"stopReason": "cancelled"}
    else:
        frame = await agent.recv(10)
        while frame.get("method") != "session/request_permission":
            frame = await agent.recv(10)


def chat(w: World) -> list[Any]:
    return [r for r in w.run.requests if r.path.endswith("/chat/completions")]


async def eof_exit(agent: RawAgent) -> tuple[int, float]:
    assert agent.process.stdin is not None
    started = time.monotonic()
    agent.process.stdin.close()
    status = await asyncio.wait_for(agent.process.wait(), 10)
    return status, time.monotonic() - started


@pytest.mark.parametrize("state", list(STATES))
@pytest.mark.parametrize("provider", ["parity-stream", "openai-chat"])
async def test_exit_within_2s_of_stdin_eof(
    world: WorldFactory, monkeypatch: pytest.MonkeyPatch, provider: str, state: str
) -> None:
    monkeypatch.setenv("PARITY_FAKE_API_KEY", "sk-fake")
    w = make(world, provider, STATES[state])
    marker = w.run.base_url
    mcp = [mcp_server_entry(w.run.base_url)] if provider == "openai-chat" else []
    if state == "stubborn-mcp-server":
        script = w.workdir.parent / "stubborn.py"
        script.write_text(STUBBORN, encoding="utf-8")
        mcp.append(
            {"name": "stubborn", "command": PYTHON, "args": [str(script), marker], "env": []}
        )
    async with raw_agent(w) as agent:
        await reach(state, agent, w, mcp)
        status, elapsed = await eof_exit(agent)
    log = w.stderr.read_text(encoding="utf-8", errors="replace")
    assert status == 0, log
    assert elapsed < 2.0, f"exit took {elapsed:.2f}s after EOF\n{log}"
    # The MCP server the session started is gone with the agent.
    await wait_for(lambda: not processes_with(marker), timeout=1.0)
