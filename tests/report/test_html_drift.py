"""The HTML report's side of a drifted snapshot and of what needs attention, on plain data.

A drifted snapshot is shown as the target's own recorded snapshot beside its live run,
aligned row by row (`parity.report.html_sbs`), with unchanged runs folded; the index
leads with failures, then drift, then stale expected differences, and its matrix rows
that need attention come first. One real run under xdist checks the wiring from the
target item to the page.
"""

from __future__ import annotations

import json
import re
from html.parser import HTMLParser
from pathlib import Path
from typing import Any

from parity.checks.diff import compare
from parity.report.collected import Collected
from parity.report.html import ATTENTION_OPEN, attention, page_paths, render_report
from parity.report.html_sbs import Row, aligned, hunks, side_by_side
from parity.report.outcome import Outcome
from parity.report.results import session_data, to_json
from parity.view.dump import dump_view
from tests.report.synthetic import FAILING, long_view, release_day
from tests.support.project import AGENT, TEXT_SCENARIO, Project, mini_target


def test_aligned_pairs_lines_and_leaves_gaps_where_one_side_has_none() -> None:
    old = "a\nb\nc\nd\ne\n"
    new = "a\nB\nx\nc\ne\nf\n"
    assert aligned(old, new) == [
        Row("same", 1, "a", 1, "a"),
        Row("changed", 2, "b", 2, "B"),  # a replaced run pairs in order...
        Row("added", None, None, 3, "x"),  # ...and pads the shorter side
        Row("same", 3, "c", 4, "c"),
        Row("removed", 4, "d", None, None),
        Row("same", 5, "e", 5, "e"),
        Row("added", None, None, 6, "f"),
    ]


def test_repeated_lines_still_align_where_they_belong() -> None:
    # A snapshot repeats `result:` in every step; difflib's autojunk would call such a
    # line junk and pair it with whatever sits across (here `- sessionUpdate: plan`).
    old = dump_view(long_view(30, "end_turn", extra=False))
    new = dump_view(long_view(30, "max_tokens", extra=True))
    drift = [r for r in aligned(old, new) if r.kind != "same"]
    assert [(r.kind, r.old, r.new) for r in drift] == [
        ("added", None, "  - sessionUpdate: plan"),
        ("added", None, "    entries:"),
        ("added", None, "    - content: a new plan"),
        ("changed", "    stopReason: end_turn", "    stopReason: max_tokens"),
    ]


def test_only_the_changed_regions_are_open() -> None:
    old = "\n".join(f"line {i}" for i in range(40))
    new = old.replace("line 20", "line twenty")
    runs = hunks(aligned(old, new), context=3)
    assert [(shown, len(rows)) for shown, rows in runs] == [(False, 17), (True, 7), (False, 16)]
    html = side_by_side(old, new, "old", "new")
    folded = re.findall(r"<details>(.*?)</details>", html)
    assert len(folded) == 2 and all('class="same"' in f for f in folded)
    assert not any('class="changed"' in f for f in folded)  # the change stays open
    assert html.count('class="changed"') == 1
    assert "17 unchanged line(s) (1-17 | 1-17)" in html
    assert "line <del>20</del>" in html and "line <ins>twenty</ins>" in html
    assert side_by_side("same\n", "same\n", "a", "b").startswith('<p class="muted">')


class _Sbs(HTMLParser):
    """The rows of the drift table: (row class, [cell texts])."""

    def __init__(self, text: str) -> None:
        super().__init__()
        self.rows: list[tuple[str, list[str]]] = []
        self._cell: list[str] | None = None
        self.feed(text)

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag == "tr":
            self.rows.append((dict(attrs).get("class") or "", []))
        elif tag == "td":
            self._cell = []

    def handle_endtag(self, tag: str) -> None:
        if tag == "td" and self._cell is not None and self.rows:
            self.rows[-1][1].append("".join(self._cell))
            self._cell = None

    def handle_data(self, data: str) -> None:
        if self._cell is not None:
            self._cell.append(data)


def _drifted() -> dict[str, Any]:
    """plus drifted from its own recording; native (the reference) has other text."""
    native = {"steps": [{"step": 1, "result": {"who": "native reference", "n": 0}}]}
    recorded = {"steps": [{"step": 1, "result": {"who": "plus recorded", "n": 1}}]}
    live = {"steps": [{"step": 1, "result": {"who": "plus recorded", "n": 2}}]}
    collected = Collected(keep_views=True)
    collected.scenarios["demo/x"] = {
        "name": "demo/x",
        "description": "",
        "file": "",
        "targets": ["native", "plus"],
        "reference": "native",
        "compare": "exact",
        "profile": "exact",
        "diverge": [],
        "masks": [],
    }
    collected.view("demo/x", "native", native, live=False)
    collected.view("demo/x", "plus", live, live=True)
    report = compare(
        recorded, live, profile="exact", diverge=[], ref_name="snapshot", other_name="plus"
    )
    collected.diff("demo/x", "target", "plus", "snapshot", report)
    collected.drift("demo/x", "plus", dump_view(recorded), dump_view(live))
    # Through a worker's output, as under xdist.
    controller = Collected(keep_views=True)
    controller.merge(json.loads(json.dumps(collected.to_output())))
    outcomes = [
        Outcome("demo/x", "target", "native", "skip", reason="DSH not found"),
        Outcome("demo/x", "target", "plus", "fail", reason="snapshot differs"),
        Outcome("demo/x", "parity", "plus", "differs", "native", "native: recorded"),
    ]
    return session_data(outcomes=outcomes, collected=controller)


