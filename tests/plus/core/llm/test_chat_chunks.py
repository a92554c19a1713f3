"""Streamed chat chunks folded into StreamChunks: usage mapping and unfinished streams."""

from __future__ import annotations

from acp_plus.core.llm.chat_chunks import ChatChunkMapper, map_usage


def test_usage_mapping_openai_style_cache() -> None:
    assert map_usage(
        {"prompt_tokens": 10, "completion_tokens": 1, "prompt_tokens_details": {"cached_tokens": 4}}
    ) == {"inputTokens": 6, "outputTokens": 1, "cacheReadTokens": 4}


def test_stream_without_finish_reason_is_an_error() -> None:
    mapper = ChatChunkMapper()
    # A chunk as the SDK dumps it, with the fields the mapper reads.
    mapper.feed({"choices": [{"index": 0, "delta": {"content": "x"}, "finish_reason": None}]})
    closing = mapper.close()
    assert closing[-1]["reason"]["failure"]["code"] == "EMPTY_RESPONSE"
    assert all(c["type"] != "block-end" for c in closing)
