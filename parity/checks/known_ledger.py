"""The project's known differences over a whole session: used, stale, or not checked.

A known difference that explains nothing in one scenario is fine (the fact it states
shows only where a scenario looks); one that explains nothing in the *whole* run is
stale: the target no longer does what it says, or no scenario looks there any more, and
the entry must go. Only a complete run can say so. A partial run (some scenarios, some
targets, a skipped comparison) lists what it could not check instead. A family-wide
entry (what ACP leaves to each agent) is a statement about the protocol, not a fact of
one agent that may go away: unused, it is listed (no agent here does that), never stale.

Each parity check contributes one `Use` row; `judge` turns the rows into a `Ledger`.
Pure: plain data in, plain data out.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

from parity.scenario.model import Rule


@dataclass(frozen=True)
class Use:
    """What one parity check did with the project's known differences."""

    applied: tuple[str, ...]
    used: tuple[str, ...]
    unjudged: tuple[str, ...] = ()
    """Entries whose target's version the run did not report."""


@dataclass
class Ledger:
    """The session's verdict on each known difference."""

    used: dict[str, int] = field(default_factory=dict)
    """id -> how many checks it explained a difference in."""
    stale: list[Rule] = field(default_factory=list)
    """Unused in a complete run: the session fails."""
    unchecked: list[tuple[Rule, str]] = field(default_factory=list)
    """Unused, but the run could not tell: (entry, why)."""
    allowances: list[Rule] = field(default_factory=list)
    """Family-wide entries no comparison needed: allowed by ACP, done by no agent here."""

    @property
    def ok(self) -> bool:
        return not self.stale


def judge(known: Sequence[Rule], uses: Iterable[Use], partial: str | None) -> Ledger:
    """The verdict on each entry of `known`; `partial` says why the run is not complete
    (None: it ran every scenario and every comparison it collected)."""
    ledger = Ledger()
    applied: dict[str, int] = {}
    unjudged: dict[str, int] = {}
    for use in uses:
        for ident in use.used:
            ledger.used[ident] = ledger.used.get(ident, 0) + 1
        for ident in use.applied:
            applied[ident] = applied.get(ident, 0) + 1
        for ident in use.unjudged:
            unjudged[ident] = unjudged.get(ident, 0) + 1
    for rule in known:
        if rule.id in ledger.used:
            continue
        if rule.family:
            ledger.allowances.append(rule)
        elif partial is not None:
            ledger.unchecked.append((rule, partial))
        elif rule.id not in applied and rule.id in unjudged:
            ledger.unchecked.append((rule, f"no run reported a version of {_target(rule)}"))
        elif rule.id not in applied and rule.versions is not None:
            why = f"no run of {_target(rule)} in versions {rule.versions}"
            ledger.unchecked.append((rule, why))
        else:
            ledger.stale.append(rule)
    return ledger


def ledger_lines(ledger: Ledger, total: int, ids_shown: int | None = None) -> list[str]:
    """The summary's lines about the known differences (none when there are none).

    `ids_shown`: a list of more ids than that is counted instead (a partial run leaves
    some 80 not checked; `-v` lists them)."""

    def ids(rules: list[str]) -> str:
        if ids_shown is None or len(rules) <= ids_shown:
            return ", ".join(rules)
        return f"{len(rules)} ids (-v lists them)"

    if not total:
        return []
    lines = [
        f"known differences: {len(ledger.used)} of {total} explained a difference"
        + (f", {len(ledger.stale)} stale" if ledger.stale else "")
        + (f", {len(ledger.unchecked)} not checked" if ledger.unchecked else "")
    ]
    for rule in ledger.stale:
        lines.append(
            f"  stale known difference {rule.id!r} ({rule.where}): {rule.path!r} on "
            f"{_target(rule)} explained no difference in the whole run; delete it, or fix "
            "the target it describes"
        )
    by_reason: dict[str, list[str]] = {}
    for rule, why in ledger.unchecked:
        by_reason.setdefault(why, []).append(rule.id)
    for why, names in by_reason.items():
        lines.append(f"  not checked ({why}): {ids(names)}")
    if ledger.allowances:
        allowed = ids([rule.id for rule in ledger.allowances])
        lines.append(f"  what ACP allows and no agent here did: {allowed}")
    return lines


def _target(rule: Rule) -> str:
    return f"the {rule.family} family" if rule.family else (rule.targets or ["?"])[0]
