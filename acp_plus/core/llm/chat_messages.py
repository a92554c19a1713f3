"""Canonical parity-stream requests as chat-completions `messages` and `tools` (pure,
apart from `inline_images`, which reads the stored image bytes it is given a reader for)."""

from __future__ import annotations

import base64
import logging
from collections.abc import Callable
from typing import Any

from acp_plus.core.llm.base import ModelRequest

log = logging.getLogger(__name__)

ReadAttachment = Callable[[str], bytes]
"""The bytes of a stored image by digest (`AttachmentStore.read`); raises when unavailable."""

IMAGE_UNAVAILABLE_TEXT = "[image unavailable: the attachment is missing or corrupt]"


def _text_of(blocks: list[dict[str, Any]], kind: str) -> str:
    return "".join(str(b.get("text", "")) for b in blocks if b.get("type") == kind)


def _user_content(blocks: list[dict[str, Any]]) -> str | list[dict[str, Any]]:
    if all(b.get("type") == "text" for b in blocks):
        return _text_of(blocks, "text")
    parts: list[dict[str, Any]] = []
    for b in blocks:
        if b.get("type") == "text":
            parts.append({"type": "text", "text": b.get("text", "")})
        elif b.get("type") == "image" and b.get("data"):
            url = f"data:{b.get('mimeType', 'image/png')};base64,{b['data']}"
            parts.append({"type": "image_url", "image_url": {"url": url}})
        elif b.get("type") == "image":
            # No bytes could be found for this reference: say so rather than drop it.
            parts.append({"type": "text", "text": IMAGE_UNAVAILABLE_TEXT})
    return parts


def inline_images(messages: list[dict[str, Any]], read: ReadAttachment) -> list[dict[str, Any]]:
    """`messages` with each stored image reference (`digest`) given its base64 `data`.

    The session log keeps digests only; chat completions needs the bytes inline (as a
    data URL). A reference `read` cannot serve stays without data and is sent as
    `IMAGE_UNAVAILABLE_TEXT`: one damaged attachment must not break every later turn.
    Blocking (reads files): run it in a worker thread.
    """
    out: list[dict[str, Any]] = []
    for message in messages:
        content = message.get("content")
        if not isinstance(content, list):
            out.append(message)
            continue
        blocks: list[Any] = []
        for block in content:
            digest = block.get("digest") if isinstance(block, dict) else None
            if block.get("type") == "image" and "data" not in block and isinstance(digest, str):
                try:
                    data = base64.b64encode(read(digest)).decode("ascii")
                    block = {**block, "data": data}
                except Exception as exc:
                    log.warning("image %s left out of the request: %s", digest, exc)
            blocks.append(block)
        out.append({**message, "content": blocks})
    return out


def to_chat_messages(req: ModelRequest) -> list[dict[str, Any]]:
    """The chat-completions `messages` for a canonical request.

    Assistant `reasoning_content` is sent back: DeepSeek requires it for steps that
    called tools and ignores it otherwise.
    """
    out: list[dict[str, Any]] = []
    if req.system:
        out.append({"role": "system", "content": req.system})
    for msg in req.messages:
        role, blocks = msg.get("role"), list(msg.get("content", []))
        if role == "user":
            out.append({"role": "user", "content": _user_content(blocks)})
        elif role == "assistant":
            entry: dict[str, Any] = {"role": "assistant", "content": _text_of(blocks, "text")}
            reasoning = _text_of(blocks, "reasoning")
            if reasoning:
                entry["reasoning_content"] = reasoning
            calls = [
                {
                    "id": b["id"],
                    "type": "function",
                    "function": {"name": b["name"], "arguments": b.get("arguments") or "{}"},
                }
                for b in blocks
                if b.get("type") == "tool-call"
            ]
            if calls:
                entry["tool_calls"] = calls
                entry["content"] = entry["content"] or None
            out.append(entry)
        elif role == "tool":
            text = _text_of(blocks, "text")
            out.append({"role": "tool", "tool_call_id": msg.get("toolCallId"), "content": text})
    return out


def to_chat_tools(tools: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The chat-completions `tools` for canonical tool specs."""
    return [
        {
            "type": "function",
            "function": {
                "name": t["name"],
                "description": t.get("description", ""),
                "parameters": t.get("parameters") or {"type": "object", "properties": {}},
            },
        }
        for t in tools
    ]
