"""The summary matrix: one row per scenario, one column per target, one cell per pair.

Shared by the terminal summary (`summary_table`, `group_lines`) and the reports
(`parity.report.results`, `parity.report.html`). Everything is pure: it takes the session's
outcomes (`parity.report.outcome.Outcome`) and, per item, its diff record (`parity.report.results`:
the categories and paths of the differences a check found) and returns text.

Targets are ordered the same way everywhere: the most used parity reference first (ties
by name), then every other target sorted by name, so a table does not depend on the order
results arrived in (xdist). A cell says the target's own snapshot check and, for a
target that is not the scenario's reference, how it compared with the reference, with
the category of each failure (`fail: changed field`, `differs from native: missing
update`). When the table is wider than `WIDTH`, cells are abbreviated (`pass =*`,
`fail:field`, `pass ~miss+1`) and one legend line explains the abbreviations used; a
table still too wide is split into column groups, each repeating the scenario column.

Failing checks with the same diff are grouped after the table (`parity.report.groups`).
"""

from __future__ import annotations

import re
import textwrap
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from parity.report.outcome import Outcome

WIDTH = 120
"""Columns the terminal summary fits in (CI logs and ordinary terminals)."""

DiffKey = tuple[str, str, str]
"""(scenario, kind, target) of one item."""
Diffs = Mapping[DiffKey, Mapping[str, Any]]
"""Diff records by item (see `parity.report.collected.diff_record`)."""

STALE = "stale diverge"
"""A `diverge` rule that matched no difference: fails a parity check like one."""

# Failures that are not differences: derived from an outcome's reason.
NO_SNAPSHOT = "no snapshot"
CONFORMANCE = "conformance"
HARNESS = "harness error"
CANNOT_RUN = "cannot run"
UNDECLARED = "undeclared target"
RUN_PROBLEM = "run problem"
STALE_EXPECT = "stale expect_problems"

CATEGORY_ORDER = (
    "declared difference drifted",
    "stop reason",
    "error",
    "missing update",
    "extra update",
    "changed field",
    "ordering only",
    "chunking only",
    "model request",
    STALE,
)
"""`parity.checks.differences.CATEGORIES` (most telling first), then stale rules; a cell names the
first category its check found, `+N` counting the others."""

ABBREVIATIONS = {
    "declared difference drifted": "drift",
    "stop reason": "stop",
    "error": "err",
    "missing update": "miss",
    "extra update": "extra",
    "changed field": "field",
    "ordering only": "order",
    "chunking only": "chunk",
    "model request": "model",
    STALE: "stale",
    NO_SNAPSHOT: "nosnap",
    CONFORMANCE: "conf",
    HARNESS: "harn",
    CANNOT_RUN: "norun",
    UNDECLARED: "undecl",
    RUN_PROBLEM: "prob",
    STALE_EXPECT: "stexp",
}

SYMBOLS = {
    "=": ("= same as the reference (first target)", "=same as ref"),
    "~": ("~ differs", "~differs"),
    "?": ("? not compared", "?not compared"),
    "!": ("! check failed", "!failed"),
    "*": ("* vs a recording", "*recorded"),
    "+": ("+N more categories", "+N more"),
    "rec": ("rec: not run here, its recording compared", "rec:recording"),
}
"""The parity part of an abbreviated cell, in legend order: (words, terse words)."""


# -- cells -----------------------------------------------------------------------------


def target_order(outcomes: Iterable[Outcome]) -> list[str]:
    """The most used parity reference first (ties by name), then the others sorted."""
    outcomes = list(outcomes)
    refs = Counter(o.reference for o in outcomes if o.kind == "parity" and o.reference)
    names = {o.target for o in outcomes} | set(refs)
    if not refs:
        return sorted(names)
    first = min(refs, key=lambda r: (-refs[r], r))
    return [first, *sorted(names - {first})]


def categories(outcome: Outcome | None, diff: Mapping[str, Any] | None) -> list[str]:
    """The failure categories of an item: none unless it failed or differed.

    A diff's categories (most telling first, stale rules last), after the failure kinds
    its reason names (a conformance failure, a missing snapshot, ...)."""
    if outcome is None or outcome.status not in ("fail", "differs"):
        return []
    reason = outcome.reason
    if reason.startswith("harness error"):
        return [HARNESS]
    kinds = []
    if "run problem" in reason:
        kinds.append(RUN_PROBLEM)
    if "stale expect_problems" in reason:
        kinds.append(STALE_EXPECT)
    if "conformance finding" in reason:
        kinds.append(CONFORMANCE)
    if reason == NO_SNAPSHOT or reason.endswith(f"; {NO_SNAPSHOT}"):
        kinds.append(NO_SNAPSHOT)
    if "cannot run" in reason:
        kinds.append(CANNOT_RUN)
    if "is not declared" in reason:
        kinds.append(UNDECLARED)
    if diff is not None:
        found = set(diff.get("categories", {}))
        if diff.get("stale"):
            found.add(STALE)
        order = {c: i for i, c in enumerate(CATEGORY_ORDER)}
        kinds += sorted(found, key=lambda c: (order.get(c, len(order)), c))
    return kinds


