"""The outcome of one scenario item, as the summary and the reports count it.

A target's snapshot check or one parity check records its `Outcome` on the pytest report
(`user_properties`), so it travels from xdist workers to the controller, where the
summary and the reports are made.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Literal

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

    def to_properties(self) -> list[tuple[str, str]]:
        """As pytest `user_properties` (they travel from xdist workers to the controller)."""
        return [("parity_outcome", "\x1f".join(self._fields()))]

    def _fields(self) -> tuple[str, ...]:
        return (self.scenario, self.kind, self.target, self.status, self.reference, self.reason)

    @classmethod
    def from_properties(cls, props: Iterable[tuple[str, object]]) -> Outcome | None:
        """The inverse of `to_properties`; None for items that are not scenario items."""
        for key, value in props:
            if key == "parity_outcome" and isinstance(value, str):
                scenario, kind, target, status, reference, reason = value.split("\x1f")
                return cls(scenario, kind, target, status, reference, reason)  # type: ignore[arg-type]
        return None
