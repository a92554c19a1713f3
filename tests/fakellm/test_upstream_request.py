"""A canonical request rebuilt in a provider's dialect says the same to the provider:
read back by `canonical_request`, it is the canonical request again (new model), less
what the dialect cannot carry."""

from __future__ import annotations

import copy
import json
from typing import Any

import pytest

from parity.fakellm.dialects import (
    CAPTURABLE,
    DIALECTS,
    canonical_request,
    capture_of,
    upstream_body,
)

PATHS = {name: next(iter(DIALECTS[name].routes)) for name in CAPTURABLE}
"""The fake's own path of each dialect."""

SCHEMA = {"type": "object", "properties": {"path": {"type": "string"}}, "required": ["path"]}


def text(value: str) -> dict[str, Any]:
    return {"type": "text", "text": value}


def call(ident: str, name: str, arguments: dict[str, Any]) -> dict[str, Any]:
    # canonical arguments: compact JSON, keys sorted
    raw = json.dumps(arguments, separators=(",", ":"), sort_keys=True)
    return {"type": "tool-call", "id": ident, "name": name, "arguments": raw}


def result(ident: str, *texts: str) -> dict[str, Any]:
    return {"role": "tool", "content": [text(t) for t in texts], "toolCallId": ident}


CONVERSATION: dict[str, Any] = {
    "model": "agent-model",
    "reasoningEffort": "high",
    "system": "You are terse.\n\nUse tools.",
    "messages": [
        {
            "role": "user",
            "content": [text("read both files"), {"type": "image", "mimeType": "image/png"}],
        },
        {
            "role": "assistant",
            "content": [
                {"type": "reasoning", "text": "two reads, in parallel"},
                text("Reading."),
                call("call-1", "read", {"path": "a.txt"}),
                call("call-2", "read", {"path": "b.txt"}),
            ],
        },
        result("call-1", "alpha"),
        result("call-2", "beta"),
        {"role": "user", "content": [text("and now?")]},
        {
            "role": "assistant",
            "content": [{"type": "reasoning", "text": "done"}, text("Both read.")],
        },
        {"role": "user", "content": [{"type": "image", "mimeType": "image/jpeg"}]},
        {"role": "user", "content": [text("thanks"), text("bye")]},
    ],
    "tools": [
        {"name": "read", "description": "Read a file.", "parameters": SCHEMA},
        {"name": "note", "description": "", "parameters": SCHEMA},
    ],
}


def carried(dialect: str, canonical: dict[str, Any]) -> dict[str, Any]:
    """`canonical` less what `dialect` leaves out (upstream_body's docstring), model "m"."""
    out = copy.deepcopy(canonical)
    out["model"] = "m"
    dropped = {"image"} if dialect == "openai-chat" else {"image", "reasoning"}
    messages = []
    for message in out["messages"]:
        message["content"] = [b for b in message["content"] if b["type"] not in dropped]
        if message["content"] or message["role"] == "tool":
            messages.append(message)
    out["messages"] = messages
    if dialect == "anthropic-messages":
        del out["reasoningEffort"]
    return out


@pytest.mark.parametrize("dialect", list(PATHS))
def test_the_body_reads_back_as_the_canonical_request(dialect: str) -> None:
    body = upstream_body(dialect, CONVERSATION, model="m")
    assert canonical_request(PATHS[dialect], body) == carried(dialect, CONVERSATION)
    assert canonical_request(capture_of(dialect).path, body) == carried(dialect, CONVERSATION)


@pytest.mark.parametrize("dialect", list(PATHS))
def test_a_bare_request_reads_back_too(dialect: str) -> None:
    bare = {"model": "x", "messages": [{"role": "user", "content": [text("hi")]}]}
    body = upstream_body(dialect, bare, model="m")
    assert canonical_request(PATHS[dialect], body) == {**bare, "model": "m"}


def test_chat_streams_with_usage_and_keeps_deepseeks_reasoning() -> None:
    body = upstream_body("openai-chat", CONVERSATION, model="m")
    assert body["stream"] is True and body["stream_options"] == {"include_usage": True}
    assert body["reasoning_effort"] == "high"
    assistant = body["messages"][2]
    assert assistant["reasoning_content"] == "two reads, in parallel"
    assert assistant["tool_calls"][0] == {
        "id": "call-1",
        "type": "function",
        "function": {"name": "read", "arguments": '{"path":"a.txt"}'},
    }
    assert body["messages"][3] == {"role": "tool", "tool_call_id": "call-1", "content": "alpha"}
    assert body["tools"][1] == {
        "type": "function",
        "function": {"name": "note", "parameters": SCHEMA},
    }
    assert "max_tokens" not in body


def test_responses_items_and_options() -> None:
    body = upstream_body("openai-responses", CONVERSATION, model="m")
    assert body["stream"] is True and body["reasoning"] == {"effort": "high"}
    assert body["instructions"] == CONVERSATION["system"]
    kinds = [item["type"] for item in body["input"]]
    assert kinds[:6] == [
        "message",
        "message",
        "function_call",
        "function_call",
        "function_call_output",
        "function_call_output",
    ]
    assert body["input"][2]["call_id"] == "call-1"
    assert body["input"][4] == {
        "type": "function_call_output",
        "call_id": "call-1",
        "output": "alpha",
    }
    assert body["tools"][0] == {
        "type": "function",
        "name": "read",
        "description": "Read a file.",
        "parameters": SCHEMA,
        "strict": False,
    }


def test_anthropic_merges_consecutive_tool_results_into_one_user_turn() -> None:
    body = upstream_body("anthropic-messages", CONVERSATION, model="m", max_tokens=1000)
    assert body["max_tokens"] == 1000 and body["stream"] is True
    assert "thinking" not in body and "reasoning_effort" not in body
    roles = [m["role"] for m in body["messages"]]
    assert roles == ["user", "assistant", "user", "user", "assistant", "user"]
    assert body["messages"][1]["content"][1:] == [
        {"type": "tool_use", "id": "call-1", "name": "read", "input": {"path": "a.txt"}},
        {"type": "tool_use", "id": "call-2", "name": "read", "input": {"path": "b.txt"}},
    ]
    assert body["messages"][2]["content"] == [
        {"type": "tool_result", "tool_use_id": "call-1", "content": "alpha"},
        {"type": "tool_result", "tool_use_id": "call-2", "content": "beta"},
    ]
    assert body["tools"][0] == {
        "name": "read",
        "description": "Read a file.",
        "input_schema": SCHEMA,
    }


def test_anthropic_needs_an_object_input_and_an_object_schema() -> None:
    canonical = {
        "messages": [
            {"role": "user", "content": [text("go")]},
            {
                "role": "assistant",
                "content": [{"type": "tool-call", "id": "c", "name": "t", "arguments": "{oops"}],
            },
        ],
        "tools": [{"name": "t", "description": "", "parameters": {}}],
    }
    body = upstream_body("anthropic-messages", canonical, model="m")
    assert body["messages"][1]["content"][0]["input"] == {}
    assert body["tools"] == [{"name": "t", "input_schema": {"type": "object", "properties": {}}}]


def test_the_paths_follow_each_sdks_base_url() -> None:
    assert {name: capture_of(name).path for name in CAPTURABLE} == {
        "openai-chat": "/chat/completions",
        "openai-responses": "/responses",
        "anthropic-messages": "/v1/messages",
    }


def test_an_unknown_dialect_is_refused_with_the_known_ones() -> None:
    with pytest.raises(ValueError, match="openai-chat, openai-responses, anthropic-messages"):
        upstream_body("gemini", CONVERSATION, model="m")
