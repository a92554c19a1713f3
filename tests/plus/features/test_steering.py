"""M7 `_session/steering` (docs/contract.md §6.6): advertised in `initialize`, injected
into the running turn at its next step boundary (the model's next request carries it),
`promptRequired` otherwise, and not there at all in the native profile."""

from __future__ import annotations

import asyncio
from typing import Any

from feature_support import exchange, kinds, open_session, texts
from plus_agent import RawAgent, WorldFactory, log_events, raw_agent

from acp_plus.features import steering
from parity.scenario.model import Tool

SLOW = Tool("slow", "Takes a while.", {"type": "object"}, [{"type": "text", "text": "slow done"}],
            delay_ms=800)  # fmt: skip
INJECTED = {"outcome": "injected"}
PROMPT_REQUIRED = {"outcome": "promptRequired", "reason": "noRunningTurn"}
NO_ID = "_session/steering requires a sessionId"


def _steer(session_id: str, *texts: str) -> dict[str, Any]:
    return {"sessionId": session_id, "prompt": [{"type": "text", "text": t} for t in texts]}


# -- pure ---------------------------------------------------------------------------------


def test_steering_text() -> None:
    assert (
        steering.steering_text([{"type": "text", "text": "a"}, {"type": "text", "text": "b"}])
        == "ab"
    )
    for no in (None, [], "x", [{"type": "text", "text": " \u00a0\n"}], [{"type": "image"}],
               [{"type": "text", "text": "a"}, {"type": "text"}]):  # fmt: skip
        assert steering.steering_text(no) is None, no


# -- through the real process -------------------------------------------------------------


async def _until(agent: RawAgent, kind: str) -> None:
    while kind not in kinds([await agent.recv()]):
        pass


async def test_injected_text_reaches_the_model_at_the_next_step(world: WorldFactory) -> None:
    tool = {"tool_calls": [{"id": "call-1", "name": "slow"}]}
    w = world(llm=[tool, {"text": "steered"}], tools=[SLOW])
    async with raw_agent(w) as agent:
        init = await agent.call("initialize", {"protocolVersion": 1})
        assert init["result"]["_meta"] == {"steering": {"supported": True}}
        session_id, _ = await open_session(agent, w)
        turn = await agent.request(
            "session/prompt", {"sessionId": session_id, "prompt": [{"type": "text", "text": "go"}]}
        )
        await _until(agent, "tool_call")  # the tool runs: the turn is between two steps
        answer, before = await exchange(
            agent,
            await agent.request(
                steering.METHOD,
                {
                    **_steer(session_id, "also check ", "the tests"),
                    "_meta": {"steering": {"idleBehavior": "promptRequired"}},
                },
            ),
        )
        assert answer["result"] == INJECTED
        result, after = await exchange(agent, turn)
        assert result["result"] == {"stopReason": "end_turn"}
        # No update echoes the steered text.
        assert "user_message_chunk" not in kinds(before + after)
    first, second = (r["messages"] for r in w.model_requests())
    assert all("also check the tests" not in texts(m) for m in first)
    assert second[-2]["role"] == "tool"
    assert second[-1] == {
        "role": "user",
        "content": [{"type": "text", "text": "also check the tests"}],
    }
    steered = [e for e in log_events(w.home, session_id) if e["type"] == "user/message"][-1]
    assert steered["turn"] == 1 and "source" not in steered


async def test_text_steered_during_the_last_step_gets_one_more(world: WorldFactory) -> None:
    # The only step ends the turn (no tool call); the steered text still reaches the model.
    slow_text = {"text": "working on it", "deltas": 2, "delay_ms": 120}
    w = world(llm=[slow_text, {"text": "noted"}])
    async with raw_agent(w) as agent:
        session_id, _ = await open_session(agent, w)
        turn = await agent.request(
            "session/prompt", {"sessionId": session_id, "prompt": [{"type": "text", "text": "go"}]}
        )
        while not w.model_requests():
            await asyncio.sleep(0.01)
        await asyncio.sleep(0.2)
        assert (await agent.call(steering.METHOD, _steer(session_id, "and be brief")))[
            "result"
        ] == INJECTED
        result, frames = await exchange(agent, turn)
    assert result["result"] == {"stopReason": "end_turn"}
    assert kinds(frames).count("agent_message_chunk") == 2
    requests = w.model_requests()
    assert len(requests) == 2
    assert requests[1]["messages"][-1]["content"] == [{"type": "text", "text": "and be brief"}]


