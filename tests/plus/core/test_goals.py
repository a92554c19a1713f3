"""The goal domain (`core/goals.py`): the fold, the compare-and-set mutations and their
refusals, and who may mutate. The refusal texts are native's, as the
`scenarios/tools/goal-*` recordings show them."""

from __future__ import annotations

from typing import Any

import pytest

from acp_plus.core import goals
from acp_plus.core.goals import GoalError, GoalState

GID = "goal-0f8b6a8e-6a0e-4d3c-9a51-2c1e5b7d9f00"


def _created(rounds: Any = 3) -> tuple[dict[str, Any], GoalState]:
    event = goals.create(GoalState(), "  Fix it \ufeff", rounds, GID, 1000)
    return event, goals.fold([event])


def _round(number: int, revision: int = 1) -> dict[str, Any]:
    goal = {"id": GID, "revision": revision, "round": number}
    return {"type": "user/message", "source": goals.ROUND_SOURCE, "goal": goal}


def test_create_trims_arms_and_counts_rounds_of_its_own_revision_only() -> None:
    event, state = _created()
    assert event["goal"] == {
        "id": GID,
        "revision": 1,
        "objective": "Fix it",
        "phase": "active",
        "maxGoalRounds": 3,
    }
    assert (event["roundsStarted"], event["createdAt"], event["updatedAt"]) == (0, 1000, 1000)
    assert goals.ACTIVATION_AFTER["create"] == "armed"
    assert goals.fold([event, _round(1), _round(2)]).rounds_started == 2
    assert goals.fold([event, _round(1, revision=2)]).rounds_started == 0
    assert goals.value(GoalState(), "disarmed") == {"goal": None}
    assert goals.render(goals.value(state, "armed")).startswith(f'{{"goal":{{"id":"{GID}"')


@pytest.mark.parametrize(
    ("objective", "rounds", "message"),
    [
        ("  ", None, "goal objective must be a non-empty string"),
        ("x", 0, "maxGoalRounds must be a positive safe integer"),
        ("x", 1.5, "maxGoalRounds must be a positive safe integer"),
        ("x", 2**53, "maxGoalRounds must be a positive safe integer"),
    ],
)
def test_create_refuses_natives_invalid_input(objective: str, rounds: Any, message: str) -> None:
    with pytest.raises(GoalError, match=f"^{message}$"):
        goals.create(GoalState(), objective, rounds, GID, 0)


def test_only_a_completed_goal_is_replaced_and_the_default_cap_is_natives() -> None:
    event, state = _created(None)
    assert event["goal"]["maxGoalRounds"] == goals.DEFAULT_MAX_ROUNDS == 256
    with pytest.raises(GoalError, match=f'^goal "{GID}" already exists with phase "active"$'):
        goals.create(state, "y", None, "goal-2", 0)
    done = goals.fold([event, goals.transition(state, (GID, 1), "complete", 5)])
    assert goals.create(done, "y", None, "goal-2", 0)["goal"]["id"] == "goal-2"


def test_refs_are_compared_exactly() -> None:
    _, state = _created()
    with pytest.raises(GoalError, match=r"^no current goal$"):
        goals.current(GoalState(), (GID, 1))
    stale = f'^stale goal ref "{GID}" revision 2; current is "{GID}" revision 1$'
    with pytest.raises(GoalError, match=stale):
        goals.current(state, (GID, 2))
    bad = "^goal_id must be non-empty and revision must be a positive safe integer$"
    for goal_id, revision in ((" x", 1), ("", 1), ("x", 0), ("x", 1.5), ("x", True)):
        with pytest.raises(GoalError, match=bad):
            goals.goal_ref(goal_id, revision)
    assert goals.goal_ref("x", 2.0) == ("x", 2)


def test_transitions_follow_natives_phases() -> None:
    event, state = _created(1)
    edited = goals.edit(state, (GID, 1), "New", 2, 900)  # the clock went back: kept at 1000
    assert edited["goal"]["revision"] == 2 and edited["updatedAt"] == 1000
    with pytest.raises(GoalError, match=r"^goal edit requires objective and/or maxGoalRounds$"):
        goals.edit(state, (GID, 1), None, None, 0)
    with pytest.raises(GoalError, match=f'^goal "{GID}" is already active and armed$'):
        goals.resume(state, (GID, 1), "armed", 0)
    paused = goals.fold([event, goals.transition(state, (GID, 1), "pause", 2000)])
    assert paused.goal is not None and paused.goal["phase"] == "paused"
    expected = f'^cannot block goal "{GID}" from phase "paused"; expected active$'
    with pytest.raises(GoalError, match=expected):
        goals.block(paused, (GID, 2), "model-reported", "x", 0)
    spent = goals.fold([event, _round(1)])
    exhausted = f'^goal "{GID}" exhausted 1 goal rounds; increase maxGoalRounds before resuming$'
    with pytest.raises(GoalError, match=exhausted):
        goals.resume(spent, (GID, 1), "disarmed", 0)
    blocked = goals.block(spent, (GID, 1), "round-limit", " spent ", 3000)
    assert blocked["goal"]["blockedReason"] == {"code": "round-limit", "message": "spent"}
    assert blocked["roundsStarted"] == 1
    # An edit keeps the blocked reason; leaving the phase drops it.
    raised = goals.edit(goals.fold([event, _round(1), blocked]), (GID, 2), None, 2, 3000)
    assert raised["goal"]["blockedReason"]["code"] == "round-limit"
    resumed = goals.resume(goals.fold([event, _round(1), blocked, raised]), (GID, 3), "disarmed", 0)
    assert "blockedReason" not in resumed["goal"] and resumed["goal"]["phase"] == "active"


def test_authority_is_read_from_the_open_turn() -> None:
    event, state = _created()
    human: list[dict[str, Any]] = [{"type": "turn/start", "turn": 1}, {"type": "user/message"}]
    own: list[dict[str, Any]] = [{"type": "turn/start", "turn": 2}, _round(1)]
    log = [*human, event, *own]
    turn = goals.open_turn(log)
    assert turn == own and not goals.direct_human(turn)
    assert goals.direct_human(goals.open_turn(human))
    assert goals.goal_round(turn, goals.fold(log))
    assert not goals.goal_round(turn, state)  # round 1 not admitted in this fold
    notice: list[dict[str, Any]] = [
        {"type": "turn/start", "turn": 3},
        {"type": "user/message", "source": "job-notice"},
    ]
    assert not goals.direct_human(notice)
