"""The round driver (`acp_plus.live.goal_rounds`) over an in-process session and agent:
which turn it starts when a turn ends, when it blocks, pauses or disarms the goal, and
that a closing session starts nothing. The wire behaviour is the goal scenarios'
(`scenarios/tools/goal-*.yaml`, recorded from native)."""

from __future__ import annotations

import asyncio
from typing import Any

from acp_plus.core import goals
from acp_plus.core.agent import Route
from acp_plus.core.events import user_message, with_source
from acp_plus.core.tools.goal_family import GoalBook
from acp_plus.live.goal_rounds import GoalRounds

GID = "goal-0f8b6a8e-6a0e-4d3c-9a51-2c1e5b7d9f00"


class Log:
    def __init__(self) -> None:
        self.items: list[dict[str, Any]] = []
        self.synced = 0

    def events(self) -> list[dict[str, Any]]:
        return list(self.items)

    def sync(self) -> None:
        self.synced += 1


class Agent:
    """Commits turns as `core.agent.Agent` does; a round can be made to hang."""

    def __init__(self) -> None:
        self.log = Log()
        self.on_event: Any = lambda event: None
        self.running = False
        self.hang = False
        self.waiter: Any = None
        self.turns = 0

    def commit(self, event: Any) -> dict[str, Any]:
        self.log.items.append(dict(event))
        self.on_event(dict(event))
        return dict(event)

    def defer(self, note: Any) -> None:
        raise AssertionError("no tool runs here")

    async def run_turn(self, content: Any, route: Any, source: Any = None) -> Any:
        self.turns += 1
        self.running = True
        self.commit({"type": "turn/start", "turn": self.turns})
        self.commit(with_source(user_message("m", self.turns, content), source))
        try:
            if self.hang:
                await asyncio.Event().wait()
            await asyncio.sleep(0)
        except asyncio.CancelledError:
            self.running = False
            self.commit({"type": "turn/end", "turn": self.turns, "reason": {"kind": "aborted"}})
            raise
        self.running = False
        self.commit({"type": "turn/end", "turn": self.turns, "reason": {"kind": "completed"}})
        return {"kind": "completed"}


class Queue:
    async def drain(self) -> None:
        return None


class Session:
    def __init__(self) -> None:
        self.id = "s"
        self.run: Any = None
        self.closing = False
        self.commands: set[asyncio.Task[Any]] = set()
        self.queue = Queue()
        self.settling: Any = None
        self.on_settled: list[Any] = []

    def turn_route(self) -> Route:
        return Route("mock", "mock")


def _driven(rounds: int = 2) -> tuple[Session, Agent, GoalRounds]:
    session, agent = Session(), Agent()
    driver = GoalRounds(session, agent, GoalBook())  # type: ignore[arg-type]
    agent.log.items.append(goals.create(goals.GoalState(), "Fix it", rounds, GID, 1))
    driver.goal.activation = "armed"  # as create_goal leaves it
    return session, agent, driver


async def _settle(session: Session) -> None:
    for _ in range(50):
        await asyncio.sleep(0.01)
        if not session.commands:
            return


def _rounds(agent: Agent) -> list[Any]:
    return [e["goal"]["round"] for e in agent.log.items if e.get("source") == "goal-round"]


async def test_rounds_follow_a_turn_until_the_limit_blocks_the_goal() -> None:
    session, agent, _driver = _driven(rounds=2)
    await agent.run_turn([], None)  # the person's turn that created the goal
    await _settle(session)
    assert _rounds(agent) == [1, 2]
    first = next(e for e in agent.log.items if e.get("source") == "goal-round")
    assert first["content"][0]["text"] == goals.round_prompt(
        {"objective": "Fix it", "maxGoalRounds": 2}, 1
    )
    last = agent.log.items[-1]
    assert last["type"] == goals.GOAL_CHANGE and last["operation"] == "block"
    assert last["goal"]["blockedReason"] == {
        "code": "round-limit",
        "message": "Goal reached its configured limit of 2 rounds.",
    }


