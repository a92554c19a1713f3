"""A message of the history that differs, differs again in every later model request
(each carries the conversation so far): the diff report shows it once, as one fact,
with the later requests it recurs in (issue 31: 21 lines for 4 facts before)."""

from __future__ import annotations

from typing import Any

from parity.checks.diff import compare


def history(turns: int, result: str) -> dict[str, Any]:
    messages: list[Any] = [{"role": "user", "content": "go"}]
    for i in range(turns):
        messages += [{"role": "assistant", "content": f"turn {i}"}]
        messages += [{"role": "tool", "content": f"{result} {i}"}]
    return {"messages": messages}


def run_view(result: str, last: str) -> dict[str, Any]:
    model: list[dict[str, Any]] = [
        {"path": "/stream", "body": history(n, result)} for n in range(4)
    ]
    model[3]["body"]["messages"][2]["content"] = last  # a change in this request alone
    return {"steps": [], "after": [], "model": model, "process": {"exit": []}}


def test_a_history_difference_is_one_fact_with_the_requests_it_recurs_in() -> None:
    report = compare(
        run_view("native says", last="native again"),
        run_view("plus says", last="plus again"),
        profile="exact",
        diverge=[],
        ref_name="native",
        other_name="plus",
    )
    assert len(report.differences) == 6  # every place still counts; the text groups them
    lines = report.render().splitlines()
    assert "6 difference(s) (4 distinct)" in lines[0]
    assert lines[2:] == [
        "    [model request] model[1].body.messages[2].content  (the same in model[2])",
        '      - native: "native says 0"',
        '      + plus: "plus says 0"',
        "    [model request] model[2].body.messages[4].content  (the same in model[3])",
        '      - native: "native says 1"',
        '      + plus: "plus says 1"',
        # The same place with other values is another fact.
        "    [model request] model[3].body.messages[2].content",
        '      - native: "native again"',
        '      + plus: "plus again"',
        "    [model request] model[3].body.messages[6].content",
        '      - native: "native says 2"',
        '      + plus: "plus says 2"',
    ]
