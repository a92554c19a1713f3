"""After the agent exits, its data never crashes the checks nor holds them (issue 33):
a frame the normalizer or the conformance check cannot follow is set aside and named
(step, frame) as a run problem, and the checks reach a time limit proportional to what
was recorded as a problem of its own, listed first."""

from __future__ import annotations

import gc
import re
import threading
import time
from typing import Any

import pytest

from parity.checks import conformance
from parity.checks.problems import run_problems
from parity.core import collector
from parity.core.transcript import SET_ASIDE, Transcript
from parity.engine import postrun
from parity.engine.judge import Policy, Shown, judge_run
from parity.engine.postrun import TimeLimit, check_run, deadline
from parity.engine.runner import RunResult
from parity.view.dump import dump_view
from parity.view.tokens import Tokens
from tests.support.driver import BASIC, run, scenario, st

PROMPT = [*BASIC, st("prompt", session="s1", text="go")]
TRIP = "TRIP-ME"
"""The text a test makes the harness fail on, as a bug not found yet would."""


def seq_of(t: Transcript, text: str) -> int:
    return next(f.seq for f in t.frames if f.direction == "in" and text in f.raw)


@pytest.mark.parametrize("compare", ["exact", "semantic"])
async def test_ids_that_are_any_json_value_normalize_in_both_profiles(compare: str) -> None:
    t = await run(PROMPT, "junk_session_ids")
    checked = check_run(scenario(PROMPT, compare=compare), t)
    assert not [p for p in t.problems if "could not" in p]
    updates = checked.view["steps"][2]["updates"]
    calls = [u for u in updates if u["sessionUpdate"] == "tool_call"]
    assert [u["toolCallId"] for u in calls] == ["<toolcall:1>", "<toolcall:2>", True]
    assert calls[2]["session"] == {"nested": ["not", "an", "id"]}
    dump_view(checked.view)


async def test_an_integer_longer_than_python_reads_stands_as_text_and_is_named() -> None:
    t = await run(PROMPT, "junk_session_ids", env={"DIGITS": "5000"})
    # The answer still answers: the line is JSON, only its number is past Python's reach.
    assert t.steps[2].response["result"]["_meta"] == {"big": "<integer of 5000 digits>"}
    seq = seq_of(t, "9" * 5000)
    [problem] = [p for p in run_problems(scenario(PROMPT), t) if p.kind == "unreadable"]
    assert problem.message == (
        f'step 3 (prompt s1 "go"): frame {seq}: too long a number on stdout: an integer of'
        " 5000 digits, over the 4300 the harness reads, stands as text (the line is kept whole)"
    )
    checked = check_run(scenario(PROMPT), t)
    assert checked.view["steps"][2]["result"]["_meta"]["big"] == "<integer of 5000 digits>"


