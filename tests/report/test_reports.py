"""Reports people look at: the terminal matrix, the session data, JUnit XML, JSON, HTML.

The pure parts (`parity.report.matrix`, `results`, `junit`, `html`) are checked on
hand-made data; one end-to-end run over a throwaway project checks what
`parity run --junit --json` writes and what its summary says (the browser checks of the
HTML report are in test_html_browser.py).
"""

from __future__ import annotations

import argparse
import json
import re
import xml.etree.ElementTree as ET
from pathlib import Path
from typing import Any

from parity.checks.diff import compare
from parity.checks.differences import CATEGORIES
from parity.cli.main import build_parser
from parity.cli.run import pytest_args
from parity.config.project import load_config
from parity.report.collected import Collected, rule_record
from parity.report.groups import difference_groups, group_lines
from parity.report.html import page_paths, render_report
from parity.report.html_page import esc
from parity.report.html_scenario import line_spans
from parity.report.junit import render_junit, xml_text
from parity.report.matrix import CATEGORY_ORDER, DiffKey, categories, fit, summary_table
from parity.report.outcome import Outcome
from parity.report.results import session_data, to_json
from parity.scenario.model import Rule
from parity.view.dump import dump_view
from tests.support.project import AGENT, TEXT_SCENARIO, Project, mini_target


def _diff(*paths: tuple[str, str], stale: tuple[str, ...] = ()) -> dict[str, Any]:
    """A diff record with differences at `paths` ((category, path) pairs)."""
    return {
        "against": "native",
        "count": len(paths),
        "categories": {c: sum(1 for x, _ in paths if x == c) for c, _ in paths},
        "differences": [{"category": c, "path": p} for c, p in paths],
        "stale": [{"path": s, "reason": "r", "targets": None} for s in stale],
    }


AGENT_INFO = ("changed field", "steps[0].result.agentInfo.version")
MISSING = ("missing update", "steps[2].updates[1]")


def _suite(n: int = 40) -> tuple[list[Outcome], dict[DiffKey, dict[str, Any]]]:
    """A suite shaped like the shipped one: 7 targets, native recorded, most scenarios
    differing the same way."""
    outcomes: list[Outcome] = []
    diffs: dict[DiffKey, dict[str, Any]] = {}
    rec = "native unavailable, compared with its recorded snapshot"
    for i in range(n):
        s = f"protocol/a-fairly-long-scenario-name-{i:02d}"
        outcomes.append(Outcome(s, "target", "native", "skip", reason="DSH not found"))
        outcomes.append(Outcome(s, "target", "plus", "pass"))
        if i < 31:
            outcomes.append(Outcome(s, "parity", "plus", "differs", "native", rec))
            diffs[(s, "parity", "plus")] = _diff(AGENT_INFO, MISSING)
        else:
            outcomes.append(Outcome(s, "parity", "plus", "pass", "native", rec))
    for t in ("codex-acp", "opencode", "opencode-ask", "qwen-code"):
        outcomes.append(Outcome("peers/text-turn", "target", t, "pass"))
        if t != "codex-acp":
            outcomes.append(Outcome("peers/text-turn", "parity", t, "pass", "codex-acp"))
    outcomes.append(Outcome("providers/finish-kinds", "target", "plus-openai", "fail", "", "x"))
    outcomes.append(
        Outcome("providers/finish-kinds", "target", "plus", "fail", reason="snapshot differs")
    )
    diffs[("providers/finish-kinds", "target", "plus")] = _diff(("stop reason", "steps[2]"))
    return outcomes, diffs


# -- the terminal matrix ---------------------------------------------------------------


