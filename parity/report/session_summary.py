"""The parity summary's lines, a pure function of a session's ledger.

By default the summary at a glance (`parity.report.glance`: a line per target, the
failing scenarios' rows, every skip reason once); under `-v` the whole summary table
(`parity.report.matrix`). Then the groups of identical changes, the counts and notes,
the masks, findings and expected problems (with target-table entries that claimed
none), the known differences' verdict, invalid files and unused snapshots. The pytest
session (`parity.suite.summary`) and `parity merge` (`parity.cli.merge`) both print it.
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from parity.checks.expected import unclaimed, unclaimed_lines
from parity.checks.known_ledger import Ledger, ledger_lines
from parity.report.glance import WIDTH as GLANCE_WIDTH
from parity.report.glance import collapsed, failing_table, skip_lines, target_lines
from parity.report.groups import difference_groups, group_lines
from parity.report.ledger import SessionLedger
from parity.report.matrix import WIDTH, fit, summary_table
from parity.report.text import (
    counts_line,
    expected_lines,
    findings_lines,
    mask_lines,
    parity_notes,
)

if TYPE_CHECKING:
    from parity.scenario.model import ExpectedProblem

IDS_SHOWN = 8
"""Ids a summary line lists by default; a longer list is counted (`-v` lists it)."""


@dataclass(frozen=True)
class Context:
    """What the summary needs besides the ledger: the project and the session's end."""

    verbosity: int = 0
    """pytest's: > 0 is `-v`, <= -2 is `parity run -q`."""
    known_total: int = 0
    """How many known differences the project declares."""
    verdict: Ledger | None = None
    declared: Mapping[str, Sequence[ExpectedProblem]] = field(default_factory=dict)
    """Each target table's `expect_problems`."""
    unused: Sequence[Path] = ()
    unused_verb: str = "unused (run `parity record` to delete)"
    cwd: Path = Path(".")
    """Paths are shown relative to it."""


def unused_verb(*, deleted: bool, fails: bool) -> str:
    """How the summary names unused snapshot files."""
    if deleted:
        return "deleted"
    if fails:
        return (
            "unused: fails the run under CI (`parity record` deletes them; "
            "`-- --snapshot-warn-unused` keeps them)"
        )
    return "unused (run `parity record` to delete)"


def width(verbosity: int) -> int:
    return WIDTH if verbosity > 0 else GLANCE_WIDTH


def summary_lines(ledger: SessionLedger, ctx: Context) -> list[str]:
    """The summary's lines, each fitted to its width (see the module doc)."""
    verbose = ctx.verbosity > 0
    cols = width(ctx.verbosity)
    out: list[str] = []

    def write(lines: Sequence[str]) -> None:
        for line in lines:
            out.extend(fit(line, cols))

    def section(lines: list[str], keep: int) -> None:
        write(lines if verbose else collapsed(lines, keep, "-v lists them"))

    outcomes = ledger.outcomes
    diffs = ledger.collected.diff_index()
    if verbose:
        write(summary_table(outcomes, diffs))
    else:
        if ctx.verbosity > -2:  # `parity run -q` (pytest -qq): no target lines
            write(target_lines(outcomes, cols))
        write(failing_table(outcomes, diffs, cols))
    write(group_lines(difference_groups(outcomes, diffs)))
    write(["", counts_line(outcomes)])
    write(skip_lines(outcomes, cols))
    write(parity_notes(outcomes, skips=verbose))
    section(mask_lines(ledger.masked), 1)
    section(findings_lines(ledger.findings), 3)
    section(expected_lines(ledger.expected), 1)
    write(
        unclaimed_lines(
            unclaimed(ctx.declared, [(u.target, u.used) for u in ledger.target_expect_uses])
        )
    )
    if ctx.verdict is not None:
        write(ledger_lines(ctx.verdict, ctx.known_total, None if verbose else IDS_SHOWN))
    if ledger.invalid:
        write([f"{len(ledger.invalid)} scenario file(s) invalid (not run):"])
        write([f"  {os.path.relpath(name, ctx.cwd)}" for name in sorted(ledger.invalid)])
    if ctx.unused:
        write([f"{len(ctx.unused)} snapshot file(s) {ctx.unused_verb}:"])
        write([f"  {os.path.relpath(path, ctx.cwd)}" for path in ctx.unused])
    return out
