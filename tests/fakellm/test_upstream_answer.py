"""A provider's answer reads back as the `llm` entry that would replay it.

Two sources: the fake's own renderers (an entry, rendered by every dialect as the
server sends it, must come back as itself) and hand-written samples shaped like what
DeepSeek, Anthropic and OpenAI send.
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from parity.fakellm.dialects import CAPTURABLE, DIALECTS, ROUTES, Call, parse_answer
from parity.fakellm.script import build_response
from parity.fakellm.wire import anthropic_error_type, assemble, failure_fields
from parity.scenario.load import check_text

PATHS = {name: next(iter(DIALECTS[name].routes)) for name in CAPTURABLE}
"""The fake's own path of each dialect a recording can talk to."""

ENTRIES: dict[str, dict[str, Any]] = {
    "text": {"text": "hello there"},
    "reasoning": {
        "reasoning": "think it over",
        "text": "done thinking",
        "usage": {"input": 12, "output": 30, "reasoning": 9},
    },
    "two calls": {
        "text": "calling",
        "tool_calls": [
            {"id": "call-1", "name": "echo", "arguments": {"text": "hi", "n": [1, 2]}},
            {"id": "call-2", "name": "read", "arguments": {"path": "/tmp/x"}},
        ],
        "usage": {"input": 5, "output": 7},
    },
    "max tokens": {"text": "cut sh", "finish": "max-tokens", "usage": {"input": 3, "output": 2}},
    "mid-stream error": {
        "text": "partial",
        "error": {"message": "provider blew up", "code": "PROVIDER_ERROR"},
    },
    "status 429": {"error": {"message": "slow down", "code": "rate_limited", "status": 429}},
}


def problems(entry: dict[str, Any]) -> list[str]:
    """The scenario errors of `entry` as a scenario's one `llm` entry (schema and checks;
    undeclared tools are only a warning)."""
    scenario = {
        "description": "recorded",
        "llm": [entry],
        "steps": [{"initialize": {}}],
    }
    findings, _, _ = check_text(json.dumps(scenario), "recorded.yaml")
    return [str(f) for f in findings if f.severity == "error"]


def served(dialect: str, entry: dict[str, Any], *, streaming: bool) -> tuple[int, bytes]:
    """What the fake's server answers for `entry` (server.py's provider handler)."""
    spec = ROUTES[PATHS[dialect]].provider
    reply = build_response(entry)
    chunks = list(reply.chunks)
    body = {"stream": streaming, "stream_options": {"include_usage": True}}
    call = Call(ident=f"{spec.id_prefix}1", model="m", body=body)
    if reply.error_status is None and streaming:
        wire = spec.stream(chunks, call)
        return 200, wire.head + b"".join(wire.parts)
    failure = assemble(chunks).failure
    if failure is not None:
        # before the stream, or mid-stream in a non-streaming request: an HTTP error
        status = int(reply.error_status or failure.get("status") or 500)
        message, code, _ = failure_fields(failure)
        return status, json.dumps(spec.error(message, code, status)).encode()
    return 200, json.dumps(spec.whole(chunks, call)).encode()


def expected(dialect: str, entry: dict[str, Any], *, streaming: bool) -> dict[str, Any]:
    """`entry` as far as `dialect` can carry it."""
    out = {k: v for k, v in entry.items() if k != "deltas"}
    error = out.get("error")
    if error is not None and "status" not in error and not streaming:
        # A whole answer cannot fail halfway: the fake answers HTTP 500, no text.
        out = {"error": {**error, "status": 500}}
        error = out["error"]
    if dialect == "anthropic-messages":
        if error is not None:  # Anthropic's error has a type per status, no code
            error["code"] = anthropic_error_type(int(error.get("status", 500)))
        if "usage" in out:  # nor reasoning tokens
            out["usage"] = {k: v for k, v in out["usage"].items() if k != "reasoning"}
    return out