def test_a_wide_table_is_abbreviated_into_120_columns_with_one_legend_line() -> None:
    outcomes, diffs = _suite()
    lines = summary_table(outcomes, diffs)
    assert all(len(line) <= 120 for line in lines), max(map(len, lines))
    # The reference target most scenarios use first, then the others sorted.
    assert lines[0].split() == [
        "scenario",
        "native",
        "codex-acp",
        "opencode",
        "opencode-ask",
        "plus",
        "plus-openai",
        "qwen-code",
    ]
    starts = [m.start() for m in re.finditer(r"-+", lines[1])]  # the dash line's columns
    rows = {
        line.split()[0]: [
            line[a:b].strip() for a, b in zip(starts, [*starts[1:], None], strict=True)
        ][1:]
        for line in lines[2:-1]
    }
    assert rows["protocol/a-fairly-long-scenario-name-00"] == [
        "skip",
        *["-"] * 3,
        "pass ~miss+1*",  # missing update, and one more category (changed field)
        "-",
        "-",
    ]
    assert rows["protocol/a-fairly-long-scenario-name-35"][4] == "pass =*"
    assert rows["providers/finish-kinds"][4:6] == ["fail:stop", "fail"]
    assert rows["peers/text-turn"][1:4] == ["pass", "pass =", "pass ="]
    # One legend line; its terse wording, as the plain one would not fit.
    legend = lines[-1]
    assert legend == (
        "legend: =same as ref ~differs *recorded +N more | stop:stop reason miss:missing update"
    )
    assert "field" not in legend  # only categories a cell names
    few = [o for o in outcomes if o.scenario != "providers/finish-kinds"]
    assert summary_table(few, diffs)[-1] == (
        "legend: = same as the reference (first target), ~ differs, * vs a recording, "
        "+N more categories; miss: missing update"
    )


def test_a_narrow_table_keeps_the_full_words() -> None:
    outcomes = [
        Outcome("demo/a", "target", "mini", "pass"),
        Outcome("demo/a", "target", "mini-b", "pass"),
        Outcome("demo/a", "parity", "mini-b", "differs", "mini", ""),
    ]
    diffs = {("demo/a", "parity", "mini-b"): _diff(AGENT_INFO, stale=("model",))}
    lines = summary_table(outcomes, diffs)
    assert lines[2] == "demo/a    pass  pass; differs from mini: changed field +1"
    assert not any(line.startswith("legend") for line in lines)


def test_too_many_targets_for_one_table_make_column_groups_that_fit() -> None:
    outcomes = []
    for t in range(14):
        name = f"a-rather-long-target-name-{t}"
        outcomes.append(Outcome("demo/s", "target", name, "pass"))
        if t:
            outcomes.append(
                Outcome("demo/s", "parity", name, "pass", "a-rather-long-target-name-0")
            )
    lines = summary_table(outcomes)
    assert all(len(line) <= 120 for line in lines)
    headers = [line for line in lines if line.startswith("scenario")]
    assert len(headers) > 1
    named = {w for h in headers for w in h.split()[1:]}
    assert named == {f"a-rather-long-target-name-{t}" for t in range(14)}


def test_the_same_change_in_many_scenarios_is_one_group() -> None:
    outcomes, diffs = _suite()
    groups = difference_groups(outcomes, diffs)
    assert [(g.target, g.against, len(g.scenarios)) for g in groups] == [
        ("plus", "native", 31),
        ("plus", "its snapshot", 1),
    ]
    lines = group_lines(groups)
    assert all(len(line) <= 120 for line in lines)
    assert lines[0] == "differences: 32 failing check(s), 2 distinct change(s)"
    assert lines[1].startswith("  plus vs native, same change in 31 scenarios: protocol/a-")
    text = "\n".join(lines)
    assert "changed field at steps[0].result.agentInfo.version; missing update at" in text
    assert "  plus vs its snapshot, in providers/finish-kinds\n    stop reason at steps[2]" in text
    # Another path is another change.
    other = dict(diffs)
    key = ("protocol/a-fairly-long-scenario-name-00", "parity", "plus")
    other[key] = _diff(AGENT_INFO)
    assert len(difference_groups(outcomes, other)) == 3


