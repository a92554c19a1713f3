"""The rows of the ledger: what one run adds to the summary besides its outcome.

Each row is a frozen dataclass; `row_value` writes one as the JSON value a shard
writes, kept as the list it always was (`[scenario, target, ...]`), and `row_from`
reads it back, so a ledger written before these types reads back the same and
`parity merge` sees no change. Both go by the fields and their annotations alone, so
a row type needs no code of its own. Rows order as their fields do (the summary sorts
them), and compare by value (the ledger keeps one of each: an item's setup and call
reports carry the same rows).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import astuple, dataclass, fields, is_dataclass
from typing import TYPE_CHECKING, Any, TypeVar, get_args, get_origin, get_type_hints

if TYPE_CHECKING:
    from _typeshed import DataclassInstance

R = TypeVar("R", bound="DataclassInstance")


def row_value(row: DataclassInstance) -> list[Any]:
    """`row` as JSON data: its fields in order, every tuple, list or nested row a list
    (the value a ledger read back from JSON holds, so the two compare equal)."""
    return [_lists(v) for v in astuple(row)]


def _lists(value: Any) -> Any:
    if isinstance(value, (tuple, list)):
        return [_lists(v) for v in value]
    return value


def row_from(cls: type[R], value: Sequence[Any]) -> R:
    """The `cls` row `row_value` wrote (also after a JSON round trip): each field built
    from its annotation, so a shard's ledger reads back typed; ValueError when the
    value has another number of fields."""
    hints = get_type_hints(cls)
    parts = zip(fields(cls), value, strict=True)
    return cls(*(_build(hints[f.name], v) for f, v in parts))


def _build(hint: Any, value: Any) -> Any:
    """`value` as `hint`: a nested row, `tuple[X, ...]`, `list[X]`, or a plain type
    (`str`, `int`) that converts it."""
    if isinstance(hint, type) and is_dataclass(hint):
        return row_from(hint, value)
    origin, args = get_origin(hint), get_args(hint)
    if origin is tuple:
        return tuple(_build(args[0], v) for v in value)
    if origin is list:
        return [_build(args[0], v) for v in value]
    return hint(value)


@dataclass(frozen=True, order=True)
class MaskedRow:
    """A mask this run applied: how many values it hid, and the scenario's reason."""

    scenario: str
    target: str
    path: str
    count: int
    reason: str


@dataclass(frozen=True, order=True)
class FindingsRow:
    """A run's conformance findings (rendered) under its target's policy."""

    scenario: str
    target: str
    policy: str
    findings: tuple[str, ...]


@dataclass(frozen=True, order=True)
class ExpectedRow:
    """A problem the run had and `expect_problems` declared: its headline, the
    declaration's reason, and how many such problems the run had."""

    scenario: str
    target: str
    problem: str
    reason: str
    times: int


@dataclass(frozen=True)
class TargetExpect:
    """Which entries of a target table's `expect_problems` (by index) claimed a problem
    in one run (`parity.checks.expected.unclaimed` finds those that never did)."""

    target: str
    used: tuple[int, ...]
