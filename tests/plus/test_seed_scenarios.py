"""The six seed scenarios of contract §7.4, through the real process and the official SDK.

Each expectation cites the contract section it comes from. The fake LLM is the harness's
parity-stream server with the default catalog (the §7.1 mock model: context window 1024,
efforts low/high, default high).
"""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from acp import PROTOCOL_VERSION, RequestError, text_block
from plus_agent import ECHO, WorldFactory, normalized, partial_delta_read, sdk_agent, wait_for

from acp_plus.core.token_meter import request_tokens, used

MODEL_OPTION = {
    "id": "model",
    "name": "Model",
    "category": "model",
    "type": "select",
    "currentValue": '["mock","mock"]',
    "options": [
        {
            "group": "mock",
            "name": "Mock",
            "options": [
                {
                    "value": '["mock","mock"]',
                    "name": "Mock Reasoner",
                    "description": "Mock model with selectable reasoning.",
                }
            ],
        }
    ],
}
EFFORT_OPTION = {
    "id": "reasoning_effort",
    "name": "Reasoning effort",
    "category": "thought_level",
    "type": "select",
    "currentValue": "high",
    # No "Provider default" entry: the model declares a default effort (§1.5).
    "options": [{"value": "low", "name": "Low"}, {"value": "high", "name": "High"}],
}


def dump(model: Any) -> Any:
    """An SDK response model as the JSON the agent sent."""
    return model.model_dump(mode="json", by_alias=True, exclude_unset=True)


async def test_1_handshake(world: WorldFactory) -> None:
    async with sdk_agent(world()) as s:
        init = dump(await s.conn.initialize(protocol_version=PROTOCOL_VERSION))
    # §1.1 initialize / §7.4.1: native's capabilities exactly; §1.2: acp-plus agentInfo.
    assert init["protocolVersion"] == 1
    assert init["agentCapabilities"] == {
        "mcpCapabilities": {"http": True},
        "promptCapabilities": {"image": False, "audio": False, "embeddedContext": False},
        "sessionCapabilities": {"close": {}, "list": {}, "resume": {}},
    }
    assert init["authMethods"] == []
    assert init["agentInfo"] == {"name": "dsh-acp-plus", "version": "0.1.0"}
    # Steering is not in the baseline, so it is not advertised (docs/contract-notes.md).
    assert "_meta" not in init
    assert "loadSession" not in init["agentCapabilities"]


def meter(request: dict[str, Any], answer: list[dict[str, Any]], usage: dict[str, int]) -> int:
    """`usage_update.used` for a step (native's token meter, pinned against the live native
    in tests/plus/core/test_token_meter.py): it counts the workdir path, so a test cannot
    write the number down."""
    estimate = request_tokens(
        request.get("system"), request.get("tools") or [], request["messages"], answer
    )
    return used(usage, estimate)


async def test_2_text_exchange(world: WorldFactory) -> None:
    w = world(llm=[{"text": "hello there", "usage": {"input": 5, "output": 11}}])
    async with sdk_agent(w) as s:
        await s.conn.initialize(protocol_version=PROTOCOL_VERSION)
        new = dump(await s.conn.new_session(cwd=str(w.workdir), mcp_servers=[]))
        result = dump(
            await s.conn.prompt(session_id=new["sessionId"], prompt=[text_block("say hello")])
        )
    # §1.5: the model option with one mock group, and reasoning_effort at its default.
    assert new["configOptions"] == [MODEL_OPTION, EFFORT_OPTION]
    # §2: one chunk per committed text block, then usage (used = the token meter, size =
    # the model's context window).
    (step,) = w.model_requests()
    answer = [{"type": "text", "text": "hello there"}]
    assert normalized(s.client.updates) == [
        {
            "sessionUpdate": "agent_message_chunk",
            "messageId": "message-1",
            "content": {"type": "text", "text": "hello there"},
        },
        {
            "sessionUpdate": "usage_update",
            "used": meter(step, answer, {"inputTokens": 5, "outputTokens": 11}),
            "size": 1024,
        },
    ]
    assert result == {"stopReason": "end_turn"}  # §3.1 completed -> end_turn
    # The model saw the prompt (then native's runtime context) and the route's default
    # effort (§1.5).
    (request,) = w.model_requests()
    assert request["messages"][0] == {
        "role": "user",
        "content": [{"type": "text", "text": "say hello"}],
    }
    assert [m["content"][0]["text"][:24] for m in request["messages"][1:]] == [
        "Current runtime context."
    ]
    assert request["reasoningEffort"] == "high"


