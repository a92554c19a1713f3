"""A side-by-side diff of two texts for the HTML report: a drifted snapshot, its recorded
text (left) beside this run's (right). Pure.

`aligned(old, new)` pairs the lines from difflib's `SequenceMatcher` opcodes: an equal
run pairs line with line, a replaced run pairs its lines in order and pads the shorter
side, a deleted or inserted run leaves the other side empty, so row n of the left
column is always beside row n of the right one. `side_by_side` renders those rows as one
table whose unchanged runs are collapsed into `<details>` (only `context` lines around
each change stay open), so the drift is what the eye lands on, not the whole snapshot.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from difflib import SequenceMatcher
from typing import Literal

from parity.report.html_page import esc

Kind = Literal["same", "changed", "removed", "added"]


@dataclass(frozen=True)
class Row:
    """One aligned row: a line of each side (1-based number and text), None for a gap."""

    kind: Kind
    old_no: int | None
    old: str | None
    new_no: int | None
    new: str | None


def aligned(old: str, new: str) -> list[Row]:
    """The two texts' lines, aligned row by row (see the module doc)."""
    a, b = old.splitlines(), new.splitlines()
    # autojunk off: a snapshot repeats lines (`result:`, `type: text`) far more than 1%
    # of the time; difflib's heuristic would treat them as junk, never anchor on them,
    # and pair a step's `result:` with an inserted update's line across from it.
    rows: list[Row] = []
    for tag, i1, i2, j1, j2 in SequenceMatcher(None, a, b, autojunk=False).get_opcodes():
        if tag == "equal":
            rows += [
                Row("same", i + 1, a[i], j + 1, b[j])
                for i, j in zip(range(i1, i2), range(j1, j2), strict=True)
            ]
            continue
        for k in range(max(i2 - i1, j2 - j1)):
            i, j = i1 + k, j1 + k
            left = (i + 1, a[i]) if i < i2 else (None, None)
            right = (j + 1, b[j]) if j < j2 else (None, None)
            kind: Kind = "changed" if left[0] and right[0] else "removed" if left[0] else "added"
            rows.append(Row(kind, left[0], left[1], right[0], right[1]))
    return rows


def hunks(rows: Sequence[Row], context: int = 3) -> list[tuple[bool, list[Row]]]:
    """The rows in runs, `(open, rows)`: changed rows and `context` unchanged rows on
    either side stay open; a longer unchanged run between them is one closed run."""
    near = [False] * len(rows)
    for n, row in enumerate(rows):
        if row.kind != "same":
            for m in range(max(0, n - context), min(len(rows), n + context + 1)):
                near[m] = True
    out: list[tuple[bool, list[Row]]] = []
    for row, shown in zip(rows, near, strict=True):
        if out and out[-1][0] == shown:
            out[-1][1].append(row)
        else:
            out.append((shown, [row]))
    return out


_TOKEN = re.compile(r"\w+|\s+|[^\w\s]")


def _marked(text: str, other: str, tag: str) -> str:
    """`text` escaped, the words that differ from `other` wrapped in `<tag>`.

    Words, not characters: `end_turn` against `max_tokens` is one changed value, and a
    character match would mark the letters they happen to share as unchanged."""
    a, b = _TOKEN.findall(text), _TOKEN.findall(other)
    out = []
    for op, i1, i2, _, _ in SequenceMatcher(None, a, b, autojunk=False).get_opcodes():
        part = esc("".join(a[i1:i2]))
        out.append(part if op == "equal" or not part else f"<{tag}>{part}</{tag}>")
    return "".join(out)


def _side(no: int | None, text: str | None, other: str | None, cls: str, tag: str) -> str:
    if no is None or text is None:
        return '<td class="no gap"></td><td class="gap"></td>'
    # A changed line pair marks the characters that differ, as a unified diff cannot.
    shown = _marked(text, other, tag) if other is not None else esc(text)
    return f'<td class="no">{no}</td><td class="{cls}">{shown}</td>'


_CLASSES: dict[Kind, tuple[str, str]] = {
    "same": ("", ""),
    "changed": ("del", "add"),
    "removed": ("del", "gap"),
    "added": ("gap", "add"),
}

_COLS = '<colgroup><col class="n"><col class="t"><col class="n"><col class="t"></colgroup>'


def _rows_html(rows: Sequence[Row]) -> str:
    out = []
    for r in rows:
        left, right = _CLASSES[r.kind]
        pair = r.kind == "changed"
        out.append(
            f'<tr class="{r.kind}">'
            f"{_side(r.old_no, r.old, r.new if pair else None, left, 'del')}"
            f"{_side(r.new_no, r.new, r.old if pair else None, right, 'ins')}</tr>"
        )
    return "".join(out)


def side_by_side(old: str, new: str, old_title: str, new_title: str, context: int = 3) -> str:
    """The aligned diff as one table (see the module doc); a note if nothing differs."""
    rows = aligned(old, new)
    changed = sum(1 for r in rows if r.kind != "same")
    if not changed:
        return '<p class="muted">The two texts are equal.</p>'
    body = []
    for shown, run in hunks(rows, context):
        if shown:
            body.append(_rows_html(run))
            continue
        # A table row cannot sit inside <details>, so a collapsed run is a nested table
        # with the same fixed columns: opened, its lines line up with the rest.
        first, last = run[0], run[-1]
        summary = (
            f"{len(run)} unchanged line(s) ({first.old_no}-{last.old_no} | "
            f"{first.new_no}-{last.new_no})"
        )
        body.append(
            '<tr class="fold"><td colspan="4"><details><summary>'
            f'{esc(summary)}</summary><table class="sbs">{_COLS}'
            f"<tbody>{_rows_html(run)}</tbody></table></details></td></tr>"
        )
    return (
        f'<table class="sbs mono">{_COLS}<thead><tr><th colspan="2">{esc(old_title)}</th>'
        f'<th colspan="2">{esc(new_title)}</th></tr></thead><tbody>{"".join(body)}</tbody>'
        f'</table><p class="muted">{changed} differing row(s) of {len(rows)}; unchanged '
        "runs are folded, click one to open it.</p>"
    )
