"""The `goal` family as native 0.2.1-rc.2 mounts it: `create_goal`, `get_goal`,
`update_goal`, and the system-prompt paragraph that comes with them.

The goal itself lives in the session log (`core/goals.py`); a tool call reaches its
session through the `GoalBook`, where each live session is registered with its agent
(whose log the tools fold and commit to) and its activation (`armed` or `disarmed`,
never persisted: a session brought back starts disarmed). Every refusal is native's
text after `Error: `, a failed result. When a goal round completes or blocks its goal,
the closing-message instruction goes to the model after the call, as native defers it.
"""

from __future__ import annotations

import time
import uuid
from collections.abc import Callable, Mapping
from typing import Any, Protocol

from acp_plus.core import goals
from acp_plus.core.events import text_block
from acp_plus.core.goals import Activation, GoalError, GoalState
from acp_plus.core.js_json import js_trim
from acp_plus.core.tools.answering import AnsweringTool
from acp_plus.core.tools.base import Tool, ToolContext

GOAL_GUIDANCE: tuple[str, ...] = (
    "create_goal may infer goal intent from a direct human request in any language. After "
    "session resume or fork, an active goal is disarmed: when a human asks to continue or "
    "resume in any wording or language, use update_goal action resume to rearm it. Mark "
    "complete only when the objective is actually achieved. Mark blocked only after the "
    f"same blocking condition persists for at least {goals.BLOCKED_AFTER} consecutive goal "
    "rounds, and report that concrete condition in blocked_reason; difficulty, "
    "uncertainty, or useful remaining work is not blocked.",
)
"""Native's `tool:goal` system-prompt section (its blocked threshold as shipped)."""

CREATE_DESCRIPTION = (
    "Create a persisted goal that keeps this session working across automatic continuation "
    "rounds. Use it when the direct human request is a long-running objective, even if the "
    'user did not say "goal"; not for single-turn work.'
)
GET_DESCRIPTION = (
    "Read the current session goal, including the id and revision that update_goal requires."
)
UPDATE_DESCRIPTION = "Update the current goal."

CREATE_PARAMETERS: dict[str, Any] = {
    "type": "object",
    "properties": {
        "objective": {
            "type": "string",
            "description": "The concrete completion objective inferred from the direct human "
            "request.",
        },
        "max_goal_rounds": {
            "type": "number",
            "description": "Optional positive safe-integer limit on automatic continuation rounds.",
        },
    },
    "required": ["objective"],
}
GET_PARAMETERS: dict[str, Any] = {"type": "object", "properties": {}}
UPDATE_PARAMETERS: dict[str, Any] = {
    "type": "object",
    "properties": {
        "goal_id": {"type": "string", "description": "Exact id returned by get_goal."},
        "revision": {
            "type": "number",
            "description": "Exact positive revision returned by get_goal.",
        },
        "action": {
            "type": "string",
            "enum": ["edit", "pause", "resume", "complete", "blocked"],
            "description": "edit, pause, and resume require a direct top-level human request. "
            "complete and blocked are also allowed during an automatic continuation of this "
            "goal; blocked is rejected before the configured minimum round count.",
        },
        "objective": {
            "type": "string",
            "description": "Replacement objective; valid only with action edit.",
        },
        "max_goal_rounds": {
            "type": "number",
            "description": "Replacement cap; valid only with action edit.",
        },
        "blocked_reason": {
            "type": "string",
            "description": "Required only with action blocked: the concrete condition that "
            "persisted across rounds and blocks progress.",
        },
    },
    "required": ["goal_id", "revision", "action"],
}


class GoalHost(Protocol):
    """What a goal tool needs of a session's agent (`core.agent.Agent` is one)."""

    def commit(self, event: Any) -> dict[str, Any]: ...

    def defer(self, note: Any) -> None: ...


class GoalSession:
    """One live session's goal: its log (through `events`), its agent, its activation."""

    def __init__(self, host: GoalHost, events: Callable[[], list[dict[str, Any]]]) -> None:
        self.host = host
        self.events = events
        self.activation: Activation = "disarmed"  # a session brought back is never armed

    def state(self) -> GoalState:
        """The goal folded from the session's log."""
        return goals.fold(self.events())

    def apply(self, event: dict[str, Any]) -> GoalState:
        """Commit a `goal/change` and move the activation as its operation does."""
        self.host.commit(event)
        after = goals.ACTIVATION_AFTER[event["operation"]]
        if after is not None:
            self.activation = after
        return self.state()

    def value(self, state: GoalState | None = None) -> dict[str, Any]:
        """What the goal tools answer for the current state."""
        return goals.value(self.state() if state is None else state, self.activation)


class GoalBook:
    """The live sessions' goals, by session id (one book a process)."""

    def __init__(self) -> None:
        self._sessions: dict[str, GoalSession] = {}

    def attach(
        self, session_id: str, host: GoalHost, events: Callable[[], list[dict[str, Any]]]
    ) -> GoalSession:
        """Register a session brought live (disarmed); replaces an earlier registration."""
        session = GoalSession(host, events)
        self._sessions[session_id] = session
        return session

    def detach(self, session_id: str, session: GoalSession) -> None:
        """Forget a closed session (unless it was registered again since)."""
        if self._sessions.get(session_id) is session:
            del self._sessions[session_id]

    def get(self, session_id: str) -> GoalSession | None:
        return self._sessions.get(session_id)


def _now() -> int:
    return int(time.time() * 1000)


def _text(args: Mapping[str, Any], key: str) -> str | None:
    """An optional text argument; native reads an empty string as absent."""
    text = args.get(key)
    return text if isinstance(text, str) and text != "" else None


