"""Parity diff: two normalized views (see `parity.view.normalize.view`) -> a categorized
report.

`parity.checks.differences` finds the typed differences; here the scenario's `diverge`
rules and the project's known differences (selector + reason, `parity.scenario.known`)
suppress the differences at or below what they select in either view, as compared
(`comparable_views`: so every printed path, used as a rule, matches its difference). A
scenario rule that suppresses nothing is stale, and a stale rule fails the report like a
difference: the scenario no longer says what is true. A rule that states its `sides` is
pinned: a side that stops doing what it declares is drift (`parity.scenario.pins`).
"""

from __future__ import annotations

import functools
from collections.abc import Sequence
from dataclasses import dataclass, field
from fnmatch import fnmatchcase
from typing import Any

from parity.checks.acp_schema import SchemaError, load_schema
from parity.checks.comparable import comparable_views
from parity.checks.diff_text import again_in, facts, side_by_side
from parity.checks.differences import ABSENT, DRIFT, Difference, find_differences
from parity.core.printable import printable
from parity.scenario.model import Rule
from parity.scenario.pins import (
    EACH,
    OTHERS,
    acp_refs,
    acp_registry,
    reported_version,
    side_violation,
    version_holds,
)
from parity.scenario.selectors import Path, get_path, select


@dataclass
class ParityReport:
    """The outcome of comparing one target against the reference target."""

    scenario: str
    ref_name: str
    other_name: str
    profile: str
    differences: list[Difference] = field(default_factory=list)
    """Differences no diverge rule explains."""
    suppressed: list[tuple[Difference, Rule]] = field(default_factory=list)
    stale: list[Rule] = field(default_factory=list)
    """Applicable scenario diverge rules that explained no difference."""
    known_applied: list[str] = field(default_factory=list)
    """Ids of the project's known differences that applied here (target and version)."""
    known_used: list[str] = field(default_factory=list)
    """Ids of applied known differences that explained a difference here. One that
    explains nothing in one scenario is not stale: stale means unused in a whole run
    (`parity.suite.known_ledger`)."""
    known_unjudged: list[str] = field(default_factory=list)
    """Ids of known differences naming a target here whose version is unknown."""

    @property
    def ok(self) -> bool:
        """True when nothing differs beyond the diverge rules and no rule is stale."""
        return not self.differences and not self.stale

    def render(self, max_lines: int = 12, max_differences: int = 40) -> str:
        """A compact text report: scenario, each step's differences with path and values.

        A fact every later model request repeats (a message of the history) is shown
        once, with the requests it recurs in (`facts`). At most `max_differences` facts
        are shown in full (a run that went wrong early can differ in thousands of
        places); the rest are counted by category.
        """
        head = f"{self.scenario or 'scenario'}: {self.other_name} vs {self.ref_name} (reference)"
        head += f", {self.profile} profile: "
        grouped = facts(self.differences)
        distinct = f" ({len(grouped)} distinct)" if len(grouped) < len(self.differences) else ""
        parts = [
            f"{len(self.differences)} difference(s){distinct}",
            f"{len(self.suppressed)} expected (diverge)",
        ]
        if self.stale:
            parts.append(f"{len(self.stale)} stale diverge rule(s)")
        lines = [head + ", ".join(parts) + f"  (- {self.ref_name}, + {self.other_name})"]
        current: tuple[Any, ...] | None = None
        for d, later in grouped[:max_differences]:
            where = (d.step, d.step_kind, d.step_label)
            if where != current:
                current = where
                lines.append(
                    f"  step {d.step} {d.step_kind}: {d.step_label}"
                    if d.step is not None
                    else "  outside steps"
                )
            detail = f"  ({d.detail})" if d.detail else ""
            lines.append(f"    [{d.category}] {d.path}{detail}{again_in(later)}")
            lines.extend(
                "      " + line
                for line in side_by_side(d.ref, d.other, self.ref_name, self.other_name, max_lines)
            )
        rest = grouped[max_differences:]
        if rest:
            counts: dict[str, int] = {}
            for d, _ in rest:
                counts[d.category] = counts.get(d.category, 0) + 1
            summary = ", ".join(f"{n} {category}" for category, n in counts.items())
            lines.append(f"  ... and {len(rest)} more difference(s): {summary}")
        for rule in self.stale:
            lines.append(
                f"  stale diverge rule: {rule.path!r} ({rule.reason}) matched no difference"
            )
        # Paths and labels can hold what an agent sent (a key of its own choosing).
        return printable("\n".join(lines))


