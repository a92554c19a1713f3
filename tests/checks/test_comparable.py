"""The views as compared: a problem note's timeout seconds are the harness's tolerance."""

from __future__ import annotations

from typing import Any

from parity.checks.comparable import comparable_steps, comparable_views
from parity.checks.diff import compare


def _view(problem: str) -> dict[str, Any]:
    step = {"step": 3, "do": "prompt", "label": "prompt s1", "notes": [{"problem": problem}]}
    return {"steps": [step], "after": [], "model": []}


def test_timeouts_compare_without_their_seconds() -> None:
    # parity explore plus,plus-openai: plus waits 6 s, plus-openai's table 20 s.
    plus = _view(
        "cancel trigger `after llm_request 3` never fired (2 of 3 model request(s) came);"
        " no response within 6 s"
    )
    openai = _view(
        "cancel trigger `after llm_request 3` never fired (2 of 3 model request(s) came);"
        " no response within 20 s"
    )
    report = compare(plus, openai, profile="exact", diverge=[], ref_name="a", other_name="b")
    assert report.ok, report.render()
    a, b = comparable_views(plus, openai)
    assert a["steps"][0]["notes"][0]["problem"].endswith("no response within <timeout> s")
    assert a == b
    # The parenthesized form, and the view itself left as it was (snapshots keep seconds).
    text = 'no response to prompt s1 "hang" within the response timeout (15 s), although'
    assert comparable_steps(_view(text))["steps"][0]["notes"][0]["problem"] == (
        'no response to prompt s1 "hang" within the response timeout (<timeout> s), although'
    )
    assert plus["steps"][0]["notes"][0]["problem"].endswith("within 6 s")


def test_other_problem_differences_stay() -> None:
    plus = _view("no response within 6 s")
    other = _view("the agent exited (code 1)")
    report = compare(plus, other, profile="exact", diverge=[], ref_name="a", other_name="b")
    assert [d.path for d in report.differences] == ["steps[0].notes[0].problem"]
    untouched = _view("cancel trigger never fired (2 of 3 model request(s) came)")
    assert comparable_steps(untouched) is untouched
