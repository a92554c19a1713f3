"""Helpers shared by the fake LLM tests."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable
from typing import Any

from parity.fakellm.run import Run
from parity.scenario.model import Tool

OpenRun = Callable[..., Run]
"""The `open_run` fixture: `open_run(llm, tools=None) -> Run`."""


def tool(name: str = "echo", text: str = "tool result", **extra: Any) -> Tool:
    """A fixture tool with one text result block."""
    return Tool(
        name=name,
        description="Return a deterministic result.",
        parameters={"type": "object", "properties": {}},
        content=[{"type": "text", "text": text}],
        **extra,
    )


async def wait_for(predicate: Callable[[], bool], timeout: float = 5.0) -> None:
    """Poll `predicate` every 5 ms (like the contract harness's waitFor)."""
    deadline = time.monotonic() + timeout
    while not predicate():
        if time.monotonic() > deadline:
            raise AssertionError("condition not met in time")
        await asyncio.sleep(0.005)


def aborted(run: Run, index: int = -1) -> Callable[[], bool]:
    """A predicate: the run's request `index` was recorded as aborted."""

    def check() -> bool:
        return bool(run.requests) and run.requests[index].aborted

    return check
