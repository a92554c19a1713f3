"""The HTML report groups history differences by fact, as the text report does
(`parity.checks.diff_text.fact_groups`): a message of the history that differs is one
row, with the later model requests it recurs in, not a row for every later request
(issue 31); the lines of every repeat are still marked in the model view."""

from __future__ import annotations

import re
from typing import Any

from parity.checks.diff import compare
from parity.report.collected import Collected
from parity.report.html import render_report
from parity.report.outcome import Outcome
from parity.report.results import session_data
from tests.checks.test_diff_facts import run_view


def _page() -> tuple[dict[str, Any], str]:
    ref, other = run_view("native says", "native again"), run_view("plus says", "plus again")
    report = compare(ref, other, profile="exact", diverge=[], ref_name="native", other_name="plus")
    assert len(report.differences) == 6
    collected = Collected(keep_views=True)
    collected.scenarios["demo/history"] = {
        "name": "demo/history",
        "description": "",
        "file": "scenarios/demo/history.yaml",
        "targets": ["native", "plus"],
        "reference": "native",
        "compare": "exact",
        "profile": "exact",
        "diverge": [],
        "masks": [],
    }
    collected.diff("demo/history", "parity", "plus", "native", report)
    collected.view("demo/history", "native", ref, live=True)
    collected.view("demo/history", "plus", other, live=True)
    outcomes = [Outcome("demo/history", "parity", "plus", "differs", "native", "")]
    data = session_data(outcomes=outcomes, collected=collected, generated="now")
    (scenario,) = data["scenarios"]
    (record,) = scenario["diffs"]
    return record, render_report(data)["scenarios/demo__history.html"]


def test_the_diff_record_holds_one_record_per_fact() -> None:
    record, _ = _page()
    assert record["count"] == 6 and record["facts"] == 4
    assert [(d["path"], d["again_in"]) for d in record["differences"]] == [
        ("model[1].body.messages[2].content", [2]),
        ("model[2].body.messages[4].content", [3]),
        ("model[3].body.messages[2].content", []),
        ("model[3].body.messages[6].content", []),
    ]
    assert record["differences"][0]["again"] == [
        {
            "ref_path": ["model", 2, "body", "messages", 2, "content"],
            "other_path": ["model", 2, "body", "messages", 2, "content"],
        }
    ]


def test_the_page_shows_each_fact_once_and_marks_every_repeat() -> None:
    _, page = _page()
    assert "plus vs native (reference): 6 difference(s) (4 distinct)" in page
    table = page[page.index('<table class="diff-table">') :]
    table = table[: table.index("</table>")]
    rows = re.findall(r'<td class="mono">([^<]*)', table)
    assert rows == [
        "model[1].body.messages[2].content",
        "model[2].body.messages[4].content",
        "model[3].body.messages[2].content",
        "model[3].body.messages[6].content",
    ]
    assert table.count("(the same in model[2])") == 1
    assert table.count("(the same in model[3])") == 1
    # The repeat in model[2] is still marked in both model views: 4 facts, 6 places.
    for view in ("v0", "v1"):
        marked = re.findall(rf'<span class="ln hl" id="{view}-M\d+"[^>]*>', page)
        assert len(marked) == 6, marked
