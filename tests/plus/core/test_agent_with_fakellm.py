"""The core against the team's fake LLM (`parity.fakellm`): both sides of the fixed
parity-stream wire, and the OpenAI-chat dialect through the real SDK, must agree.

The same §7.4 scenario 4 script runs once over parity-stream and once over
chat completions; the committed events must be the same (ids aside).
"""

from __future__ import annotations

import asyncio
import copy
import time
from pathlib import Path
from typing import Any

from acp_plus.core.agent import Agent, Route
from acp_plus.core.approvals import ApprovalChain
from acp_plus.core.llm.base import Provider, Router
from acp_plus.core.llm.openai_chat import OpenAIChatConfig, OpenAIChatProvider
from acp_plus.core.llm.parity_stream import ParityStreamProvider
from acp_plus.core.store import SessionStore
from acp_plus.core.tools import session_tools
from acp_plus.core.tools.base import ToolRegistry
from parity.fakellm.server import FakeLLM
from parity.scenario.model import DEFAULT_CATALOG, Tool

ECHO = Tool(
    name="echo",
    description="Return a deterministic result.",
    parameters={"type": "object", "properties": {}},
    content=[{"type": "text", "text": "tool result"}],
)
SCENARIO_4: list[dict[str, Any]] = [
    {
        "reasoning": "inspect first",
        "deltas": 13,
        "tool_calls": [{"id": "call-1", "name": "echo"}],
        "usage": {"input": 8, "output": 2, "reasoning": 1},
    },
    {"text": "done", "usage": {"input": 5, "output": 4}},
]


async def _run_turn(
    provider: Provider, tools: ToolRegistry, home: Path, content: str = "go"
) -> tuple[Agent, list[dict[str, Any]], asyncio.Task[Any]]:
    seen: list[dict[str, Any]] = []
    log = SessionStore(home).create(str(home))
    agent = Agent(log, Router([provider]), tools, ApprovalChain(), home, seen.append)
    task = asyncio.create_task(
        agent.run_turn([{"type": "text", "text": content}], Route("mock", "mock"))
    )
    return agent, seen, task


