"""OpenAI Chat Completions dialect (`POST /v1/chat/completions`), pure renderers.

Streams carry `choices[0].delta` with `content`, DeepSeek-style `reasoning_content`
and `tool_calls` (a call's first delta has its id and name, later ones only argument
fragments); the finish chunk has `finish_reason`; with `stream_options.include_usage`
a last chunk with empty `choices` carries `usage`. A failure after the stream started
is an `{"error": ...}` data event, which the official SDK raises as an APIError.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from parity.fakellm.script import Chunk, RequestView
from parity.fakellm.wire import (
    FAILED_KINDS,
    Wire,
    assemble,
    failure_fields,
    field_problem,
    finish_of,
    openai_error,
    sse,
)

_FINISH_REASONS = {"stop": "stop", "tool-calls": "tool_calls", "max-tokens": "length"}

DONE = sse("[DONE]")


def problem(body: Any) -> str | None:
    """Why `body` is not a chat-completions request, or None."""
    return field_problem(body, "messages", list, "a list")


def _texts(content: Any) -> list[str]:
    if isinstance(content, str):
        return [content]
    if isinstance(content, list):
        return [str(p["text"]) for p in content if isinstance(p, Mapping) and "text" in p]
    return []


def view(body: Mapping[str, Any]) -> RequestView:
    """Side-request view: tools present, texts of every message."""
    texts: list[str] = []
    for message in body.get("messages", []):
        if isinstance(message, Mapping):
            texts += _texts(message.get("content"))
    has_tools = bool(body.get("tools") or body.get("functions"))
    return RequestView(has_tools=has_tools, texts=tuple(texts))


def usage_json(usage: Mapping[str, int]) -> dict[str, Any]:
    """parity-stream usage counts -> OpenAI `usage`."""
    prompt = int(usage.get("inputTokens", 0))
    completion = int(usage.get("outputTokens", 0))
    out: dict[str, Any] = {
        "prompt_tokens": prompt,
        "completion_tokens": completion,
        "total_tokens": prompt + completion,
    }
    if "reasoningTokens" in usage:
        out["completion_tokens_details"] = {"reasoning_tokens": int(usage["reasoningTokens"])}
    return out


def render_stream(chunks: Sequence[Chunk], *, ident: str, model: str, include_usage: bool) -> Wire:
    """Canonical chunks -> chat.completion.chunk SSE events, one part per chunk."""

    def event(delta: dict[str, Any], finish: str | None = None) -> bytes:
        choice = {"index": 0, "delta": delta, "finish_reason": finish}
        return sse({**base, "choices": [choice]})

    base: dict[str, Any] = {
        "id": ident,
        "object": "chat.completion.chunk",
        "created": 0,
        "model": model,
    }
    wire = Wire(head=event({"role": "assistant"}))
    tool_slots: dict[int, int] = {}
    usage: Mapping[str, int] | None = None
    for chunk in chunks:
        kind = chunk.get("type")
        part = b""
        if kind == "text-delta":
            part = event({"content": chunk.get("text", "")})
        elif kind == "reasoning-delta":
            part = event({"reasoning_content": chunk.get("text", "")})
        elif kind == "tool-call-delta":
            block = int(chunk.get("index", 0))
            fragment = str(chunk.get("argumentsDelta", ""))
            if block not in tool_slots:
                tool_slots[block] = len(tool_slots)
                first = {
                    "index": tool_slots[block],
                    "id": chunk.get("id"),
                    "type": "function",
                    "function": {"name": chunk.get("name", ""), "arguments": ""},
                }
                part = event({"tool_calls": [first]})
            if fragment:
                more = {"index": tool_slots[block], "function": {"arguments": fragment}}
                part += event({"tool_calls": [more]})
        elif kind == "usage":
            usage = chunk.get("usage")
        elif (fin := finish_of(chunk)) is not None:
            finish, failure = fin
            if finish in FAILED_KINDS:
                part = sse(openai_error(*failure_fields(failure)))
            else:
                part = event({}, _FINISH_REASONS.get(finish, "stop"))
                if include_usage and usage is not None:
                    part += sse({**base, "choices": [], "usage": usage_json(usage)})
                part += DONE
        wire.parts.append(part)
    return wire


def render_full(chunks: Sequence[Chunk], *, ident: str, model: str) -> dict[str, Any]:
    """Canonical chunks -> one non-streaming `chat.completion` object."""
    whole = assemble(chunks)
    message: dict[str, Any] = {"role": "assistant", "content": whole.text}
    if whole.reasoning is not None:
        message["reasoning_content"] = whole.reasoning
    if whole.tool_calls:
        message["tool_calls"] = [
            {
                "id": call["id"],
                "type": "function",
                "function": {"name": call["name"], "arguments": call["arguments"]},
            }
            for call in whole.tool_calls
        ]
    choice = {
        "index": 0,
        "message": message,
        "finish_reason": _FINISH_REASONS.get(whole.finish or "stop", "stop"),
    }
    out: dict[str, Any] = {
        "id": ident,
        "object": "chat.completion",
        "created": 0,
        "model": model,
        "choices": [choice],
    }
    if whole.usage is not None:
        out["usage"] = usage_json(whole.usage)
    return out