@pytest.mark.parametrize("streaming", [True, False], ids=["stream", "whole"])
@pytest.mark.parametrize("dialect", list(PATHS))
@pytest.mark.parametrize("name", list(ENTRIES))
def test_the_fakes_own_answers_read_back_as_their_entry(
    name: str, dialect: str, streaming: bool
) -> None:
    entry = json.loads(json.dumps(ENTRIES[name]))
    status, body = served(dialect, entry, streaming=streaming)
    got = parse_answer(dialect, status, body)
    assert {k: v for k, v in got.items() if k != "deltas"} == expected(
        dialect, entry, streaming=streaming
    )
    assert not problems(got)


@pytest.mark.parametrize("dialect", list(PATHS))
def test_deltas_follow_how_coarsely_the_answer_streamed(dialect: str) -> None:
    entry = {"reasoning": "a" * 40, "text": "b" * 60, "deltas": 10}
    streamed = parse_answer(dialect, *served(dialect, entry, streaming=True))
    assert streamed == entry
    whole = parse_answer(dialect, *served(dialect, entry, streaming=False))
    assert "deltas" not in whole  # nothing streamed, nothing to follow
    fine = parse_answer(dialect, *served(dialect, {"text": "abc"}, streaming=True))
    assert fine == {"text": "abc"}  # one character per delta is the default


def sse(*events: Any, named: bool = False) -> bytes:
    """SSE bytes; `named` adds `event:` lines from each event's `type`."""
    out = []
    for event in events:
        data = event if isinstance(event, str) else json.dumps(event)
        head = f"event: {event['type']}\n" if named and not isinstance(event, str) else ""
        out.append(f"{head}data: {data}\n\n")
    return "".join(out).encode()


def chat_chunk(delta: dict[str, Any], finish: str | None = None, **extra: Any) -> dict[str, Any]:
    return {
        "id": "x",
        "object": "chat.completion.chunk",
        "model": "deepseek-chat",
        "choices": [{"index": 0, "delta": delta, "finish_reason": finish, "logprobs": None}],
        **extra,
    }


def test_a_deepseek_stream_with_reasoning_and_a_fragmented_tool_call() -> None:
    body = sse(
        chat_chunk({"role": "assistant", "content": None, "reasoning_content": ""}),
        chat_chunk({"content": None, "reasoning_content": "The user wants "}),
        chat_chunk({"content": None, "reasoning_content": "the weather."}),
        chat_chunk(
            {
                "tool_calls": [
                    {
                        "index": 0,
                        "id": "call_00_abc",
                        "type": "function",
                        "function": {"name": "get_weather", "arguments": ""},
                    }
                ]
            }
        ),
        chat_chunk({"tool_calls": [{"index": 0, "function": {"arguments": '{"city'}}]}),
        chat_chunk({"tool_calls": [{"index": 0, "function": {"arguments": '": "Par'}}]}),
        chat_chunk({"tool_calls": [{"index": 0, "function": {"arguments": 'is"}'}}]}),
        chat_chunk({"content": ""}, "tool_calls"),
        {
            "id": "x",
            "object": "chat.completion.chunk",
            "choices": [],
            "usage": {
                "prompt_tokens": 120,
                "completion_tokens": 40,
                "total_tokens": 160,
                "prompt_cache_hit_tokens": 64,
                "completion_tokens_details": {"reasoning_tokens": 21},
            },
        },
        "[DONE]",
    )
    assert parse_answer("openai-chat", 200, body) == {
        "reasoning": "The user wants the weather.",
        "tool_calls": [
            {"id": "call_00_abc", "name": "get_weather", "arguments": {"city": "Paris"}}
        ],
        "usage": {"input": 120, "output": 40, "reasoning": 21},
        "deltas": 14,
    }


