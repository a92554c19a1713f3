"""Images in the history: what the model view keeps, and what a text-only model sees."""

from __future__ import annotations

from typing import Any

import pytest

from acp_plus.core.history import (
    IMAGE_OMITTED_TEXT,
    accepts_images,
    build_messages,
    images_as_text,
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
