"""Faults and edges of the acp-plus ACP surface, through the real process.

Crash recovery, permission failures, the one-prompt slot, cancellation of a hanging tool,
hostile session ids, malformed input, and teardown on stdin EOF.
"""

from __future__ import annotations

import asyncio
import json
import signal
import time
from pathlib import Path

import pytest
from acp import PROTOCOL_VERSION, RequestError, text_block
from plus_agent import (
    WorldFactory,
    bash_world,
    conversation,
    log_events,
    partial_delta_read,
    processes_with,
    raw_agent,
    sdk_agent,
    sleeping,
    start_prompt,
    wait_for,
)

from parity.scenario.model import Tool

EMPTY = {"type": "object", "properties": {}}
GUARD = Tool(
    name="guard",
    description="A tool that needs approval.",
    parameters=EMPTY,
    content=[{"type": "text", "text": "guarded result"}],
    approval="ask",
)
SLOW = Tool(name="slow", description="Never answers.", parameters=EMPTY, content=[], hang=True)


async def test_kill_9_mid_turn_then_resume_in_a_new_process(world: WorldFactory) -> None:
    w = world(
        llm=[
            {"text": "partial", "then": "hang"},
            {"text": "after the crash", "usage": {"input": 3, "output": 3}},
        ]
    )
    async with raw_agent(w) as agent:
        await agent.call("initialize", {"protocolVersion": 1})
        new = await agent.call("session/new", {"cwd": str(w.workdir), "mcpServers": []})
        session_id = new["result"]["sessionId"]
        await agent.request(
            "session/prompt",
            {"sessionId": session_id, "prompt": [{"type": "text", "text": "hang"}]},
        )
        await wait_for(lambda: len(w.model_requests()) == 1)
        agent.process.send_signal(signal.SIGKILL)
        await agent.process.wait()

    async with sdk_agent(w) as s:
        await s.conn.initialize(protocol_version=PROTOCOL_VERSION)
        resumed = await s.conn.resume_session(session_id=session_id, cwd=str(w.workdir))
        assert s.client.updates == []  # §1.1 resume: no history replay
        assert resumed.config_options is not None and len(resumed.config_options) == 2
        result = await s.conn.prompt(session_id=session_id, prompt=[text_block("again")])
    assert result.stop_reason == "end_turn"
    # The crashed turn was closed `interrupted` on resume (§3.1) ...
    kinds = [(e["type"], e.get("reason", {}).get("kind")) for e in log_events(w.home, session_id)]
    assert ("turn/end", "interrupted") in kinds
    # ... and the new process's model request carries the history read back from the log.
    assert conversation(w.model_requests()[-1]["messages"]) == [
        {"role": "user", "content": [{"type": "text", "text": "hang"}]},
        {"role": "user", "content": [{"type": "text", "text": "again"}]},
    ]


@pytest.mark.parametrize(
    ("answer", "status", "called"),
    [
        ("allow-once", "completed", True),
        ("reject-once", "failed", False),
        ("cancelled", "failed", False),
        # §4: a client error becomes `unavailable`, which fails closed.
        ("error", "failed", False),
    ],
)
async def test_permission_outcomes(
    world: WorldFactory, answer: str, status: str, called: bool
) -> None:
    w = world(
        llm=[{"tool_calls": [{"id": "call-1", "name": "guard", "arguments": {}}]}, {"text": "ok"}],
        tools=[GUARD],
    )
    async with sdk_agent(w, permission=answer) as s:
        await s.conn.initialize(protocol_version=PROTOCOL_VERSION)
        new = await s.conn.new_session(cwd=str(w.workdir), mcp_servers=[])
        result = await s.conn.prompt(session_id=new.session_id, prompt=[text_block("go")])
    assert result.stop_reason == "end_turn"  # the turn goes on after a refusal (§4)
    (asked,) = s.client.permission_requests
    # §4 request params exactly: the tool call id only, and the two fixed options.
    assert asked["sessionId"] == new.session_id
    assert asked["toolCall"] == {"toolCallId": "call-1"}
    assert asked["options"] == [
        {"optionId": "allow-once", "name": "Allow once", "kind": "allow_once"},
        {"optionId": "reject-once", "name": "Reject", "kind": "reject_once"},
    ]
    # §2 ordering: the queue is drained first, so the tool_call was already delivered.
    assert asked["updatesBefore"] == 1
    assert s.client.updates[0]["sessionUpdate"] == "tool_call"
    assert s.client.updates[1]["sessionUpdate"] == "tool_call_update"
    assert s.client.updates[1]["status"] == status
    assert ("/tools/call" in w.paths()) is called


