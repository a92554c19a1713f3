"""OpenAI dialects read by the official `openai` SDK over loopback.

Chat Completions (SSE and non-stream) and Responses (SSE and non-stream): the SDK
must parse exactly the scripted text, reasoning, tool calls, usage and finish, and
provider errors must surface as its APIStatusError / APIError.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from typing import Any

import openai
import pytest

from parity.fakellm.run import Run
from tests.support.fakellm import OpenRun, aborted, wait_for

MESSAGES: list[Any] = [{"role": "user", "content": "go"}]
TOOLS: list[Any] = [
    {"type": "function", "function": {"name": "echo", "parameters": {"type": "object"}}}
]
REASONING_TOOL_TURN = {
    "reasoning": "inspect first",
    "text": "calling",
    "tool_calls": [
        {"id": "call-1", "name": "echo", "arguments": {"q": "é"}},
        {"id": "call-2", "name": "read", "arguments": '{"path":"a"}'},
    ],
    "usage": {"input": 8, "output": 2, "reasoning": 1},
}


def client(run: Run) -> openai.AsyncOpenAI:
    return openai.AsyncOpenAI(base_url=f"{run.base_url}/v1", api_key="sk-fake", max_retries=0)


@pytest.fixture
async def sdk_close() -> AsyncIterator[list[openai.AsyncOpenAI]]:
    clients: list[openai.AsyncOpenAI] = []
    yield clients
    for c in clients:
        await c.close()


async def collect_chat(run: Run, **extra: Any) -> dict[str, Any]:
    """Stream one chat completion and fold the deltas like an agent would."""
    async with client(run) as api:
        stream = await api.chat.completions.create(
            model="fake-model", messages=MESSAGES, tools=TOOLS, stream=True, **extra
        )
        out: dict[str, Any] = {"content": "", "reasoning": "", "calls": {}, "finish": None}
        out["usage"] = None
        async for chunk in stream:
            if chunk.usage is not None:
                out["usage"] = chunk.usage
            for choice in chunk.choices:
                delta = choice.delta
                out["content"] += delta.content or ""
                out["reasoning"] += getattr(delta, "reasoning_content", None) or ""
                for call in delta.tool_calls or []:
                    slot = out["calls"].setdefault(call.index, {"id": None, "name": "", "args": ""})
                    if call.id:
                        slot["id"] = call.id
                    if call.function and call.function.name:
                        slot["name"] = call.function.name
                    if call.function and call.function.arguments:
                        slot["args"] += call.function.arguments
                out["finish"] = choice.finish_reason or out["finish"]
        return out


async def test_chat_stream_text_reasoning_tool_calls_usage(open_run: OpenRun) -> None:
    run = open_run([REASONING_TOOL_TURN])
    got = await collect_chat(run, stream_options={"include_usage": True})
    assert got["content"] == "calling"
    assert got["reasoning"] == "inspect first"
    assert got["calls"] == {
        0: {"id": "call-1", "name": "echo", "args": '{"q":"é"}'},
        1: {"id": "call-2", "name": "read", "args": '{"path":"a"}'},
    }
    assert got["finish"] == "tool_calls"
    usage = got["usage"]
    assert (usage.prompt_tokens, usage.completion_tokens, usage.total_tokens) == (8, 2, 10)
    assert usage.completion_tokens_details.reasoning_tokens == 1
    assert run.requests[0].dialect == "openai-chat" and run.requests[0].entry == 0


async def test_chat_stream_usage_only_when_asked(open_run: OpenRun) -> None:
    run = open_run([{"text": "hi", "usage": {"input": 5, "output": 2}}])
    got = await collect_chat(run)
    assert (got["content"], got["finish"], got["usage"]) == ("hi", "stop", None)


async def test_chat_stream_max_tokens_is_length(open_run: OpenRun) -> None:
    run = open_run([{"text": "cut short", "finish": "max-tokens"}])
    got = await collect_chat(run, stream_options={"include_usage": True})
    assert (got["content"], got["finish"], got["usage"]) == ("cut short", "length", None)


async def test_chat_non_stream(open_run: OpenRun) -> None:
    run = open_run([REASONING_TOOL_TURN])
    async with client(run) as api:
        done = await api.chat.completions.create(model="m", messages=MESSAGES, tools=TOOLS)
    message = done.choices[0].message
    assert message.content == "calling"
    assert getattr(message, "reasoning_content", None) == "inspect first"
    calls = [
        (c.id, c.function.name, c.function.arguments)
        for c in message.tool_calls or []
        if c.type == "function"
    ]
    assert calls == [("call-1", "echo", '{"q":"é"}'), ("call-2", "read", '{"path":"a"}')]
    assert done.choices[0].finish_reason == "tool_calls"
    assert done.usage is not None and done.usage.prompt_tokens == 8


async def test_chat_error_before_stream_is_status_error(open_run: OpenRun) -> None:
    run = open_run([{"error": {"message": "slow down", "code": "rate_limited", "status": 429}}])
    with pytest.raises(openai.RateLimitError) as caught:
        await collect_chat(run)
    assert caught.value.status_code == 429
    assert caught.value.body == {
        "message": "slow down", "type": "rate_limit_error", "param": None, "code": "rate_limited",
    }  # fmt: skip
    assert caught.value.code == "rate_limited"
    assert run.requests[0].status == 429


async def test_chat_error_mid_stream_raises_after_partial_text(open_run: OpenRun) -> None:
    run = open_run([{"text": "partial", "error": {"message": "provider blew up"}}])
    seen = ""
    async with client(run) as api:
        stream = await api.chat.completions.create(model="m", messages=MESSAGES, stream=True)
        with pytest.raises(openai.APIError, match="provider blew up"):
            async for chunk in stream:
                seen += "".join(c.delta.content or "" for c in chunk.choices)
    assert seen == "partial"


async def test_chat_non_stream_mid_stream_error_is_http_500(open_run: OpenRun) -> None:
    run = open_run([{"text": "partial", "error": {"message": "boom"}}])
    async with client(run) as api:
        with pytest.raises(openai.InternalServerError, match="boom"):
            await api.chat.completions.create(model="m", messages=MESSAGES)


async def test_chat_script_exhausted_is_409(open_run: OpenRun) -> None:
    run = open_run([])
    with pytest.raises(openai.ConflictError, match="script exhausted"):
        await collect_chat(run)
    assert run.requests[0].problem == "script exhausted"


async def test_chat_title_side_request_without_tools(open_run: OpenRun) -> None:
    # opencode: a tool-less title request, then the tool-carrying turn.
    run = open_run([{"text": "turn"}, {"match": {"tools": "none"}, "text": "Title"}])
    async with client(run) as api:
        title = await api.chat.completions.create(model="m", messages=MESSAGES)
    turn = await collect_chat(run)
    assert (title.choices[0].message.content, turn["content"]) == ("Title", "turn")
    assert [(r.side, r.entry) for r in run.requests] == [(True, None), (False, 0)]


async def test_chat_hang_then_client_cancel_is_recorded(open_run: OpenRun) -> None:
    run = open_run([{"text": "partial", "deltas": 0, "then": "hang"}])
    async with client(run) as api:
        stream = await api.chat.completions.create(model="m", messages=MESSAGES, stream=True)
        iterator = stream.__aiter__()
        first = await anext(iterator)  # the role-only head
        second = await anext(iterator)
        assert first.choices[0].delta.role == "assistant"
        assert second.choices[0].delta.content == "partial"
        with pytest.raises(TimeoutError):
            await asyncio.wait_for(anext(iterator), 0.2)
        await stream.close()
    await wait_for(aborted(run))
    assert run.requests[0].aborted_at is not None


async def test_chat_non_stream_hang_is_held_then_aborted(open_run: OpenRun) -> None:
    run = open_run([{"text": "never", "then": "hang"}])
    async with client(run) as api:
        with pytest.raises(openai.APITimeoutError):
            await api.chat.completions.create(model="m", messages=MESSAGES, timeout=0.3)
    await wait_for(aborted(run))
    assert run.in_flight == 0


async def test_models_lists_catalog_models(open_run: OpenRun) -> None:
    run = open_run([])
    async with client(run) as api:
        models = [m.id async for m in api.models.list()]
    assert models == ["mock"]


# -- Responses -------------------------------------------------------------------


async def responses_events(run: Run) -> list[Any]:
    async with client(run) as api:
        tool: Any = {"type": "function", "name": "echo", "parameters": {}, "strict": False}
        stream = await api.responses.create(model="m", input="go", stream=True, tools=[tool])
        return [event async for event in stream]


async def test_responses_stream_items_and_usage(open_run: OpenRun) -> None:
    run = open_run([REASONING_TOOL_TURN])
    events = await responses_events(run)
    kinds = [e.type for e in events]
    assert kinds[:2] == ["response.created", "response.in_progress"]
    assert kinds[-1] == "response.completed"
    assert [e.sequence_number for e in events] == list(range(len(events)))
    text = "".join(e.delta for e in events if e.type == "response.output_text.delta")
    summary = "".join(e.delta for e in events if e.type == "response.reasoning_summary_text.delta")
    args = [e.delta for e in events if e.type == "response.function_call_arguments.delta"]
    assert (text, summary, args) == ("calling", "inspect first", ['{"q":"é"}', '{"path":"a"}'])
    final = events[-1].response
    assert [item.type for item in final.output] == [
        "reasoning", "message", "function_call", "function_call",
    ]  # fmt: skip
    calls = [(i.call_id, i.name, i.arguments) for i in final.output if i.type == "function_call"]
    assert calls == [("call-1", "echo", '{"q":"é"}'), ("call-2", "read", '{"path":"a"}')]
    assert final.output_text == "calling"
    assert final.output[0].summary[0].text == "inspect first"
    usage = final.usage
    assert (usage.input_tokens, usage.output_tokens, usage.total_tokens) == (8, 2, 10)
    assert usage.output_tokens_details.reasoning_tokens == 1
    assert run.requests[0].dialect == "openai-responses"


async def test_responses_stream_helper_final_response(open_run: OpenRun) -> None:
    run = open_run([{"text": "hello there", "deltas": 3, "usage": {"input": 5, "output": 11}}])
    async with client(run) as api, api.responses.stream(model="m", input="go") as stream:
        deltas = [e.delta async for e in stream if e.type == "response.output_text.delta"]
        final = await stream.get_final_response()
    assert deltas == ["hel", "lo ", "the", "re"]
    assert final.output_text == "hello there" and final.status == "completed"


async def test_responses_max_tokens_is_incomplete(open_run: OpenRun) -> None:
    run = open_run([{"text": "cut", "finish": "max-tokens"}])
    events = await responses_events(run)
    assert events[-1].type == "response.incomplete"
    assert events[-1].response.incomplete_details.reason == "max_output_tokens"


async def test_responses_failures(open_run: OpenRun) -> None:
    run = open_run(
        [
            {"text": "partial", "error": {"message": "provider blew up"}},
            {"error": {"message": "overloaded", "status": 503}},
        ]
    )
    events = await responses_events(run)
    assert events[-1].type == "response.failed"
    assert events[-1].response.error.message == "provider blew up"
    assert events[-1].response.error.code == "PROVIDER_ERROR"
    with pytest.raises(openai.APIStatusError) as caught:
        await responses_events(run)
    assert caught.value.status_code == 503


async def test_responses_non_stream(open_run: OpenRun) -> None:
    run = open_run([{"text": "plain", "usage": {"input": 1, "output": 1}}])
    async with client(run) as api:
        done = await api.responses.create(model="m", input="go")
    assert (done.output_text, done.status, done.usage and done.usage.total_tokens) == (
        "plain", "completed", 2,
    )  # fmt: skip
