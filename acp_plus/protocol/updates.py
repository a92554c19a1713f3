"""Committed session events to `session/update` payloads (§2).

`project` reads one committed event and returns the `update` objects to send, in order,
without `sessionId`. It sees only committed events, so `session/load` replay feeds it the
log unchanged (with `context_window=None`, which suppresses historical usage).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from acp_plus.core import events as ev
from acp_plus.core.js_json import js_parse

NO_STORE = "cannot deliver assistant image: no attachment store is mounted"
UNAVAILABLE = "cannot deliver assistant image: the attachment is unavailable or corrupt"

ImageReader = Callable[[Mapping[str, Any]], "tuple[str, str] | None"]
"""Reads a committed image block's bytes: `(base64 data, stored mimeType)`, or None when
the attachment is missing or corrupt. Passing no reader means no store is mounted."""


class DeliveryError(Exception):
    """A committed block could not be converted for the wire (§2 failure rules).

    For an assistant message none of its updates may be sent; for a tool call or result
    the caller logs and drops the update.
    """

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message


def _image_content(block: Mapping[str, Any], read_image: ImageReader | None) -> dict[str, Any]:
    data, mime_type = block.get("data"), block.get("mimeType")
    if not (isinstance(data, str) and isinstance(mime_type, str)):
        if read_image is None:
            raise DeliveryError(NO_STORE)
        stored = read_image(block)
        if stored is None:
            raise DeliveryError(UNAVAILABLE)
        data, mime_type = stored
    return {"type": "image", "data": data, "mimeType": mime_type}


def acp_content(block: Mapping[str, Any], read_image: ImageReader | None) -> dict[str, Any] | None:
    """The ACP content block for a committed text, reasoning or image block; None for an
    empty text or reasoning block and for every other block type."""
    kind = block.get("type")
    if kind in ("text", "reasoning"):
        text = block.get("text")
        return {"type": "text", "text": text} if isinstance(text, str) and text else None
    if kind == "image":
        return _image_content(block, read_image)
    return None


def context_used(usage: Mapping[str, Any]) -> int:
    """Tokens the session's context holds after a model step with this `usage`.

    Input (uncached + cache reads + cache writes) plus output; reasoning tokens are not
    added (see docs/contract-notes.md, "usage_update.used").
    """
    total = 0
    for field in ("inputTokens", "cacheReadTokens", "cacheWriteTokens", "outputTokens"):
        value = usage.get(field)
        if isinstance(value, int) and not isinstance(value, bool):
            total += value
    return total


def _assistant_message(
    event: Mapping[str, Any],
    context_window: int | None,
    used_tokens: int | None,
    read_image: ImageReader | None,
) -> list[dict[str, Any]]:
    message_id = event.get("id")
    updates: list[dict[str, Any]] = []
    for block in event.get("blocks") or ():
        content = acp_content(block, read_image)
        if content is None:
            continue
        kind = "agent_thought_chunk" if block.get("type") == "reasoning" else "agent_message_chunk"
        updates.append({"sessionUpdate": kind, "messageId": message_id, "content": content})
    if event.get("usage") is not None and context_window is not None and used_tokens is not None:
        updates.append(
            {"sessionUpdate": "usage_update", "used": used_tokens, "size": context_window}
        )
    return updates


def raw_input(arguments: Any) -> Any:
    """A tool call's `rawInput`: its raw JSON arguments parsed, or the raw string when
    they are not JSON (JS `JSON.parse` rules)."""
    if not isinstance(arguments, str):
        return arguments
    try:
        return js_parse(arguments)
    except (ValueError, RecursionError):
        return arguments


def _tool_call(event: Mapping[str, Any]) -> dict[str, Any]:
    return {
        "sessionUpdate": "tool_call",
        "toolCallId": event.get("callId"),
        "title": event.get("name"),
        "kind": "other",
        "status": "in_progress",
        "rawInput": raw_input(event.get("arguments")),
    }


def _tool_result(event: Mapping[str, Any], read_image: ImageReader | None) -> dict[str, Any]:
    content = []
    for block in event.get("content") or ():
        converted = acp_content(block, read_image)
        if converted is not None:
            content.append({"type": "content", "content": converted})
    return {
        "sessionUpdate": "tool_call_update",
        "toolCallId": event.get("callId"),
        "status": "failed" if event.get("isError") is True else "completed",
        "content": content,
    }


def project(
    event: Mapping[str, Any],
    *,
    context_window: int | None,
    used_tokens: int | None,
    read_image: ImageReader | None = None,
) -> list[dict[str, Any]]:
    """The `session/update` payloads (without sessionId) for one committed event (§2).

    `usage_update` ends an assistant message's updates only when the event carries usage,
    `context_window` is known and `used_tokens` is given. Events with no projection give
    `[]`. Raises DeliveryError when an image block cannot be converted.
    """
    kind = event.get("type")
    if kind == "assistant/message":
        return _assistant_message(event, context_window, used_tokens, read_image)
    if kind == "tool/call":
        return [_tool_call(event)]
    if kind == "tool/result":
        return [_tool_result(event, read_image)]
    # The increments' events (§6.3, §6.4); only the plus profile ever commits them.
    if kind == ev.COMMAND_RUN:
        return [command_run_update(event)]
    if kind == ev.COMMAND_DONE:
        return command_done_updates(event)
    if kind == ev.MODE_SET:
        return [current_mode_update(event)]
    return []


def config_option_update(options: list[dict[str, Any]]) -> dict[str, Any]:
    """The update sent to live sessions when the provider topology changes (§1.5)."""
    return {"sessionUpdate": "config_option_update", "configOptions": options}


def command_run_update(event: Mapping[str, Any]) -> dict[str, Any]:
    """Projection of `command/run`: the client's line echoed back, no messageId."""
    text = f"/{event.get('name', '')}{event.get('args', '')}"
    return {"sessionUpdate": "user_message_chunk", "content": {"type": "text", "text": text}}


def command_done_updates(event: Mapping[str, Any]) -> list[dict[str, Any]]:
    """Projection of `command/done`: its text as an agent message, none when empty."""
    text = event.get("text")
    if not isinstance(text, str) or not text:
        return []
    return [{"sessionUpdate": "agent_message_chunk", "content": {"type": "text", "text": text}}]


def current_mode_update(event: Mapping[str, Any]) -> dict[str, Any]:
    """The projection of a committed `plan/mode` event (§6.3)."""
    return {"sessionUpdate": "current_mode_update", "currentModeId": event.get("mode")}