async def test_a_frame_the_normalizer_cannot_follow_is_set_aside_and_named(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    scrub = Tokens.scrub

    def tripping(self: Tokens, value: Any, key: str | None = None) -> Any:
        if value == TRIP:
            raise TypeError("a bug not found yet")
        return scrub(self, value, key)

    monkeypatch.setattr(Tokens, "scrub", tripping)
    t = await run(PROMPT, "junk_session_ids", env={"TRIP": TRIP})
    seq = seq_of(t, TRIP)
    checked = check_run(scenario(PROMPT), t)
    expected = (
        f"frame {seq} (step 3): the harness could not normalize this frame, set aside:"
        " TypeError: a bug not found yet"
    )
    assert expected in t.problems
    [problem] = [p for p in run_problems(scenario(PROMPT), t) if p.kind == "unreadable"]
    assert problem.message == expected
    # The rest of the run is normalized; the frame's line is shown for what it is.
    notes = checked.view["steps"][2]["notes"]
    assert next(n for n in notes if "set_aside" in n)["set_aside"].count(TRIP) == 1
    assert checked.view["steps"][2]["result"] == {"stopReason": "end_turn"}
    assert (t.frames[seq].parse_error or "").startswith(SET_ASIDE)
    assert any(
        f.startswith(f"[unchecked] step 3, frame {seq}: set aside") for f in checked.findings
    )


async def test_a_frame_the_conformance_check_cannot_follow_is_set_aside_and_named(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    update = conformance._Checker.update

    def tripping(self: Any, seq: int, params: Any) -> None:
        if TRIP in str(params):
            raise KeyError(TRIP)
        update(self, seq, params)

    monkeypatch.setattr(conformance._Checker, "update", tripping)
    t = await run(PROMPT, "junk_session_ids", env={"TRIP": TRIP})
    seq = seq_of(t, TRIP)
    checked = check_run(scenario(PROMPT), t)
    assert (
        f"frame {seq} (step 3): the harness could not check this frame, set aside:"
        " KeyError: 'TRIP-ME'"
    ) in t.problems
    assert any(
        f.startswith(f"[unchecked] step 3, frame {seq}: set aside") for f in checked.findings
    )


async def test_the_checks_after_a_run_reach_their_time_limit_as_a_problem_of_its_own(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    t = await run(PROMPT, "update_flood", env={"FLOOD": "20000"})
    monkeypatch.setattr(postrun, "CHECKS_BASE", 0.3)
    monkeypatch.setattr(postrun, "CHECKS_PER_FRAME", 0.0)
    monkeypatch.setattr(postrun, "CHECKS_PER_MB", 0.0)
    start = time.monotonic()
    checked = check_run(scenario(PROMPT, compare="semantic"), t)
    assert time.monotonic() - start < 3
    problems = run_problems(scenario(PROMPT), t)
    assert problems[0].kind == "check-limit"
    # Which check the limit falls in depends on the machine's speed: any of them, named.
    assert re.match(
        r"check limit \(0\.3 s\) reached during (normalization|the conformance check|[a-z ]+):"
        r" the checks after the run may take 0\.3 s, 0 ms a frame and 0 s a MB recorded, at"
        r" most 300 s; this run recorded 20006 frames",
        problems[0].message,
    ), problems[0].message
    assert checked.view["process"]["problems"] == [problems[0].message]
    assert checked.findings[0].startswith("[unchecked] conformance not checked: check limit")
    # The judgement of the run says so first, and fails.
    result = RunResult("driver/test", "t", checked.view, t, checked.findings)
    shown = Shown("snap.yaml", "test.yaml")
    verdict = judge_run(scenario(PROMPT), "t", result, None, Policy(), shown)
    assert verdict.status == "fail"
    assert "[check-limit] check limit (0.3 s) reached" in (verdict.failure or "")


def test_the_allowance_grows_with_what_was_recorded_up_to_the_limit() -> None:
    from parity.core.transcript import Frame

    small = Transcript("s", "t", "r", frames=[Frame(0, 0.0, "in", "{}", {})])
    big = Transcript("s", "t", "r", frames=[Frame(n, 0.0, "in", "x" * 1000) for n in range(1000)])
    flood = Transcript("s", "t", "r", frames=[Frame(n, 0.0, "in", "{}") for n in range(400_000)])
    assert postrun.allowance(small) == pytest.approx(60.001 + 10 * 2e-6)
    assert postrun.allowance(big) == pytest.approx(60 + 1 + 10 * 1.0)
    assert postrun.allowance(flood) == postrun.CHECKS_LIMIT


def test_a_deadline_interrupts_python_code_and_restores_an_outer_one() -> None:
    start = time.monotonic()
    with pytest.raises(TimeLimit), deadline(5.0), deadline(0.1):
        try:
            while True:
                pass
        except Exception:  # the containment's own `except` never takes it
            pytest.fail("TimeLimit was caught as an Exception")
    # The inner limit ended the loop; the outer one was not (it had time left).
    assert time.monotonic() - start < 1
    with pytest.raises(TimeLimit), deadline(0.3):
        with deadline(10.0):
            pass
        while True:
            time.sleep(0.01)


def test_the_checks_run_with_the_collector_paused_and_resume_it(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Pausing the cyclic collector made reading a flood's snapshot four times faster
    (docs/performance.md); every bounded stage pauses it, and it runs again after,
    whatever ended the stage."""
    assert gc.isenabled()
    seen: list[bool] = []

    def conformance(t: Transcript) -> list[str]:
        seen.append(gc.isenabled())
        return []

    monkeypatch.setattr(postrun, "conformance_findings", conformance)
    check_run(scenario(PROMPT), Transcript("s", "t", "r"))
    assert seen == [False]
    assert gc.isenabled()
    with deadline(5.0):
        with deadline(1.0):
            assert not gc.isenabled()
        assert not gc.isenabled()
    assert gc.isenabled()
    with pytest.raises(TimeLimit), deadline(0.05):
        while True:
            pass
    assert gc.isenabled()
    gc.disable()
    try:
        with deadline(1.0):
            pass
        assert not gc.isenabled()  # it was off before: it stays off
    finally:
        gc.enable()


def test_overlapping_pauses_in_two_threads_resume_the_collector_once_both_end() -> None:
    first_in, second_in, first_out = threading.Event(), threading.Event(), threading.Event()
    states: list[bool] = []

    def second() -> None:
        first_in.wait()
        with collector.paused():
            second_in.set()
            first_out.wait()
            states.append(gc.isenabled())
        states.append(gc.isenabled())

    thread = threading.Thread(target=second)
    thread.start()
    with collector.paused():
        first_in.set()
        second_in.wait()
    first_out.set()
    thread.join()
    assert states == [False, True]
    assert gc.isenabled()
