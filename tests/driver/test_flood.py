"""A flood of updates (an agent streaming a long answer token by token, or a hostile
one) never turns the prompt's answer into a timeout, a limit reached is its own problem
stated first, and the conformance check judges the flood by shapes, not frame by frame
(issue 33). The 200,000-update flood itself is timed in bench/bench_flood.py."""

from __future__ import annotations

import pytest

from parity.checks.acp_schema import load_schema
from parity.checks.conformance import MAX_PER_KIND, SchemaIndex, findings
from parity.checks.problems import run_problems
from parity.driver import recording
from tests.support.driver import BASIC, run, scenario, st

PROMPT = [*BASIC, st("prompt", session="s1", text="go")]


async def test_the_answer_after_the_frame_limit_still_ends_the_prompt(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(recording, "MAX_FRAMES", 500)
    t = await run(PROMPT, "update_flood", env={"FLOOD": "2000"}, timeouts={"response": 10})
    assert t.steps[2].problem is None
    assert t.steps[2].response["result"] == {"stopReason": "end_turn"}
    assert len(t.frames) == 500 + 1  # the limit, and the answer past it
    assert t.frames[-1].message["result"] == {"stopReason": "end_turn"}
    problems = run_problems(scenario(PROMPT), t)
    assert problems[0].kind == "frame-limit"
    assert problems[0].message.startswith("frame limit (500) reached: 1505 later line(s)")


async def test_a_flood_is_validated_once_per_shape() -> None:
    t = await run(PROMPT, "update_flood", env={"FLOOD": "3000"})
    assert len(t.frames) == 3000 + 6
    index = SchemaIndex(load_schema())
    found = findings(t, {}, schema=index)
    assert found == []
    # 3000 updates with 3000 texts: one shape (the texts differ only in content).
    assert index.validated <= 8


def test_a_flood_of_one_finding_is_counted_past_the_cap() -> None:
    from parity.core.transcript import Frame, Transcript

    frames = [Frame(seq=n, t=0.0, direction="in", raw="[1]", message=[1]) for n in range(250)]
    found = findings(Transcript("s", "t", "r", frames=frames), {})
    assert len(found) == MAX_PER_KIND + 1
    assert found[-1].message == f"... and {250 - MAX_PER_KIND} more not_jsonrpc finding(s)"
