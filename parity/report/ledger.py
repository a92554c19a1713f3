"""The session's results as one typed record, the ledger: item to summary, HTML, JUnit
and JSON, and shard to merge.

An item produces one `ItemRecord` (its outcome, the masks it applied, its conformance
findings, its expected problems, what it did with the known differences); it travels on
the pytest report as one JSON property (`KEY`), because reports cross from xdist
workers to the controller as plain data. The session adds each to a `SessionLedger`
with what the session itself knows (the scenarios collected, the diff and view records
of `Collected`, the pytest report of every item, whether the whole suite was collected).
A shard writes its ledger (`to_dict`, JSON); `merge` joins shards' ledgers into the one
a single run would have, and the summary and the report files are functions of a ledger
(`parity.report.session_summary`, `parity.report.results.ledger_data`).
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from parity.checks.known_ledger import Use
from parity.report.collected import Collected
from parity.report.outcome import Outcome
from parity.report.rows import (
    ExpectedRow,
    FindingsRow,
    MaskedRow,
    TargetExpect,
    row_from,
    row_value,
)

KEY = "parity_record"
"""The pytest `user_properties` key an item's record travels under."""
FORMAT = "acp-parity-ledger/1"


@dataclass
class ItemRecord:
    """What one scenario item reports (see the module doc)."""

    outcome: Outcome | None = None
    invalid: str = ""
    """The path of the scenario file this item stands for, when it did not validate."""
    masked: list[MaskedRow] = field(default_factory=list)
    findings: list[FindingsRow] = field(default_factory=list)
    expected: list[ExpectedRow] = field(default_factory=list)
    known: Use | None = None
    target_expect: TargetExpect | None = None

    def to_dict(self) -> dict[str, Any]:
        return {
            "outcome": self.outcome.to_dict() if self.outcome is not None else None,
            "invalid": self.invalid,
            "masked": [row_value(r) for r in self.masked],
            "findings": [row_value(r) for r in self.findings],
            "expected": [row_value(r) for r in self.expected],
            "known": _use_dict(self.known) if self.known is not None else None,
            "target_expect": (
                row_value(self.target_expect) if self.target_expect is not None else None
            ),
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> ItemRecord:
        outcome, known, expect = data.get("outcome"), data.get("known"), data.get("target_expect")
        return cls(
            outcome=Outcome.from_dict(outcome) if outcome else None,
            invalid=str(data.get("invalid", "")),
            masked=[row_from(MaskedRow, r) for r in data.get("masked", [])],
            findings=[row_from(FindingsRow, r) for r in data.get("findings", [])],
            expected=[row_from(ExpectedRow, r) for r in data.get("expected", [])],
            known=_use(known) if known else None,
            target_expect=row_from(TargetExpect, expect) if expect else None,
        )

    @classmethod
    def of(cls, props: Iterable[tuple[str, object]]) -> ItemRecord | None:
        """The record among a report's (or an item's) `user_properties`, if any."""
        for key, value in props:
            if key == KEY and isinstance(value, str):
                return cls.from_dict(json.loads(value))
        return None

    def attach(self, props: list[tuple[str, object]]) -> None:
        """Put this record on `props`, replacing the one there (an item adds to its
        record as it runs; pytest copies the properties into each phase's report)."""
        props[:] = [(k, v) for k, v in props if k != KEY]
        props.append((KEY, json.dumps(self.to_dict())))


def update(props: list[tuple[str, object]]) -> ItemRecord:
    """The record on `props` (a new one if there is none), to change and `attach`."""
    return ItemRecord.of(props) or ItemRecord()


@dataclass
class SessionLedger:
    """Everything a session's summary and report files are made of (see the module doc)."""

    outcomes: list[Outcome] = field(default_factory=list)
    invalid: list[str] = field(default_factory=list)
    masked: list[MaskedRow] = field(default_factory=list)
    findings: list[FindingsRow] = field(default_factory=list)
    expected: list[ExpectedRow] = field(default_factory=list)
    known_uses: list[Use] = field(default_factory=list)
    """What each parity check did with the project's known differences."""
    target_expect_uses: list[TargetExpect] = field(default_factory=list)
    collected: Collected = field(default_factory=Collected)
    scenarios: dict[str, list[str]] = field(default_factory=dict)
    """Collected scenario name -> its targets (for unused-snapshot detection)."""
    joinable: dict[str, set[str]] = field(default_factory=dict)
    """Collected scenario name -> the declared targets `--targets +NAME` could add."""
    whole_suite: bool = False
    """The scenarios directory itself was collected (so orphan directories count)."""
    deselected: int = 0
    """Items deselected (`-k`, `-m`, `--targets`; not a shard's split): a partial run."""
    selected: bool = False
    """`--targets` chose some targets: a partial run."""
    shard: str = ""
    """`K/N` in a shard's own ledger: it ran part of the items (a merge clears it)."""
    shards: int = 1
    """How many ledgers this one joins."""

    def add(self, record: ItemRecord) -> None:
        """One item report's record (setup and call reports may carry the same one)."""
        if record.invalid and record.invalid not in self.invalid:
            self.invalid.append(record.invalid)
        for row in record.masked:
            if row not in self.masked:
                self.masked.append(row)
        for finding in record.findings:
            if finding not in self.findings:
                self.findings.append(finding)
        for expected in record.expected:
            if expected not in self.expected:
                self.expected.append(expected)
        if record.outcome is not None and record.outcome not in self.outcomes:
            self.outcomes.append(record.outcome)
            # Once per item: its call report brings the outcome, and its uses with it.
            if record.known is not None:
                self.known_uses.append(record.known)
            if record.target_expect is not None:
                self.target_expect_uses.append(record.target_expect)

    def to_dict(self) -> dict[str, Any]:
        return {
            "format": FORMAT,
            "shard": self.shard,
            "shards": self.shards,
            "whole_suite": self.whole_suite,
            "deselected": self.deselected,
            "selected": self.selected,
            "scenarios": self.scenarios,
            "joinable": {k: sorted(v) for k, v in self.joinable.items()},
            "outcomes": [o.to_dict() for o in self.outcomes],
            "invalid": self.invalid,
            "masked": [row_value(r) for r in self.masked],
            "findings": [row_value(r) for r in self.findings],
            "expected": [row_value(r) for r in self.expected],
            "known_uses": [_use_dict(u) for u in self.known_uses],
            "target_expect_uses": [row_value(u) for u in self.target_expect_uses],
            "collected": self.collected.to_dict(),
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> SessionLedger:
        if data.get("format") != FORMAT:
            raise ValueError(f"not a parity ledger ({FORMAT}): format {data.get('format')!r}")
        collected = Collected()
        collected.merge(data.get("collected", {}))
        return cls(
            outcomes=[Outcome.from_dict(o) for o in data.get("outcomes", [])],
            invalid=[str(p) for p in data.get("invalid", [])],
            masked=[row_from(MaskedRow, r) for r in data.get("masked", [])],
            findings=[row_from(FindingsRow, r) for r in data.get("findings", [])],
            expected=[row_from(ExpectedRow, r) for r in data.get("expected", [])],
            known_uses=[_use(u) for u in data.get("known_uses", [])],
            target_expect_uses=[
                row_from(TargetExpect, u) for u in data.get("target_expect_uses", [])
            ],
            collected=collected,
            scenarios={k: list(v) for k, v in data.get("scenarios", {}).items()},
            joinable={k: set(v) for k, v in data.get("joinable", {}).items()},
            whole_suite=bool(data.get("whole_suite")),
            deselected=int(data.get("deselected", 0)),
            selected=bool(data.get("selected")),
            shard=str(data.get("shard", "")),
            shards=int(data.get("shards", 1)),
        )


def merge(ledgers: Sequence[SessionLedger]) -> SessionLedger:
    """The ledger of one run of everything the shards ran between them.

    Every shard collects the whole suite and runs its part, so the scenarios collected,
    whether the whole suite was, and what was deselected other than by the split are
    the same in each (the union, `or` and the largest count stand for them); the items'
    records are each in exactly one shard."""
    out = SessionLedger(shards=sum(x.shards for x in ledgers))
    for ledger in ledgers:
        out.outcomes += [o for o in ledger.outcomes if o not in out.outcomes]
        out.known_uses += ledger.known_uses
        out.target_expect_uses += ledger.target_expect_uses
        out.add(
            ItemRecord(
                masked=list(ledger.masked),
                findings=list(ledger.findings),
                expected=list(ledger.expected),
            )
        )
        for path in ledger.invalid:
            out.add(ItemRecord(invalid=path))
        out.collected.merge(ledger.collected.to_dict())
        out.scenarios.update(ledger.scenarios)
        for name, targets in ledger.joinable.items():
            out.joinable.setdefault(name, set()).update(targets)
        out.whole_suite = out.whole_suite or ledger.whole_suite
        out.deselected = max(out.deselected, ledger.deselected)
        out.selected = out.selected or ledger.selected
    return out


def write_ledger(ledger: SessionLedger, path: Path | None, base: Path) -> list[str]:
    """Write `ledger` as JSON to `path` (nothing for None); the summary line naming it."""
    if path is None:
        return []
    path.parent.mkdir(parents=True, exist_ok=True)
    # A lone surrogate an agent sent is written as its JSON escape (`\ud83d`), which
    # reads back as the same string, rather than failing the write.
    text = json.dumps(ledger.to_dict(), ensure_ascii=False) + "\n"
    path.write_text(text, encoding="utf-8", errors="backslashreplace")
    shown = os.path.relpath(path, base) if path.resolve().is_relative_to(base.resolve()) else path
    return [f"parity ledger: {shown}"]


def read_ledger(path: Path) -> SessionLedger:
    """A ledger `write_ledger` wrote; ValueError for anything else."""
    return SessionLedger.from_dict(json.loads(path.read_text(encoding="utf-8")))


def partial_reason(ledger: SessionLedger) -> str | None:
    """Why this ledger cannot call a known difference stale, or None (a complete run)."""
    parity = [o for o in ledger.outcomes if o.kind == "parity"]
    skipped = sum(1 for o in parity if o.status == "skip")
    if ledger.shard:
        return f"partial run: shard {ledger.shard} (`parity merge` of every shard judges)"
    if not ledger.whole_suite:
        return "partial run: not every scenario was collected"
    if ledger.selected:
        return "partial run: --targets selected some targets"
    if ledger.deselected:
        return f"partial run: {ledger.deselected} item(s) deselected"
    if ledger.invalid:
        return f"partial run: {len(ledger.invalid)} scenario file(s) invalid"
    if skipped:
        return f"partial run: {skipped} parity check(s) skipped"
    if len(ledger.known_uses) < len(parity):
        missing = len(parity) - len(ledger.known_uses)
        return f"partial run: {missing} parity check(s) did not compare"
    return None


def _use_dict(use: Use) -> dict[str, list[str]]:
    return {"applied": list(use.applied), "used": list(use.used), "unjudged": list(use.unjudged)}


def _use(data: Mapping[str, Any]) -> Use:
    return Use(
        tuple(data.get("applied", ())), tuple(data.get("used", ())), tuple(data.get("unjudged", ()))
    )
