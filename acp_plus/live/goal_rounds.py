"""The round driver: a live session with an active, armed goal keeps working on it.

Native's goal-round driver, as its ACP bridge shows it: when the agent becomes idle, an
active armed goal gets its next round, a turn of the agent's own whose user message is
the `<goal_round>` prompt. A goal that has used its rounds is blocked instead
(`round-limit`). A cancelled round pauses its goal; any other cancelled turn, or one
that hit the token ceiling or failed (a provider error), disarms it (phase kept: a
person's `resume` rearms it). A session that closes stops its rounds without touching
the goal, so a resumed session finds it active and disarmed.

When the round comes is native's too. After a goal change and after each round the
driver first makes a durability checkpoint; meanwhile the prompt in flight settles and
is answered, and a prompt the client sends at once takes its turn before the round (the
round then follows that prompt's turn). With no checkpoint due, the round is queued the
moment the agent is idle, so a prompt still settling holds for it and answers for the
round's end (`PromptRun.hold`'s `settling` hook).
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from acp_plus.core import goals
from acp_plus.core.events import text_block

if TYPE_CHECKING:
    from acp_plus.core.agent import Agent
    from acp_plus.core.tools.goal_family import GoalBook, GoalSession
    from acp_plus.live.prompt_run import PromptRun, Turn
    from acp_plus.live.sessions import LiveSession

log = logging.getLogger("acp_plus.live.goal_rounds")

CHECKPOINT_FLOOR = 0.004
"""Seconds a checkpoint lasts at least. Native's flushes the session's pending writes, a
few milliseconds of real I/O, and a prompt the client sends on the answer arrives within
it (measured against the live native: a prompt sent at once goes before the round, one
sent 5 ms later after it; docs/acp-plus.md, "When the round comes"). acp-plus's log is
already durable at each commit, so its sync alone would be over before any client could
answer."""


class GoalRounds:
    """One live session's goal continuation; `observe` sees every committed event."""

    def __init__(self, session: LiveSession, agent: Agent, book: GoalBook) -> None:
        self.session = session
        self.agent = agent
        self.book = book
        self.goal: GoalSession = book.attach(session.id, agent, agent.log.events)
        self._task: asyncio.Task[None] | None = None
        self._requested = False  # the agent went idle since the driver last looked
        self._checkpoint_due = False  # a goal change, or a round, since the last one
        self._round_ran = False  # a round started since the agent was last idle
        self._cancelled_round: dict[str, Any] | None = None
        forward = agent.on_event
        agent.on_event = lambda event: self._observe(event, forward)
        session.settling = self._settling
        session.on_settled.append(self._prompt_settled)

    def _observe(self, event: dict[str, Any], forward: Callable[[dict[str, Any]], None]) -> None:
        forward(event)
        kind = event.get("type")
        if kind == goals.GOAL_CHANGE:
            self._checkpoint_due = True
            return
        if kind != "turn/end":
            return
        reason = event.get("reason", {}).get("kind")
        if reason == "aborted":
            opened = _round_of(goals.open_turn(self.agent.log.events()))
            if opened is None:
                self.goal.activation = "disarmed"
            else:
                self._cancelled_round = opened  # paused once the session is idle
        elif reason in ("max-tokens", "error"):  # a failed turn never retries by itself
            self.goal.activation = "disarmed"
        if self._round_ran:  # native drops its round attempt at idle, and checkpoints
            self._round_ran = False
            self._checkpoint_due = True
        self._requested = True
        if self.session.run is None or self._checkpoint_due:
            self._schedule()  # (the checkpoint starts now, while a prompt may still hold)
        # else the prompt holding the session asks when it would settle: `_settling`

    def _settling(self) -> Turn | None:
        """A prompt's agent is idle: its next round, queued at once when no checkpoint
        is due (the prompt holds for it); else the driver takes over."""
        if not self._requested or self.session.closing:
            return None
        if self._checkpoint_due or self._driving:
            self._schedule()
            return None
        self._requested = False
        return self._next_round()

    def _prompt_settled(self) -> None:
        if self._requested:  # a cancelled prompt settles without asking `_settling`
            self._schedule()

    @property
    def _driving(self) -> bool:
        return self._task is not None and not self._task.done()

    def _schedule(self) -> None:
        if self.session.closing or self._driving:
            return
        task = asyncio.get_running_loop().create_task(self._drive(self.session.run))
        self._task = task
        # In the session's commands: session/cancel and close stop a round as a prompt.
        self.session.commands.add(task)
        task.add_done_callback(self._done)

    def _done(self, task: asyncio.Task[None]) -> None:
        self.session.commands.discard(task)
        if self._requested and not self.session.closing and self.session.run is None:
            self._schedule()  # a round cancelled mid-turn: settle it once idle

    async def _drive(self, settling: PromptRun | None) -> None:
        """`settling`: the prompt in flight when the agent went idle (it answers first,
        unless it still holds for a child)."""
        while self._requested:
            self._requested = False
            await asyncio.sleep(0)  # the prompt that just ended answers first
            if self._checkpoint_due:
                self._checkpoint_due = False
                if not await self._checkpoint():
                    return
            if self._holder() is None and settling is not None and self.session.run is settling:
                await settling.done.wait()  # it answers before the round
            if not self._ready():
                return  # a prompt or a turn came first: its end asks again
            waiter = self.agent.waiter
            if waiter is not None and self._drivable():
                # Native's driver lets the agent's children finish before a round; what
                # they deliver meanwhile wakes a turn, whose end asks again.
                await waiter()
                if not self._ready() or self._checkpoint_due:
                    return
            turn = self._next_round()
            if turn is None:
                continue
            holder = self._holder()
            if holder is not None:  # still holding (for a child): it answers for the round
                holder.wake(turn)
                continue
            await turn()
            await self.session.queue.drain()
            settling = self.session.run

    def _holder(self) -> PromptRun | None:
        """The prompt still holding the idle agent (for its children), if any."""
        run = self.session.run
        if run is None or not run.holding or run.woken is not None or run.cancel_requested:
            return None
        return None if self.agent.running else run

    def _ready(self) -> bool:
        """The agent is idle and no prompt is to come first."""
        if self.session.closing or self.agent.running:
            return False
        return self.session.run is None or self._holder() is not None

    def _drivable(self) -> bool:
        goal = self.goal.state().goal
        return goal is not None and goal["phase"] == "active" and self.goal.activation == "armed"

    async def _checkpoint(self) -> bool:
        """Native's durability checkpoint; one that fails disarms the goal."""
        started = time.monotonic()
        try:
            await asyncio.to_thread(self.agent.log.sync)
        except Exception as exc:
            log.warning("goal round checkpoint failed: %s", exc)
            self.goal.activation = "disarmed"
            return False
        await asyncio.sleep(max(0.0, CHECKPOINT_FLOOR - (time.monotonic() - started)))
        return True

    def _next_round(self) -> Turn | None:
        """Settle a cancelled round, then the next round's turn (None: none is due; a
        goal out of rounds is blocked here)."""
        self._settle_cancelled()
        if not self._drivable():
            return None
        state = self.goal.state()
        goal = state.goal
        assert goal is not None  # _drivable: an active, armed goal
        ref = (goal["id"], goal["revision"])
        if state.rounds_started >= goal["maxGoalRounds"]:
            limit = goal["maxGoalRounds"]
            message = f"Goal reached its configured limit of {limit} rounds."
            self.goal.apply(goals.block(state, ref, "round-limit", message, _now()))
            return None
        route = self.session.turn_route()
        if route is None:
            return None
        number = state.rounds_started + 1
        prompt = [text_block(goals.round_prompt(goal, number))]
        admitted = {"id": ref[0], "revision": ref[1], "round": number}
        source = {"source": goals.ROUND_SOURCE, "goal": admitted}

        async def round_turn() -> Any:
            self._round_ran = True
            return await self.agent.run_turn(prompt, route, source)

        return round_turn

    def _settle_cancelled(self) -> None:
        """A cancelled round of the current goal pauses it (native's driver, at idle)."""
        cancelled, self._cancelled_round = self._cancelled_round, None
        if cancelled is None or self.goal.activation != "armed":
            return
        state = self.goal.state()
        goal = state.goal
        if goal is None or goal["phase"] != "active":
            return
        if (cancelled["id"], cancelled["revision"]) == (goal["id"], goal["revision"]):
            ref = (goal["id"], goal["revision"])
            self.goal.apply(goals.transition(state, ref, "pause", _now()))

    async def close(self) -> None:
        """The session closed: no more rounds, the goal left as it is."""
        self._requested = False
        self.book.detach(self.session.id, self.goal)


def _round_of(turn: list[Any]) -> dict[str, Any] | None:
    """The goal ref of a goal round's turn (None for any other turn)."""
    for event in turn:
        if event.get("type") == "user/message" and event.get("source") == goals.ROUND_SOURCE:
            found = event.get("goal")
            return dict(found) if isinstance(found, dict) else None
    return None


def _now() -> int:
    return int(time.time() * 1000)


__all__ = ["GoalRounds"]
