"""A target's item: run the target, judge the run, check its snapshot.

`...::plus` runs the target (through the session's runner and its run cache), then
judges in this order, so the first cause is the headline: conformance findings (under
the target's `conformance = "fail"`), run problems against `expect_problems` (the
scenario's, then the target table's), then the
snapshot (`parity.suite.snapshots`). A target that cannot run here skips, unless
`--require-live` names it, or `--require-targets` names it and it has no recording to
stand in for it.
"""

from __future__ import annotations

import os
from collections import Counter
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

from parity.checks.expected import Judged, failure_block, judge
from parity.checks.problems import run_problems
from parity.report.ledger import update
from parity.report.outcome import Status
from parity.report.text import failure_text, findings_block
from parity.scenario.model import Scenario
from parity.suite.items import ScenarioFailure, ScenarioItem

if TYPE_CHECKING:
    from parity.checks.diff import ParityReport
    from parity.engine.runner import RunResult


class TargetItem(ScenarioItem):
    """Run one target and check its normalized view against the recorded snapshot."""

    added = False
    _pending_text: str | None = None
    """The new snapshot text when this run drifted from its snapshot or has none."""
    """Added to this scenario by `--targets +name` rather than listed by it."""

    def check(self) -> None:
        # A required target that cannot run here still serves its parity checks from its
        # recorded snapshot (how CI compares with native, which it cannot install); only
        # with no recording either does --require-targets fail this item. --require-live
        # fails it either way.
        from parity.engine.store import snapshot_path

        recorded = snapshot_path(self.state.config.snapshots_dir, self.scenario.name, self.target)
        why = self.unavailable(self.target)
        if why is not None:
            self.require_live(self.target, why)
            if self.target in self.state.require and not recorded.is_file():
                raise ScenarioFailure(
                    f"required target {self.target} cannot run: {why} "
                    f"(and it has no recorded snapshot at {recorded})"
                )
            self.record("skip", why)
            pytest.skip(f"{self.target} unavailable: {why}")
        if self.added and not recorded.is_file() and not self.config.option.update_snapshots:
            # Not recorded yet (`parity record --targets +NAME` records it): nothing to
            # check a snapshot against, but the run (shared with its parity checks) is
            # still judged, so its problems show here and not only in `parity show`.
            reason = (
                f"added with --targets +{self.target} and not recorded: its parity "
                f"checks compare it with {self.scenario.targets[0]}"
            )
            result = self.state.runner.result(self.scenario, self.target)
            judged = self._judge(result)
            if judged.unexpected:
                note = f"no snapshot: {reason}"
                _, why, text = self._broken(result, judged, "skip", "", note)
                self.record("fail", why)
                raise ScenarioFailure(text)
            self.record("skip", reason)
            pytest.skip(reason)
        result = self.state.runner.result(self.scenario, self.target)
        self.state.ledger.collected.view(self.scenario.name, self.target, result.view, live=True)
        policy = self.state.config.targets[self.target].conformance
        self._note_findings(result.findings, policy)
        judged = self._judge(result)
        status: Status = "fail"
        reason, failure = "", None
        if not (judged.unexpected and self.config.option.update_snapshots):
            status, reason, failure = self._snapshot(result)
        else:
            self._note_masks(result.view)  # never record a broken run (nor compare it)
        if not judged.ok:
            # Problems first: a broken run explains a snapshot change, not the reverse.
            status, reason, failure = self._broken(result, judged, status, reason, failure)
        blocking = result.findings if policy == "fail" else []
        if blocking:
            # Findings first: a protocol slip explains a snapshot change, not the reverse.
            counted = f"{len(blocking)} conformance finding(s)"
            self.record("fail", f"{counted}; {reason}" if reason else counted)
            headline = (
                f"{self.scenario.name}: {self.target} broke the ACP protocol "
                f'(conformance = "fail" for this target)'
            )
            block = findings_block(blocking, policy)
            if failure is None:
                text = failure_text(
                    headline,
                    f"{block}\n\nsnapshot: {status}",
                    {self.target: result.transcript},
                )
            else:
                text = f"{headline}\n\n{block}\n\n{failure}"
            raise ScenarioFailure(text)
        if failure is not None:
            if self._pending_text is not None and judged.ok:
                self._write_pending(self._pending_text)
            self.record("fail", reason)
            raise ScenarioFailure(failure)
        self.record(status)

    def _judge(self, result: RunResult) -> Judged:
        """The run's problems against the scenario's `expect_problems` and the target
        table's; the expected ones, and which table entries claimed one, are attached
        for the summary."""
        standing = self.state.config.targets[self.target].expect_problems
        judged = judge(
            run_problems(self.scenario, result.transcript),
            self.scenario.expect_problems,
            self.target,
            standing,
        )
        record = update(self.user_properties)
        if standing:
            record.target_expect = (self.target, tuple(judged.standing_used))
        counted = Counter((p.headline(), e.reason) for p, e in judged.expected)
        for (headline, reason), times in counted.items():
            record.expected.append((self.scenario.name, self.target, headline, reason, times))
        record.attach(self.user_properties)
        return judged

    def _broken(
        self,
        result: RunResult,
        judged: Judged,
        status: Status,
        reason: str,
        failure: str | None,
    ) -> tuple[Status, str, str]:
        """The failure of a run with undeclared problems or stale `expect_problems`:
        the problems, then what happened to the snapshot."""
        rel = self._snapshot_rel()
        counted = []
        if judged.unexpected:
            counted.append(f"{len(judged.unexpected)} run problem(s)")
        if judged.stale:
            counted.append(f"{len(judged.stale)} stale expect_problems")
        if judged.unexpected:
            headline = (
                f"{self.scenario.name}: the {self.target} run had {counted[0]} "
                "the scenario does not expect"
            )
        else:
            headline = (
                f"{self.scenario.name}: {len(judged.stale)} expect_problems entr(ies) "
                f"did not occur on {self.target}"
            )
        block = failure_block(judged, self.target)
        if judged.unexpected and self.config.option.update_snapshots:
            block += f"\n\nnothing was written to {rel}: a broken run is never recorded"
        elif failure is None:
            done = "recorded to" if status == "new" else "matches"
            block += f"\n\nsnapshot: {done} {rel}"
        if failure is None:
            text = failure_text(headline, block, {self.target: result.transcript})
        else:
            text = f"{headline}\n\n{block}\n\n{failure}"
        why = "; ".join(counted) + (f"; {reason}" if reason else "")
        return "fail", why, text

    def _write_pending(self, text: str) -> None:
        """Keep the new snapshot of a clean run that drifted or has none, for `parity
        review --from DIR` (insta's `.snap.new`): CI writes them, a reviewer accepts them
        locally without running an agent. A run with problems is never pending."""
        from parity.engine.store import write_pending

        folder = pending_dir(self.config)
        if folder is not None:
            write_pending(folder, self.scenario.name, self.target, text)

    def _snapshot_rel(self) -> str:
        """The target's snapshot file, relative to where pytest was started."""
        from parity.engine.store import snapshot_path

        path = snapshot_path(self.state.config.snapshots_dir, self.scenario.name, self.target)
        return os.path.relpath(path, self.config.invocation_params.dir)

    def _snapshot(self, result: RunResult) -> tuple[Status, str, str | None]:
        """Check (or record) the snapshot: `(status, reason, failure text or None)`."""
        from parity.suite.snapshots import check_snapshot

        self._note_masks(result.view)
        rel = self._snapshot_rel()
        # Only `parity record` (--snapshot-update) writes; `parity run` never does.
        check = check_snapshot(
            self, result.view, update=bool(self.config.option.update_snapshots), shown_as=rel
        )
        if check.matched:
            return ("new" if check.created else "pass"), "", None
        self._pending_text = check.text
        if check.recorded is None:
            scenario_file = os.path.relpath(self.scenario.path, self.config.invocation_params.dir)
            headline = (
                f"{self.scenario.name}: no snapshot for {self.target} at {rel}; record it with "
                f"`parity record {scenario_file} --targets {self.target}`, review it, commit it"
            )
            body = f"this run's view (what `parity record` would write):\n\n{check.text}"
            failure = failure_text(headline, body, {self.target: result.transcript})
            return "fail", "no snapshot", failure
        headline = (
            f"{self.scenario.name}: {self.target} no longer matches its snapshot {rel} "
            "(if the change is intended: `parity record`, then review the diff)"
        )
        compared = _categorized(self.scenario, check.recorded, check.text, self.target)
        self.state.ledger.collected.diff(
            self.scenario.name, "target", self.target, "snapshot", compared
        )
        self.state.ledger.collected.drift(
            self.scenario.name, self.target, check.recorded, check.text
        )
        failure = failure_text(
            headline,
            compared.render() + "\n\n" + "\n".join(check.diff),
            {self.target: result.transcript},
        )
        return "fail", "snapshot differs", failure

    def _note_findings(self, findings: list[str], policy: str) -> None:
        """Attach the run's conformance findings for the summary (not to the snapshot)."""
        if findings:
            record = update(self.user_properties)
            record.findings.append((self.scenario.name, self.target, policy, tuple(findings)))
            record.attach(self.user_properties)

    def _note_masks(self, view: Any) -> None:
        """Attach the masks this run applied (and their reasons) for the summary."""
        reasons = {m.path: m.reason for m in self.scenario.masks}
        counts = view.get("masked", {}) if isinstance(view, dict) else {}
        if not counts:
            return
        record = update(self.user_properties)
        for path, count in counts.items():
            row = (self.scenario.name, self.target, path, int(count), reasons.get(path, ""))
            record.masked.append(row)
        record.attach(self.user_properties)


def _categorized(scenario: Scenario, old: str, new: str, target: str) -> ParityReport:
    """The categorized diff of the recorded snapshot text and this run's."""
    # Imported here, as the driver and the fake LLM are: the plugin loads for every
    # pytest run of the repository, and only scenario items need the diff.
    from parity.checks.diff import compare
    from parity.view.dump import load_view

    return compare(
        load_view(old),
        load_view(new),
        profile=scenario.profile,
        diverge=[],
        ref_name="snapshot",
        other_name=target,
        scenario=scenario.name,
    )


def pending_dir(config: pytest.Config) -> Path | None:
    """Where pending snapshots go: `--parity-pending DIR`, else the HTML report's
    `pending/` folder, else nowhere."""
    explicit = config.getoption("parity_pending", None)
    if explicit:
        return Path(explicit)
    report = config.getoption("parity_report", None)
    return Path(report) / "pending" if report else None