def test_failure_categories_come_from_the_diff_and_the_reason() -> None:
    def cats(status: str, reason: str, d: dict[str, Any] | None = None) -> list[str]:
        return categories(Outcome("s", "target", "t", status, "", reason), d)  # type: ignore[arg-type]

    assert cats("pass", "") == []
    assert cats("fail", "no snapshot") == ["no snapshot"]
    assert cats("fail", "harness error: KeyError: x") == ["harness error"]
    assert cats("fail", "2 conformance finding(s); snapshot differs", _diff(MISSING)) == [
        "conformance",
        "missing update",
    ]
    assert cats("differs", "", _diff(AGENT_INFO, ("stop reason", "x"), stale=("y",))) == [
        "stop reason",
        "changed field",
        "stale diverge",
    ]
    assert CATEGORY_ORDER[:-1] == CATEGORIES


def test_fit_wraps_long_summary_lines_with_an_indent() -> None:
    line = "  peers/x codex-acp: model[*].body: 1 value(s) masked (" + "word " * 40 + ")"
    parts = fit(line, 120)
    assert len(parts) > 1 and all(len(p) <= 120 for p in parts)
    assert parts[1].startswith("      ") and not parts[1].startswith("       ")
    assert fit("short") == ["short"]


def test_fit_breaks_where_a_phrase_ends_and_a_cell_continues_under_itself() -> None:
    reason = "  4 codex-acp, 3 opencode, 2 qwen-code: not installed: run parity peers install"
    assert fit(reason, 60) == [
        "  4 codex-acp, 3 opencode, 2 qwen-code: not installed:",
        "      run parity peers install",
    ]
    row = "chat-agent   4  -  4 skip   4 same vs codex-acp (4 recorded), 2 differs vs plus"
    assert fit(row, 70, indent=29) == [
        "chat-agent   4  -  4 skip   4 same vs codex-acp (4 recorded),",
        "                             2 differs vs plus",
    ]
    # A phrase longer than a line still breaks between its words.
    assert all(len(p) <= 30 for p in fit("word " * 20, 30))


# -- session data, HTML, JUnit ---------------------------------------------------------


HOSTILE = '<script>alert(1)</script>\x1b[31m\x00"&'


def _data() -> dict[str, Any]:
    """Session data for one scenario: plus differs from native at one changed field, one
    diverge rule explained another; views with hostile text and a model part."""
    ref = {
        "steps": [{"step": 1, "result": {"a": 1, "name": "native", "text": HOSTILE}}],
        "model": [{"body": {"messages": ["hi"]}}],
    }
    other = {
        "steps": [{"step": 1, "result": {"a": 2, "name": "plus", "text": HOSTILE}}],
        "model": [{"body": {"messages": ["hi"]}}],
    }
    rule = Rule("steps[*].result.name", "each names itself", ["plus"])
    report = compare(
        ref, other, profile="exact", diverge=[rule], ref_name="native", other_name="plus"
    )
    collected = Collected(keep_views=True)
    collected.scenarios["demo/x"] = {
        "name": "demo/x",
        "description": f"desc {HOSTILE}",
        "file": "scenarios/demo/x.yaml",
        "targets": ["native", "plus"],
        "reference": "native",
        "compare": "exact",
        "profile": "exact",
        "diverge": [rule_record(rule)],
        "masks": [],
    }
    collected.diff("demo/x", "parity", "plus", "native", report)
    collected.view("demo/x", "native", ref, live=False)
    collected.view("demo/x", "plus", other, live=True)
    outcomes = [
        Outcome("demo/x", "target", "native", "skip", reason="DSH not found"),
        Outcome("demo/x", "target", "plus", "pass"),
        Outcome("demo/x", "parity", "plus", "differs", "native", "native: recorded"),
    ]

    class Report:
        def __init__(self, name: str, outcome: str, text: str) -> None:
            self.nodeid = f"scenarios/demo/x.yaml::{name}"
            self.when, self.outcome, self.duration = "call", outcome, 0.25
            self.longrepr = ("f", 1, f"Skipped: {text}") if outcome == "skipped" else text
            self.longreprtext = text

    collected.item(Report("native", "skipped", "native unavailable"), outcomes[0], False)
    collected.item(Report("plus", "passed", ""), outcomes[1], False)
    collected.item(Report("parity[plus~native]", "failed", f"boom {HOSTILE}"), outcomes[2], False)
    return session_data(outcomes=outcomes, collected=collected, generated="now")


