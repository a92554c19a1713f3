"""A parity item: one target's view against the scenario's reference target's.

`...::parity[plus~native]` compares the two views under the scenario's profile, with its
`diverge` rules (`parity.checks.diff`). A target that cannot run here is compared
through its recorded snapshot; with neither a run nor a recording the check skips
(fails under `--require-targets`). Under `--require-live` a target that cannot run
fails the check, recording or not.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import pytest

from parity.checks.known_ledger import Use
from parity.report.ledger import update
from parity.report.outcome import Kind
from parity.report.text import failure_text
from parity.suite.items import ScenarioFailure, ScenarioItem

if TYPE_CHECKING:
    from parity.core.transcript import Transcript


class ParityItem(ScenarioItem):
    """Compare one target's view with the reference target's, under the profile."""

    outcome_kind: Kind = "parity"
    added = False
    """The compared target was added by `--targets +name`: the scenario's diverge rules
    were written for its own targets, so one that explains nothing for this newcomer is
    not stale (an agent that behaves like the reference is not a failure)."""

    def __init__(self, *, reference: str, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.reference = reference

    def _view(self, target: str) -> tuple[Any, Transcript | None, str]:
        """(view, transcript or None, note): a live run, else the recorded snapshot;
        `--require-targets` fails the check only where it would otherwise skip;
        `--require-live` wherever the target did not run."""
        self.unavailable(target)  # undeclared targets fail here
        view, result, why = self.state.runner.live_or_recorded(self.scenario, target)
        if result is not None:
            return view, result.transcript, ""
        self.require_live(target, why or "unavailable")
        if view is None:
            reason = f"{target} unavailable ({why}) and no recorded snapshot"
            if target in self.state.require:
                raise ScenarioFailure(f"required parity check cannot run: {reason}")
            self.record("skip", reason)
            pytest.skip(reason)
        if target in self.state.recorded:
            return view, None, f"{target} compared with its recorded snapshot (--recorded)"
        return view, None, f"{target} unavailable, compared with its recorded snapshot"

    def check(self) -> None:
        ref_view, ref_transcript, ref_note = self._view(self.reference)
        view, transcript, note = self._view(self.target)
        # Imported here: only scenario items need the diff (the plugin loads for every run).
        from parity.checks.diff import compare
        from parity.scenario.errors import ScenarioInvalid

        try:
            known = self.state.known
        except ScenarioInvalid as exc:
            raise ScenarioFailure(f"known differences file is invalid:\n{exc}") from None
        from parity.engine.postrun import TimeLimit, compare_allowance, deadline

        seconds = compare_allowance(ref_transcript, transcript)
        try:
            # Bounded like a run's own checks: two views of a flood are no reason to hang.
            with deadline(seconds):
                result = compare(
                    ref_view,
                    view,
                    profile=self.scenario.profile,
                    diverge=self.scenario.diverge,
                    ref_name=self.reference,
                    other_name=self.target,
                    scenario=self.scenario.name,
                    known=known,
                )
                rendered = "" if result.ok else result.render()
        except TimeLimit:
            raise ScenarioFailure(
                f"{self.scenario.name}: {self.target} could not be compared with"
                f" {self.reference}: check limit ({seconds:.3g} s) reached during the diff"
            ) from None
        record = update(self.user_properties)
        record.known = Use(
            tuple(result.known_applied), tuple(result.known_used), tuple(result.known_unjudged)
        )
        record.attach(self.user_properties)
        if self.added:
            result.stale = []
        collected = self.state.ledger.collected
        collected.view(self.scenario.name, self.reference, ref_view, live=not ref_note)
        collected.view(self.scenario.name, self.target, view, live=not note)
        collected.diff(self.scenario.name, "parity", self.target, self.reference, result)
        notes = "; ".join(n for n in (ref_note, note) if n)
        if result.ok:
            self.record("pass", notes)
            return
        self.record("differs", notes)
        transcripts = {
            name: t
            for name, t in ((self.reference, ref_transcript), (self.target, transcript))
            if t is not None
        }
        headline = (
            f"{self.scenario.name}: {self.target} differs from {self.reference} "
            f"({self.scenario.profile} profile)" + (f" [{notes}]" if notes else "")
        )
        raise ScenarioFailure(failure_text(headline, rendered, transcripts))