def test_an_anthropic_stream_with_thinking_text_and_a_tool_use() -> None:
    def delta(index: int, **fields: Any) -> dict[str, Any]:
        return {"type": "content_block_delta", "index": index, "delta": fields}

    usage = {"input_tokens": 50, "cache_read_input_tokens": 200, "output_tokens": 1}
    body = sse(
        {
            "type": "message_start",
            "message": {"id": "msg_1", "type": "message", "role": "assistant", "usage": usage},
        },
        {
            "type": "content_block_start",
            "index": 0,
            "content_block": {"type": "thinking", "thinking": "", "signature": ""},
        },
        delta(0, type="thinking_delta", thinking="Check the file "),
        delta(0, type="thinking_delta", thinking="first."),
        delta(0, type="signature_delta", signature="EqQBCgIYAhIM"),
        {"type": "content_block_stop", "index": 0},
        {"type": "ping"},
        {"type": "content_block_start", "index": 1, "content_block": {"type": "text", "text": ""}},
        delta(1, type="text_delta", text="Reading it now."),
        {"type": "content_block_stop", "index": 1},
        {
            "type": "content_block_start",
            "index": 2,
            "content_block": {"type": "tool_use", "id": "toolu_01", "name": "read", "input": {}},
        },
        delta(2, type="input_json_delta", partial_json=""),
        delta(2, type="input_json_delta", partial_json='{"path": "/etc/'),
        delta(2, type="input_json_delta", partial_json='hosts"}'),
        {"type": "content_block_stop", "index": 2},
        {
            "type": "message_delta",
            "delta": {"stop_reason": "tool_use", "stop_sequence": None},
            "usage": {"output_tokens": 88},
        },
        {"type": "message_stop"},
        named=True,
    )
    assert parse_answer("anthropic-messages", 200, body) == {
        "reasoning": "Check the file first.",
        "text": "Reading it now.",
        "tool_calls": [{"id": "toolu_01", "name": "read", "arguments": {"path": "/etc/hosts"}}],
        "usage": {"input": 250, "output": 88},
        "deltas": 12,
    }


def test_an_anthropic_tool_use_without_arguments_keeps_its_opening_input() -> None:
    body = sse(
        {
            "type": "content_block_start",
            "index": 0,
            "content_block": {"type": "tool_use", "id": "toolu_9", "name": "now", "input": {}},
        },
        {"type": "message_delta", "delta": {"stop_reason": "tool_use"}, "usage": {}},
        named=True,
    )
    got = parse_answer("anthropic-messages", 200, body)
    assert got == {"tool_calls": [{"id": "toolu_9", "name": "now", "arguments": {}}]}


def test_an_openai_responses_stream_with_a_function_call() -> None:
    item = {
        "type": "function_call",
        "id": "fc_1",
        "call_id": "call_A",
        "name": "shell",
        "arguments": "",
        "status": "in_progress",
    }
    done = {**item, "arguments": '{"cmd":["ls","-la"]}', "status": "completed"}
    usage = {
        "input_tokens": 300,
        "input_tokens_details": {"cached_tokens": 0},
        "output_tokens": 25,
        "output_tokens_details": {"reasoning_tokens": 0},
        "total_tokens": 325,
    }
    body = sse(
        {"type": "response.created", "response": {"id": "resp_1", "status": "in_progress"}},
        {"type": "response.output_item.added", "output_index": 0, "item": item},
        {
            "type": "response.function_call_arguments.delta",
            "item_id": "fc_1",
            "output_index": 0,
            "delta": '{"cmd":["ls",',
        },
        {
            "type": "response.function_call_arguments.delta",
            "item_id": "fc_1",
            "output_index": 0,
            "delta": '"-la"]}',
        },
        {
            "type": "response.function_call_arguments.done",
            "item_id": "fc_1",
            "output_index": 0,
            "arguments": done["arguments"],
        },
        {"type": "response.output_item.done", "output_index": 0, "item": done},
        {
            "type": "response.completed",
            "response": {"id": "resp_1", "status": "completed", "output": [done], "usage": usage},
        },
        named=True,
    )
    assert parse_answer("openai-responses", 200, body) == {
        "tool_calls": [{"id": "call_A", "name": "shell", "arguments": {"cmd": ["ls", "-la"]}}],
        "usage": {"input": 300, "output": 25},  # zero reasoning tokens are not reported
    }