def test_session_data_has_the_cells_and_the_diff_records() -> None:
    data = _data()
    (s,) = data["scenarios"]
    cells = {c["target"]: c for c in s["cells"]}
    assert cells["native"]["own"]["label"] == "skip: native unavailable"
    assert cells["native"]["parity"] is None
    assert cells["plus"]["parity"]["label"] == "differs: changed field (recorded)"
    (rec,) = s["diffs"]
    assert rec["count"] == 1 and rec["differences"][0]["ref_path"] == ["steps", 0, "result", "a"]
    assert [e["rule"] for e in rec["explained"]] == ["steps[*].result.name"]
    assert s["views"]["native"]["source"] == "recorded" and "model:" in s["views"]["plus"]["model"]
    lean = json.loads(to_json(data))
    assert "views" not in lean["scenarios"][0] and lean["scenarios"][0]["cells"]


def test_line_spans_map_view_paths_to_their_lines() -> None:
    text = dump_view(
        {"steps": [{"a": {"b": 1, "c": [1, 2]}, "t": "two\nlines\n"}, {"e": {}}], "z": 0}
    )
    lines = text.splitlines()
    spans = line_spans(text)

    def at(*path: str | int) -> list[str]:
        first, last = spans[path]
        return lines[first : last + 1]

    assert at("steps", 0, "a", "b") == ["    b: 1"]
    assert at("steps", 0, "a", "c") == ["    c:", "    - 1", "    - 2"]
    assert at("steps", 0, "t") == ["  t: |", "    two", "    lines"]
    assert at("steps", 1) == ["- e: {}"]
    assert at("z") == ["z: 0"]


def test_html_pages_escape_everything_and_highlight_by_path() -> None:
    pages = render_report(_data())
    assert set(pages) == {"index.html", "scenarios/demo__x.html"}
    for page in pages.values():
        assert "<script" not in page
        assert "\x1b" not in page and "\x00" not in page
        assert "Content-Security-Policy" in page
    page = pages["scenarios/demo__x.html"]
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in page
    assert "desc &lt;script&gt;alert(1)&lt;/script&gt;\\x1b[31m\\x00&quot;&amp;" in page
    # The changed field is highlighted in both views, the explained one as expected.
    assert '<span class="ln hl" id="v0-L' in page and '<span class="ln hl" id="v1-L' in page
    assert '<span class="ln ex" id="v1-L' in page
    assert '<details class="model" id="model">' in page  # collapsed: no `open`
    index = pages["index.html"]
    assert "differs: changed field (recorded)" in index and "skip: native unavailable" in index


def test_junit_has_one_testcase_per_item_and_no_forbidden_characters() -> None:
    text = render_junit(_data())
    root = ET.fromstring(text.encode())
    (suite,) = root.iter("testsuite")
    assert suite.get("tests") == "3" and suite.get("failures") == "1"
    assert suite.get("skipped") == "1"
    cases = {c.get("name"): c for c in suite.iter("testcase")}
    assert set(cases) == {"native", "plus", "parity[plus~native]"}
    assert {c.get("classname") for c in cases.values()} == {"demo/x"}
    check = cases["parity[plus~native]"]
    props = {p.get("name"): p.get("value") for p in check.iter("property")}
    assert props["status"] == "differs" and props["check"] == "parity"
    assert props["reference"] == "native" and props["recorded"] == "yes"
    assert props["categories"] == "changed field" and props["differences"] == "1"
    failure = check.find("failure")
    assert failure is not None and failure.get("message") == "differs: changed field (recorded)"
    assert failure.text == 'boom <script>alert(1)</script>[31m"&'  # ESC and NUL stripped
    skipped = cases["native"].find("skipped")
    assert skipped is not None and skipped.get("message") == "native unavailable"
    assert xml_text("a\x00b\x1bc\x7fd\ufffe") == "ab" + "c\x7fd"


