"""Pure readings of a session's committed events: model messages, route, turns, tokens."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from acp_plus.core.events import RouteSet, text_block

CANCELLED_TOOL_TEXT = "Tool call was cancelled before it produced a result."

IMAGE_OMITTED_TEXT = "[image omitted: model has no image input]"
"""What an image in the history becomes for a model without image input (§8.2)."""


def build_messages(events: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The canonical request `messages` (parity-stream) for the log so far.

    User messages, assistant steps and tool results in commit order. A tool call left
    without a result (its turn was cancelled mid-tool) gets a failed result here, in the
    model view only, because providers reject a tool call that has no answer.
    """
    messages: list[dict[str, Any]] = []
    pending: list[str] = []

    def settle_pending() -> None:
        for call_id in pending:
            messages.append(
                {
                    "role": "tool",
                    "toolCallId": call_id,
                    "isError": True,
                    "content": [text_block(CANCELLED_TOOL_TEXT)],
                }
            )
        pending.clear()

    for event in events:
        kind = event.get("type")
        if kind == "user/message":
            settle_pending()
            messages.append({"role": "user", "content": list(event.get("content", []))})
        elif kind == "assistant/message":
            settle_pending()
            blocks = list(event.get("blocks", []))
            if blocks:
                messages.append({"role": "assistant", "content": blocks})
                pending.extend(str(b["id"]) for b in blocks if b.get("type") == "tool-call")
        elif kind == "tool/result":
            call_id = event.get("callId")
            if call_id in pending:
                pending.remove(call_id)
            messages.append(
                {
                    "role": "tool",
                    "toolCallId": call_id,
                    "isError": bool(event.get("isError", False)),
                    "content": list(event.get("content", [])),
                }
            )
    settle_pending()
    return messages


def accepts_images(input_modalities: list[str] | None) -> bool:
    """Whether a model with these declared input modalities takes images; a model that
    declares none is text-only, as a parity-stream catalog entry defaults to `["text"]`."""
    return input_modalities is not None and "image" in input_modalities


def images_as_text(messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """`messages` with every image block replaced by `IMAGE_OMITTED_TEXT` (§8.2).

    For a model that does not declare image input, so a session whose history holds
    images can switch to it and keep working. Messages without images are shared, not
    copied.
    """
    out: list[dict[str, Any]] = []
    for message in messages:
        content = message.get("content")
        if isinstance(content, list) and any(_is_image(b) for b in content):
            message = {
                **message,
                "content": [text_block(IMAGE_OMITTED_TEXT) if _is_image(b) else b for b in content],
            }
        out.append(message)
    return out


def _is_image(block: Any) -> bool:
    return isinstance(block, dict) and block.get("type") == "image"


def last_route(events: list[dict[str, Any]]) -> RouteSet | None:
    """The last `route/set` event, for resume (§1.5), or None when none was logged."""
    for event in reversed(events):
        if event.get("type") == "route/set":
            return {
                "type": "route/set",
                "provider": str(event["provider"]),
                "model": str(event["model"]),
                "effort": event.get("effort"),
                "explicitEffort": bool(event.get("explicitEffort", False)),
            }
    return None


def last_turn(events: list[dict[str, Any]]) -> int:
    """The number of the last started turn (0 when none)."""
    for event in reversed(events):
        if event.get("type") == "turn/start":
            return int(event["turn"])
    return 0


def interrupted_turn(events: list[dict[str, Any]]) -> int | None:
    """The last turn if it started but never ended (a crash), else None."""
    turn = last_turn(events)
    if turn == 0:
        return None
    for event in reversed(events):
        if event.get("type") == "turn/end" and event.get("turn") == turn:
            return None
        if event.get("type") == "turn/start":
            break
    return turn


def latest_usage(events: list[dict[str, Any]]) -> dict[str, Any] | None:
    """The usage of the latest assistant message that carried one."""
    for event in reversed(events):
        if event.get("type") == "assistant/message" and isinstance(event.get("usage"), dict):
            usage: dict[str, Any] = event["usage"]
            return usage
    return None


def usage_tokens(usage: Mapping[str, Any]) -> int:
    """The provider's count of a step: input (uncached, cache reads, cache writes) plus
    output; reasoning is part of output, never added again."""
    total = 0
    for field in ("inputTokens", "cacheReadTokens", "cacheWriteTokens", "outputTokens"):
        value = usage.get(field)
        if isinstance(value, int) and not isinstance(value, bool):
            total += value
    return total


def used_tokens(events: list[dict[str, Any]]) -> int:
    """The token meter: what the context holds after the latest step that reported usage,
    as that step's `usage_update` said (`core.token_meter`). 0 when no step reported usage.
    """
    for event in reversed(events):
        if event.get("type") == "assistant/message" and isinstance(event.get("usage"), dict):
            meter = event.get("meter")
            # A log written before the meter: the provider's count alone.
            return meter if isinstance(meter, int) else usage_tokens(event["usage"])
    return 0