def test_an_openai_401_error() -> None:
    body = {
        "error": {
            "message": "Incorrect API key provided: sk-abc. You can find your API key at ...",
            "type": "invalid_request_error",
            "param": None,
            "code": "invalid_api_key",
        }
    }
    for dialect in ("openai-chat", "openai-responses"):
        got = parse_answer(dialect, 401, json.dumps(body).encode())
        assert got == {
            "error": {
                "message": body["error"]["message"],
                "code": "invalid_api_key",
                "status": 401,
            }
        }


def test_an_openai_error_without_code_has_its_type() -> None:
    body = {"error": {"message": "busy", "type": "server_error", "param": None, "code": None}}
    got = parse_answer("openai-chat", 503, json.dumps(body).encode())
    assert got == {"error": {"message": "busy", "code": "server_error", "status": 503}}


def test_an_anthropic_401_error() -> None:
    body = {
        "type": "error",
        "error": {"type": "authentication_error", "message": "invalid x-api-key"},
        "request_id": "req_011",
    }
    got = parse_answer("anthropic-messages", 401, json.dumps(body).encode())
    assert got == {
        "error": {"message": "invalid x-api-key", "code": "authentication_error", "status": 401}
    }


def test_a_non_json_502_keeps_its_text_cut_short() -> None:
    page = "<html><head><title>502 Bad Gateway</title></head>" + "x" * 1000 + "</html>"
    got = parse_answer("openai-chat", 502, page.encode())
    assert got == {"error": {"message": page[:500], "code": "PROVIDER_ERROR", "status": 502}}
    assert not problems(got)


@pytest.mark.parametrize("dialect", list(PATHS))
def test_a_garbage_200_body_is_an_unreadable_error(dialect: str) -> None:
    garbage = "Service temporarily unavailable " * 20
    got = parse_answer(dialect, 200, garbage.encode())
    assert got == {
        "error": {"message": f"unreadable answer: {garbage[:200]}", "code": "PARITY_UNREADABLE"}
    }
    assert not problems(got)


def test_malformed_events_are_skipped() -> None:
    body = (
        b"data: {not json\n\n"
        b'data: [1, 2]\n\ndata: {"choices": "nope"}\n\n'
        b'data: {"choices": [{"index": 0, "delta": {"content": 7}}]}\n\n'
        + sse(chat_chunk({"content": "fine"}, "stop"), "[DONE]")
    )
    assert parse_answer("openai-chat", 200, body) == {"text": "fine", "deltas": 4}


def test_unparseable_arguments_stay_the_raw_string() -> None:
    call = {"index": 0, "id": "c", "function": {"name": "f", "arguments": '{"a": '}}
    body = sse(chat_chunk({"tool_calls": [call]}, "tool_calls"), "[DONE]")
    got = parse_answer("openai-chat", 200, body)
    assert got["tool_calls"] == [{"id": "c", "name": "f", "arguments": '{"a": '}]


def test_a_mid_stream_error_drops_calls_and_usage() -> None:
    call = {"index": 0, "id": "c", "function": {"name": "f", "arguments": "{}"}}
    body = sse(
        chat_chunk({"content": "so far"}),
        chat_chunk({"tool_calls": [call]}),
        {"error": {"message": "overloaded", "type": "server_error", "code": None}},
    )
    got = parse_answer("openai-chat", 200, body)
    error = {"message": "overloaded", "code": "server_error"}
    assert got == {"text": "so far", "error": error, "deltas": 6}
    assert not problems(got)


def test_an_unknown_dialect_is_refused() -> None:
    with pytest.raises(ValueError, match="openai-chat"):
        parse_answer("gemini", 200, b"{}")