def test_page_paths_are_unique_and_safe() -> None:
    assert page_paths(["a/b", "a__b", "x y/<z>"]) == {
        "a/b": "scenarios/a__b.html",
        "a__b": "scenarios/a__b-2.html",
        "x y/<z>": "scenarios/x_y___z_.html",
    }
    assert esc("<a href='x'>") == "&lt;a href=&#x27;x&#x27;&gt;"


def test_run_and_record_pass_the_report_options_to_pytest(tmp_path: Path) -> None:
    project = Project(tmp_path / "p")
    project.write("parity.toml", mini_target("mini"))
    project.write("scenarios/demo/text.yaml", TEXT_SCENARIO)
    args = build_parser().parse_args(
        ["run", "--report", "out", "--junit", "j.xml", "--json", "s.json"]
    )
    args.pytest_args = []
    config = load_config(project.root)
    out = pytest_args(args, config, record=False)
    for option, value in (
        ("--parity-report", "out"),
        ("--parity-junit", "j.xml"),
        ("--parity-json", "s.json"),
    ):
        assert out[out.index(option) + 1] == str(Path(value).resolve())
    bare = argparse.Namespace(**{**vars(args), "report": None, "junit": None, "json": None})
    assert "--parity-report" not in pytest_args(bare, config, record=True)


# -- end to end ------------------------------------------------------------------------


def test_run_writes_junit_and_json_and_groups_the_same_change(tmp_path: Path) -> None:
    variant = tmp_path / "mini_x_agent.py"
    variant.write_text(AGENT.read_text().replace('{"loadSession": False}', '{"loadSession": True}'))
    project = Project(tmp_path / "proj")
    project.write("parity.toml", mini_target("mini") + mini_target("mini-x", agent=variant))
    for name in ("one", "two"):
        project.write(
            f"scenarios/demo/{name}.yaml",
            TEXT_SCENARIO.replace("targets: [mini, mini-b]", "targets: [mini, mini-x]"),
        )
    assert project.parity("record").returncode == 1  # records, and mini-x differs
    done = project.parity("run", "--junit", "ci/junit.xml", "--json", "ci/summary.json")
    assert done.returncode == 1
    out = done.stdout
    assert "demo/one  pass  pass; differs from mini: changed field" in out
    assert "  mini-x vs mini, same change in 2 scenarios: demo/one, demo/two\n" in out
    assert "    changed field at steps[0].result.agentCapabilities.loadSession\n" in out
    assert "parity JUnit XML: ci/junit.xml" in out and "parity JSON: ci/summary.json" in out

    root = ET.parse(project.root / "ci" / "junit.xml").getroot()
    cases = [(c.get("classname"), c.get("name")) for c in root.iter("testcase")]
    assert sorted(cases) == [
        ("demo/one", "mini"),
        ("demo/one", "mini-x"),
        ("demo/one", "parity[mini-x~mini]"),
        ("demo/two", "mini"),
        ("demo/two", "mini-x"),
        ("demo/two", "parity[mini-x~mini]"),
    ]
    failures = [c for c in root.iter("testcase") if c.find("failure") is not None]
    assert [c.get("name") for c in failures] == ["parity[mini-x~mini]"] * 2
    message = failures[0].find("failure")
    assert message is not None and message.get("message") == "differs: changed field"
    assert "steps[0].result.agentCapabilities.loadSession" in (message.text or "")

    data = json.loads((project.root / "ci" / "summary.json").read_text())
    assert data["format"] == "acp-parity-results/1" and data["targets"] == ["mini", "mini-x"]
    assert data["counts"] == {"pass": 4, "differs": 2}
    (group,) = data["groups"]
    assert group["scenarios"] == ["demo/one", "demo/two"] and group["against"] == "mini"
    cell = data["scenarios"][0]["cells"][1]
    assert cell["parity"]["label"] == "differs: changed field"
    assert cell["parity"]["categories"] == ["changed field"]