def compare(
    ref: dict[str, Any],
    other: dict[str, Any],
    *,
    profile: str,
    diverge: Sequence[Rule],
    ref_name: str,
    other_name: str,
    scenario: str = "",
    known: Sequence[Rule] = (),
) -> ParityReport:
    """Compare two normalized views of one scenario; `ref` is the parity reference.

    Rules (the scenario's `diverge`, then the project's `known` differences) apply when
    their `targets` is None or names either side (a family-wide known difference: names
    both); a known difference also needs the version its target's run reports inside its
    `versions`. They select in the views the
    differences were found in (`comparable_views`), so every path a difference prints,
    used as a rule's path, selects it. Every applicable rule with `sides` is checked on
    both views, whether or not it explains a difference here: a side that no longer does
    what it declares is drift.
    """
    ref, other = comparable_views(ref, other)
    found = find_differences(ref, other, profile)
    report = ParityReport(scenario, ref_name, other_name, profile)
    versions = {ref_name: reported_version(ref), other_name: reported_version(other)}
    rules = [r for r in diverge if _names_either(r, ref_name, other_name)]
    for rule in known:
        if not _names_either(rule, ref_name, other_name) or not _in_scope(rule, scenario):
            continue
        if rule.family and not {ref_name, other_name} <= set(rule.targets or ()):
            continue
        subject = (rule.targets or [ref_name])[0]
        holds = version_holds(rule.versions, versions.get(subject))
        if holds:
            rules.append(rule)
            report.known_applied.append(rule.id)
        elif holds is None:
            report.known_unjudged.append(rule.id)
    # Causes first; an entry that `follows` one joins only where its cause explained a
    # difference here, and takes what the causes left; and so on down a chain.
    waiting = [r for r in rules if r.follows]
    selections = _explain([r for r in rules if not r.follows], found, ref, other, report)
    while joining := [r for r in waiting if r.follows in report.known_used]:
        waiting = [r for r in waiting if r not in joining]
        left, report.differences = report.differences, []
        selections += _explain(joining, left, ref, other, report)
    report.differences += [
        drift
        for rule, in_ref, in_other in selections
        for drift in _drift(rule, (ref_name, ref, in_ref), (other_name, other, in_other))
    ]
    return report


Selection = tuple[Rule, list[Path], list[Path]]
"""A rule with what it selects in the reference's view and in the other's."""


def _explain(
    rules: Sequence[Rule],
    found: Sequence[Difference],
    ref: dict[str, Any],
    other: dict[str, Any],
    report: ParityReport,
) -> list[Selection]:
    """Each difference to the first rule that covers it (`suppressed`), or left in
    `report.differences`; which rules explained one (every rule that covers it). Each
    rule's selection is made once per view: it decides both what the rule explains and
    what its sides are checked on."""
    selections = [(r, select(ref, r.path), select(other, r.path)) for r in rules]
    # A position is one in both views (the same step, the same model request): a rule
    # that selects it in either view explains what differs there on either side, so a
    # filter that finds native's failed step also explains what plus did in that step.
    matched = [(r, set(in_ref) | set(in_other)) for r, in_ref, in_other in selections]
    used: set[int] = set()
    for d in found:
        covering = [
            i
            for i, (_, selected) in enumerate(matched)
            if _covers(selected, d.ref_path) or _covers(selected, d.other_path)
        ]
        if not covering:
            report.differences.append(d)
            continue
        report.suppressed.append((d, matched[covering[0]][0]))
        # Every rule covering it has shown its fact here (two natives' entries at one
        # place, say), so none of them is stale for want of a difference of its own.
        used.update(covering)
    for i, (rule, _) in enumerate(matched):
        if rule.id and i in used:
            report.known_used.append(rule.id)
        elif not rule.id and i not in used:
            report.stale.append(rule)
    return selections


def _in_scope(rule: Rule, scenario: str) -> bool:
    """A known difference scoped to `scenarios` applies only there (fnmatch patterns)."""
    return rule.scenarios is None or any(fnmatchcase(scenario, p) for p in rule.scenarios)


def _names_either(rule: Rule, ref_name: str, other_name: str) -> bool:
    return rule.targets is None or ref_name in rule.targets or other_name in rule.targets


Side = tuple[str, dict[str, Any], list[Path]]
"""One side of a comparison: target name, view, what a rule selects in it."""


def _drift(rule: Rule, ref: Side, other: Side) -> list[Difference]:
    """One difference per side of `rule` that no longer does what the rule declares."""
    out: list[Difference] = []
    sides = rule.sides or {}
    for (name, view, paths), is_ref in ((ref, True), (other, False)):
        side = sides.get(name, sides.get(OTHERS, sides.get(EACH)))
        if side is None:
            continue
        values = [get_path(view, p) for p in paths]
        problem = side_violation(side, values, _registry() if acp_refs(side) else None)
        if problem is None:
            continue
        shown = values[0] if len(values) == 1 else values if values else ABSENT
        out.append(
            Difference(
                DRIFT,
                rule.path,
                shown if is_ref else ABSENT,
                ABSENT if is_ref else shown,
                detail=f"{rule.label}, {name} side: {problem}",
            )
        )
    return out


def _covers(selected: set[Path], path: Path | None) -> bool:
    """A rule covers a difference at or below one of the paths it selects."""
    return path is not None and any(path[:n] in selected for n in range(len(path) + 1))


@functools.cache
def _registry() -> Any:
    """The ACP schema for sides that name its definitions; None when it is not there
    (such a side then says it cannot be judged: a drift, never a silent pass)."""
    try:
        return acp_registry(load_schema())
    except SchemaError:
        return None