def _cap(args: Mapping[str, Any]) -> Any:
    """An optional round cap; native reads 0 as absent."""
    cap = args.get("max_goal_rounds")
    return None if cap is None or (cap == 0 and not isinstance(cap, bool)) else cap


class _GoalTool(AnsweringTool):
    refusals = (GoalError,)

    def __init__(self, book: GoalBook) -> None:
        self.book = book

    async def answer(self, args: dict[str, Any], ctx: ToolContext) -> str:
        """The goal's value, or native's refusal."""
        session = self.book.get(ctx.session_id)
        if session is None:
            raise GoalError("goal tools require a calling agent")
        return goals.render(self.decide(args, session))

    def decide(self, args: dict[str, Any], session: GoalSession) -> dict[str, Any]:
        raise NotImplementedError


class GetGoalTool(_GoalTool):
    """Read the session's goal."""

    name = "get_goal"
    description = GET_DESCRIPTION
    parameters = GET_PARAMETERS

    def decide(self, args: dict[str, Any], session: GoalSession) -> dict[str, Any]:
        return session.value()


class CreateGoalTool(_GoalTool):
    """Create the session's goal, armed; only a person's turn may."""

    name = "create_goal"
    description = CREATE_DESCRIPTION
    parameters = CREATE_PARAMETERS

    def decide(self, args: dict[str, Any], session: GoalSession) -> dict[str, Any]:
        if not goals.direct_human(goals.open_turn(session.events())):
            raise GoalError(goals.HUMAN_REQUIRED)
        goal_id = f"goal-{uuid.uuid4()}"
        rounds = args.get("max_goal_rounds")
        event = goals.create(session.state(), args["objective"], rounds, goal_id, _now())
        return session.value(session.apply(event))


class UpdateGoalTool(_GoalTool):
    """Edit, pause, resume (a person's turn), complete or block (also the goal's round)."""

    name = "update_goal"
    description = UPDATE_DESCRIPTION
    parameters = UPDATE_PARAMETERS

    def decide(self, args: dict[str, Any], session: GoalSession) -> dict[str, Any]:
        ref = goals.goal_ref(args["goal_id"], args["revision"])
        action = args["action"]
        text, cap, reason = _text(args, "objective"), _cap(args), _text(args, "blocked_reason")
        turn, state = goals.open_turn(session.events()), session.state()
        human = goals.direct_human(turn)
        if action in ("edit", "pause", "resume"):
            if not human:
                raise GoalError(goals.HUMAN_REQUIRED)
            if action == "edit":
                if reason is not None:
                    raise GoalError("blocked_reason is valid only with action blocked")
                return session.value(session.apply(goals.edit(state, ref, text, cap, _now())))
            if text is not None or cap is not None or reason is not None:
                raise GoalError(
                    "objective and max_goal_rounds are valid only with action edit; "
                    "blocked_reason is valid only with action blocked"
                )
            return self._pause_or_resume(action, ref, state, session)
        if not human and not goals.goal_round(turn, state):
            raise GoalError(goals.COMPLETION_REQUIRED)
        if text is not None or cap is not None:
            raise GoalError("objective and max_goal_rounds are valid only with action edit")
        if action == "complete" and reason is not None:
            raise GoalError("blocked_reason is valid only with action blocked")
        raw_reason = args.get("blocked_reason")
        if action == "blocked" and (raw_reason is None or not js_trim(raw_reason)):
            raise GoalError("blocked_reason is required with action blocked")
        if action == "blocked" and not human and state.rounds_started < goals.BLOCKED_AFTER:
            raise GoalError(
                f"blocked requires at least {goals.BLOCKED_AFTER} consecutive goal rounds; "
                f"current round is {state.rounds_started}"
            )
        if action == "complete":
            event = goals.transition(state, ref, "complete", _now())
        else:
            event = goals.block(state, ref, "model-reported", str(raw_reason), _now())
        after = session.apply(event)
        if not human:  # the goal's own round: the model writes the closing message now
            objective = event["goal"]["objective"]
            note = goals.wrapup(objective, raw_reason if action == "blocked" else None)
            session.host.defer(_notice(int(turn[0]["turn"]), note))
        return session.value(after)

    @staticmethod
    def _pause_or_resume(
        action: str, ref: tuple[str, int], state: GoalState, session: GoalSession
    ) -> dict[str, Any]:
        goal = state.goal
        paused = goal is not None and goal["phase"] == "paused"
        if action == "resume" and paused and goal and ref == (goal["id"], goal["revision"]):
            raise GoalError("the model cannot resume a paused goal; the user must resume it")
        if action == "pause":
            event = goals.transition(state, ref, "pause", _now())
        else:
            event = goals.resume(state, ref, session.activation, _now())
        return session.value(session.apply(event))


def _notice(turn: int, text: str) -> dict[str, Any]:
    return {
        "type": "user/message",
        "id": str(uuid.uuid4()),
        "turn": turn,
        "content": [text_block(text)],
        "source": goals.NOTICE_SOURCE,
    }


def goal_tools(book: GoalBook) -> list[Tool]:
    """The family's tools over one process's `GoalBook`."""
    return [CreateGoalTool(book), GetGoalTool(book), UpdateGoalTool(book)]


__all__ = [
    "GOAL_GUIDANCE",
    "CreateGoalTool",
    "GetGoalTool",
    "GoalBook",
    "GoalHost",
    "GoalSession",
    "UpdateGoalTool",
    "goal_tools",
]
