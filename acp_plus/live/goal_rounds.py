"""The round driver: a live session with an active, armed goal keeps working on it.

Native's goal-round driver, as its ACP bridge shows it: when a turn ends and the
session is idle (no prompt in flight, no turn running), an active armed goal gets its
next round, a turn of the agent's own whose user message is the `<goal_round>` prompt
(the client sees that turn's updates without having prompted, after the prompt's
answer). A goal that has used its rounds is blocked instead (`round-limit`). A
cancelled round pauses its goal; any other cancelled turn, or one that hit the token
ceiling or failed (a provider error), disarms it (phase kept: a person's `resume` rearms
it). A session that closes stops its rounds without touching the goal, so a resumed
session finds it active and disarmed.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from acp_plus.core import goals
from acp_plus.core.events import text_block

if TYPE_CHECKING:
    from acp_plus.core.agent import Agent
    from acp_plus.core.tools.goal_family import GoalBook, GoalSession
    from acp_plus.live.sessions import LiveSession

IDLE_POLL = 0.02  # seconds between looks at a busy session (as a prompt waits for one)


class GoalRounds:
    """One live session's goal continuation; `observe` sees every committed event."""

    def __init__(self, session: LiveSession, agent: Agent, book: GoalBook) -> None:
        self.session = session
        self.agent = agent
        self.book = book
        self.goal: GoalSession = book.attach(session.id, agent, agent.log.events)
        self._task: asyncio.Task[None] | None = None
        self._requested = False
        self._cancelled_round: dict[str, Any] | None = None
        forward = agent.on_event
        agent.on_event = lambda event: self._observe(event, forward)

    def _observe(self, event: dict[str, Any], forward: Callable[[dict[str, Any]], None]) -> None:
        forward(event)
        if event.get("type") != "turn/end":
            return
        kind = event.get("reason", {}).get("kind")
        if kind == "aborted":
            opened = _round_of(goals.open_turn(self.agent.log.events()))
            if opened is None:
                self.goal.activation = "disarmed"
            else:
                self._cancelled_round = opened  # paused once the session is idle
        elif kind in ("max-tokens", "error"):  # a failed turn never retries by itself
            self.goal.activation = "disarmed"
        self._requested = True
        self._schedule()

    def _schedule(self) -> None:
        if self.session.closing or (self._task is not None and not self._task.done()):
            return
        task = asyncio.get_running_loop().create_task(self._drive())
        self._task = task
        # In the session's commands: session/cancel and close stop a round as a prompt.
        self.session.commands.add(task)
        task.add_done_callback(self._done)

    def _done(self, task: asyncio.Task[None]) -> None:
        self.session.commands.discard(task)
        if self._requested and not self.session.closing:
            self._schedule()  # a round cancelled mid-turn: settle it once idle

    async def _idle(self) -> bool:
        """Wait until no prompt is in flight and no turn runs; False once closing."""
        await asyncio.sleep(0)  # the prompt that just ended answers first
        while self.session.run is not None or self.agent.running:
            if self.session.closing:
                return False
            await asyncio.sleep(IDLE_POLL)
        return not self.session.closing

    async def _drive(self) -> None:
        while self._requested:
            self._requested = False
            if not await self._idle():
                return
            self._settle_cancelled()
            state = self.goal.state()
            goal = state.goal
            if goal is None or goal["phase"] != "active" or self.goal.activation != "armed":
                continue
            ref = (goal["id"], goal["revision"])
            if state.rounds_started >= goal["maxGoalRounds"]:
                limit = goal["maxGoalRounds"]
                message = f"Goal reached its configured limit of {limit} rounds."
                self.goal.apply(goals.block(state, ref, "round-limit", message, _now()))
                continue
            route = self.session.turn_route()
            if route is None:
                continue
            number = state.rounds_started + 1
            prompt = [text_block(goals.round_prompt(goal, number))]
            admitted = {"id": ref[0], "revision": ref[1], "round": number}
            source = {"source": goals.ROUND_SOURCE, "goal": admitted}
            self._requested = True  # after this round, look again
            await self.agent.run_turn(prompt, route, source)
            await self.session.queue.drain()

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
