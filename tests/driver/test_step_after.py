"""A step's `after`: a parallel branch waits for a trigger before it is sent (s2's
prompt once s1's permission request is pending), a trigger that never fires leaves the
step unsent with a `trigger` problem, and a permission answer may name any optionId,
offered or not (issue 31). Against the echo agent: `permission` asks, then echoes the
answer it got."""

from __future__ import annotations

import json
from typing import Any

from parity.checks.problem_kinds import STEP_TEXTS, classify
from parity.core.transcript import Transcript
from parity.driver.answers import permission_answer
from parity.scenario.model import Step, Where
from tests.support.driver import BASIC, run, st


def after(step: Step, trigger: dict[str, Any]) -> Step:
    return Step(step.kind, step.params, Where("test.yaml", 1), trigger)


def _seq(t: Transcript, pred: Any) -> int:
    return next(f.seq for f in t.frames if isinstance(f.message, dict) and pred(f.message))


async def test_a_parallel_branch_is_sent_once_its_trigger_fires() -> None:
    # s1's request is never answered (the echo agent's `abandon` ends its turn 0.3 s
    # later without reading an answer): only its `after` makes s2's prompt wait for it.
    client = {"permission": "never"}
    second = st("prompt", session="s2", text="hello", as_="p2")
    steps = [
        *BASIC,
        st("new_session", as_="s2"),
        st(
            "parallel",
            steps=[
                st("prompt", session="s1", text="abandon", as_="p1"),
                after(second, {"agent_request": "session/request_permission"}),
            ],
        ),
    ]
    t = await run(steps, client=client)
    assert all(s.problem is None for s in t.steps), [s.problem for s in t.steps]
    asked = _seq(t, lambda m: m.get("method") == "session/request_permission")
    sent = _seq(
        t, lambda m: m.get("params", {}).get("prompt") == [{"type": "text", "text": "hello"}]
    )
    assert asked < sent
    label = 'prompt s2 "hello" (after agent_request session/request_permission)'
    assert t.steps[-1].label == label


async def test_a_step_whose_trigger_never_fires_is_not_sent() -> None:
    never = after(st("prompt", session="s1", text="late"), {"update": "plan"})
    t = await run([*BASIC, never], timeouts={"response": 1.0})
    problem = t.steps[-1].problem or ""
    assert problem == (
        "the step's trigger `after update plan` never fired within the response timeout (1 s)"
        ' (0 of 1 plan update(s) came); prompt s1 "late" (after update plan) was not sent'
    )
    assert classify(problem, STEP_TEXTS) == "trigger"
    assert t.steps[-1].request is None


async def test_a_permission_answer_names_any_option_id() -> None:
    client = {"permission": {"option": "allow_always"}}
    t = await run([*BASIC, st("prompt", session="s1", text="permission")], client=client)
    answer = _seq(t, lambda m: "outcome" in json.dumps(m.get("result")))
    outcome = {"outcome": "selected", "optionId": "allow_always"}
    assert t.frames[answer].message["result"] == {"outcome": outcome}


def test_an_option_id_is_sent_as_written_offered_or_not() -> None:
    params = {"options": [{"optionId": "allow", "kind": "allow_once"}]}
    for option in ("allow_always", "no-such-option", "allow"):
        answer = permission_answer(7, params, {"option": option})
        assert answer["result"] == {"outcome": {"outcome": "selected", "optionId": option}}
