"""Readings of the session log: the model's messages, the last route, the token meter."""

from __future__ import annotations

from typing import Any

import pytest

from acp_plus.core.history import (
    CANCELLED_TOOL_TEXT,
    build_messages,
    interrupted_turn,
    last_route,
    used_tokens,
)
from acp_plus.protocol.updates import context_used


def test_dangling_tool_call_gets_a_failed_result_in_the_model_view_only() -> None:
    events: list[dict[str, Any]] = [
        {"type": "user/message", "content": [{"type": "text", "text": "a"}]},
        {
            "type": "assistant/message",
            "blocks": [{"type": "tool-call", "id": "c1", "name": "t", "arguments": "{}"}],
        },
        {"type": "turn/end", "turn": 1, "reason": {"kind": "interrupted"}},
        {"type": "user/message", "content": [{"type": "text", "text": "b"}]},
    ]
    messages = build_messages(events)
    assert [m["role"] for m in messages] == ["user", "assistant", "tool", "user"]
    assert messages[2] == {
        "role": "tool",
        "toolCallId": "c1",
        "isError": True,
        "content": [{"type": "text", "text": CANCELLED_TOOL_TEXT}],
    }


def test_empty_assistant_messages_are_not_sent_to_the_model() -> None:
    events: list[dict[str, Any]] = [
        {"type": "assistant/message", "blocks": [], "usage": {"inputTokens": 1, "outputTokens": 0}}
    ]
    assert build_messages(events) == []


def test_last_route_and_interrupted_turn() -> None:
    events: list[dict[str, Any]] = [
        {"type": "turn/start", "turn": 1},
        {
            "type": "route/set",
            "provider": "p",
            "model": "m",
            "effort": None,
            "explicitEffort": False,
        },
        {"type": "turn/end", "turn": 1, "reason": {"kind": "completed"}},
        {
            "type": "route/set",
            "provider": "p",
            "model": "n",
            "effort": "low",
            "explicitEffort": True,
        },
    ]
    assert last_route(events) == {
        "type": "route/set",
        "provider": "p",
        "model": "n",
        "effort": "low",
        "explicitEffort": True,
    }
    assert last_route([]) is None
    assert interrupted_turn(events) is None
    assert interrupted_turn([*events, {"type": "turn/start", "turn": 2}]) == 2
    assert interrupted_turn([]) is None


@pytest.mark.parametrize(
    "usage",
    [
        {"inputTokens": 5, "outputTokens": 11},
        {"inputTokens": 8, "outputTokens": 2, "reasoningTokens": 1},
        {"inputTokens": 3, "outputTokens": 4, "cacheReadTokens": 20, "cacheWriteTokens": 2},
    ],
)
def test_token_meter_agrees_with_the_projection(usage: dict[str, Any]) -> None:
    events = [{"type": "assistant/message", "blocks": [], "usage": usage}]
    assert used_tokens(events) == context_used(usage)


def test_token_meter_uses_the_latest_usage() -> None:
    events: list[dict[str, Any]] = [
        {"type": "assistant/message", "usage": {"inputTokens": 1, "outputTokens": 1}},
        {"type": "assistant/message", "blocks": []},
        {"type": "assistant/message", "usage": {"inputTokens": 7, "outputTokens": 3}},
    ]
    assert used_tokens(events) == 10
    assert used_tokens([]) == 0
