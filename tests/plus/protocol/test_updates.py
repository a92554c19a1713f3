"""Projection of committed events to session/update payloads (§2, scenarios of §7.4)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import pytest

from acp_plus.protocol import updates
from acp_plus.protocol.updates import DeliveryError


def live(event: dict[str, Any], used: int | None = 10) -> list[dict[str, Any]]:
    """Project as a live session with a 1024-token window (the §7.1 mock model)."""
    return updates.project(event, context_window=1024, used_tokens=used)


def message(msg_id: str, blocks: list[dict[str, Any]], usage: Any = None) -> dict[str, Any]:
    event: dict[str, Any] = {"type": "assistant/message", "id": msg_id, "turn": 1, "blocks": blocks}
    if usage is not None:
        event["usage"] = usage
    return event


def test_scenario_4_reasoning_tool_lifecycle_usage_and_final_text() -> None:
    """§7.4 scenario 4: the update sequence of a tool turn, in commit order."""
    events = [
        message(
            "m-1",
            [
                {"type": "reasoning", "text": "inspect first"},
                {"type": "tool-call", "id": "call-1", "name": "echo", "arguments": "{}"},
            ],
            {"inputTokens": 8, "outputTokens": 2, "reasoningTokens": 1},
        ),
        {"type": "tool/call", "turn": 1, "callId": "call-1", "name": "echo", "arguments": "{}"},
        {
            "type": "tool/result",
            "turn": 1,
            "callId": "call-1",
            "content": [{"type": "text", "text": "tool result"}],
            "isError": False,
        },
        message("m-2", [{"type": "text", "text": "done"}], {"inputTokens": 5, "outputTokens": 4}),
    ]
    projected = [u for e in events for u in live(e, updates.context_used(e.get("usage") or {}))]
    assert projected == [
        {
            "sessionUpdate": "agent_thought_chunk",
            "messageId": "m-1",
            "content": {"type": "text", "text": "inspect first"},
        },
        {"sessionUpdate": "usage_update", "used": 10, "size": 1024},
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
            "messageId": "m-2",
            "content": {"type": "text", "text": "done"},
        },
        {"sessionUpdate": "usage_update", "used": 9, "size": 1024},
    ]


def test_scenario_2_text_exchange() -> None:
    event = message(
        "m", [{"type": "text", "text": "hello there"}], {"inputTokens": 5, "outputTokens": 11}
    )
    assert live(event, 16) == [
        {
            "sessionUpdate": "agent_message_chunk",
            "messageId": "m",
            "content": {"type": "text", "text": "hello there"},
        },
        {"sessionUpdate": "usage_update", "used": 16, "size": 1024},
    ]


def test_scenario_3_message_without_usage_has_no_usage_update() -> None:
    event = message("m", [{"type": "text", "text": "cut short"}])
    assert [u["sessionUpdate"] for u in live(event)] == ["agent_message_chunk"]


@pytest.mark.parametrize(
    ("context_window", "used_tokens"), [(None, 10), (1024, None), (None, None)]
)
def test_usage_update_needs_window_and_meter(
    context_window: int | None, used_tokens: int | None
) -> None:
    event = message("m", [{"type": "text", "text": "x"}], {"inputTokens": 1, "outputTokens": 1})
    projected = updates.project(event, context_window=context_window, used_tokens=used_tokens)
    assert [u["sessionUpdate"] for u in projected] == ["agent_message_chunk"]


def test_usage_alone_when_every_block_is_empty_or_silent() -> None:
    event = message(
        "m",
        [
            {"type": "text", "text": ""},
            {"type": "reasoning", "text": ""},
            {"type": "tool-call", "id": "c", "name": "n", "arguments": "{}"},
            {"type": "file", "attachment": {}},
        ],
        {"inputTokens": 1, "outputTokens": 0},
    )
    assert live(event, 1) == [{"sessionUpdate": "usage_update", "used": 1, "size": 1024}]


def test_one_message_keeps_block_order_and_one_message_id() -> None:
    event = message(
        "same",
        [
            {"type": "text", "text": "before"},
            {"type": "image", "mimeType": "image/png", "digest": "d1"},
            {"type": "reasoning", "text": "hmm"},
            {"type": "text", "text": "after"},
        ],
    )
    stored = {"d1": ("iVBORw0KGgo=", "image/png")}

    def read(block: Mapping[str, Any]) -> tuple[str, str] | None:
        return stored.get(block["digest"])

    projected = updates.project(event, context_window=1024, used_tokens=1, read_image=read)
    assert [(u["sessionUpdate"], u["messageId"], u["content"]) for u in projected] == [
        ("agent_message_chunk", "same", {"type": "text", "text": "before"}),
        (
            "agent_message_chunk",
            "same",
            {"type": "image", "data": "iVBORw0KGgo=", "mimeType": "image/png"},
        ),
        ("agent_thought_chunk", "same", {"type": "text", "text": "hmm"}),
        ("agent_message_chunk", "same", {"type": "text", "text": "after"}),
    ]


def test_image_without_store_fails_the_whole_message() -> None:
    event = message("m", [{"type": "text", "text": "a"}, {"type": "image", "digest": "d"}])
    with pytest.raises(DeliveryError) as caught:
        live(event)
    assert caught.value.message == "cannot deliver assistant image: no attachment store is mounted"


def test_missing_attachment_fails_the_whole_message() -> None:
    event = message("m", [{"type": "image", "digest": "d"}])
    with pytest.raises(DeliveryError) as caught:
        updates.project(event, context_window=None, used_tokens=None, read_image=lambda _b: None)
    assert caught.value.message == (
        "cannot deliver assistant image: the attachment is unavailable or corrupt"
    )


@pytest.mark.parametrize(
    ("arguments", "raw_input"),
    [
        ("{}", {}),
        ('{"path": "a.txt", "n": 2.0}', {"path": "a.txt", "n": 2}),
        ("[1, 2]", [1, 2]),
        ("not json", "not json"),
        ('{"path": ', '{"path": '),
        ("", ""),
        ("NaN", "NaN"),
    ],
)
def test_tool_call_raw_input(arguments: str, raw_input: Any) -> None:
    event = {"type": "tool/call", "turn": 2, "callId": "c9", "name": "read", "arguments": arguments}
    assert live(event) == [
        {
            "sessionUpdate": "tool_call",
            "toolCallId": "c9",
            "title": "read",
            "kind": "other",
            "status": "in_progress",
            "rawInput": raw_input,
        }
    ]


@pytest.mark.parametrize(
    ("is_error", "status"), [(True, "failed"), (False, "completed"), (None, "completed")]
)
def test_tool_result_status(is_error: bool | None, status: str) -> None:
    event: dict[str, Any] = {"type": "tool/result", "turn": 1, "callId": "c", "content": []}
    if is_error is not None:
        event["isError"] = is_error
    assert live(event) == [
        {"sessionUpdate": "tool_call_update", "toolCallId": "c", "status": status, "content": []}
    ]


def test_tool_result_content_goes_through_the_block_converter() -> None:
    event = {
        "type": "tool/result",
        "turn": 1,
        "callId": "c",
        "isError": True,
        "content": [
            {"type": "text", "text": ""},
            {"type": "text", "text": "denied"},
            {"type": "image", "mimeType": "image/gif", "data": "R0lG"},
            {"type": "json", "value": 1},
        ],
    }
    assert live(event)[0]["content"] == [
        {"type": "content", "content": {"type": "text", "text": "denied"}},
        {"type": "content", "content": {"type": "image", "data": "R0lG", "mimeType": "image/gif"}},
    ]


def test_tool_result_with_unreadable_image_raises_for_the_caller_to_drop() -> None:
    event = {"type": "tool/result", "callId": "c", "content": [{"type": "image", "digest": "x"}]}
    with pytest.raises(DeliveryError):
        live(event)


@pytest.mark.parametrize(
    "event_type",
    [
        "turn/start",
        "user/message",
        "route/set",
        "approval/asked",
        "approval/decided",
        "turn/end",
        "x",
    ],
)
def test_events_without_projection(event_type: str) -> None:
    assert live({"type": event_type, "turn": 1}) == []


def test_replay_suppresses_usage_but_keeps_message_ids() -> None:
    event = message("m", [{"type": "text", "text": "hi"}], {"inputTokens": 1, "outputTokens": 1})
    assert updates.project(event, context_window=None, used_tokens=None) == [
        {
            "sessionUpdate": "agent_message_chunk",
            "messageId": "m",
            "content": {"type": "text", "text": "hi"},
        }
    ]


@pytest.mark.parametrize(
    ("usage", "used"),
    [
        ({"inputTokens": 8, "outputTokens": 2, "reasoningTokens": 1}, 10),
        ({"inputTokens": 5, "outputTokens": 4, "cacheReadTokens": 100, "cacheWriteTokens": 7}, 116),
        ({"inputTokens": 5, "outputTokens": 4, "totalTokens": 999}, 9),
        ({}, 0),
    ],
)
def test_context_used(usage: dict[str, int], used: int) -> None:
    assert updates.context_used(usage) == used


def test_config_option_update() -> None:
    options = [{"id": "model", "currentValue": '["a","b"]'}]
    assert updates.config_option_update(options) == {
        "sessionUpdate": "config_option_update",
        "configOptions": options,
    }
