"""One step's tool calls, scheduled as native schedules them.

Native's agent loop (0.2.1-rc.2 and 0.1.0-rc.8 alike) cuts a step's calls, in model order,
into exclusive barriers (one call each) and parallel pools: a maximal run of calls whose
tool declares itself concurrency-safe (`read`, `read_image`, `subagent`,
`subagent_fork`) for arguments its schema accepts. A pool's calls start one after the
other (each announced, then asked about, then dispatched; the next starts once the one
before is dispatched or already has its result), up to ten at once, and run together;
their results are committed in model order as soon as every earlier one is. So two
`read`s in one answer show the client both `tool_call`s before either result.
"""

from __future__ import annotations

import asyncio
import contextlib
import contextvars
from collections.abc import Callable, Coroutine, Sequence
from typing import Any

from acp_plus.core.tools.base import Tool, ToolResult

MAX_PARALLEL = 10
"""Native's `maxParallelToolCalls` default: calls of a pool in flight at once."""

DISPATCHED: contextvars.ContextVar[asyncio.Event | None] = contextvars.ContextVar(
    "DISPATCHED", default=None
)
"""Set (in a pool call's own task) once the call is past its checks and approval and its
tool's body runs: the moment native starts the pool's next call."""


def dispatching() -> None:
    """Mark the running pool call dispatched (nothing outside a pool)."""
    event = DISPATCHED.get()
    if event is not None:
        event.set()


def concurrency_safe(tool: Tool | None, args: Any) -> bool:
    """Native's classification: a tool that declares itself concurrency-safe, called
    with arguments its parameter schema accepts (anything else is exclusive)."""
    if tool is None or not getattr(tool, "concurrency_safe", False):
        return False
    if not isinstance(args, dict):
        return False
    # Imported on the first call: jsonschema (with referencing and attrs) was some 40 ms of
    # the agent's start-up, and a session whose model calls no concurrency-safe tool
    # never needs it.
    from jsonschema import Draft202012Validator

    return Draft202012Validator(tool.parameters).is_valid(args)


def groups(calls: Sequence[Any], safe: Callable[[Any], bool]) -> list[list[Any]]:
    """`calls` in model order, cut into exclusive barriers and parallel pools (each call
    classified once)."""
    cut: list[list[Any]] = []
    pooled = False  # whether the last group is a pool
    for call in calls:
        if safe(call):
            if pooled:
                cut[-1].append(call)
            else:
                cut.append([call])
            pooled = True
        else:
            cut.append([call])
            pooled = False
    return cut


Announce = Callable[[dict[str, Any]], None]
Result = Callable[[dict[str, Any]], Coroutine[Any, Any, ToolResult]]
Settle = Callable[[dict[str, Any], ToolResult], None]


async def run_pool(
    calls: Sequence[dict[str, Any]],
    announce: Announce,
    result: Result,
    settle: Settle,
    check_cancel: Callable[[], None],
) -> None:
    """Run a pool: start each call once the one before is dispatched, at most
    `MAX_PARALLEL` in flight, and settle the results in model order. Cancelled, it
    settles what is done and cancels what runs, in model order (a running tool commits
    its own cancelled result), then re-raises."""
    tasks: list[asyncio.Task[ToolResult]] = []
    settled = 0
    dispatched_any = False

    def settle_ready(limit: int) -> None:
        nonlocal settled
        while settled < limit and tasks[settled].done():
            settle(calls[settled], tasks[settled].result())
            settled += 1

    try:
        for call in calls:
            check_cancel()
            while len(tasks) - settled >= MAX_PARALLEL:
                await asyncio.wait(tasks[settled:], return_when=asyncio.FIRST_COMPLETED)
                settle_ready(len(tasks))
            announce(call)
            dispatched = asyncio.Event()
            context = contextvars.copy_context()
            context.run(DISPATCHED.set, dispatched)
            task = asyncio.get_running_loop().create_task(result(call), context=context)
            tasks.append(task)
            waiting = asyncio.ensure_future(dispatched.wait())
            try:
                await asyncio.wait({task, waiting}, return_when=asyncio.FIRST_COMPLETED)
            finally:
                waiting.cancel()
            # A call refused before its body ran has its result now. A dispatched one is
            # settled once every call of the pool has started: native starts the next
            # call in a few microtasks, while a body's I/O takes whole loop turns.
            dispatched_any = dispatched_any or dispatched.is_set()
            if not dispatched_any:
                settle_ready(len(tasks))
        while settled < len(tasks):
            await asyncio.wait({tasks[settled]})
            settle_ready(len(tasks))
    except asyncio.CancelledError:
        for index in range(settled, len(tasks)):
            task = tasks[index]
            if task.done() and not task.cancelled() and task.exception() is None:
                settle(calls[index], task.result())
                continue
            task.cancel()
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await task
        raise
