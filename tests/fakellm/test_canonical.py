"""Model requests of every dialect reduce to one canonical form, so cross-dialect model
views compare what the model saw."""

from __future__ import annotations

from typing import Any

from parity.checks.comparable import comparable_models
from parity.checks.diff import compare
from parity.fakellm.dialects import canonical_request, dialect_of

ECHO = {"type": "object", "properties": {}}

STREAM = {
    "provider": "mock",
    "model": "mock",
    "reasoningEffort": "high",
    "system": "be brief",
    "messages": [
        {"role": "user", "content": [{"type": "text", "text": "go"}]},
        {
            "role": "assistant",
            "content": [
                {"type": "reasoning", "text": "inspect first"},
                {"type": "tool-call", "id": "call-1", "name": "echo", "arguments": "{}"},
            ],
        },
        {
            "role": "tool",
            "toolCallId": "call-1",
            "isError": False,
            "content": [{"type": "text", "text": "tool result"}],
        },
    ],
    "tools": [{"name": "echo", "description": "Echo.", "parameters": ECHO}],
}

CHAT = {
    "model": "mock",
    "reasoning_effort": "high",
    "stream": True,
    "stream_options": {"include_usage": True},
    "messages": [
        {"role": "system", "content": "be brief"},
        {"role": "user", "content": "go"},
        {
            "role": "assistant",
            "content": None,
            "reasoning_content": "inspect first",
            "tool_calls": [
                {
                    "id": "call-1",
                    "type": "function",
                    "function": {"name": "echo", "arguments": "{ }"},
                }
            ],
        },
        {"role": "tool", "tool_call_id": "call-1", "content": "tool result"},
    ],
    "tools": [
        {
            "type": "function",
            "function": {"name": "echo", "description": "Echo.", "parameters": ECHO},
        }
    ],
}

RESPONSES = {
    "model": "mock",
    "instructions": "be brief",
    "reasoning": {"effort": "high"},
    "stream": True,
    "input": [
        {"type": "message", "role": "user", "content": [{"type": "input_text", "text": "go"}]},
        {"type": "reasoning", "summary": [{"type": "summary_text", "text": "inspect first"}]},
        {"type": "function_call", "call_id": "call-1", "name": "echo", "arguments": "{}"},
        {"type": "function_call_output", "call_id": "call-1", "output": "tool result"},
    ],
    "tools": [{"type": "function", "name": "echo", "description": "Echo.", "parameters": ECHO}],
}

ANTHROPIC = {
    "model": "mock",
    "system": [{"type": "text", "text": "be brief"}],
    "messages": [
        {"role": "user", "content": "go"},
        {
            "role": "assistant",
            "content": [
                {"type": "thinking", "thinking": "inspect first", "signature": "s"},
                {"type": "tool_use", "id": "call-1", "name": "echo", "input": {}},
            ],
        },
        {
            "role": "user",
            "content": [{"type": "tool_result", "tool_use_id": "call-1", "content": "tool result"}],
        },
    ],
    "tools": [{"name": "echo", "description": "Echo.", "input_schema": ECHO}],
}


def without(canonical: dict[str, Any] | None, *keys: str) -> dict[str, Any]:
    assert canonical is not None
    return {k: v for k, v in canonical.items() if k not in keys}


def test_every_dialect_says_the_same_conversation() -> None:
    stream = canonical_request("/stream", STREAM)
    assert canonical_request("/v1/chat/completions", CHAT) == stream
    assert canonical_request("/v1/responses", RESPONSES) == stream
    # Anthropic's thinking has no effort field here: the rest is the same.
    assert without(canonical_request("/v1/messages", ANTHROPIC), "reasoningEffort") == without(
        stream, "reasoningEffort"
    )


def test_a_changed_message_is_a_difference() -> None:
    changed = {**CHAT, "messages": [*CHAT["messages"][:1], {"role": "user", "content": "stop"}]}
    assert canonical_request("/v1/chat/completions", changed) != canonical_request(
        "/stream", STREAM
    )


def test_gemini_names_the_model_in_the_path() -> None:
    body = {
        "systemInstruction": {"parts": [{"text": "be brief"}]},
        "contents": [
            {"role": "user", "parts": [{"text": "go"}]},
            {"role": "model", "parts": [{"text": "inspect first", "thought": True}]},
        ],
    }
    canonical = canonical_request("/v1beta/models/mock:streamGenerateContent?alt=sse", body)
    assert canonical == {
        "model": "mock",
        "system": "be brief",
        "messages": [
            {"role": "user", "content": [{"type": "text", "text": "go"}]},
            {"role": "assistant", "content": [{"type": "reasoning", "text": "inspect first"}]},
        ],
    }


def test_only_model_calls_have_a_dialect() -> None:
    assert dialect_of("/catalog") is None
    assert dialect_of("/tools/call") is None
    assert dialect_of("/v1/models") is None
    assert canonical_request("/catalog", None) is None


def test_views_compare_canonically_only_across_dialects() -> None:
    stream_view = [
        {"path": "/catalog", "method": "GET", "body": None},
        {"path": "/stream", "body": STREAM},
    ]
    chat_view = [{"path": "/v1/chat/completions", "body": CHAT}]
    a, b = comparable_models(stream_view, chat_view)
    assert a == b and len(a) == 1
    same = [{"path": "/stream", "body": STREAM}]
    assert comparable_models(same, same) == (same, same)  # one dialect: as recorded
    ref = {"steps": [], "after": [], "model": stream_view}
    other = {"steps": [], "after": [], "model": chat_view}
    report = compare(ref, other, profile="exact", diverge=[], ref_name="a", other_name="b")
    assert report.ok, report.render()
    other["model"] = [{"path": "/v1/chat/completions", "body": {**CHAT, "model": "other"}}]
    report = compare(ref, other, profile="exact", diverge=[], ref_name="a", other_name="b")
    assert [d.path for d in report.differences] == ["model[0].canonical.model"]


def test_a_run_without_model_calls_still_shows_its_route() -> None:
    # A parity-stream agent's own /catalog fetch says which route it took: beside an
    # agent on another dialect that made no call either, nothing is left to compare
    # (parity explore found plus vs plus-openai differing on it after list_sessions).
    catalog = [{"path": "/catalog", "method": "GET", "body": None}]
    assert comparable_models(catalog, []) == ([], [])
    # Two parity-stream runs still compare as recorded, catalog fetch included.
    assert comparable_models(catalog, catalog) == (catalog, catalog)
    # A run that made no call beside one that did shows the missing call.
    chat_view = [{"path": "/v1/chat/completions", "body": CHAT}]
    ref, other = comparable_models(catalog, chat_view)
    assert ref == [] and len(other) == 1


def test_a_scripted_failures_status_is_the_dialects_rendering() -> None:
    # `error: {status: 400}` is a 200 stream of finish{error} on parity-stream and an
    # HTTP 400 on openai-chat: one scripted failure, which compares equal (parity explore
    # found plus vs plus-openai differing there).
    stream_view = [{"path": "/stream", "body": STREAM}]
    chat_view = [{"path": "/v1/chat/completions", "body": CHAT, "status": 400}]
    a, b = comparable_models(stream_view, chat_view)
    assert a == b and "status" not in b[0]
    # A refusal of the fake (script exhausted, a bad key) keeps its status: a problem.
    refused = [{**chat_view[0], "status": 409, "problem": "script exhausted"}]
    a, b = comparable_models(stream_view, refused)
    assert b[0]["status"] == 409 and b[0]["problem"] == "script exhausted" and a != b
