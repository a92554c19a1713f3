"""A session's goal as native 0.2.1-rc.2 keeps it: state folded from the log, the
compare-and-set mutations, who may make them, and the texts the model reads.

A goal lives in the session log: every mutation commits a `goal/change` event holding
the whole new snapshot (`goal`: id, revision, objective, phase, blockedReason?,
maxGoalRounds) with `roundsStarted`, `createdAt`, `updatedAt`; an admitted goal round
is a `user/message` with `source: goal-round` and `goal: {id, revision, round}`, which
advances `roundsStarted`. So `session/resume` and `session/load` bring the goal back by
folding the log. Whether the agent may continue it on its own (`armed`) is not in the
log: it belongs to one live session, and a session brought back starts `disarmed`, as
native's guidance tells the model.

Pure functions over plain data; the tools (`core/tools/goal_family.py`) commit what
these return, and the round driver (`live/goal_rounds.py`) reads the same fold.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal

from acp_plus.core.js_json import js_json, js_string, js_trim

GOAL_CHANGE = "goal/change"
ROUND_SOURCE = "goal-round"
"""`source` of a goal round's `user/message` (native's `GoalMessageSource`)."""
NOTICE_SOURCE = "goal-notice"
"""`source` of the closing-message instruction after a round completes or blocks the goal."""
DEFAULT_MAX_ROUNDS = 256  # native's `defaultMaxGoalRounds`
BLOCKED_AFTER = 3  # native's `blockedAfterConsecutiveRounds`
MAX_SAFE_INTEGER = 2**53 - 1

Activation = Literal["armed", "disarmed"]
Event = Mapping[str, Any]


class GoalError(Exception):
    """A refused goal read or mutation; the message is native's text."""


@dataclass(frozen=True)
class GoalState:
    """The folded goal: the current snapshot (None before the first create) and the
    counters the log derives."""

    goal: Mapping[str, Any] | None = None
    rounds_started: int = 0
    created_at: int | None = None
    updated_at: int | None = None


def fold(events: Sequence[Event]) -> GoalState:
    """The session's goal after `events` (the log, in order)."""
    state = GoalState()
    for event in events:
        kind = event.get("type")
        if kind == GOAL_CHANGE:
            state = GoalState(
                event["goal"], event["roundsStarted"], event["createdAt"], event["updatedAt"]
            )
        elif kind == "user/message" and event.get("source") == ROUND_SOURCE:
            ref, goal = event.get("goal") or {}, state.goal
            if goal is not None and (ref.get("id"), ref.get("revision")) == _ref(goal):
                state = GoalState(goal, int(ref["round"]), state.created_at, state.updated_at)
    return state


def _ref(goal: Mapping[str, Any]) -> tuple[Any, Any]:
    return goal["id"], goal["revision"]


def value(state: GoalState, activation: Activation) -> dict[str, Any]:
    """What the goal tools answer (native's compact shape, in its key order)."""
    goal = state.goal
    if goal is None:
        return {"goal": None}
    shown: dict[str, Any] = {
        "id": goal["id"],
        "revision": goal["revision"],
        "objective": goal["objective"],
        "phase": goal["phase"],
        "roundsStarted": state.rounds_started,
        "maxGoalRounds": goal["maxGoalRounds"],
    }
    if "blockedReason" in goal:
        reason = goal["blockedReason"]
        shown["blockedReason"] = {"code": reason["code"], "message": reason["message"]}
    return {"goal": shown, "activation": activation}


def render(result: Mapping[str, Any]) -> str:
    """A goal tool's result text: `JSON.stringify` of its value."""
    return js_json(dict(result))


# -- checks -----------------------------------------------------------------------------


def safe_integer(number: Any) -> int | None:
    """`number` as an int when JavaScript's `Number.isSafeInteger` holds for it."""
    if isinstance(number, bool) or not isinstance(number, int | float):
        return None
    if isinstance(number, float) and not (math.isfinite(number) and number.is_integer()):
        return None
    return int(number) if abs(number) <= MAX_SAFE_INTEGER else None


def max_rounds(number: Any) -> int:
    """A round cap: a positive safe integer."""
    rounds = safe_integer(number)
    if rounds is None or rounds < 1:
        raise GoalError("maxGoalRounds must be a positive safe integer")
    return rounds


