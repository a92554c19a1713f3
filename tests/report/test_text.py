"""Pure rendering: summary table, parity notes, failure tails, side by side, calibration."""

from __future__ import annotations

from pathlib import Path

import yaml

from parity.core.transcript import Frame, ProcessRecord, StepRecord, Transcript
from parity.engine.store import snapshot_path
from parity.report.ledger import ItemRecord
from parity.report.matrix import summary_table
from parity.report.outcome import Outcome
from parity.report.rows import FindingsRow
from parity.report.text import (
    counts_line,
    failure_text,
    findings_block,
    findings_lines,
    parity_notes,
    side_by_side,
)
from parity.view.calibrate import differing_paths, mask_proposal
from parity.view.dump import dump_view, load_view

NATIVE_WHY = "native unavailable (dsh not found on PATH) and no recorded snapshot"

OUTCOMES = [
    Outcome("baseline/text", "target", "native", "skip", reason="dsh not found on PATH"),
    Outcome("baseline/text", "target", "plus", "pass"),
    Outcome("baseline/text", "parity", "plus", "skip", "native", NATIVE_WHY),
    Outcome("baseline/tool", "target", "plus", "fail", reason="snapshot differs"),
    Outcome("baseline/tool", "parity", "plus", "skip", "native", NATIVE_WHY),
    Outcome("peers/text", "target", "plus", "new"),
    Outcome("peers/text", "target", "qwen-code", "pass"),
    Outcome(
        "peers/text", "parity", "qwen-code", "differs", "plus", "plus: compared with a recording"
    ),
]


def test_outcomes_survive_the_trip_through_user_properties() -> None:
    for outcome in OUTCOMES:
        props: list[tuple[str, object]] = [("other", 1)]
        ItemRecord(outcome=outcome).attach(props)
        record = ItemRecord.of(props)
        assert record is not None and record.outcome == outcome
        assert Outcome.from_dict(outcome.to_dict()) == outcome
    assert ItemRecord.of([("something", "else")]) is None


def test_summary_table_has_scenarios_as_rows_and_targets_as_columns() -> None:
    lines = summary_table(OUTCOMES)
    assert lines[0].split() == ["scenario", "native", "plus", "qwen-code"]
    assert set(lines[1]) == {"-", " "}
    rows = {line.split()[0]: line for line in lines[2:]}
    assert list(rows) == ["baseline/text", "baseline/tool", "peers/text"]
    header = lines[0]
    col = header.index("plus")
    assert rows["baseline/text"][col:].startswith("pass; not compared with native")
    assert rows["baseline/tool"][col:].startswith("fail; not compared with native")
    # Compared with a recording (the outcome's reason says so): the cell says it too.
    assert rows["peers/text"][header.index("qwen-code") :] == "pass; differs from plus (recorded)"
    assert rows["peers/text"][header.index("native") :].startswith("-")


def test_parity_notes_count_checks_that_did_not_run_with_their_reasons() -> None:
    assert parity_notes(OUTCOMES) == [
        "parity checks: 3 collected, 1 ran, 2 did not run",
        f"  2 did not run: {NATIVE_WHY}",
        "  1 ran against a recording: plus: compared with a recording",
    ]
    assert counts_line(OUTCOMES) == "2 pass, 1 fail, 1 differs, 3 skip, 1 new"
    assert summary_table([]) == ["no scenario items ran"]


TRANSCRIPT = Transcript(
    scenario="s",
    target="plus",
    run_id="r",
    frames=[
        Frame(seq=i, t=0.0, direction="out" if i % 2 == 0 else "in", raw=f"frame {i}")
        for i in range(30)
    ]
    + [Frame(seq=30, t=0.0, direction="in", raw="garbage", parse_error="not JSON")],
    steps=[
        StepRecord(index=2, kind="prompt", label='prompt s1 "go"', problem="timed out after 15 s")
    ],
    problems=["agent exited with code 3"],
    processes=[ProcessRecord(argv=[], exit_code=3, stopped_by="exit", stderr_tail="a\nb\nboom\n")],
)


