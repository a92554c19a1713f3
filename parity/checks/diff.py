"""Parity diff: two normalized views (see `parity.view.normalize.view`) -> a categorized
report.

`parity.checks.differences` finds the typed differences; here the scenario's `diverge`
rules (selector + reason) suppress the differences at or below what they select in
either view, as compared (`comparable_views`: so every printed path, used as a rule,
matches its difference). An applicable rule that suppresses nothing is stale, and a
stale rule fails the report like a difference: the scenario no longer says what is
true.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from parity.checks.diff_text import side_by_side
from parity.checks.differences import Difference, comparable_views, find_differences
from parity.scenario.model import Rule
from parity.scenario.selectors import Path, select


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
    """Applicable diverge rules that explained no difference."""

    @property
    def ok(self) -> bool:
        """True when nothing differs beyond the diverge rules and no rule is stale."""
        return not self.differences and not self.stale

    def render(self, max_lines: int = 12, max_differences: int = 40) -> str:
        """A compact text report: scenario, each step's differences with path and values.

        At most `max_differences` are shown in full (a run that went wrong early can
        differ in thousands of places); the rest are counted by category.
        """
        head = f"{self.scenario or 'scenario'}: {self.other_name} vs {self.ref_name} (reference)"
        head += f", {self.profile} profile: "
        parts = [
            f"{len(self.differences)} difference(s)",
            f"{len(self.suppressed)} expected (diverge)",
        ]
        if self.stale:
            parts.append(f"{len(self.stale)} stale diverge rule(s)")
        lines = [head + ", ".join(parts) + f"  (- {self.ref_name}, + {self.other_name})"]
        current: tuple[Any, ...] | None = None
        for d in self.differences[:max_differences]:
            where = (d.step, d.step_kind, d.step_label)
            if where != current:
                current = where
                lines.append(
                    f"  step {d.step} {d.step_kind}: {d.step_label}"
                    if d.step is not None
                    else "  outside steps"
                )
            lines.append(f"    [{d.category}] {d.path}" + (f"  ({d.detail})" if d.detail else ""))
            lines.extend(
                "      " + line
                for line in side_by_side(d.ref, d.other, self.ref_name, self.other_name, max_lines)
            )
        rest = self.differences[max_differences:]
        if rest:
            counts: dict[str, int] = {}
            for d in rest:
                counts[d.category] = counts.get(d.category, 0) + 1
            summary = ", ".join(f"{n} {category}" for category, n in counts.items())
            lines.append(f"  ... and {len(rest)} more difference(s): {summary}")
        for rule in self.stale:
            lines.append(
                f"  stale diverge rule: {rule.path!r} ({rule.reason}) matched no difference"
            )
        return "\n".join(lines)


def compare(
    ref: dict[str, Any],
    other: dict[str, Any],
    *,
    profile: str,
    diverge: Sequence[Rule],
    ref_name: str,
    other_name: str,
    scenario: str = "",
) -> ParityReport:
    """Compare two normalized views of one scenario; `ref` is the parity reference.

    Diverge rules apply when their `targets` is None or names either side. They select
    in the views the differences were found in (`comparable_views`), so every path a
    difference prints, used as a rule's path, selects it.
    """
    ref, other = comparable_views(ref, other)
    found = find_differences(ref, other, profile)
    report = ParityReport(scenario, ref_name, other_name, profile)
    rules = [
        r for r in diverge if r.targets is None or ref_name in r.targets or other_name in r.targets
    ]
    matched = [(r, set(select(ref, r.path)), set(select(other, r.path))) for r in rules]
    used: set[int] = set()
    for d in found:
        for i, (rule, in_ref, in_other) in enumerate(matched):
            if _covers(in_ref, d.ref_path) or _covers(in_other, d.other_path):
                report.suppressed.append((d, rule))
                used.add(i)
                break
        else:
            report.differences.append(d)
    report.stale = [rule for i, (rule, _, _) in enumerate(matched) if i not in used]
    return report


def _covers(selected: set[Path], path: Path | None) -> bool:
    """A rule covers a difference at or below one of the paths it selects."""
    return path is not None and any(path[:n] in selected for n in range(len(path) + 1))