def objective(text: Any) -> str:
    """An objective: a string with text besides whitespace, trimmed."""
    if not isinstance(text, str) or not js_trim(text):
        raise GoalError("goal objective must be a non-empty string")
    return js_trim(text)


def goal_ref(goal_id: str, revision: Any) -> tuple[str, int]:
    """The compare-and-set ref the model names (checked before anything else)."""
    number = safe_integer(revision)
    if not goal_id or goal_id != js_trim(goal_id) or number is None or number < 1:
        raise GoalError("goal_id must be non-empty and revision must be a positive safe integer")
    return goal_id, number


def current(state: GoalState, ref: tuple[str, int]) -> Mapping[str, Any]:
    """The current snapshot, when `ref` names it exactly."""
    goal = state.goal
    if goal is None:
        raise GoalError("no current goal")
    if ref != _ref(goal):
        raise GoalError(
            f'stale goal ref "{ref[0]}" revision {ref[1]}; current is "{goal["id"]}" '
            f"revision {goal['revision']}"
        )
    return goal


def _transition_error(goal: Mapping[str, Any], operation: str, allowed: Sequence[str]) -> GoalError:
    return GoalError(
        f'cannot {operation} goal "{goal["id"]}" from phase "{goal["phase"]}"; expected '
        + " or ".join(allowed)
    )


# -- mutations: each returns the `goal/change` event to commit ------------------------


def change(operation: str, goal: Mapping[str, Any], state: GoalState, now: int) -> dict[str, Any]:
    """The `goal/change` event of a mutation of the current goal (times never go back)."""
    updated = max(now, state.updated_at or now)
    return {
        "type": GOAL_CHANGE,
        "operation": operation,
        "goal": dict(goal),
        "roundsStarted": state.rounds_started,
        "createdAt": state.created_at if state.created_at is not None else now,
        "updatedAt": updated,
    }


def create(state: GoalState, text: Any, rounds: Any, goal_id: str, now: int) -> dict[str, Any]:
    """A new active goal; only a completed one may be replaced."""
    spec = objective(text), max_rounds(DEFAULT_MAX_ROUNDS if rounds is None else rounds)
    goal = state.goal
    if goal is not None and goal["phase"] != "complete":
        raise GoalError(f'goal "{goal["id"]}" already exists with phase "{goal["phase"]}"')
    snapshot = {
        "id": goal_id,
        "revision": 1,
        "objective": spec[0],
        "phase": "active",
        "maxGoalRounds": spec[1],
    }
    return change("create", snapshot, GoalState(), now)


def edit(
    state: GoalState, ref: tuple[str, int], text: str | None, rounds: Any, now: int
) -> dict[str, Any]:
    """A new objective and/or round cap, phase kept."""
    goal = current(state, ref)
    if text is None and rounds is None:
        raise GoalError("goal edit requires objective and/or maxGoalRounds")
    edited = {**goal, "revision": goal["revision"] + 1}
    if text is not None:
        edited["objective"] = objective(text)
    if rounds is not None:
        edited["maxGoalRounds"] = max_rounds(rounds)
    return change("edit", edited, state, now)


def _phase(goal: Mapping[str, Any], phase: str) -> dict[str, Any]:
    # A new revision in `phase`; a blocked reason does not outlive the blocked phase.
    keys = ("id", "objective", "maxGoalRounds")
    return {**{k: goal[k] for k in keys}, "revision": goal["revision"] + 1, "phase": phase}


def transition(state: GoalState, ref: tuple[str, int], operation: str, now: int) -> dict[str, Any]:
    """`pause` (from active) or `complete` (from anything but complete)."""
    goal = current(state, ref)
    allowed = ["active"] if operation == "pause" else ["active", "paused", "blocked"]
    if goal["phase"] not in allowed:
        raise _transition_error(goal, operation, allowed)
    return change(
        operation, _phase(goal, "paused" if operation == "pause" else "complete"), state, now
    )


def resume(
    state: GoalState, ref: tuple[str, int], activation: Activation, now: int
) -> dict[str, Any]:
    """Back to active and armed, while the round budget lasts."""
    goal = current(state, ref)
    allowed = ["active", "paused", "blocked"]
    if goal["phase"] not in allowed:
        raise _transition_error(goal, "resume", allowed)
    if goal["phase"] == "active" and activation == "armed":
        raise GoalError(f'goal "{goal["id"]}" is already active and armed')
    if state.rounds_started >= goal["maxGoalRounds"]:
        raise GoalError(
            f'goal "{goal["id"]}" exhausted {goal["maxGoalRounds"]} goal rounds; increase '
            "maxGoalRounds before resuming"
        )
    return change("resume", _phase(goal, "active"), state, now)


