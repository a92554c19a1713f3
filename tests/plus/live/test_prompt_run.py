"""How a prompt settles (`acp_plus.live.prompt_run.PromptRun.hold`): after its turn it
waits for the agent's children, a notice reaching the idle agent meanwhile wakes a turn,
and the prompt answers for the last turn."""

from __future__ import annotations

import asyncio
from typing import Any

from acp_plus.live.prompt_run import PromptRun


class StubAgent:
    """Stand-in for `Agent`: `waiter` reports whether a child ran (and delivered)."""

    def __init__(self, waits: list[Any]) -> None:
        self.waits = waits
        self.waiter = self._wait if waits is not None else None

    async def _wait(self) -> bool:
        step = self.waits.pop(0)
        return bool(await step() if callable(step) else step)


async def test_without_children_the_first_turn_answers() -> None:
    run = PromptRun(holding=True)
    agent = StubAgent([False])
    assert await run.hold(agent, {"kind": "error"}) == {"kind": "error"}  # type: ignore[arg-type]
    assert not run.holding


async def test_a_turn_woken_by_a_childs_notice_answers_for_the_prompt() -> None:
    run = PromptRun(holding=True)

    async def notice() -> bool:  # the child ends; its notice wakes a turn meanwhile
        async def woken_turn() -> dict[str, str]:
            return {"kind": "completed"}

        assert run.wake(woken_turn)
        return True

    agent = StubAgent([notice, False])
    reason = await run.hold(agent, {"kind": "error"})  # type: ignore[arg-type]
    assert reason == {"kind": "completed"}
    assert not run.wake(lambda: asyncio.sleep(0))  # settled: nothing wakes it any more


async def test_a_cancel_ends_the_wait_for_children() -> None:
    run = PromptRun(holding=True)
    never = asyncio.Event()

    async def child_runs_forever() -> bool:
        await never.wait()
        return True

    agent = StubAgent([child_runs_forever])
    holding = asyncio.ensure_future(run.hold(agent, {"kind": "completed"}))  # type: ignore[arg-type]
    await asyncio.sleep(0.01)
    assert not holding.done()
    run.cancel()
    assert await asyncio.wait_for(holding, 1) == {"kind": "completed"}


async def test_a_child_that_settles_just_before_the_wait_still_answers() -> None:
    # Under load the child's notice can wake a turn after the hold's check and before
    # its wait begins; the wait then finds no child running, and the woken turn must
    # still be awaited (workflow-agent-message failed once in several loaded runs).
    run = PromptRun(holding=True)

    async def settled_meanwhile() -> bool:
        async def woken_turn() -> dict[str, str]:
            return {"kind": "completed"}

        assert run.wake(woken_turn)
        return False  # no child runs any more

    agent = StubAgent([settled_meanwhile, False])
    assert await run.hold(agent, {"kind": "error"}) == {"kind": "completed"}  # type: ignore[arg-type]
