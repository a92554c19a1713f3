"""Native's scheduling of one step's tool calls (`acp_plus.core.tool_schedule`): the cut
into barriers and pools, the classification, and a pool's order of announcements and
results, on stand-in calls whose timing the test controls."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from acp_plus.core.tool_schedule import (
    MAX_PARALLEL,
    concurrency_safe,
    dispatching,
    groups,
    run_pool,
)
from acp_plus.core.tools.base import ToolResult
from acp_plus.core.tools.fs_family import fs_tools
from acp_plus.core.tools.read_image import ReadImageTool


def test_consecutive_safe_calls_form_pools_and_the_rest_are_barriers() -> None:
    safe = {"r1", "r2", "r3", "r4"}
    calls = ["r1", "r2", "w", "r3", "x", "y", "r4"]
    assert groups(calls, lambda c: c in safe) == [["r1", "r2"], ["w"], ["r3"], ["x"], ["y"], ["r4"]]
    assert groups([], lambda c: True) == []


def test_read_is_safe_only_with_arguments_its_schema_accepts() -> None:
    read, write, _edit = fs_tools()
    assert concurrency_safe(read, {"file_path": "a.txt"})
    assert concurrency_safe(read, {"file_path": "a.txt", "offset": 2, "limit": 1})
    assert not concurrency_safe(read, {"file_path": 7})  # native: invalid is exclusive
    assert not concurrency_safe(read, {})
    assert not concurrency_safe(read, "not an object")
    assert not concurrency_safe(write, {"file_path": "a.txt", "content": "x"})
    assert not concurrency_safe(None, {})
    assert getattr(ReadImageTool, "concurrency_safe", False)


class Calls:
    """Stand-in calls: each is dispatched at once (or refused before dispatch) and ends
    when the test releases it; `log` records announcements and settlements in order."""

    def __init__(self, refused: frozenset[str] = frozenset()) -> None:
        self.log: list[str] = []
        self.release: dict[str, asyncio.Event] = {}
        self.refused = refused
        self.running = 0
        self.most = 0

    def announce(self, call: dict[str, Any]) -> None:
        self.log.append(f"call {call['id']}")

    async def result(self, call: dict[str, Any]) -> ToolResult:
        if call["id"] in self.refused:
            return ToolResult.text("refused", is_error=True)
        dispatching()
        self.running += 1
        self.most = max(self.most, self.running)
        try:
            await self.release.setdefault(call["id"], asyncio.Event()).wait()
        finally:
            self.running -= 1
        return ToolResult.text(call["id"])

    def settle(self, call: dict[str, Any], result: ToolResult) -> None:
        self.log.append(f"result {call['id']}")


async def settle_soon(calls: Calls, *ids: str) -> None:
    for name in ids:
        await asyncio.sleep(0.01)
        calls.release.setdefault(name, asyncio.Event()).set()


async def test_a_pool_announces_every_call_before_results_in_model_order() -> None:
    calls = Calls()
    pool = [{"id": "a"}, {"id": "b"}, {"id": "c"}]
    # "c" ends first, then "a", then "b": results still come a, b, c.
    releasing = asyncio.ensure_future(settle_soon(calls, "c", "a", "b"))
    await run_pool(pool, calls.announce, calls.result, calls.settle, lambda: None)
    await releasing
    assert calls.log == ["call a", "call b", "call c", "result a", "result b", "result c"]
    assert calls.most == 3


async def test_a_call_refused_before_dispatch_settles_before_the_next_starts() -> None:
    calls = Calls(refused=frozenset({"a"}))
    releasing = asyncio.ensure_future(settle_soon(calls, "b"))
    await run_pool(
        [{"id": "a"}, {"id": "b"}], calls.announce, calls.result, calls.settle, lambda: None
    )
    await releasing
    assert calls.log == ["call a", "result a", "call b", "result b"]


async def test_at_most_max_parallel_calls_run_at_once() -> None:
    calls = Calls()
    pool = [{"id": str(n)} for n in range(MAX_PARALLEL + 2)]
    releasing = asyncio.ensure_future(settle_soon(calls, *(c["id"] for c in pool)))
    await run_pool(pool, calls.announce, calls.result, calls.settle, lambda: None)
    await releasing
    assert calls.most == MAX_PARALLEL
    assert calls.log.index(f"call {MAX_PARALLEL}") > calls.log.index("result 0")
    assert [e for e in calls.log if e.startswith("result")] == [f"result {c['id']}" for c in pool]


async def test_a_cancelled_pool_settles_what_ended_and_stops_what_runs() -> None:
    calls = Calls()
    pool = [{"id": "a"}, {"id": "b"}, {"id": "c"}]
    task = asyncio.ensure_future(
        run_pool(pool, calls.announce, calls.result, calls.settle, lambda: None)
    )
    await asyncio.sleep(0.01)
    calls.release["b"].set()  # "b" ends, but waits behind "a", which still runs
    await asyncio.sleep(0.01)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    # "a" was cancelled (a real tool commits its own cancelled result), "b" settled.
    assert calls.log == ["call a", "call b", "call c", "result b"]
    assert calls.running == 0


async def test_a_call_that_ends_at_once_still_settles_after_the_pool_has_started() -> None:
    # Native's next start takes microtasks, a body's I/O whole loop turns: two quick
    # `read`s show both announcements first (scenarios/tools/fs-read-parallel).
    calls = Calls()
    for name in ("a", "b"):
        calls.release[name] = asyncio.Event()
        calls.release[name].set()
    pool = [{"id": "a"}, {"id": "b"}]
    await run_pool(pool, calls.announce, calls.result, calls.settle, lambda: None)
    assert calls.log == ["call a", "call b", "result a", "result b"]
