"""The approval chain: first answer wins, none or a failure fails closed."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from acp_plus.core.approvals import ApprovalChain, ApprovalRequest
from acp_plus.core.events import ApprovalOutcome

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
