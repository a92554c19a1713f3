"""The Anthropic Messages dialect read by the official `anthropic` SDK over loopback."""

from __future__ import annotations

import asyncio
from typing import Any

import anthropic
import pytest

from parity.fakellm.run import Run
from tests.support.fakellm import OpenRun, aborted, wait_for

MESSAGES: list[Any] = [{"role": "user", "content": "go"}]
TOOLS: list[Any] = [{"name": "echo", "description": "d", "input_schema": {"type": "object"}}]


def client(run: Run) -> anthropic.AsyncAnthropic:
    return anthropic.AsyncAnthropic(base_url=run.base_url, api_key="sk-fake", max_retries=0)


async def test_stream_thinking_text_tool_use_and_usage(open_run: OpenRun) -> None:
    run = open_run(
        [
            {
                "reasoning": "inspect first",
                "text": "calling",
                "deltas": 4,
                "tool_calls": [{"id": "toolu_1", "name": "echo", "arguments": {"q": [1, "é"]}}],
                "usage": {"input": 8, "output": 2},
            }
        ]
    )
    async with (
        client(run) as api,
        api.messages.stream(model="m", max_tokens=100, messages=MESSAGES, tools=TOOLS) as stream,
    ):
        kinds = [event.type async for event in stream]
        final = await stream.get_final_message()
    assert kinds[0] == "message_start" and kinds[-1] == "message_stop"
    assert [(b.type) for b in final.content] == ["thinking", "text", "tool_use"]
    thinking, text, call = final.content
    assert thinking.type == "thinking" and thinking.thinking == "inspect first"
    assert text.type == "text" and text.text == "calling"
    assert call.type == "tool_use"
    assert (call.id, call.name, call.input) == ("toolu_1", "echo", {"q": [1, "é"]})
    assert final.stop_reason == "tool_use"
    assert (final.usage.input_tokens, final.usage.output_tokens) == (8, 2)
    assert run.requests[0].dialect == "anthropic-messages"


@pytest.mark.parametrize(
    ("finish", "stop_reason"), [("stop", "end_turn"), ("max-tokens", "max_tokens")]
)
async def test_stop_reasons(open_run: OpenRun, finish: str, stop_reason: str) -> None:
    run = open_run([{"text": "ok", "finish": finish}])
    async with client(run) as api:
        stream = await api.messages.create(model="m", max_tokens=9, messages=MESSAGES, stream=True)
        events = [event async for event in stream]
    deltas = [e for e in events if e.type == "message_delta"]
    assert [d.delta.stop_reason for d in deltas] == [stop_reason]


async def test_non_stream_message(open_run: OpenRun) -> None:
    run = open_run([{"text": "plain", "usage": {"input": 3, "output": 1}}])
    async with client(run) as api:
        message = await api.messages.create(model="m", max_tokens=9, messages=MESSAGES)
    assert [b.text for b in message.content if b.type == "text"] == ["plain"]
    assert (message.stop_reason, message.usage.input_tokens) == ("end_turn", 3)


async def test_error_before_stream_is_status_error(open_run: OpenRun) -> None:
    run = open_run([{"error": {"message": "overloaded", "status": 529}}])
    async with client(run) as api:
        with pytest.raises(anthropic.APIStatusError) as caught:
            await api.messages.create(model="m", max_tokens=9, messages=MESSAGES, stream=True)
    assert caught.value.status_code == 529
    assert caught.value.body == {
        "type": "error", "error": {"type": "overloaded_error", "message": "overloaded"},
    }  # fmt: skip


async def test_error_mid_stream_raises_after_partial_text(open_run: OpenRun) -> None:
    run = open_run([{"text": "partial", "deltas": 0, "error": {"message": "provider blew up"}}])
    seen: list[str] = []
    async with client(run) as api:
        stream = await api.messages.create(model="m", max_tokens=9, messages=MESSAGES, stream=True)
        with pytest.raises(anthropic.APIStatusError, match="provider blew up"):
            async for event in stream:
                if event.type == "content_block_delta" and event.delta.type == "text_delta":
                    seen.append(event.delta.text)
    assert seen == ["partial"]


async def test_script_exhausted_is_409(open_run: OpenRun) -> None:
    run = open_run([])
    async with client(run) as api:
        with pytest.raises(anthropic.APIStatusError, match="script exhausted") as caught:
            await api.messages.create(model="m", max_tokens=9, messages=MESSAGES)
    assert caught.value.status_code == 409


async def test_hang_then_disconnect_is_recorded(open_run: OpenRun) -> None:
    run = open_run([{"text": "partial", "deltas": 0, "then": "hang"}])
    async with client(run) as api:
        stream = await api.messages.create(model="m", max_tokens=9, messages=MESSAGES, stream=True)
        iterator = stream.__aiter__()
        kinds = [(await anext(iterator)).type for _ in range(3)]
        assert kinds == ["message_start", "content_block_start", "content_block_delta"]
        with pytest.raises(TimeoutError):
            await asyncio.wait_for(anext(iterator), 0.2)
        await stream.close()
    await wait_for(aborted(run))


async def test_side_request_by_contains(open_run: OpenRun) -> None:
    run = open_run([{"text": "main"}, {"match": {"contains": "Summarize"}, "text": "S"}])
    async with client(run) as api:
        side = await api.messages.create(
            model="m", max_tokens=9, system="Summarize the chat", messages=MESSAGES
        )
        main = await api.messages.create(model="m", max_tokens=9, messages=MESSAGES)
    assert [b.text for b in side.content if b.type == "text"] == ["S"]
    assert [b.text for b in main.content if b.type == "text"] == ["main"]