def recorded(parity: Outcome) -> bool:
    """A parity check that ran against a recorded snapshot (its notes say which)."""
    return parity.status in ("pass", "differs") and bool(parity.reason)


def stood_in(parity: Outcome) -> bool:
    """Whether the compared target's own recording stood in for it: it did not run here
    (the check's notes name it unavailable, `parity.suite.parity_item`). An added target
    that ran, unrecorded, beside a recorded reference is compared live: not this."""
    return recorded(parity) and f"{parity.target} unavailable" in parity.reason


def _cats(cats: Sequence[str], short: bool, used: set[str] | None = None) -> str:
    if not cats:
        return ""
    more = len(cats) - 1
    if short:
        if used is not None:
            used.add(cats[0])
        return ABBREVIATIONS.get(cats[0], cats[0]) + (f"+{more}" if more else "")
    return cats[0] + (f" +{more}" if more else "")


def own_label(
    outcome: Outcome | None,
    diff: Mapping[str, Any] | None,
    short: bool,
    used: set[str] | None = None,
) -> str:
    """A target's own check: `pass`, `new`, `skip`, `fail: changed field`, or `-`;
    abbreviated (`fail:field`) with `short`, adding the category shown to `used`."""
    if outcome is None:
        return "-"
    cats = _cats(categories(outcome, diff), short, used)
    if outcome.status == "fail" and cats:
        return f"fail:{cats}" if short else f"fail: {cats}"
    return outcome.status


def parity_label(
    parity: Outcome,
    diff: Mapping[str, Any] | None,
    short: bool,
    used: set[str] | None = None,
) -> str:
    """How a target compared with the reference: `same as native (recorded)`, ...;
    abbreviated (`=*`, `~miss+1`) with `short`."""
    ref, star = parity.reference, recorded(parity)
    cats = _cats(categories(parity, diff), short, used if parity.status == "differs" else None)
    if short:
        sign = {"pass": "=", "differs": "~", "skip": "?"}.get(parity.status, "!")
        return sign + (cats if parity.status == "differs" else "") + ("*" if star else "")
    tail = " (recorded)" if star else ""
    if parity.status == "pass":
        return f"same as {ref}{tail}"
    if parity.status == "differs":
        return f"differs from {ref}" + (f": {cats}" if cats else "") + tail
    if parity.status == "skip":
        return f"not compared with {ref}"
    return f"check against {ref} failed"


def cell(
    own: Outcome | None,
    parity: Outcome | None,
    diffs: Diffs,
    short: bool = False,
    used: set[str] | None = None,
) -> str:
    """One table cell: the target's own check, then its parity check if it has one."""
    text = own_label(own, diffs.get(item_key(own)) if own else None, short, used)
    if own is not None and own.status == "skip" and parity is not None and stood_in(parity):
        # The target did not run here, yet its parity check compared: its recording
        # stood in. `skip =*` read as "skipped, yet the same as the reference".
        text = "rec" if short else "recorded"
    if parity is not None:
        sep = " " if short else "; "
        text += sep + parity_label(parity, diffs.get(item_key(parity)), short, used)
    return text


def item_key(outcome: Outcome) -> DiffKey:
    return (outcome.scenario, outcome.kind, outcome.target)


# -- the table -------------------------------------------------------------------------


def summary_table(
    outcomes: Sequence[Outcome], diffs: Diffs | None = None, width: int = WIDTH
) -> list[str]:
    """Scenarios as rows, targets as columns, fitted into `width` columns: full cells
    when they fit, else abbreviated ones with a legend line, else column groups."""
    if not outcomes:
        return ["no scenario items ran"]
    diffs = diffs or {}
    scenarios = sorted({o.scenario for o in outcomes})
    targets = target_order(outcomes)
    own = {(o.scenario, o.target): o for o in outcomes if o.kind == "target"}
    pairs = {(o.scenario, o.target): o for o in outcomes if o.kind == "parity"}
    header = ["scenario", *targets]
    used: set[str] = set()

    def rows(short: bool) -> list[list[str]]:
        return [
            [s, *(cell(own.get((s, t)), pairs.get((s, t)), diffs, short, used) for t in targets)]
            for s in scenarios
        ]

    lines = _table(header, rows(False))
    if max(map(len, lines)) <= width:
        return lines
    short_rows = rows(True)
    lines = _table(header, short_rows)
    if max(map(len, lines)) > width:
        # One space between target columns, then clipped cells, then column groups.
        lines = _table(header, short_rows, gap=1)
    if max(map(len, lines)) > width:
        widths = _squeezed(header, short_rows, width, gap=1)
        if widths is not None:
            lines = _table(header, short_rows, widths, gap=1)
        else:
            lines = _column_groups(header, short_rows, width)
    return [*lines, *fit(legend(short_rows, used, width), width)]


MIN_CELL = 8
"""An abbreviated column is clipped down to its header or this width, no further."""


