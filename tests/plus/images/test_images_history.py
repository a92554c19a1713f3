"""Pure pieces of the image path: history projection and the chat request's images."""

from __future__ import annotations

import base64
from typing import Any

import pytest

from acp_plus.core.history import (
    IMAGE_OMITTED_TEXT,
    accepts_images,
    build_messages,
    images_as_text,
)
from acp_plus.core.llm.base import ModelRequest
from acp_plus.core.llm.openai_chat import (
    IMAGE_UNAVAILABLE_TEXT,
    inline_images,
    to_chat_messages,
)

REF = {"type": "image", "mimeType": "image/png", "digest": "d" * 64}


def test_build_messages_keeps_image_references_in_place() -> None:
    content = [{"type": "text", "text": "see"}, REF]
    log: list[dict[str, Any]] = [
        {"type": "turn/start", "turn": 1},
        {"type": "user/message", "content": content},
    ]
    assert build_messages(log) == [{"role": "user", "content": content}]


@pytest.mark.parametrize(
    ("modalities", "accepted"),
    [(["text", "image"], True), (["image"], True), (["text"], False), ([], False), (None, False)],
)
def test_accepts_images(modalities: list[str] | None, accepted: bool) -> None:
    assert accepts_images(modalities) is accepted


def test_images_as_text_replaces_only_images() -> None:
    text_only = {"role": "assistant", "content": [{"type": "text", "text": "ok"}]}
    messages: list[dict[str, Any]] = [
        {"role": "user", "content": [{"type": "text", "text": "a"}, REF]},
        text_only,
    ]
    out = images_as_text(messages)
    assert out[0] == {
        "role": "user",
        "content": [{"type": "text", "text": "a"}, {"type": "text", "text": IMAGE_OMITTED_TEXT}],
    }
    assert out[1] is text_only
    assert messages[0]["content"][1] is REF  # the input is not mutated


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
