"""A background job's completion notice, through the real acp-plus: where native puts
it. A job that ends while the turn is busy reaches the model as a message at the next
step; one that ends after the turn woke the idle session with a turn of its own, whose
updates the client gets without having prompted (scenarios/tools/bash-*.yaml record the
same against native)."""

from __future__ import annotations

import json
from typing import Any

from feature_support import open_session, prompt, updates
from plus_agent import WorldFactory, raw_agent, wait_for

SANDBOX = 'sandbox = "danger-full-access"\n'
NOTICE = "(bash: sleep 0.3; echo first) finished [status: completed, exit code: 0]."


def _background(call_id: str) -> dict[str, Any]:
    arguments = {"description": "d", "command": "sleep 0.3; echo first", "run_in_background": True}
    return {"id": call_id, "name": "bash", "arguments": arguments}


def _wait(call_id: str) -> dict[str, Any]:
    return {"id": call_id, "name": "bash", "arguments": {"description": "d", "command": "sleep 1"}}


def _texts(message: dict[str, Any]) -> str:
    return "".join(str(b.get("text", "")) for b in message.get("content", []))


async def test_a_busy_turn_gets_the_notice_at_its_next_step(world: WorldFactory) -> None:
    llm = [{"tool_calls": [_background("bg")]}, {"tool_calls": [_wait("w")]}, {"text": "done"}]
    w = world(llm=llm, builtin_tools=True, profile="plus", extra_config=SANDBOX)
    async with raw_agent(w) as agent:
        session_id, _ = await open_session(agent, w)
        answer, _ = await prompt(agent, session_id, "go")
    assert answer["result"] == {"stopReason": "end_turn"}
    last = w.model_requests()[-1]["messages"]
    # After the waiting call's result, before the model's next step: a user message.
    assert last[-2]["role"] == "tool" and last[-1]["role"] == "user"
    assert NOTICE in _texts(last[-1]) and _texts(last[-1]).startswith("background job bash-")


async def test_an_idle_session_wakes_for_the_notice(world: WorldFactory) -> None:
    llm = [{"tool_calls": [_background("bg")]}, {"text": "started"}, {"text": "noted"}]
    w = world(llm=llm, builtin_tools=True, profile="plus", extra_config=SANDBOX)
    async with raw_agent(w) as agent:
        session_id, _ = await open_session(agent, w)
        answer, _ = await prompt(agent, session_id, "go")
        assert answer["result"] == {"stopReason": "end_turn"}
        late = [await agent.recv(timeout=10.0)]
    assert [u["sessionUpdate"] for u in updates(late)] == ["agent_message_chunk"]
    assert updates(late)[0]["content"] == {"type": "text", "text": "noted"}
    woken = w.model_requests()[-1]["messages"]
    assert woken[-1]["role"] == "user" and NOTICE in _texts(woken[-1])
    assert json.dumps(woken).count(NOTICE) == 1  # once, in the turn it opened


async def test_a_prompt_during_the_woken_turn_waits_for_it(world: WorldFactory) -> None:
    # The woken turn streams slowly; the user's next prompt arrives meanwhile and is
    # served after it, as a prompt after any turn is (not refused as a second turn).
    slow = {"text": "noted", "delay_ms": 300}
    llm = [{"tool_calls": [_background("bg")]}, {"text": "started"}, slow, {"text": "second"}]
    w = world(llm=llm, builtin_tools=True, profile="plus", extra_config=SANDBOX)
    async with raw_agent(w) as agent:
        session_id, _ = await open_session(agent, w)
        answer, _ = await prompt(agent, session_id, "go")
        assert answer["result"] == {"stopReason": "end_turn"}
        await wait_for(lambda: len(w.model_requests()) == 3, timeout=10.0)
        again, frames = await prompt(agent, session_id, "again")
    assert again["result"] == {"stopReason": "end_turn"}, again
    texts = "".join(
        u["content"]["text"] for u in updates(frames) if u["sessionUpdate"] == "agent_message_chunk"
    )
    assert texts.endswith("second")
