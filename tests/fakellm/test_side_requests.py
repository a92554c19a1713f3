"""Side requests answered whatever their wording, through the official `openai` SDK.

A side entry `match: {request: side}` answers a tool-less request once the run's agent
has shown that its turns offer tools; the first tool-less request waits for that (the
order opencode uses: title first, turn a moment later); a chat-only agent's tool-less
requests stay turns; a side request past the script is an extra model call.
"""

from __future__ import annotations

import asyncio
import time
from typing import Any

import httpx
import openai
import pytest

from parity.checks.problem_kinds import llm_kind
from parity.fakellm import side_requests
from parity.fakellm.mcp_stdio import VIA_HEADER
from parity.fakellm.run import Run
from tests.support.fakellm import OpenRun

TOOLS: list[Any] = [
    {"type": "function", "function": {"name": "echo", "parameters": {"type": "object"}}}
]
SIDE = {"match": {"request": "side"}, "text": "A title"}


def client(run: Run) -> openai.AsyncOpenAI:
    return openai.AsyncOpenAI(base_url=f"{run.base_url}/v1", api_key="sk-fake", max_retries=0)


async def ask(run: Run, text: str, *, tools: bool, system: str = "") -> str:
    messages: list[Any] = [{"role": "system", "content": system}] if system else []
    messages.append({"role": "user", "content": text})
    async with client(run) as api:
        extra: dict[str, Any] = {"tools": TOOLS} if tools else {}
        answer = await api.chat.completions.create(model="m", messages=messages, **extra)
    return answer.choices[0].message.content or ""


async def test_a_side_request_before_the_turn_is_answered_whatever_its_wording(
    open_run: OpenRun,
) -> None:
    # Each agent words its title request its own way; the prompt is the last message.
    for system in ("You are a title generator.", "Summarize in five words."):
        run = open_run([SIDE, {"text": "the turn"}])
        side = asyncio.create_task(ask(run, "say hello", tools=False, system=system))
        await asyncio.sleep(0.3)  # the turn comes a moment later, with the agent's tools
        turn = await ask(run, "say hello", tools=True, system="You are a coding agent.")
        assert (await side, turn) == ("A title", "the turn")
        assert [(r.side, r.entry) for r in run.requests] == [(True, None), (False, 1)]


async def test_once_the_turn_showed_tools_a_side_request_is_not_held(open_run: OpenRun) -> None:
    run = open_run([SIDE, {"text": "the turn"}])
    assert await ask(run, "go", tools=True) == "the turn"
    started = time.monotonic()
    assert await ask(run, "Generate a title", tools=False) == "A title"
    assert time.monotonic() - started < side_requests.HOLD / 2


async def test_a_chat_only_agents_tool_less_requests_are_turns(
    open_run: OpenRun, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(side_requests, "HOLD", 0.3)
    run = open_run([SIDE, {"text": "first"}, {"text": "second"}])
    assert await ask(run, "go", tools=False) == "first"  # held 0.3 s: no tools came
    started = time.monotonic()
    assert await ask(run, "again", tools=False) == "second"
    assert time.monotonic() - started < 0.25  # known now: not held again
    assert [(r.side, r.entry) for r in run.requests] == [(False, 1), (False, 2)]


async def test_a_side_request_past_the_script_is_an_extra_model_call(open_run: OpenRun) -> None:
    run = open_run([{"text": "the turn"}])
    assert await ask(run, "go", tools=True) == "the turn"
    with pytest.raises(openai.ConflictError, match="extra model call"):
        await ask(run, "Generate a title", tools=False)
    problem = run.requests[1].problem
    assert problem is not None and llm_kind(problem) == "extra-model-call"
    # A turn past the script is still what it was.
    with pytest.raises(openai.ConflictError, match="script exhausted"):
        await ask(run, "more", tools=True)


async def test_without_a_side_entry_nothing_is_held(
    open_run: OpenRun, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(side_requests, "HOLD", 5.0)
    run = open_run([{"match": {"tools": "none"}, "text": "T"}, {"text": "the turn"}])
    started = time.monotonic()
    assert await ask(run, "Generate a title", tools=False) == "T"
    assert time.monotonic() - started < 2.0


@pytest.mark.parametrize("bridge", [True, False])
async def test_an_agent_that_started_the_mcp_bridge_is_waited_for_longer(
    open_run: OpenRun, monkeypatch: pytest.MonkeyPatch, bridge: bool
) -> None:
    """A loaded machine can keep opencode's turn past the short hold; an agent that has
    started the MCP bridge gets the long one (a chat-only agent starts none)."""
    monkeypatch.setattr(side_requests, "HOLD", 0.3)
    monkeypatch.setattr(side_requests, "BRIDGE_HOLD", 5.0)
    run = open_run([SIDE, {"text": "the turn"}, {"text": "more"}])
    if bridge:  # what the bridge asks the fake as it starts (mcp_stdio.serve)
        async with httpx.AsyncClient(headers={VIA_HEADER: "mcp"}) as http:
            assert (await http.get(f"{run.base_url}/catalog")).status_code == 200
    side = asyncio.create_task(ask(run, "say hello", tools=False))
    await asyncio.sleep(1.0)  # past the short hold
    turn = await ask(run, "say hello", tools=True)
    if bridge:
        assert (await side, turn) == ("A title", "the turn")
    else:  # taken for a chat-only agent's turn: the script's entries in order
        assert (await side, turn) == ("the turn", "more")
