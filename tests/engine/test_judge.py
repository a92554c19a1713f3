"""The engine's judgement of one run, on plain data: no pytest item, no syrupy, no
process (the suite's tests run the same judgement through the plugin end to end)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from parity.core.transcript import Transcript
from parity.engine.judge import Policy, Shown, SnapshotOutcome, Verdict, judge_run
from parity.engine.runner import RunResult
from parity.report.rows import FindingsRow, MaskedRow
from parity.scenario.load import build_scenario
from parity.view.dump import dump_view

SCENARIO = build_scenario(
    "description: judged on plain data\n"
    "targets: [mini, other]\n"
    "masks:\n"
    "  - {path: 'steps[0].result.nonce', reason: a random nonce}\n"
    "steps:\n"
    "  - initialize: {}\n",
    Path("scenarios/demo/judged.yaml"),
    Path("scenarios"),
)
VIEW: dict[str, Any] = {"steps": [{"step": 1, "result": {"nonce": "<masked>"}}]}
MASKED = {**VIEW, "masked": {"steps[0].result.nonce": 1}}
SHOWN = Shown("snapshots/demo/judged/mini.yaml", "scenarios/demo/judged.yaml")


def run(
    view: Any = VIEW, problems: tuple[str, ...] = (), findings: tuple[str, ...] = ()
) -> RunResult:
    transcript = Transcript("demo/judged", "mini", "r1", problems=list(problems))
    return RunResult("demo/judged", "mini", view, transcript, list(findings))


def verdict(result: RunResult, recorded: str | None, **policy: Any) -> Verdict:
    return judge_run(SCENARIO, "mini", result, recorded, Policy(**policy), SHOWN)


def test_a_run_equal_to_its_snapshot_passes_and_notes_its_masks() -> None:
    v = verdict(run(MASKED), dump_view(MASKED))
    assert (v.status, v.reason, v.failure) == ("pass", "", None)
    assert v.snapshot.text == dump_view(MASKED) and v.snapshot.matched and v.checked
    assert v.record.masked == [
        MaskedRow("demo/judged", "mini", "steps[0].result.nonce", 1, "a random nonce")
    ]
    assert v.record.outcome is not None and v.record.outcome.status == "pass"
    assert v.snapshot.pending is None and v.snapshot.drift is None


def test_a_drifted_run_fails_with_the_categorized_and_the_text_diff() -> None:
    recorded = dump_view({"steps": [{"step": 1, "result": {"nonce": "old"}}]})
    v = verdict(run(), recorded)
    assert (v.status, v.reason, v.snapshot.matched) == ("fail", "snapshot differs", False)
    assert v.failure is not None
    assert v.failure.startswith(
        "demo/judged: mini no longer matches its snapshot snapshots/demo/judged/mini.yaml"
    )
    assert "--- snapshots/demo/judged/mini.yaml (recorded)" in v.failure
    assert v.snapshot.drift is not None and v.snapshot.drift.recorded == recorded
    assert v.snapshot.pending == dump_view(VIEW)  # a clean run's new text waits for review


def test_a_run_without_snapshot_fails_with_the_command_that_records_it() -> None:
    v = verdict(run(), None)
    assert (v.status, v.reason) == ("fail", "no snapshot")
    assert v.failure is not None
    assert "`parity record scenarios/demo/judged.yaml --targets mini`" in v.failure
    assert v.snapshot.pending == dump_view(VIEW) and v.snapshot.drift is None


def test_recording_writes_a_clean_run_and_never_a_broken_one() -> None:
    new = verdict(run(), None, recording=True)
    assert (new.status, new.snapshot.matched, new.snapshot.text) == ("new", True, dump_view(VIEW))
    broken = verdict(run(problems=("run timeout after 5 s",)), None, recording=True)
    assert broken.status == "fail" and broken.snapshot == SnapshotOutcome()  # nothing checked
    assert broken.reason == "1 run problem(s)"
    assert broken.failure is not None
    assert "a broken run is never recorded" in broken.failure


def test_conformance_findings_under_fail_come_first_and_leave_nothing_pending() -> None:
    v = verdict(run(findings=("[schema] step 1, frame 2: bad",)), None, conformance="fail")
    assert v.status == "fail" and v.reason == "1 conformance finding(s); no snapshot"
    assert v.failure is not None and "broke the ACP protocol" in v.failure.splitlines()[0]
    assert v.snapshot.pending is None
    assert v.record.findings == [
        FindingsRow("demo/judged", "mini", "fail", ("[schema] step 1, frame 2: bad",))
    ]


def test_an_added_target_not_recorded_skips_unless_its_run_is_broken() -> None:
    skipped = verdict(run(), None, added=True)
    assert skipped.status == "skip" and not skipped.checked and skipped.snapshot.text is None
    assert skipped.reason.startswith("added with --targets +mini and not recorded")
    broken = verdict(run(problems=("run timeout after 5 s",)), None, added=True)
    assert broken.status == "fail" and broken.failure is not None
    assert broken.failure.rstrip().endswith("compare it with mini")
