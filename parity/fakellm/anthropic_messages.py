"""Anthropic Messages dialect (`POST /v1/messages`), pure renderers.

SSE events carry an `event:` line (the official SDK skips events without one):
`message_start`, then per content block `content_block_start` / `content_block_delta`
(`text_delta`, `thinking_delta`, `input_json_delta`) / `content_block_stop`, then
`message_delta` with `stop_reason` (end_turn, tool_use, max_tokens) and the output
usage, then `message_stop`. A failure after the stream started is an `error` event,
which the SDK raises as an APIStatusError.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any

from parity.fakellm.script import Chunk, RequestView
from parity.fakellm.wire import (
    FAILED_KINDS,
    Wire,
    anthropic_error,
    assemble,
    field_problem,
    find_usage,
    finish_of,
    sse,
)

_STOP_REASONS = {"stop": "end_turn", "tool-calls": "tool_use", "max-tokens": "max_tokens"}


def problem(body: Any) -> str | None:
    """Why `body` is not a Messages request, or None."""
    return field_problem(body, "messages", list, "a list")


def _texts(content: Any) -> list[str]:
    if isinstance(content, str):
        return [content]
    out: list[str] = []
    if isinstance(content, list):
        for block in content:
            if isinstance(block, Mapping):
                for key in ("text", "thinking"):
                    if isinstance(block.get(key), str):
                        out.append(block[key])
                out += _texts(block.get("content"))
    return out


def view(body: Mapping[str, Any]) -> RequestView:
    """Side-request view: tools present, texts of the system prompt and messages."""
    texts = _texts(body.get("system"))
    for message in body.get("messages", []):
        if isinstance(message, Mapping):
            texts += _texts(message.get("content"))
    return RequestView(has_tools=bool(body.get("tools")), texts=tuple(texts))


def _event(data: dict[str, Any]) -> bytes:
    return sse(data, event=str(data["type"]))


def _message(ident: str, model: str, input_tokens: int) -> dict[str, Any]:
    return {
        "id": ident,
        "type": "message",
        "role": "assistant",
        "model": model,
        "content": [],
        "stop_reason": None,
        "stop_sequence": None,
        "usage": {"input_tokens": input_tokens, "output_tokens": 0},
    }


def render_stream(chunks: Sequence[Chunk], *, ident: str, model: str) -> Wire:
    """Canonical chunks -> Messages SSE events, one part per chunk.

    Input tokens belong in `message_start`, before any chunk, so the usage chunk is
    looked up ahead; output tokens go in `message_delta` as the API does.
    """
    usage = find_usage(chunks) or {}
    wire = Wire(
        head=_event(
            {
                "type": "message_start",
                "message": _message(ident, model, usage.get("inputTokens", 0)),
            }
        )
    )
    slots: dict[int, int] = {}
    for chunk in chunks:
        kind = chunk.get("type")
        block = int(chunk.get("index", 0))
        part = b""
        if kind == "block-start" and chunk.get("blockType") in ("text", "reasoning"):
            slots[block] = len(slots)
            content: dict[str, Any] = (
                {"type": "text", "text": ""}
                if chunk.get("blockType") == "text"
                else {"type": "thinking", "thinking": "", "signature": ""}
            )
            part = _event(
                {"type": "content_block_start", "index": slots[block], "content_block": content}
            )
        elif kind == "tool-call-delta":
            if block not in slots:
                # A tool_use block is opened by its first delta, which carries id and name.
                slots[block] = len(slots)
                content = {
                    "type": "tool_use",
                    "id": chunk.get("id"),
                    "name": chunk.get("name", ""),
                    "input": {},
                }
                part = _event(
                    {"type": "content_block_start", "index": slots[block], "content_block": content}
                )
            fragment = str(chunk.get("argumentsDelta", ""))
            if fragment:
                delta = {"type": "input_json_delta", "partial_json": fragment}
                part += _event(
                    {"type": "content_block_delta", "index": slots[block], "delta": delta}
                )
        elif kind in ("text-delta", "reasoning-delta") and block in slots:
            text = str(chunk.get("text", ""))
            delta = (
                {"type": "text_delta", "text": text}
                if kind == "text-delta"
                else {"type": "thinking_delta", "thinking": text}
            )
            part = _event({"type": "content_block_delta", "index": slots[block], "delta": delta})
        elif kind == "block-end" and block in slots:
            part = _event({"type": "content_block_stop", "index": slots[block]})
        elif (fin := finish_of(chunk)) is not None:
            finish, failure = fin
            if finish in FAILED_KINDS:
                status = int(failure.get("status", 500))
                part = sse(
                    anthropic_error(str(failure.get("message", "provider error")), status),
                    event="error",
                )
            else:
                stop = {"stop_reason": _STOP_REASONS.get(finish, "end_turn"), "stop_sequence": None}
                counts = {"output_tokens": usage.get("outputTokens", 0)}
                part = _event({"type": "message_delta", "delta": stop, "usage": counts})
                part += _event({"type": "message_stop"})
        wire.parts.append(part)
    return wire


def render_full(chunks: Sequence[Chunk], *, ident: str, model: str) -> dict[str, Any]:
    """Canonical chunks -> one non-streaming `message` object."""
    whole = assemble(chunks)
    usage = whole.usage or {}
    message = _message(ident, model, usage.get("inputTokens", 0))
    content: list[dict[str, Any]] = []
    if whole.reasoning is not None:
        content.append({"type": "thinking", "thinking": whole.reasoning, "signature": ""})
    if whole.text is not None:
        content.append({"type": "text", "text": whole.text})
    for call in whole.tool_calls:
        try:
            arguments = json.loads(call["arguments"] or "{}")
        except ValueError:
            arguments = {}  # a scripted malformed JSON string cannot be an object here
        content.append(
            {"type": "tool_use", "id": call["id"], "name": call["name"], "input": arguments}
        )
    message["content"] = content
    message["stop_reason"] = _STOP_REASONS.get(whole.finish or "stop", "end_turn")
    message["usage"]["output_tokens"] = usage.get("outputTokens", 0)
    return message
