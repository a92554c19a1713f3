"""Judge one run: a target's run against its stored snapshot, its problems and its
conformance findings -> one `Verdict`. Pure: plain data in (the scenario, the run's
`RunResult`, the snapshot text the store read, the target's policy), plain data out;
no pytest, no syrupy, no file.

The order of the judgement makes the first cause the headline: conformance findings
(under the target's `conformance = "fail"`), then run problems against
`expect_problems` (the scenario's, then the target table's), then the snapshot. A run
with undeclared problems is never recorded (`parity record`), and one that drifted
from its snapshot or has none leaves its new text pending for `parity review --from`
only when it is clean.

A target added with `--targets +NAME` and not recorded yet has no snapshot to check:
its run is still judged for problems (its parity checks share it), and it skips
unless they fail it.

The verdict holds everything its item reports: the outcome and the ledger's rows (an
`ItemRecord`), the whole failure text, the text the snapshot check asserts (and writes
under `parity record`), the pending text, and the drift the report shows. The pytest
item (`parity.suite.target_item`) runs, judges, records and raises; it judges nothing.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any

from parity.checks.diff import ParityReport, compare
from parity.checks.expected import Judged, excused, failure_block, judge
from parity.checks.problems import run_problems
from parity.core.printable import printable
from parity.report.ledger import ItemRecord
from parity.report.outcome import Outcome, Status
from parity.report.rows import ExpectedRow, FindingsRow, MaskedRow, TargetExpect
from parity.report.text import failure_text, findings_block
from parity.scenario.model import ExpectedProblem, Scenario
from parity.view.dump import dump_view, load_view, text_diff

if TYPE_CHECKING:
    from parity.engine.runner import RunResult


@dataclass(frozen=True)
class Policy:
    """What the target's table and the command decide about a run."""

    conformance: str = "warn"
    """The target's `conformance` policy: `fail` fails the item on a finding."""
    standing: tuple[ExpectedProblem, ...] = ()
    """The target table's `expect_problems` (for every scenario it runs in)."""
    recording: bool = False
    """`parity record` (`--snapshot-update`): write the snapshot instead of comparing."""
    added: bool = False
    """The target was added with `--targets +NAME`, not listed by the scenario."""


@dataclass(frozen=True)
class Shown:
    """How the verdict's texts name files (relative to where the command started)."""

    snapshot: str
    scenario_file: str


@dataclass(frozen=True)
class Drift:
    """A recorded snapshot this run no longer matches: both texts and the categorized
    diff of their views (the recording as the reference)."""

    recorded: str
    live: str
    report: ParityReport


@dataclass(frozen=True)
class SnapshotOutcome:
    """What the snapshot check made of the run's view; empty when it was not checked
    (an added target not recorded yet, or a broken run under `parity record`)."""

    text: str | None = None
    """The text the snapshot check asserts (and writes under `parity record`)."""
    matched: bool = False
    """The snapshot equals its recording, or is written now (`parity record`)."""
    pending: str | None = None
    """The new snapshot text a clean run that drifted, or has none, leaves for review."""
    drift: Drift | None = None


@dataclass(frozen=True)
class Verdict:
    """One run judged (see the module doc)."""

    status: Status
    """pass, new (recorded now), fail, or skip (an added target not recorded yet)."""
    reason: str
    failure: str | None
    """The item's whole failure text; None when it passes or skips."""
    record: ItemRecord
    """Its outcome and the ledger's rows: masks applied, findings, expected problems."""
    checked: bool
    """The run's view counts as this target's live view (every run but an added,
    unrecorded target's)."""
    snapshot: SnapshotOutcome = SnapshotOutcome()
    """Its snapshot check; what it leaves pending only when the run is clean."""


