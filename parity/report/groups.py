"""Failing checks with the same diff (same categories at the same paths), grouped after
the summary table: "plus vs native, same change in 31 scenarios: changed field at ...".

Pure, like the table (`parity.report.matrix`): outcomes and diff records in, lines out.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from parity.report.matrix import STALE, WIDTH, Diffs, fit, item_key
from parity.report.outcome import Outcome


@dataclass(frozen=True)
class Group:
    """Failing checks of one target against the same thing with the same differences."""

    kind: str
    target: str
    against: str
    """The reference target (parity checks) or `its snapshot` (target checks)."""
    differences: tuple[tuple[str, str], ...]
    """(category, path) of every difference recorded (stale rules as `stale diverge`)."""
    count: int
    """All differences (a record keeps at most `parity.report.collected.LIMIT` of them)."""
    scenarios: tuple[str, ...]


def difference_groups(outcomes: Sequence[Outcome], diffs: Diffs) -> list[Group]:
    """Failing checks grouped by (target, against, categories and paths); the largest
    groups first. Checks without a diff record (a failure that is no diff) are left out."""
    found: dict[tuple[Any, ...], list[str]] = {}
    for o in outcomes:
        diff = diffs.get(item_key(o))
        if o.status not in ("fail", "differs") or diff is None:
            continue
        sig = tuple((d["category"], d["path"]) for d in diff.get("differences", []))
        sig += tuple((STALE, r["path"]) for r in diff.get("stale", []))
        if not sig:
            continue
        against = o.reference if o.kind == "parity" else "its snapshot"
        key = (o.kind, o.target, against, sig, int(diff.get("count", len(sig))))
        if o.scenario not in found.setdefault(key, []):
            found[key].append(o.scenario)
    groups = [
        Group(kind, target, against, sig, count, tuple(sorted(names)))
        for (kind, target, against, sig, count), names in found.items()
    ]
    return sorted(groups, key=lambda g: (-len(g.scenarios), g.target, g.against, g.scenarios))


SHOWN = 3
"""Differences named per group line; the rest are counted."""


def group_text(group: Group, shown: int = SHOWN) -> str:
    """`changed field at a.b, c.d; missing update at e (+2 more)`: the first `shown`
    differences, by category in their order, and how many more there are."""
    named: list[tuple[str, list[str]]] = []
    for category, path in group.differences[:shown]:
        if named and named[-1][0] == category:
            named[-1][1].append(path)
        else:
            named.append((category, [path]))
    text = "; ".join(f"{c} at {', '.join(paths)}" for c, paths in named)
    stale = sum(1 for c, _ in group.differences if c == STALE)
    rest = group.count + stale - min(shown, len(group.differences))
    return text + (f" (+{rest} more)" if rest > 0 else "")


def group_lines(groups: Sequence[Group], width: int = WIDTH) -> list[str]:
    """The groups as summary lines wrapped to `width`: which check and where, then
    what differs."""
    if not groups:
        return []
    checks = sum(len(g.scenarios) for g in groups)
    lines = [f"differences: {checks} failing check(s), {len(groups)} distinct change(s)"]
    for g in groups:
        if len(g.scenarios) > 1:
            where = f"same change in {len(g.scenarios)} scenarios: {', '.join(g.scenarios)}"
        else:
            where = f"in {g.scenarios[0]}"
        lines += fit(f"  {g.target} vs {g.against}, {where}", width)
        lines += fit(f"    {group_text(g)}", width)
    return lines
