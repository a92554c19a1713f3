"""Canonical requests as chat-completions messages: history, tool results, images."""

from __future__ import annotations

import base64

from acp_plus.core.llm.base import ModelRequest
from acp_plus.core.llm.chat_messages import IMAGE_UNAVAILABLE_TEXT, inline_images, to_chat_messages

REF = {"type": "image", "mimeType": "image/png", "digest": "d" * 64}


def test_history_conversion_keeps_reasoning_and_tool_results() -> None:
    req = ModelRequest(
        provider="deepseek",
        model="m",
        messages=[
            {"role": "user", "content": [{"type": "text", "text": "go"}]},
            {
                "role": "assistant",
                "content": [
                    {"type": "reasoning", "text": "think"},
                    {"type": "tool-call", "id": "c1", "name": "echo", "arguments": "{}"},
                ],
            },
            {
                "role": "tool",
                "toolCallId": "c1",
                "isError": False,
                "content": [{"type": "text", "text": "r"}],
            },
        ],
    )
    assert to_chat_messages(req) == [
        {"role": "user", "content": "go"},
        {
            "role": "assistant",
            "content": None,
            "reasoning_content": "think",
            "tool_calls": [
                {"id": "c1", "type": "function", "function": {"name": "echo", "arguments": "{}"}}
            ],
        },
        {"role": "tool", "tool_call_id": "c1", "content": "r"},
    ]


def test_inline_images_reads_references_and_marks_missing_ones() -> None:
    other = {"type": "image", "mimeType": "image/gif", "digest": "e" * 64}
    messages = [{"role": "user", "content": [REF, other, {"type": "text", "text": "t"}]}]

    def read(digest: str) -> bytes:
        if digest == REF["digest"]:
            return b"png bytes"
        raise FileNotFoundError(digest)

    inlined = inline_images(messages, read)
    assert inlined[0]["content"][0]["data"] == base64.b64encode(b"png bytes").decode()
    assert "data" not in inlined[0]["content"][1]
    chat = to_chat_messages(ModelRequest("p", "m", inlined))
    assert chat == [
        {
            "role": "user",
            "content": [
                {
                    "type": "image_url",
                    "image_url": {"url": "data:image/png;base64,cG5nIGJ5dGVz"},
                },
                {"type": "text", "text": IMAGE_UNAVAILABLE_TEXT},
                {"type": "text", "text": "t"},
            ],
        }
    ]