async def test_3_output_token_ceiling(world: WorldFactory) -> None:
    w = world(llm=[{"text": "cut short", "finish": "max-tokens"}])
    async with sdk_agent(w) as s:
        await s.conn.initialize(protocol_version=PROTOCOL_VERSION)
        new = await s.conn.new_session(cwd=str(w.workdir), mcp_servers=[])
        result = dump(
            await s.conn.prompt(session_id=new.session_id, prompt=[text_block("keep going")])
        )
    # §7.4.3: the chunk, and no usage_update because the message carried no usage (§2).
    assert normalized(s.client.updates) == [
        {
            "sessionUpdate": "agent_message_chunk",
            "messageId": "message-1",
            "content": {"type": "text", "text": "cut short"},
        }
    ]
    assert result == {"stopReason": "max_tokens"}  # §3.1 era 3


async def test_4_reasoning_tool_lifecycle_usage_final_text(world: WorldFactory) -> None:
    w = world(
        llm=[
            {
                "reasoning": "inspect first",
                "tool_calls": [{"id": "call-1", "name": "echo", "arguments": {}}],
                "usage": {"input": 8, "output": 2, "reasoning": 1},
            },
            {"text": "done", "usage": {"input": 5, "output": 4}},
        ],
        tools=[ECHO],
    )
    async with sdk_agent(w) as s:
        await s.conn.initialize(protocol_version=PROTOCOL_VERSION)
        new = await s.conn.new_session(cwd=str(w.workdir), mcp_servers=[])
        result = dump(await s.conn.prompt(session_id=new.session_id, prompt=[text_block("go")]))
    # §2 "A tool turn therefore looks like this", in this exact order.
    first, second = w.model_requests()
    call = {"type": "tool-call", "id": "call-1", "name": "echo", "arguments": "{}"}
    answer = [{"type": "reasoning", "text": "inspect first"}, call]
    assert normalized(s.client.updates) == [
        {
            "sessionUpdate": "agent_thought_chunk",
            "messageId": "message-1",
            "content": {"type": "text", "text": "inspect first"},
        },
        {
            "sessionUpdate": "usage_update",
            "used": meter(first, answer, {"inputTokens": 8, "outputTokens": 2}),
            "size": 1024,
        },
        {
            "sessionUpdate": "tool_call",
            "toolCallId": "call-1",
            "title": "echo",
            "kind": "other",
            "status": "in_progress",
            "rawInput": {},
        },
        {
            "sessionUpdate": "tool_call_update",
            "toolCallId": "call-1",
            "status": "completed",
            "content": [{"type": "content", "content": {"type": "text", "text": "tool result"}}],
        },
        {
            "sessionUpdate": "agent_message_chunk",
            "messageId": "message-2",
            "content": {"type": "text", "text": "done"},
        },
        {
            "sessionUpdate": "usage_update",
            "used": meter(
                second, [{"type": "text", "text": "done"}], {"inputTokens": 5, "outputTokens": 4}
            ),
            "size": 1024,
        },
    ]
    assert result == {"stopReason": "end_turn"}
    # The second step carried the tool result back to the model (parity-stream request).
    second = w.model_requests()[1]
    assert second["messages"][-1] == {
        "role": "tool",
        "toolCallId": "call-1",
        "isError": False,
        "content": [{"type": "text", "text": "tool result"}],
    }


async def test_5_cancel_mid_stream(world: WorldFactory) -> None:
    w = world(llm=[{"text": "partial", "then": "hang"}])
    async with sdk_agent(w) as s:
        await s.conn.initialize(protocol_version=PROTOCOL_VERSION)
        new = await s.conn.new_session(cwd=str(w.workdir), mcp_servers=[])
        prompt = asyncio.create_task(
            s.conn.prompt(session_id=new.session_id, prompt=[text_block("hang")])
        )
        await partial_delta_read(w)
        await s.conn.cancel(session_id=new.session_id)
        result = dump(await asyncio.wait_for(prompt, 5))
    assert result == {"stopReason": "cancelled"}  # §3.3
    # §2 / §7.4.5: the cancelled turn's committed prefix is sent as a normal chunk.
    assert normalized(s.client.updates) == [
        {
            "sessionUpdate": "agent_message_chunk",
            "messageId": "message-1",
            "content": {"type": "text", "text": "partial"},
        }
    ]
    # The fake saw the stream closed: that is how a target reports the cancel (spec).
    await wait_for(lambda: w.run.requests[-1].aborted)


async def test_6_provider_failure(world: WorldFactory) -> None:
    w = world(
        llm=[
            {"text": "partial", "error": {"message": "provider blew up", "code": "PROVIDER_ERROR"}}
        ]
    )
    async with sdk_agent(w) as s:
        await s.conn.initialize(protocol_version=PROTOCOL_VERSION)
        new = await s.conn.new_session(cwd=str(w.workdir), mcp_servers=[])
        with pytest.raises(RequestError) as info:
            await s.conn.prompt(session_id=new.session_id, prompt=[text_block("boom")])
    # §3.4 / §7.4.6: no updates (nothing committed) and the exact -32603 text.
    assert s.client.updates == []
    assert info.value.code == -32603
    assert str(info.value) == "Internal error: turn failed: provider blew up"
