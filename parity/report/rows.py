"""The rows of the ledger: what one run adds to the summary besides its outcome.

Each row is a frozen dataclass with `to_dict` / `from_dict`; "dict" is the JSON value a
shard writes, kept as the list it always was (`[scenario, target, ...]`), so a ledger
written before these types reads back the same and `parity merge` sees no change.
Rows order as their fields do (the summary sorts them), and compare by value (the
ledger keeps one of each: an item's setup and call reports carry the same rows).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True, order=True)
class MaskedRow:
    """A mask this run applied: how many values it hid, and the scenario's reason."""

    scenario: str
    target: str
    path: str
    count: int
    reason: str

    def to_dict(self) -> list[Any]:
        return [self.scenario, self.target, self.path, self.count, self.reason]

    @classmethod
    def from_dict(cls, row: Sequence[Any]) -> MaskedRow:
        scenario, target, path, count, reason = row
        return cls(str(scenario), str(target), str(path), int(count), str(reason))


@dataclass(frozen=True, order=True)
class FindingsRow:
    """A run's conformance findings (rendered) under its target's policy."""

    scenario: str
    target: str
    policy: str
    findings: tuple[str, ...]

    def to_dict(self) -> list[Any]:
        return [self.scenario, self.target, self.policy, list(self.findings)]

    @classmethod
    def from_dict(cls, row: Sequence[Any]) -> FindingsRow:
        scenario, target, policy, found = row
        return cls(str(scenario), str(target), str(policy), tuple(str(f) for f in found))


@dataclass(frozen=True, order=True)
class ExpectedRow:
    """A problem the run had and `expect_problems` declared: its headline, the
    declaration's reason, and how many such problems the run had."""

    scenario: str
    target: str
    problem: str
    reason: str
    times: int

    def to_dict(self) -> list[Any]:
        return [self.scenario, self.target, self.problem, self.reason, self.times]

    @classmethod
    def from_dict(cls, row: Sequence[Any]) -> ExpectedRow:
        scenario, target, problem, reason, times = row
        return cls(str(scenario), str(target), str(problem), str(reason), int(times))


@dataclass(frozen=True)
class TargetExpect:
    """Which entries of a target table's `expect_problems` (by index) claimed a problem
    in one run (`parity.checks.expected.unclaimed` finds those that never did)."""

    target: str
    used: tuple[int, ...]

    def to_dict(self) -> list[Any]:
        return [self.target, list(self.used)]

    @classmethod
    def from_dict(cls, row: Sequence[Any]) -> TargetExpect:
        target, used = row
        return cls(str(target), tuple(int(i) for i in used))