async def test_second_prompt_while_one_is_in_flight(world: WorldFactory) -> None:
    w = world(llm=[{"text": "partial", "then": "hang"}])
    async with sdk_agent(w) as s:
        await s.conn.initialize(protocol_version=PROTOCOL_VERSION)
        new = await s.conn.new_session(cwd=str(w.workdir), mcp_servers=[])
        first = asyncio.create_task(
            s.conn.prompt(session_id=new.session_id, prompt=[text_block("hang")])
        )
        await wait_for(lambda: len(w.model_requests()) == 1)
        with pytest.raises(RequestError) as info:
            await s.conn.prompt(session_id=new.session_id, prompt=[text_block("again")])
        assert (info.value.code, str(info.value)) == (
            -32602,
            "Invalid params: a prompt is already in flight for this session",
        )
        await s.conn.cancel(session_id=new.session_id)
        assert (await asyncio.wait_for(first, 5)).stop_reason == "cancelled"
    assert len(w.model_requests()) == 1  # the refused prompt never reached the model


async def test_cancel_during_a_hanging_tool_resolves_promptly(world: WorldFactory) -> None:
    w = world(
        llm=[{"tool_calls": [{"id": "call-9", "name": "slow", "arguments": {}}]}], tools=[SLOW]
    )
    async with sdk_agent(w) as s:
        await s.conn.initialize(protocol_version=PROTOCOL_VERSION)
        new = await s.conn.new_session(cwd=str(w.workdir), mcp_servers=[])
        prompt = asyncio.create_task(
            s.conn.prompt(session_id=new.session_id, prompt=[text_block("go")])
        )
        await wait_for(lambda: "/tools/call" in w.paths())
        started = time.monotonic()
        await s.conn.cancel(session_id=new.session_id)
        result = await asyncio.wait_for(prompt, 5)
        elapsed = time.monotonic() - started
    assert result.stop_reason == "cancelled"
    assert elapsed < 2.0, f"cancel took {elapsed:.2f}s"
    # The call is settled on the wire, not left in progress.
    assert [u["sessionUpdate"] for u in s.client.updates] == ["tool_call", "tool_call_update"]
    assert s.client.updates[1]["status"] == "failed"


async def test_cancel_request_aborts_a_prompt_like_session_cancel(world: WorldFactory) -> None:
    w = world(llm=[{"text": "partial", "then": "hang"}])
    async with raw_agent(w) as agent:
        await agent.call("initialize", {"protocolVersion": 1})
        new = await agent.call("session/new", {"cwd": str(w.workdir), "mcpServers": []})
        session_id = new["result"]["sessionId"]
        prompt_id = await agent.request(
            "session/prompt", {"sessionId": session_id, "prompt": [{"type": "text", "text": "x"}]}
        )
        await partial_delta_read(w)
        await agent.send(
            {"jsonrpc": "2.0", "method": "$/cancel_request", "params": {"requestId": prompt_id}}
        )
        response, before = await agent.until_response(prompt_id)
    assert response["result"] == {"stopReason": "cancelled"}  # §1.0, §3.3
    assert [f["params"]["update"]["content"]["text"] for f in before] == ["partial"]


async def test_close_during_a_prompt_cancels_it_and_forgets_the_session(
    world: WorldFactory,
) -> None:
    w = world(llm=[{"text": "partial", "then": "hang"}])
    async with sdk_agent(w) as s:
        await s.conn.initialize(protocol_version=PROTOCOL_VERSION)
        new = await s.conn.new_session(cwd=str(w.workdir), mcp_servers=[])
        prompt = asyncio.create_task(
            s.conn.prompt(session_id=new.session_id, prompt=[text_block("hang")])
        )
        await wait_for(lambda: len(w.model_requests()) == 1)
        closes = await asyncio.gather(
            s.conn.close_session(session_id=new.session_id),
            s.conn.close_session(session_id=new.session_id),
        )
        assert [c.model_dump(exclude_unset=True) if c else c for c in closes] == [{}, {}]
        assert (await asyncio.wait_for(prompt, 5)).stop_reason == "cancelled"  # §3.2 rule 1
        with pytest.raises(RequestError) as info:
            await s.conn.prompt(session_id=new.session_id, prompt=[text_block("again")])
        assert str(info.value) == f"Invalid params: unknown session: {new.session_id}"
        # A closed session is listable again (it is no longer live).
        listed = await s.conn.list_sessions(cwd=str(w.workdir))
        assert [x.session_id for x in listed.sessions] == [new.session_id]