def _squeezed(header: list[str], rows: list[list[str]], width: int, gap: int) -> list[int] | None:
    """Column widths that fit `width`, clipping the widest target columns (down to
    `MIN_CELL` or their header), or None when that is not enough."""
    widths = [max(len(r[i]) for r in [header, *rows]) for i in range(len(header))]
    floors = [widths[0], *(max(len(h), MIN_CELL) for h in header[1:])]
    excess = sum(widths) + 2 + gap * (len(widths) - 2) - width
    while excess > 0:
        i = max(range(1, len(widths)), key=lambda k: widths[k] - floors[k], default=0)
        if i == 0 or widths[i] <= floors[i]:
            return None
        widths[i] -= 1
        excess -= 1
    return widths


def _table(
    header: list[str], rows: list[list[str]], widths: list[int] | None = None, gap: int = 2
) -> list[str]:
    """Aligned columns: two spaces after the scenario column, `gap` between the others."""
    if widths is None:
        widths = [max(len(r[i]) for r in [header, *rows]) for i in range(len(header))]
    else:
        rows = [[_clip(c, w) for c, w in zip(r, widths, strict=True)] for r in rows]

    def join(cells: list[str]) -> str:
        return (cells[0] + "  " + (" " * gap).join(cells[1:])).rstrip()

    lines = [join([c.ljust(w) for c, w in zip(r, widths, strict=True)]) for r in [header, *rows]]
    lines.insert(1, join(["-" * w for w in widths]))
    return lines


def _clip(text: str, width: int) -> str:
    return text if len(text) <= width else text[: max(width - 1, 0)] + "…"


def _column_groups(header: list[str], rows: list[list[str]], width: int) -> list[str]:
    """Tables of as many target columns as fit, each with the scenario column; a column
    wider than a whole table is clipped (the reports and the groups below have it all)."""
    first = min(max(len(r[0]) for r in [header, *rows]), width // 2)
    budget = width - first - 2
    widths = [min(max(len(r[i]) for r in [header, *rows]), budget) for i in range(1, len(header))]
    chunks: list[list[int]] = [[]]
    used = 0
    for i, w in enumerate(widths, start=1):
        need = w + (2 if chunks[-1] else 0)
        if chunks[-1] and used + need > budget:
            chunks.append([])
            used, need = 0, w
        chunks[-1].append(i)
        used += need
    out: list[str] = []
    for chunk in chunks:
        cols = [0, *chunk]
        sizes = [first, *(widths[i - 1] for i in chunk)]
        clipped = [[_clip(r[i], s) for i, s in zip(cols, sizes, strict=True)] for r in rows]
        head = [_clip(header[i], s) for i, s in zip(cols, sizes, strict=True)]
        if out:
            out.append("")
        out += _table(head, clipped)
    return out


def legend(rows: Sequence[Sequence[str]], used: Iterable[str], width: int = WIDTH) -> str:
    """One line explaining the symbols the abbreviated rows use and the categories they
    name (`used`); `+N` counts further categories (the groups below name them). Terse
    wording when the plain one is wider than `width`."""
    # No other cell text contains "rec", so it marks the recorded-stand-in label.
    text = " ".join(c for r in rows for c in r[1:])
    order = list(ABBREVIATIONS)
    cats = sorted(
        (c for c in set(used) if c in ABBREVIATIONS),
        key=order.index,
    )
    line = ""
    for terse in (False, True):
        parts = [words[terse] for sign, words in SYMBOLS.items() if sign in text]
        if terse:
            abbrevs = " ".join(f"{ABBREVIATIONS[c]}:{c}" for c in cats)
            line = "legend: " + " ".join(parts) + (" | " if parts and cats else "") + abbrevs
        else:
            abbrevs = ", ".join(f"{ABBREVIATIONS[c]}: {c}" for c in cats)
            line = "legend: " + ", ".join(parts) + ("; " if parts and cats else "") + abbrevs
        if len(line) <= width:
            break
    return line


_PHRASE_END = re.compile(r"(?<=[,;:]) (?=\S)| (?=\()")
"""A space where a phrase ends: after `,` `;` `:`, or before `(`."""


def fit(line: str, width: int = WIDTH, indent: int | None = None) -> list[str]:
    """`line` wrapped into `width` columns, continuation lines indented 4 more (or to
    column `indent`: a table's last cell continues under itself). Lines break where a
    phrase ends, so `4 same vs codex-acp (4 recorded)` or `run parity peers install`
    stay whole; only a phrase longer than a line breaks between its words."""
    if len(line) <= width:
        return [line]
    lead = len(line) - len(line.lstrip(" "))
    pad = " " * (min(lead + 4, width // 2) if indent is None else min(indent, width // 2))
    packed: list[str] = []
    for phrase in _PHRASE_END.split(line):
        joined = f"{packed[-1]} {phrase}" if packed else phrase
        if packed and len(joined) > width and packed[-1].strip():
            packed.append(pad + phrase)
        elif packed:
            packed[-1] = joined
        else:
            packed.append(phrase)
    out: list[str] = []
    for part in packed:
        if len(part) <= width:
            out.append(part)
            continue
        out += textwrap.wrap(part, width, subsequent_indent=pad, break_on_hyphens=False) or [
            part[:width]
        ]
    return out