async def test_prompt_required_without_a_running_turn(world: WorldFactory) -> None:
    hang = {"text": "partial", "then": "hang"}
    w = world(llm=[{"text": "hi"}, hang])
    async with raw_agent(w) as agent:
        session_id, _ = await open_session(agent, w)
        # Idle: no prompt in flight, and no model request is started.
        assert (await agent.call(steering.METHOD, _steer(session_id, "x")))["result"] == (
            PROMPT_REQUIRED
        )
        await exchange(
            agent,
            await agent.request(
                "session/prompt",
                {"sessionId": session_id, "prompt": [{"type": "text", "text": "a"}]},
            ),
        )
        assert (await agent.call(steering.METHOD, _steer(session_id, "x")))["result"] == (
            PROMPT_REQUIRED
        )
        assert len(w.model_requests()) == 1
        # A running turn, but text that is not steering text: promptRequired, not an error.
        turn = await agent.request(
            "session/prompt", {"sessionId": session_id, "prompt": [{"type": "text", "text": "b"}]}
        )
        while len(w.model_requests()) < 2:
            await asyncio.sleep(0.01)
        for prompt in ([], [{"type": "text", "text": "  "}], "text", None):
            answer = await agent.call(steering.METHOD, {"sessionId": session_id, "prompt": prompt})
            assert answer["result"] == PROMPT_REQUIRED, prompt
        await agent.send(
            {"jsonrpc": "2.0", "method": "session/cancel", "params": {"sessionId": session_id}}
        )
        # Cancelling: nothing can be injected any more. The cancelled prompt may answer
        # before the steering request does, so its answer is looked for in between too.
        steer = await agent.request(steering.METHOD, _steer(session_id, "late"))
        answer, between = await agent.until_response(steer, 5)
        assert answer["result"] == PROMPT_REQUIRED
        settled = [f for f in between if f.get("id") == turn and "method" not in f]
        result = settled[0] if settled else (await exchange(agent, turn))[0]
        assert result["result"] == {"stopReason": "cancelled"}


async def test_steering_errors(world: WorldFactory) -> None:
    w = world()
    async with raw_agent(w) as agent:
        await agent.call("initialize", {"protocolVersion": 1})
        cases: list[tuple[Any, dict[str, Any]]] = [
            (
                ["not", "an", "object"],
                {
                    "code": -32603,
                    "message": "Internal error",
                    "data": {"details": "_session/steering params must be an object"},
                },
            ),
            ({"prompt": []}, {"code": -32602, "message": f"Invalid params: {NO_ID}"}),
            ({"sessionId": ""}, {"code": -32602, "message": f"Invalid params: {NO_ID}"}),
            (
                {"sessionId": "nope", "prompt": []},
                {"code": -32602, "message": "Invalid params: unknown session: nope"},
            ),
        ]
        for params, error in cases:
            assert (await agent.call(steering.METHOD, params))["error"] == error, params


async def test_the_native_profile_has_no_steering(world: WorldFactory) -> None:
    w = world(profile="native")
    async with raw_agent(w) as agent:
        init = await agent.call("initialize", {"protocolVersion": 1})
        assert "_meta" not in init["result"]
        new = await agent.call("session/new", {"cwd": str(w.workdir), "mcpServers": []})
        session_id = new["result"]["sessionId"]
        assert "modes" not in new["result"]
        for method, params in (
            (steering.METHOD, _steer(session_id, "x")),
            ("session/set_mode", {"sessionId": session_id, "modeId": "plan"}),
        ):
            assert (await agent.call(method, params))["error"] == {
                "code": -32601,
                "message": f'"Method not found": {method}',
                "data": {"method": method},
            }
        # No command list follows the answer, and a slash line is an ordinary prompt.
        with_commands = await agent.request(
            "session/prompt",
            {"sessionId": session_id, "prompt": [{"type": "text", "text": "/help"}]},
        )
        answer, frames = await exchange(agent, with_commands)
    assert "available_commands_update" not in kinds(frames)
    assert answer["error"]["message"].startswith("Internal error: turn failed")  # script empty