def test_failure_text_puts_the_diff_first_then_transcript_and_stderr_tails() -> None:
    text = failure_text("headline", "THE DIFF\n", {"plus": TRANSCRIPT})
    assert text.index("THE DIFF") < text.index("plus: transcript tail")
    assert text.index("plus: transcript tail") < text.index("plus: stderr tail")
    assert "#11 <- frame 11" in text and "#10 ->" not in text  # the last 20 frames
    assert "#30 <- garbage  [parse error: not JSON]" in text
    assert 'step 3 (prompt s1 "go"): timed out after 15 s' in text  # 1-based
    assert "agent exited with code 3" in text
    assert "process 0 (exit 3, stopped by exit):\n    a\n    b\n    boom" in text


def test_side_by_side_aligns_inserted_lines() -> None:
    left = "a\nb\nc\n"
    right = "a\nx\nb\nc2\n"
    rows = side_by_side(left, right, ("L", "R"), width=4).splitlines()
    assert rows[2:] == ["a      a", "     > x", "b      b", "c    | c2"]


def test_differing_paths_and_mask_proposal() -> None:
    a = {"steps": [{"result": {"_meta": {"nonce": "1"}, "ok": True}}], "x": [1, 2]}
    b = {"steps": [{"result": {"_meta": {"nonce": "2"}, "ok": True}}], "x": [1], "y": 0}
    paths = differing_paths(a, b)
    assert paths == [("steps", 0, "result", "_meta", "nonce"), ("x", 1), ("y",)]
    proposal = yaml.safe_load(mask_proposal(paths[:1], "plus", 3))
    assert proposal == {
        "masks": [
            {
                "path": "steps[0].result._meta.nonce",
                "reason": "nondeterministic in plus (parity calibrate, 3 runs)",
                "targets": ["plus"],
            }
        ]
    }
    assert "no mask needed" in mask_proposal([], "plus", 2)


def test_snapshot_yaml_is_readable_and_round_trips() -> None:
    view = {"steps": [{"text": "two\nlines\n", "n": 1, "none": None}], "b": "x", "a": []}
    text = dump_view(view)
    assert text.splitlines()[:4] == ["steps:", "- text: |", "    two", "    lines"]
    assert text.index("b: x") < text.index("a: []")  # the view's order, not sorted
    assert load_view(text) == view
    assert snapshot_path(Path("snaps"), "a/b", "plus") == Path("snaps/a/b/plus.yaml")


def test_findings_lines_count_by_kind_per_run_and_clip_long_lists() -> None:
    many = [f"[late_update] step 3, frame {i}: agent_message_chunk late" for i in range(7)]
    rows: list[FindingsRow] = [
        FindingsRow("demo/b", "peer", "warn", (*many, "[schema] step 2, frame 9: bad")),
        FindingsRow("demo/a", "plus", "fail", ("[unknown_tool_call] step 3, frame 5: ghost",)),
        FindingsRow("demo/a", "clean", "warn", ()),
    ]
    lines = findings_lines(rows, shown=5)
    assert lines[0] == "conformance findings: 9 in 2 run(s)"
    assert lines[1] == "  demo/a plus (fail: failed its item): 1 unknown_tool_call"
    assert lines[3] == "  demo/b peer (warn: warning only): 7 late_update, 1 schema"
    assert lines[-1] == "    ... 3 more (`parity show demo/b peer`)"
    assert not any("clean" in line for line in lines)
    assert findings_lines([FindingsRow("demo/a", "clean", "warn", ())]) == []


def test_findings_block_lists_every_finding_or_says_none() -> None:
    assert findings_block([], "fail") == "conformance: no findings"
    block = findings_block(["[schema] a", "[late_update] b"], "warn")
    assert block.splitlines() == [
        "conformance (warn): 2 finding(s)",
        "  [schema] a",
        "  [late_update] b",
    ]