def judge_run(
    scenario: Scenario,
    target: str,
    result: RunResult,
    recorded: str | None,
    policy: Policy,
    shown: Shown,
) -> Verdict:
    """The verdict on `result` (see the module doc); `recorded` is the stored snapshot
    text, None when there is none."""
    record = ItemRecord()
    judged = _problems(scenario, target, result, policy, record)
    if policy.added and recorded is None and not policy.recording:
        return _unrecorded(scenario, target, result, judged, record)
    findings, claimed = excused(result.findings, scenario.expect_problems, target)
    for finding, entry in claimed:
        record.expected.append(ExpectedRow(scenario.name, target, finding, entry.reason, 1))
    if findings:
        row = FindingsRow(scenario.name, target, policy.conformance, tuple(findings))
        record.findings.append(row)
    record.masked += _masks(scenario, target, result.view)
    snap = _Snapshot("fail", "", None)
    if not (judged.unexpected and policy.recording):
        snap = _snapshot(scenario, target, result, recorded, policy, shown)
    status, reason, failure = snap.status, snap.reason, snap.failure
    if not judged.ok:
        # Problems first: a broken run explains a snapshot change, not the reverse.
        status, reason, failure = _broken(scenario, target, result, judged, policy, shown, snap)
    blocking = findings if policy.conformance == "fail" else []
    if blocking:
        # Findings first: a protocol slip explains a snapshot change, not the reverse.
        counted = f"{len(blocking)} conformance finding(s)"
        headline = (
            f"{scenario.name}: {target} broke the ACP protocol "
            f'(conformance = "fail" for this target)'
        )
        block = findings_block(blocking, policy.conformance)
        if failure is None:
            body = f"{block}\n\nsnapshot: {status}"
            text = failure_text(headline, body, {target: result.transcript})
        else:
            text = f"{headline}\n\n{block}\n\n{failure}"
        why = f"{counted}; {reason}" if reason else counted
        return _verdict(scenario, target, record, "fail", why, text, snap, pending=False)
    if failure is not None:
        return _verdict(scenario, target, record, "fail", reason, failure, snap, judged.ok)
    return _verdict(scenario, target, record, status, "", None, snap, pending=False)


def unjudged(scenario: Scenario, target: str, problem: str) -> Verdict:
    """The verdict on a run that could not be judged (the checks' time limit reached
    during the judgement, `parity.engine.postrun`; or an agent's data its rendering
    could not follow): that problem, and nothing compared."""
    record = ItemRecord()
    reason = problem.split(":")[0]
    text = (
        f"{scenario.name}: the {target} run could not be judged; its snapshot was not"
        f" compared\n\n  {printable(problem)}"
    )
    record.outcome = Outcome(scenario.name, "target", target, "fail", "", reason)
    return Verdict("fail", reason, text, record, checked=False)


@dataclass(frozen=True)
class _Snapshot:
    """How the view compared with its snapshot: the item's status, reason and failure
    had the snapshot been all it checked, and the verdict's part."""

    status: Status
    reason: str
    failure: str | None
    outcome: SnapshotOutcome = SnapshotOutcome()


def _verdict(
    scenario: Scenario,
    target: str,
    record: ItemRecord,
    status: Status,
    reason: str,
    failure: str | None,
    snap: _Snapshot,
    pending: bool,
) -> Verdict:
    record.outcome = Outcome(scenario.name, "target", target, status, "", reason)
    outcome = snap.outcome if pending else replace(snap.outcome, pending=None)
    return Verdict(status, reason, failure, record, checked=True, snapshot=outcome)


def _problems(
    scenario: Scenario, target: str, result: RunResult, policy: Policy, record: ItemRecord
) -> Judged:
    """The run's problems against the scenario's `expect_problems` and the target
    table's; the expected ones, and which table entries claimed one, go on `record`."""
    judged = judge(
        run_problems(scenario, result.transcript),
        scenario.expect_problems,
        target,
        policy.standing,
    )
    if policy.standing:
        record.target_expect = TargetExpect(target, tuple(judged.standing_used))
    counted = Counter((p.headline(), e.reason) for p, e in judged.expected)
    for (headline, reason), times in counted.items():
        record.expected.append(ExpectedRow(scenario.name, target, headline, reason, times))
    return judged


def _unrecorded(
    scenario: Scenario, target: str, result: RunResult, judged: Judged, record: ItemRecord
) -> Verdict:
    """An added target not recorded yet: nothing to check a snapshot against
    (`parity record --targets +NAME` records it), but its problems still fail it."""
    reason = (
        f"added with --targets +{target} and not recorded: its parity "
        f"checks compare it with {scenario.targets[0]}"
    )
    status: Status = "skip"
    failure = None
    if judged.unexpected:
        note = f"no snapshot: {reason}"
        status, reason, failure = _broken_text(scenario, target, result, judged, "", note)
    record.outcome = Outcome(scenario.name, "target", target, status, "", reason)
    return Verdict(status, reason, failure, record, checked=False)