def _shape(events: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Committed events without the per-run random ids and times."""
    out = []
    for event in events:
        e = {k: v for k, v in event.items() if k not in ("at", "id")}
        out.append(e)
    return out


async def test_scenario_4_over_parity_stream_and_openai_chat_commits_the_same(
    fake: FakeLLM, tmp_path: Path
) -> None:
    stream_run = fake.open_run(
        "ps", llm=copy.deepcopy(SCENARIO_4), tools=[ECHO], catalog=DEFAULT_CATALOG
    )
    host = ParityStreamProvider(stream_run.base_url)
    _, via_stream, task = await _run_turn(
        host, await session_tools(fixture_host=host, builtin_tools=False), tmp_path / "a"
    )
    assert await task == {"kind": "completed"}
    await host.aclose()

    chat_run = fake.open_run(
        "chat", llm=copy.deepcopy(SCENARIO_4), tools=[ECHO], catalog=DEFAULT_CATALOG
    )
    chat = OpenAIChatProvider(
        OpenAIChatConfig(
            id="mock",
            name="Mock",
            base_url=f"{chat_run.base_url}/v1",
            api_key_env="FAKE_KEY",
            models=tuple(DEFAULT_CATALOG["providers"][0]["models"]),
            max_retries=0,
        ),
        environ={"FAKE_KEY": "any"},
    )
    # Over chat the fixture tool is the same catalog tool, still called via /tools/call.
    tools = await session_tools(
        fixture_host=ParityStreamProvider(chat_run.base_url), builtin_tools=False
    )
    _, via_chat, task = await _run_turn(chat, tools, tmp_path / "b")
    assert await task == {"kind": "completed"}
    await chat.aclose()

    assert [e["type"] for e in via_stream] == [
        "turn/start",
        "user/message",
        "route/set",
        "assistant/message",
        "tool/call",
        "tool/result",
        "assistant/message",
        "turn/end",
    ]
    first = via_stream[3]
    assert first["blocks"] == [
        {"type": "reasoning", "text": "inspect first"},
        {"type": "tool-call", "id": "call-1", "name": "echo", "arguments": "{}"},
    ]
    assert first["usage"] == {"inputTokens": 8, "outputTokens": 2, "reasoningTokens": 1}
    assert via_stream[5]["content"] == [{"type": "text", "text": "tool result"}]
    assert _shape(via_chat) == _shape(via_stream)
    # What the fake saw: the second model request carries the canonical history.
    second = [r for r in stream_run.requests if r.path == "/stream"][1]
    assert second.body["messages"][1:] == [
        {"role": "assistant", "content": first["blocks"]},
        {
            "role": "tool",
            "toolCallId": "call-1",
            "isError": False,
            "content": [{"type": "text", "text": "tool result"}],
        },
    ]


async def test_cancel_of_a_hanging_stream_is_recorded_by_the_fake(
    fake: FakeLLM, tmp_path: Path
) -> None:
    run = fake.open_run(
        "hang",
        llm=[{"text": "partial", "deltas": 7, "then": "hang"}],
        tools=[],
        catalog=DEFAULT_CATALOG,
    )
    host = ParityStreamProvider(run.base_url)
    agent, seen, task = await _run_turn(host, ToolRegistry(), tmp_path, "hang")
    deadline = time.monotonic() + 5
    while not [r for r in run.requests if r.path == "/stream"]:
        assert time.monotonic() < deadline
        await asyncio.sleep(0.01)
    await asyncio.sleep(0.1)
    agent.cancel()
    assert await asyncio.wait_for(task, 5) == {"kind": "aborted"}
    committed = [e for e in seen if e["type"] == "assistant/message"]
    assert committed[0]["blocks"] == [{"type": "text", "text": "partial"}]
    stream = next(r for r in run.requests if r.path == "/stream")
    while not stream.aborted:
        assert time.monotonic() < deadline
        await asyncio.sleep(0.01)
    await host.aclose()


async def test_provider_failure_from_the_fake(fake: FakeLLM, tmp_path: Path) -> None:
    run = fake.open_run(
        "err",
        llm=[{"text": "partial", "deltas": 7, "error": {"message": "provider blew up"}}],
        tools=[],
        catalog=DEFAULT_CATALOG,
    )
    host = ParityStreamProvider(run.base_url)
    _, seen, task = await _run_turn(host, ToolRegistry(), tmp_path, "boom")
    reason = await task
    await host.aclose()
    assert reason["kind"] == "error"
    assert reason["error"]["message"] == "provider blew up"
    assert [e for e in seen if e["type"] == "assistant/message"] == []


async def test_provider_failure_over_openai_chat(fake: FakeLLM, tmp_path: Path) -> None:
    """A mid-stream error event makes the SDK raise; the turn fails, nothing commits."""
    run = fake.open_run(
        "chat-err",
        llm=[{"text": "partial", "deltas": 7, "error": {"message": "provider blew up"}}],
        tools=[],
        catalog=DEFAULT_CATALOG,
    )
    chat = OpenAIChatProvider(
        OpenAIChatConfig(
            id="mock",
            name="Mock",
            base_url=f"{run.base_url}/v1",
            api_key_env="FAKE_KEY",
            models=tuple(DEFAULT_CATALOG["providers"][0]["models"]),
            max_retries=0,
        ),
        environ={"FAKE_KEY": "any"},
    )
    _, seen, task = await _run_turn(chat, ToolRegistry(), tmp_path, "boom")
    reason = await task
    await chat.aclose()
    assert reason["kind"] == "error"
    assert "provider blew up" in reason["error"]["message"]
    assert [e for e in seen if e["type"] == "assistant/message"] == []