async def test_a_cancelled_round_pauses_the_goal_and_no_round_follows() -> None:
    session, agent, driver = _driven()
    await agent.run_turn([], None)
    agent.hang = True  # before the driver's task first runs: its round hangs
    await asyncio.sleep(0.05)
    assert _rounds(agent) == [1]
    for task in list(session.commands):  # session/cancel
        task.cancel()
    await _settle(session)
    state = goals.fold(agent.log.events())
    assert state.goal is not None and state.goal["phase"] == "paused"
    assert driver.goal.activation == "disarmed" and _rounds(agent) == [1]


async def test_a_cancelled_prompt_disarms_and_a_closing_session_starts_nothing() -> None:
    session, agent, driver = _driven()
    agent.commit({"type": "turn/start", "turn": 1})
    agent.commit({"type": "turn/end", "turn": 1, "reason": {"kind": "aborted"}})
    await _settle(session)
    assert driver.goal.activation == "disarmed" and _rounds(agent) == []
    closing, quiet, _ = _driven()
    closing.closing = True
    await quiet.run_turn([], None)
    await _settle(closing)
    assert _rounds(quiet) == []


async def test_a_failed_or_cut_turn_disarms_the_goal_and_keeps_its_phase() -> None:
    for kind in ("error", "max-tokens"):
        session, agent, driver = _driven()
        agent.commit({"type": "turn/start", "turn": 1})
        agent.commit({"type": "turn/end", "turn": 1, "reason": {"kind": kind}})
        await _settle(session)
        state = goals.fold(agent.log.events())
        assert driver.goal.activation == "disarmed" and _rounds(agent) == []
        assert state.goal is not None and state.goal["phase"] == "active"


class Run:
    """A prompt in flight, as `PromptRun` looks to the driver."""

    def __init__(self, holding: bool = True) -> None:
        self.holding = holding
        self.woken: Any = None
        self.cancel_requested = False
        self.done = asyncio.Event()

    def wake(self, turn: Any) -> bool:
        self.woken = asyncio.ensure_future(turn())
        return True


async def test_a_goal_change_is_checkpointed_and_the_prompt_answers_before_the_round() -> None:
    session, agent, _driver = _driven()
    session.run = run = Run()
    agent.commit(goals.create(goals.GoalState(), "Fix it", 2, GID, 1))  # create_goal's change
    await agent.run_turn([], None)  # the prompt's turn ends: a checkpoint is due
    assert session.settling() is None  # so the prompt settles without a round
    run.holding = False  # (its hold ends: no child runs)
    await asyncio.sleep(0.02)
    assert agent.log.synced == 1 and _rounds(agent) == []  # it waits for the answer
    session.run = None
    run.done.set()
    await _settle(session)
    assert _rounds(agent) == [1, 2] and agent.log.synced == 3  # and after each round


async def test_a_prompt_sent_during_the_checkpoint_goes_first_and_holds_for_the_round() -> None:
    session, agent, _driver = _driven()
    session.run = first = Run()
    agent.commit(goals.create(goals.GoalState(), "Fix it", 1, GID, 1))
    await agent.run_turn([], None)
    assert session.settling() is None
    first.holding = False
    session.run = None
    first.done.set()
    session.run = Run(holding=False)  # the client's next prompt, before the round
    await _settle(session)
    assert _rounds(agent) == []
    session.run.holding = True
    await agent.run_turn([], None)  # its turn ends, no checkpoint due: the round is queued
    turn = session.settling()
    assert turn is not None and _rounds(agent) == []
    await turn()  # the prompt holds for it (`PromptRun.hold`)
    assert _rounds(agent) == [1]


async def test_a_round_waits_for_the_agents_children() -> None:
    session, agent, _driver = _driven(rounds=1)
    children = asyncio.Event()

    async def waiter() -> bool:
        await children.wait()
        return False

    agent.waiter = waiter
    await agent.run_turn([], None)
    await asyncio.sleep(0.02)
    assert _rounds(agent) == []
    children.set()
    await _settle(session)
    assert _rounds(agent) == [1]