def _masks(scenario: Scenario, target: str, view: Any) -> list[MaskedRow]:
    """The masks this run applied (and their reasons), for the summary."""
    reasons = {m.path: m.reason for m in scenario.masks}
    counts = view.get("masked", {}) if isinstance(view, dict) else {}
    return [
        MaskedRow(scenario.name, target, path, int(count), reasons.get(path, ""))
        for path, count in counts.items()
    ]


def _snapshot(
    scenario: Scenario,
    target: str,
    result: RunResult,
    recorded: str | None,
    policy: Policy,
    shown: Shown,
) -> _Snapshot:
    """Check (or, recording, write) the snapshot; only `parity record` writes."""
    # The checks after the run wrote it once (`parity.engine.postrun`): a flood's YAML
    # costs seconds per pass.
    text = result.text if result.text is not None else dump_view(result.view)
    if policy.recording or recorded == text:
        created = policy.recording and recorded is None
        return _Snapshot("new" if created else "pass", "", None, SnapshotOutcome(text, True))
    rel = shown.snapshot
    if recorded is None:
        headline = (
            f"{scenario.name}: no snapshot for {target} at {rel}; record it with "
            f"`parity record {shown.scenario_file} --targets {target}`, review it, commit it"
        )
        body = f"this run's view (what `parity record` would write):\n\n{text}"
        failure = failure_text(headline, body, {target: result.transcript})
        return _Snapshot("fail", "no snapshot", failure, SnapshotOutcome(text, pending=text))
    headline = (
        f"{scenario.name}: {target} no longer matches its snapshot {rel} "
        "(if the change is intended: `parity record`, then review the diff)"
    )
    compared = compare(
        load_view(recorded),
        result.view if result.text is not None else load_view(text),
        profile=scenario.profile,
        diverge=[],
        ref_name="snapshot",
        other_name=target,
        scenario=scenario.name,
    )
    failure = failure_text(
        headline,
        compared.render() + "\n\n" + "\n".join(text_diff(recorded, text, rel)),
        {target: result.transcript},
    )
    drifted = SnapshotOutcome(text, pending=text, drift=Drift(recorded, text, compared))
    return _Snapshot("fail", "snapshot differs", failure, drifted)


def _broken(
    scenario: Scenario,
    target: str,
    result: RunResult,
    judged: Judged,
    policy: Policy,
    shown: Shown,
    snap: _Snapshot,
) -> tuple[Status, str, str]:
    """A run with undeclared problems or stale `expect_problems`: the problems, then
    what happened to the snapshot (its failure, or a line saying so)."""
    if judged.unexpected and policy.recording:
        end = f"nothing was written to {shown.snapshot}: a broken run is never recorded"
    else:
        done = "recorded to" if snap.status == "new" else "matches"
        end = f"snapshot: {done} {shown.snapshot}"
    return _broken_text(scenario, target, result, judged, snap.reason, snap.failure, end)


def _broken_text(
    scenario: Scenario,
    target: str,
    result: RunResult,
    judged: Judged,
    reason: str,
    failure: str | None,
    end: str = "",
) -> tuple[Status, str, str]:
    """`(fail, why, text)` of a broken run: the problems' block, closed by `end`, with
    the transcript's tails; or, when the snapshot check failed too, its `failure`
    after the block."""
    counted = []
    if judged.unexpected:
        counted.append(f"{len(judged.unexpected)} run problem(s)")
    if judged.stale:
        counted.append(f"{len(judged.stale)} stale expect_problems")
    if judged.unexpected:
        headline = (
            f"{scenario.name}: the {target} run had {counted[0]} the scenario does not expect"
        )
    else:
        headline = (
            f"{scenario.name}: {len(judged.stale)} expect_problems entr(ies) "
            f"did not occur on {target}"
        )
    block = failure_block(judged, target)
    if failure is None:
        text = failure_text(headline, f"{block}\n\n{end}", {target: result.transcript})
    else:
        text = f"{headline}\n\n{block}\n\n{failure}"
    why = "; ".join(counted) + (f"; {reason}" if reason else "")
    return "fail", why, text
