"""A target's item: the pytest client of one run's judgement.

`...::plus` runs the target (through the session's runner and its run cache), has the
engine judge the run (`parity.engine.judge`: conformance findings, run problems
against `expect_problems`, then the snapshot, the first cause the headline), then
records what the verdict says: the snapshot assertion through syrupy
(`parity.suite.snapshots`, which counts it and writes it under `parity record`), the
item's record for the summary, a pending snapshot, and the failure it raises. A target
that cannot run here skips, unless `--require-live` names it, or `--require-targets`
names it and it has no recording to stand in for it.
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING

import pytest

from parity.engine.judge import Policy, Shown, judge_run, unjudged
from parity.engine.postrun import TimeLimit, deadline, judge_allowance, limit_problem
from parity.engine.store import read_text, snapshot_path, write_pending
from parity.suite.items import ScenarioFailure, ScenarioItem
from parity.suite.options import pending_dir
from parity.suite.snapshots import check_snapshot

if TYPE_CHECKING:
    from parity.engine.runner import RunResult


class TargetItem(ScenarioItem):
    """Run one target and check its normalized view against the recorded snapshot."""

    added = False
    """Added to this scenario by `--targets +name` rather than listed by it."""

    def check(self) -> None:
        # A required target that cannot run here still serves its parity checks from its
        # recorded snapshot (how CI compares with native, which it cannot install); only
        # with no recording either does --require-targets fail this item. --require-live
        # fails it either way.
        config, name, target = self.state.config, self.scenario.name, self.target
        path = snapshot_path(config.snapshots_dir, name, target)
        why = self.unavailable(target)
        if why is not None:
            self.require_live(target, why)
            if target in self.state.require and not config.recording(name, target).is_file():
                raise ScenarioFailure(
                    f"required target {target} cannot run: {why} "
                    f"(and it has no recorded snapshot at {path})"
                )
            self.record("skip", why)
            pytest.skip(f"{target} unavailable: {why}")
        start = self.config.invocation_params.dir
        spec = config.targets[target]
        recording = bool(self.config.option.update_snapshots)
        policy = Policy(spec.conformance, tuple(spec.expect_problems), recording, self.added)
        shown = Shown(os.path.relpath(path, start), os.path.relpath(self.scenario.path, start))
        # Run, judge, record: the verdict decides, this item only reports it.
        result: RunResult = self.state.runner.result(self.scenario, target)
        recorded = read_text(config.recording(name, target))
        # What is left of the checks' allowance bounds the judgement (the snapshot's
        # diff and rendering): a limit reached, or an agent's data the rendering
        # cannot follow, is the verdict's problem, never a hang or a traceback.
        seconds = judge_allowance(result.transcript, result.checks_seconds)
        try:
            with deadline(seconds):
                verdict = judge_run(self.scenario, target, result, recorded, policy, shown)
        except TimeLimit:
            problem = limit_problem(seconds, "the judgement", result.transcript)
            verdict = unjudged(self.scenario, target, problem)
        except Exception as exc:
            verdict = unjudged(
                self.scenario, target, f"the harness could not judge this run: {exc!r}"
            )
        collected = self.state.ledger.collected
        if verdict.checked:
            collected.view(name, target, result.view, live=True)
        snap = verdict.snapshot
        if snap.drift is not None:
            collected.diff(name, "target", target, "snapshot", snap.drift.report)
            collected.drift(name, target, snap.drift.recorded, snap.drift.live)
        if snap.text is not None:
            # syrupy asserts the same texts (its report counts the snapshot) and writes
            # the snapshot under `parity record`.
            check = check_snapshot(self, snap.text, update=recording, shown_as=shown.snapshot)
            if check.matched != snap.matched:
                raise ScenarioFailure(f"harness error: syrupy and the judgement disagree on {path}")
        folder = pending_dir(self.config)
        if snap.pending is not None and folder is not None:
            write_pending(folder, name, target, snap.pending)
        verdict.record.attach(self.user_properties)
        if verdict.status == "skip":
            pytest.skip(verdict.reason)
        if verdict.failure is not None:
            raise ScenarioFailure(verdict.failure)
