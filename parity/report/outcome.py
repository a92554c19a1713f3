"""The outcome of one scenario item, as the summary and the reports count it.

A target's snapshot check or one parity check records its `Outcome` in its item's
record (`parity.report.ledger.ItemRecord`), which travels on the pytest report from
xdist workers to the controller, where the summary and the reports are made.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Literal

Status = Literal["pass", "fail", "skip", "differs", "new"]
Kind = Literal["target", "parity"]


@dataclass(frozen=True)
class Outcome:
    """The result of one item: a target's snapshot check or one parity check."""

    scenario: str
    kind: Kind
    target: str
    """The target run (for parity: the one compared with the reference)."""
    status: Status
    reference: str = ""
    """Parity only: the scenario's first target."""
    reason: str = ""
    """Why it skipped or failed, or which recorded snapshot stood in for a target."""

    def to_dict(self) -> dict[str, str]:
        return {
            "scenario": self.scenario,
            "kind": self.kind,
            "target": self.target,
            "status": self.status,
            "reference": self.reference,
            "reason": self.reason,
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Outcome:
        return cls(
            scenario=str(data["scenario"]),
            kind=data["kind"],
            target=str(data["target"]),
            status=data["status"],
            reference=str(data.get("reference", "")),
            reason=str(data.get("reason", "")),
        )