def test_a_drift_shows_the_targets_own_recording_beside_its_live_run() -> None:
    data = _drifted()
    page = render_report(data)["scenarios/demo__x.html"]
    start = page.index('<h2 id="drift-1">Snapshot drift: plus</h2>')
    section = page[start : page.index("<h2>", start + 1)]
    assert "plus: recorded snapshot" in section and "plus: live run" in section
    assert "native reference" not in section  # not the reference's view
    rows = _Sbs(section).rows
    shown = [cells for cls, cells in rows if cls != "fold"]
    # Each row: old number, old text, new number, new text, side by side; the drift on
    # one row (the header row has no cells).
    assert shown == [
        [],
        ["1", "steps:", "1", "steps:"],
        ["2", "- step: 1", "2", "- step: 1"],
        ["3", "  result:", "3", "  result:"],
        ["4", "    who: plus recorded", "4", "    who: plus recorded"],
        ["5", "    n: 1", "5", "    n: 2"],
    ]
    assert [cls for cls, _ in rows].count("changed") == 1
    # The texts travel only for the HTML report, not into the JSON.
    assert "drifts" not in json.loads(to_json(data))["scenarios"][0]
    idle = Collected()
    idle.drift("demo/x", "plus", "a", "b")
    assert idle.drifts == {}


def test_the_index_leads_with_failures_then_drift_then_stale() -> None:
    data = _drifted()
    (s,) = data["scenarios"]
    stale = {**s, "name": "demo/stale", "cells": [dict(c) for c in s["cells"]]}
    stale["cells"][1] = {
        "target": "plus",
        "own": {**s["cells"][1]["own"], "status": "pass", "categories": []},
        "parity": {
            "status": "differs",
            "categories": ["stale diverge"],
            "label": "s",
            "reason": "",
        },
    }
    data = {**data, "scenarios": [stale, s]}
    paths = page_paths(["demo/stale", "demo/x"])
    entries = attention(data, paths)
    assert [(e["kind"], e["scenario"]) for e in entries] == [
        ("failure", "demo/x"),  # plus differs from native
        ("drift", "demo/x"),
        ("stale", "demo/stale"),
    ]
    assert entries[1]["href"] == "scenarios/demo__x.html#drift-1"
    index = render_report(data)["index.html"]
    assert index.index('id="attention"') < index.index('class="matrix')
    assert index.index(">demo/x</a></th>") < index.index(">demo/stale</a></th>")


def test_a_release_day_index_names_the_one_failure_first() -> None:
    data = release_day()
    index = render_report(data)["index.html"]
    assert "1 check(s) need attention: 1 drift" in index
    first_row = index[index.index("<tbody>") :].split("</tr>")[0]
    assert f">{FAILING}</a>" in first_row and "cell-fail" in first_row


def test_a_real_run_under_xdist_reports_the_drift_from_the_targets_own_recording(
    tmp_path: Path,
) -> None:
    # The wiring: the target item hands both texts to Collected.drift, a worker hands
    # them to the controller, the page shows them (mini-b's recording, not mini's).
    variant = tmp_path / "mini_b_agent.py"
    variant.write_text(AGENT.read_text())
    project = Project(tmp_path / "proj")
    project.write("parity.toml", mini_target("mini") + mini_target("mini-b", agent=variant))
    project.write("scenarios/demo/text.yaml", TEXT_SCENARIO)
    assert project.parity("record").returncode == 0
    recorded = project.snapshot("demo/text", "mini-b").read_text()
    changed = '{"loadSession": True}'
    variant.write_text(AGENT.read_text().replace('{"loadSession": False}', changed))
    done = project.parity("run", "-n", "2", "--report", "report")
    assert done.returncode == 1, done.stdout + done.stderr
    page = (project.root / "report" / "scenarios" / "demo__text.html").read_text()
    start = page.index('<h2 id="drift-1">Snapshot drift: mini-b</h2>')
    rows = _Sbs(page[start : page.index("<h2>", start + 1)]).rows
    (pair,) = [cells for cls, cells in rows if cls == "changed"]
    assert pair[1].strip() == "loadSession: false" and pair[3].strip() == "loadSession: true"
    assert pair[0] == pair[2]  # the same line of each text, on one row
    assert "loadSession: false" in recorded
    assert project.snapshot("demo/text", "mini-b").read_text() == recorded  # run never writes
    index = (project.root / "report" / "index.html").read_text()
    assert 'href="scenarios/demo__text.html#drift-1"' in index


def test_a_long_attention_list_folds_past_the_first_entries() -> None:
    data = release_day(n=30)
    for s in data["scenarios"]:  # every plus check differs from native
        (plus,) = [c for c in s["cells"] if c["target"] == "plus"]
        plus["parity"] = {**plus["parity"], "status": "differs", "categories": ["error"]}
    index = render_report(data)["index.html"]
    section = index[index.index('id="attention"') : index.index("</section>")]
    opened, _, folded = section.partition("<details>")
    assert opened.count("<li ") == ATTENTION_OPEN
    assert folded.count("<li ") == 31 - ATTENTION_OPEN  # 30 differ, 1 drifted
    assert f"<summary>{31 - ATTENTION_OPEN} more</summary>" in folded
