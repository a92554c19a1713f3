"""Folding one step's StreamChunks: closed blocks, the abort prefix, usage, finish."""

from __future__ import annotations

from typing import Any

from plus_stream_server import error_response, reasoning_tool_call_script, text_response

from acp_plus.core.step import StepAccumulator


def _fold(chunks: list[dict[str, Any]]) -> StepAccumulator:
    step = StepAccumulator()
    for chunk in chunks:
        if step.feed(chunk) is not None:
            break
    return step


def test_only_closed_blocks_commit_and_usage_is_kept() -> None:
    step = _fold(reasoning_tool_call_script())
    assert step.finish == {"kind": "tool-calls"}
    assert [b["type"] for b in step.committed_blocks()] == ["reasoning", "tool-call"]
    assert step.usage == {"inputTokens": 8, "outputTokens": 2, "reasoningTokens": 1}


def test_error_stream_has_nothing_closed_but_an_abort_prefix() -> None:
    step = _fold(error_response("x"))
    assert step.committed_blocks() == []
    assert step.abort_prefix() == [{"type": "text", "text": "partial"}]


def test_abort_prefix_keeps_block_order_and_skips_open_tool_calls() -> None:
    step = _fold(
        [
            {"type": "block-start", "index": 0, "blockType": "reasoning"},
            {"type": "reasoning-delta", "index": 0, "text": "think"},
            {"type": "block-start", "index": 1, "blockType": "tool-call"},
            {"type": "tool-call-delta", "index": 1, "id": "c", "name": "t", "argumentsDelta": "{"},
            {"type": "block-start", "index": 2, "blockType": "text"},
            {"type": "text-delta", "index": 2, "text": "pa"},
            {"type": "text-delta", "index": 2, "text": "rt"},
        ]
    )
    assert step.finish is None
    assert step.abort_prefix() == [
        {"type": "reasoning", "text": "think"},
        {"type": "text", "text": "part"},
    ]


def test_finish_stops_folding() -> None:
    chunks = text_response("ab")
    step = StepAccumulator()
    reasons = [step.feed(c) for c in chunks]
    assert reasons[-1] == {"kind": "stop"}
    assert all(r is None for r in reasons[:-1])