def block(
    state: GoalState, ref: tuple[str, int], code: str, message: str, now: int
) -> dict[str, Any]:
    """An active goal blocked, with the reason (message trimmed)."""
    goal = current(state, ref)
    if goal["phase"] != "active":
        raise _transition_error(goal, "block", ["active"])
    blocked = {
        **_phase(goal, "blocked"),
        "blockedReason": {"code": code, "message": js_trim(message)},
    }
    return change("block", blocked, state, now)


ACTIVATION_AFTER: dict[str, Activation | None] = {
    "create": "armed",
    "edit": None,
    "pause": "disarmed",
    "resume": "armed",
    "complete": "disarmed",
    "block": "disarmed",
}
"""What each operation leaves the session's activation at (None: as it was)."""


# -- authority: who may mutate, read from the open turn --------------------------------


def open_turn(events: Sequence[Event]) -> list[Event]:
    """The events of the turn in progress (from its `turn/start`)."""
    for index in range(len(events) - 1, -1, -1):
        if events[index].get("type") == "turn/start":
            return list(events[index:])
    return []


def direct_human(turn: Sequence[Event]) -> bool:
    """Whether a person's message (a prompt, or steered text) is part of the turn."""
    return any(e.get("type") == "user/message" and e.get("source") is None for e in turn)


def goal_round(turn: Sequence[Event], state: GoalState) -> bool:
    """Whether the turn is the current goal's latest admitted round."""
    goal = state.goal
    if goal is None:
        return False
    exact = {"id": goal["id"], "revision": goal["revision"], "round": state.rounds_started}
    return any(
        e.get("type") == "user/message"
        and e.get("source") == ROUND_SOURCE
        and e.get("goal") == exact
        for e in turn
    )


HUMAN_REQUIRED = "this goal operation requires a direct human turn on a top-level agent"
COMPLETION_REQUIRED = "complete and blocked require a direct human turn or the current goal round"


# -- what the model reads ---------------------------------------------------------------


def round_prompt(goal: Mapping[str, Any], round_number: int) -> str:
    """The `<goal_round>` message that continues an active goal."""
    return (
        "<goal_round>\n"
        f"Objective: {js_string(goal['objective'])}\n"
        f"Round: {round_number}/{goal['maxGoalRounds']}\n\n"
        "Continue working toward the objective in this same session. Treat the current "
        "workspace, tool results, and durable session state as authoritative; inspect them "
        "instead of assuming earlier narration is still current. Make concrete progress and "
        "verify the result. Before claiming completion, gather evidence that the whole "
        "objective is achieved, read the current goal, and mark it complete. If work remains, "
        "leave the goal active for the next round. Follow the configured goal-tool policy "
        "before reporting a blocker.\n"
        "</goal_round>"
    )


_WRAPUP_TAIL = (
    "Report only what earlier rounds and tool results in this session actually establish; "
    "when a detail is not in the session, say so instead of inventing it."
)
_WRAPUP_END = (
    "Address the user directly. Do not call any more tools in this run; further work "
    "waits for the user's next instruction."
)


def wrapup(goal_objective: str, blocked_reason: str | None = None) -> str:
    """The closing-message instruction after a goal round completes or blocks its goal."""
    heading = f"Objective: {js_string(goal_objective)}\n"
    if blocked_reason is None:
        return (
            f"<goal_complete>\n{heading}The goal is marked complete and this autonomous run "
            "is ending. Write the closing message to the user now: state the outcome, "
            "summarize what was done and how it was verified, and point to the concrete "
            f"results (files, commits, or other artifacts). {_WRAPUP_TAIL} Note anything the "
            f"user should review or do next. {_WRAPUP_END}\n</goal_complete>"
        )
    return (
        f"<goal_blocked>\n{heading}Blocked: {js_string(blocked_reason)}\nThe goal is marked "
        "blocked and this autonomous run is ending. Write the closing message to the user "
        "now: state what has been completed so far, describe the concrete blocking condition "
        "and what you tried, and say exactly what you need from the user to continue. "
        f"{_WRAPUP_TAIL} {_WRAPUP_END}\n</goal_blocked>"
    )
