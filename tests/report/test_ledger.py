"""The typed ledger: an item's record on its report, a session's ledger to JSON and
back, and the merge of shards' ledgers (pure; `tests/suite/test_shards.py` runs it end
to end)."""

from __future__ import annotations

import json
from dataclasses import dataclass

import pytest

from parity.checks.known_ledger import Use
from parity.report.ledger import ItemRecord, SessionLedger, merge, partial_reason
from parity.report.outcome import Outcome
from parity.report.rows import (
    ExpectedRow,
    FindingsRow,
    MaskedRow,
    TargetExpect,
    row_from,
    row_value,
)

A = Outcome("baseline/a", "target", "plus", "pass")
A_PARITY = Outcome("baseline/a", "parity", "plus", "differs", "native", "native: recorded")
B = Outcome("baseline/b", "target", "plus", "fail", reason="snapshot differs")


def record(outcome: Outcome, **kw: object) -> ItemRecord:
    return ItemRecord(outcome=outcome, **kw)  # type: ignore[arg-type]


def full() -> SessionLedger:
    ledger = SessionLedger(whole_suite=True, scenarios={"baseline/a": ["native", "plus"]})
    ledger.joinable["baseline/a"] = {"mine"}
    ledger.add(
        record(
            A,
            masked=[MaskedRow("baseline/a", "plus", "x.y", 2, "noise")],
            findings=[FindingsRow("baseline/a", "plus", "warn", ("f1", "f2"))],
            expected=[ExpectedRow("baseline/a", "plus", "timeout", "slow", 1)],
            target_expect=TargetExpect("plus", (0, 2)),
        )
    )
    ledger.add(record(A_PARITY, known=Use(("k1", "k2"), ("k1",), ("k3",))))
    ledger.add(record(B))
    ledger.add(ItemRecord(invalid="scenarios/broken.yaml"))
    ledger.collected.items["n"] = {"nodeid": "n", "duration": 1.5, "outcome": "passed"}
    return ledger


def test_an_item_record_travels_as_one_json_property() -> None:
    props: list[tuple[str, object]] = [("other", 1)]
    rec = record(A, known=Use(("k",), (), ()), target_expect=TargetExpect("plus", (1,)))
    rec.attach(props)
    rec.masked.append(MaskedRow("baseline/a", "plus", "p", 0, ""))
    rec.attach(props)  # replaces, never duplicates
    assert [k for k, _ in props] == ["other", "parity_record"]
    assert ItemRecord.of(props) == rec
    assert all(isinstance(v, (str, int)) for _, v in props)  # plain data, for xdist


def test_a_ledger_survives_json() -> None:
    ledger = full()
    again = SessionLedger.from_dict(json.loads(json.dumps(ledger.to_dict())))
    assert again == ledger


def test_the_rows_keep_the_json_shape_a_shard_writes() -> None:
    """Typed rows, the same JSON: lists, as a ledger written before the types has them
    (`parity merge` reads shards of either)."""
    data = json.loads(json.dumps(full().to_dict()))
    assert data["masked"] == [["baseline/a", "plus", "x.y", 2, "noise"]]
    assert data["findings"] == [["baseline/a", "plus", "warn", ["f1", "f2"]]]
    assert data["expected"] == [["baseline/a", "plus", "timeout", "slow", 1]]
    assert data["target_expect_uses"] == [["plus", [0, 2]]]
    again = SessionLedger.from_dict(data)
    assert again.masked == [MaskedRow("baseline/a", "plus", "x.y", 2, "noise")]
    assert again.target_expect_uses == [TargetExpect("plus", (0, 2))]


@dataclass(frozen=True)
class Nested:
    """A row of rows: what the generic reader must build besides plain fields."""

    name: str
    expect: TargetExpect
    rows: list[MaskedRow]


def test_the_generic_reader_builds_nested_rows_and_lists_of_them() -> None:
    row = Nested("n", TargetExpect("plus", (0, 2)), [MaskedRow("s", "t", "p", 1, "r")])
    data = json.loads(json.dumps(row_value(row)))
    assert data == ["n", ["plus", [0, 2]], [["s", "t", "p", 1, "r"]]]
    assert row_value(row) == data  # lists already: a record compares equal after JSON
    assert row_from(Nested, data) == row
    with pytest.raises(ValueError):
        row_from(MaskedRow, ["s", "t", "p", 1])


def test_adding_the_same_report_twice_counts_once() -> None:
    ledger = SessionLedger()
    rec = record(A_PARITY, known=Use(("k",), ("k",), ()))
    ledger.add(rec)
    ledger.add(rec)  # setup and call reports of one item carry the same record
    assert ledger.outcomes == [A_PARITY] and len(ledger.known_uses) == 1


def test_merging_split_ledgers_gives_the_whole_one() -> None:
    whole = full()
    one = SessionLedger(whole_suite=True, scenarios=dict(whole.scenarios), shard="1/2")
    two = SessionLedger(whole_suite=True, scenarios=dict(whole.scenarios), shard="2/2")
    one.joinable["baseline/a"] = {"mine"}
    for ledger, parts in ((one, (0, 1)), (two, (2, 3))):
        for i in parts:
            rec = [
                record(
                    A,
                    masked=whole.masked,
                    findings=whole.findings,
                    expected=whole.expected,
                    target_expect=whole.target_expect_uses[0],
                ),
                record(A_PARITY, known=whole.known_uses[0]),
                record(B),
                ItemRecord(invalid="scenarios/broken.yaml"),
            ][i]
            ledger.add(rec)
    two.collected.items["n"] = whole.collected.items["n"]
    merged = merge([one, two])
    assert merged.shards == 2 and merged.shard == ""
    merged.shards = 1
    assert merged.to_dict() == whole.to_dict()


def test_a_shard_cannot_judge_the_known_differences() -> None:
    ledger = full()
    ledger.invalid.clear()
    ledger.outcomes = [A, A_PARITY]
    assert partial_reason(ledger) is None
    ledger.shard = "2/3"
    assert partial_reason(ledger) == (
        "partial run: shard 2/3 (`parity merge` of every shard judges)"
    )
    ledger.shard = ""
    ledger.deselected = 3
    assert partial_reason(ledger) == "partial run: 3 item(s) deselected"
