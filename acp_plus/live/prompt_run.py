"""The prompt holding a session's slot, and how it settles (§3.2).

Native settles a prompt only once its agent stays idle and none of the agent's children
runs. A notice that reaches the idle agent meanwhile (a child's, a job's) wakes a turn of
the agent's own, and the prompt answers for the last turn, whatever the first one's end:
a turn that failed while a child still ran is followed by the turn its child's notice
wakes (`scenarios/tools/subagent-parent-fails`). A session's goal driver may also
give the settling prompt a turn (`Settling`): its next goal round, which the prompt then
answers for (`live.goal_rounds`).
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from acp_plus.core.agent import Agent

Reason = Mapping[str, Any] | None
Turn = Callable[[], Awaitable[Any]]
Settling = Callable[[], Turn | None]
"""Asked when the prompt would settle (its agent idle, no child running): a turn the
prompt holds for instead, or None."""


@dataclass
class PromptRun:
    """State of the prompt holding a session's slot."""

    cancel_requested: bool = False
    turn: int | None = None
    delivery_failure: str | None = None
    holding: bool = False  # from its first turn's start until it settles (`hold`)
    woken: asyncio.Future[Any] | None = None  # a turn a notice woke meanwhile
    cancelled: asyncio.Event = field(default_factory=asyncio.Event)
    done: asyncio.Event = field(default_factory=asyncio.Event)  # answered (or failed)

    def cancel(self) -> None:
        self.cancel_requested = True
        self.cancelled.set()

    def wake(self, turn: Turn) -> bool:
        """Start `turn` for a notice reaching the idle agent while this prompt holds;
        False when it does not hold (or a woken turn already takes the notice)."""
        if not self.holding or self.woken is not None or self.cancel_requested:
            return False
        self.woken = asyncio.ensure_future(turn())
        self.turn = None  # the woken turn's own delivery failure counts too
        return True

    async def hold(
        self, agent: Agent | None, reason: Reason, settling: Settling | None = None
    ) -> Reason:
        """Wait, after the prompt's turn, until no woken turn and no child is left; the
        last turn's end reason (the first one's when nothing woke)."""
        try:
            while agent is not None and not self.cancel_requested:
                if self.woken is not None:
                    woken, self.woken = self.woken, None
                    with contextlib.suppress(asyncio.CancelledError):
                        reason = await woken
                    continue
                children = agent.waiter is not None and await self._children(agent.waiter)
                if children or self.woken is not None:
                    continue  # (a child that settled just before the wait began woke a turn)
                if settling is not None and (turn := settling()) is not None:
                    self.wake(turn)  # holding, nothing woken, not cancelled: it takes it
                    continue
                break
            return reason
        finally:
            self.holding = False

    async def _children(self, waiter: Callable[[], Awaitable[bool]]) -> bool:
        """Whether a child ran and something reached the agent; False at once when no
        child runs, or when the prompt is cancelled meanwhile."""
        waiting = asyncio.ensure_future(waiter())
        cancelled = asyncio.ensure_future(self.cancelled.wait())
        try:
            await asyncio.wait({waiting, cancelled}, return_when=asyncio.FIRST_COMPLETED)
        finally:
            waiting.cancel()
            cancelled.cancel()
        return waiting.done() and not waiting.cancelled() and bool(waiting.result())
