"""Pure pieces of the core: step folding, log readings, sandbox decisions, approvals."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest
from core_support import error_response, reasoning_tool_call_script, text_response

from acp_plus.core.approvals import ApprovalChain, ApprovalRequest
from acp_plus.core.events import ApprovalOutcome
from acp_plus.core.history import (
    CANCELLED_TOOL_TEXT,
    build_messages,
    interrupted_turn,
    last_route,
    used_tokens,
)
from acp_plus.core.sandbox import command_escalation, resolve_path, write_escalation
from acp_plus.core.step import StepAccumulator
from acp_plus.updates import context_used

# -- step ------------------------------------------------------------------------------


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


# -- history ---------------------------------------------------------------------------


def test_dangling_tool_call_gets_a_failed_result_in_the_model_view_only() -> None:
    events: list[dict[str, Any]] = [
        {"type": "user/message", "content": [{"type": "text", "text": "a"}]},
        {
            "type": "assistant/message",
            "blocks": [{"type": "tool-call", "id": "c1", "name": "t", "arguments": "{}"}],
        },
        {"type": "turn/end", "turn": 1, "reason": {"kind": "interrupted"}},
        {"type": "user/message", "content": [{"type": "text", "text": "b"}]},
    ]
    messages = build_messages(events)
    assert [m["role"] for m in messages] == ["user", "assistant", "tool", "user"]
    assert messages[2] == {
        "role": "tool",
        "toolCallId": "c1",
        "isError": True,
        "content": [{"type": "text", "text": CANCELLED_TOOL_TEXT}],
    }


def test_empty_assistant_messages_are_not_sent_to_the_model() -> None:
    events: list[dict[str, Any]] = [
        {"type": "assistant/message", "blocks": [], "usage": {"inputTokens": 1, "outputTokens": 0}}
    ]
    assert build_messages(events) == []


def test_last_route_and_interrupted_turn() -> None:
    events: list[dict[str, Any]] = [
        {"type": "turn/start", "turn": 1},
        {
            "type": "route/set",
            "provider": "p",
            "model": "m",
            "effort": None,
            "explicitEffort": False,
        },
        {"type": "turn/end", "turn": 1, "reason": {"kind": "completed"}},
        {
            "type": "route/set",
            "provider": "p",
            "model": "n",
            "effort": "low",
            "explicitEffort": True,
        },
    ]
    assert last_route(events) == {
        "type": "route/set",
        "provider": "p",
        "model": "n",
        "effort": "low",
        "explicitEffort": True,
    }
    assert last_route([]) is None
    assert interrupted_turn(events) is None
    assert interrupted_turn([*events, {"type": "turn/start", "turn": 2}]) == 2
    assert interrupted_turn([]) is None


@pytest.mark.parametrize(
    "usage",
    [
        {"inputTokens": 5, "outputTokens": 11},
        {"inputTokens": 8, "outputTokens": 2, "reasoningTokens": 1},
        {"inputTokens": 3, "outputTokens": 4, "cacheReadTokens": 20, "cacheWriteTokens": 2},
    ],
)
def test_token_meter_agrees_with_the_projection(usage: dict[str, Any]) -> None:
    events = [{"type": "assistant/message", "blocks": [], "usage": usage}]
    assert used_tokens(events) == context_used(usage)


def test_token_meter_uses_the_latest_usage() -> None:
    events: list[dict[str, Any]] = [
        {"type": "assistant/message", "usage": {"inputTokens": 1, "outputTokens": 1}},
        {"type": "assistant/message", "blocks": []},
        {"type": "assistant/message", "usage": {"inputTokens": 7, "outputTokens": 3}},
    ]
    assert used_tokens(events) == 10
    assert used_tokens([]) == 0


# -- sandbox ---------------------------------------------------------------------------


def test_write_decisions(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    inside, outside = resolve_path("a/b.txt", ws), resolve_path(str(tmp_path / "x"), ws)
    assert write_escalation(inside, "workspace-write", ws) is None
    assert write_escalation(outside, "danger-full-access", ws) is None
    assert write_escalation(outside, "workspace-write", ws) == (
        f"escalate sandbox to danger-full-access: write outside the workspace: {outside}"
    )
    assert write_escalation(inside, "read-only", ws) == (
        f"escalate sandbox to workspace-write: write {inside}"
    )


def test_dotdot_and_symlinks_cannot_escape_the_workspace(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / "link").symlink_to(tmp_path)
    for sneaky in ("../x", "link/x", str(ws / ".." / "x")):
        path = resolve_path(sneaky, ws)
        reason = write_escalation(path, "workspace-write", ws)
        assert reason is not None and reason.startswith("escalate sandbox to danger-full-access")


def test_commands_need_full_access() -> None:
    assert command_escalation("ls", "danger-full-access") is None
    assert command_escalation("ls", "workspace-write") == (
        "escalate sandbox to danger-full-access: run command: ls"
    )


# -- approvals -------------------------------------------------------------------------

REQ = ApprovalRequest("s", "c", "write", {"file_path": "/x"}, "escalate sandbox to x")


def _answer(outcome: ApprovalOutcome | None, calls: list[str], tag: str) -> Any:
    async def responder(req: ApprovalRequest) -> ApprovalOutcome | None:
        calls.append(tag)
        return outcome

    return responder


async def test_first_answer_wins_and_none_passes() -> None:
    calls: list[str] = []
    chain = ApprovalChain(
        [
            _answer(None, calls, "a"),
            _answer("rejected", calls, "b"),
            _answer("allowed-once", calls, "c"),
        ]
    )
    assert await chain.decide(REQ) == "rejected"
    assert calls == ["a", "b"]


async def test_no_answer_and_failures_fail_closed() -> None:
    assert await ApprovalChain().decide(REQ) == "unavailable"
    assert await ApprovalChain([_answer(None, [], "a")]).decide(REQ) == "unavailable"

    async def broken(req: ApprovalRequest) -> ApprovalOutcome | None:
        raise RuntimeError("client went away")

    calls: list[str] = []
    chain = ApprovalChain([broken, _answer("allowed-once", calls, "later")])
    assert await chain.decide(REQ) == "unavailable"
    assert calls == []

    async def odd(req: ApprovalRequest) -> Any:
        return "allow-always"

    assert await ApprovalChain([odd]).decide(REQ) == "unavailable"


async def test_cancellation_is_not_swallowed() -> None:
    async def slow(req: ApprovalRequest) -> ApprovalOutcome | None:
        await asyncio.sleep(10)
        return None

    task = asyncio.create_task(ApprovalChain([slow]).decide(REQ))
    await asyncio.sleep(0.01)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