async def test_hostile_session_ids_are_rejected_without_touching_paths(
    world: WorldFactory, tmp_path: Path
) -> None:
    w = world()
    async with raw_agent(w) as agent:
        await agent.call("initialize", {"protocolVersion": 1})
        for bad in ("../../x", "/etc/passwd", "..", ""):
            response = await agent.call("session/resume", {"sessionId": bad, "cwd": str(w.workdir)})
            assert response["error"] == {
                "code": -32602,
                "message": f"Invalid params: session is not resumable: {bad}",
            }
        response = await agent.call(
            "session/prompt", {"sessionId": "../../x", "prompt": [{"type": "text", "text": "x"}]}
        )
        assert response["error"]["message"] == "Invalid params: unknown session: ../../x"
    assert not (tmp_path / "x").exists() and not (w.home.parent / "x").exists()


async def test_malformed_input_keeps_the_connection_alive(world: WorldFactory) -> None:
    w = world()
    async with raw_agent(w) as agent:
        for line, code in [
            (b"{not json", -32700),
            (b"[1, 2, 3]", -32600),
            (b'"just a string"', -32600),
            (b'{"jsonrpc": "2.0", "params": {}}', -32600),
            (b'{"jsonrpc": "2.0", "id": 5, "method": 17}', -32600),
        ]:
            await agent.send_line(line)
            frame = await agent.recv()
            assert frame["error"]["code"] == code, line
        # Unknown notifications are never answered; unknown methods get the SDK's -32601.
        await agent.send({"jsonrpc": "2.0", "method": "nobody/listens", "params": {}})
        for method in ("session/load", "session/set_mode", "_session/steering", "nope"):
            response = await agent.call(method, {})
            assert response["error"] == {
                "code": -32601,
                "message": f'"Method not found": {method}',
                "data": {"method": method},
            }
        init = await agent.call("initialize", {"protocolVersion": 1})
        assert init["result"]["protocolVersion"] == 1
        assert await agent.close() == 0


async def test_meta_never_overrides_a_parameter(world: WorldFactory) -> None:
    w = world(llm=[{"text": "hi"}])
    async with raw_agent(w) as agent:
        await agent.call("initialize", {"protocolVersion": 1})
        new = await agent.call(
            "session/new",
            {"cwd": str(w.workdir), "mcpServers": [], "_meta": {"cwd": "relative/path"}},
        )
        session_id = new["result"]["sessionId"]
        response = await agent.call(
            "session/prompt",
            {
                "sessionId": session_id,
                "prompt": [{"type": "text", "text": "x"}],
                "_meta": {"sessionId": "00000000-0000-4000-8000-000000000000", "prompt": []},
            },
        )
    assert response["result"] == {"stopReason": "end_turn"}


@pytest.mark.parametrize("stop", ["stdin-eof", "sigterm"])
async def test_teardown_within_2s_leaving_no_child(world: WorldFactory, stop: str) -> None:
    marker = "41.73" if stop == "stdin-eof" else "41.79"
    w = bash_world(world, f"sleep {marker} & sleep {marker}; wait")
    async with raw_agent(w) as agent:
        await start_prompt(agent, w)
        await wait_for(lambda: len(sleeping(marker)) == 2)
        started = time.monotonic()
        if stop == "sigterm":
            agent.process.send_signal(signal.SIGTERM)
        else:
            assert agent.process.stdin is not None
            agent.process.stdin.close()
        status = await asyncio.wait_for(agent.process.wait(), 5)
        elapsed = time.monotonic() - started
    assert status == 0
    assert elapsed < 2.0, f"teardown took {elapsed:.2f}s"
    await wait_for(lambda: not processes_with(marker), timeout=1.0)


async def test_prompt_aborted_on_arrival_never_reaches_the_model(world: WorldFactory) -> None:
    w = world(llm=[{"text": "never"}])
    async with raw_agent(w) as agent:
        await agent.call("initialize", {"protocolVersion": 1})
        new = await agent.call("session/new", {"cwd": str(w.workdir), "mcpServers": []})
        prompt = {
            "jsonrpc": "2.0",
            "id": 77,
            "method": "session/prompt",
            "params": {
                "sessionId": new["result"]["sessionId"],
                "prompt": [{"type": "text", "text": "x"}],
            },
        }
        cancel = {"jsonrpc": "2.0", "method": "$/cancel_request", "params": {"requestId": 77}}
        # One write: the abort is already set when the handler starts (§3.3).
        await agent.send_line(json.dumps(prompt) + "\n" + json.dumps(cancel))
        response, before = await agent.until_response(77)
    assert response["result"] == {"stopReason": "cancelled"}
    assert before == []
    assert w.model_requests() == []
