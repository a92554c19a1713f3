"""The summary a person reads at a glance: what `parity run` prints by default.

The whole scenario x target table (`parity.report.matrix`) has a row per scenario (80 of
them in this repository) and stays for `-v` and the reports. By default the summary
says instead, in 80 columns: one line per target (how many scenarios, its own checks,
how it compared with the reference), every skip reason once, in full, with how many
items it skipped, and only the failing scenarios' rows of the table. Long lists (ids,
masks) are counted, with where to see them.

Everything here is pure: outcomes in, lines out.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Sequence

from parity.report.matrix import Diffs, fit, summary_table, target_order
from parity.report.outcome import Outcome

WIDTH = 80
"""Columns of the default summary: a terminal's, and a CI log's, default."""

FAILED = ("fail", "differs")

PARITY_WORDS = {"pass": "same", "differs": "differ", "skip": "not compared", "fail": "failed"}
"""How a count of parity checks reads in a target's line (`3 same vs native`)."""


def _counts(statuses: Sequence[str], order: Sequence[str], words: dict[str, str]) -> str:
    counted = Counter(statuses)
    return ", ".join(f"{counted[s]} {words.get(s, s)}" for s in order if counted[s])


def target_lines(outcomes: Sequence[Outcome], width: int = WIDTH) -> list[str]:
    """One line per target: its scenarios, in how many it is the reference (`ref`: it
    has no parity check there, being the first target or in a `compare: none`
    scenario), its own snapshot checks, and its parity checks (`45 same vs native (45
    recorded)`: the other side's recording stood in)."""
    rows = [["target", "scenarios", "ref", "snapshots", "compared with the reference"]]
    for target in target_order(outcomes):
        own = [o for o in outcomes if o.target == target and o.kind == "target"]
        pairs = [o for o in outcomes if o.target == target and o.kind == "parity"]
        scenarios = {o.scenario for o in [*own, *pairs]}
        snap = _counts([o.status for o in own], ("pass", "new", "fail", "skip"), {})
        vs = ""
        if pairs:
            refs = "/".join(sorted({o.reference for o in pairs}))
            statuses = [o.status for o in pairs]
            vs = _counts(statuses, ("pass", "differs", "fail", "skip"), PARITY_WORDS)
            vs += f" vs {refs}"
            # A parity check that compared with a recording carries the note as reason.
            stood_in = sum(1 for o in pairs if o.status in ("pass", "differs") and o.reason)
            if stood_in:
                vs += f" ({stood_in} recorded)"
        leads = len(scenarios - {o.scenario for o in pairs})
        rows.append([target, str(len(scenarios)), str(leads or "-"), snap or "-", vs])
    widths = [max(len(r[i]) for r in rows) for i in range(4)]
    last = sum(widths) + 2 * len(widths)  # where the last cell starts; it wraps under itself
    lines = []
    for r in rows:
        line = (
            f"{r[0]:<{widths[0]}}  {r[1]:>{widths[1]}}  {r[2]:>{widths[2]}}  "
            f"{r[3]:<{widths[3]}}  {r[4]}"
        )
        lines += fit(line.rstrip(), width, indent=last)
    return lines


def skip_lines(outcomes: Sequence[Outcome], width: int = WIDTH) -> list[str]:
    """Every reason an item skipped, once and in full (the progress line cuts it short),
    with how many items of which target it skipped; the most common first."""
    by_reason: dict[str, Counter[str]] = defaultdict(Counter)
    for o in outcomes:
        if o.status == "skip":
            label = o.target if o.kind == "target" else f"parity[{o.target}~{o.reference}]"
            by_reason[o.reason or "no reason given"][label] += 1
    if not by_reason:
        return []
    total = sum(sum(c.values()) for c in by_reason.values())
    lines = [f"skipped: {total} item(s), {len(by_reason)} reason(s)"]
    ordered = sorted(by_reason.items(), key=lambda kv: (-sum(kv[1].values()), kv[0]))
    for reason, labels in ordered:
        who = ", ".join(f"{n} {label}" for label, n in sorted(labels.items()))
        lines += fit(f"  {who}: {reason}", width)
    return lines


def failing_table(outcomes: Sequence[Outcome], diffs: Diffs, width: int = WIDTH) -> list[str]:
    """The summary table's rows of the scenarios where a check failed or differed (every
    target's cell of those scenarios, for context); nothing when all passed."""
    failing = {o.scenario for o in outcomes if o.status in FAILED}
    if not failing:
        return []
    rows = [o for o in outcomes if o.scenario in failing]
    return ["", f"failing scenarios: {len(failing)}", *summary_table(rows, diffs, width)]


def collapsed(lines: Sequence[str], keep: int, more: str) -> list[str]:
    """A section's first `keep` lines; the rest counted, with where to see them."""
    if len(lines) <= keep:
        return list(lines)
    return [*lines[:keep], f"  ... {len(lines) - keep} more line(s): {more}"]


def more_line(verbose: bool) -> str:
    """Where the rest is."""
    if verbose:
        return "more: --report DIR (HTML), `parity show SCENARIO TARGET` (one run's view)"
    return "more: -v (every item and row), --report DIR (HTML), parity show SCENARIO TARGET"
