"""The session's end: the parity summary in the terminal, and the report files.

By default the summary at a glance (`parity.report.glance`: a line per target, the
failing scenarios' rows, every skip reason once); under `-v` the whole summary table
(`parity.report.matrix`). Then the groups of identical changes, the counts
and notes, the masks, findings and expected problems (with target-table entries that
claimed none), invalid files and unused
snapshots (deleted under `parity record`), then the files `--parity-report`,
`--parity-junit` and `--parity-json` asked for (`parity.report.results`).
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest

from parity.checks.expected import summary_lines, unclaimed, unclaimed_lines
from parity.checks.known_ledger import ledger_lines
from parity.engine.store import remove
from parity.report.glance import WIDTH as GLANCE_WIDTH
from parity.report.glance import (
    collapsed,
    failing_table,
    more_line,
    skip_lines,
    target_lines,
)
from parity.report.groups import difference_groups, group_lines
from parity.report.matrix import WIDTH, fit, summary_table
from parity.report.results import now, session_data, write_outputs
from parity.report.text import counts_line, findings_lines, mask_lines, parity_notes
from parity.suite.state import SessionState

IDS_SHOWN = 8
"""Ids a summary line lists by default; a longer list is counted (`-v` lists it)."""


def write_summary(terminalreporter: Any, config: pytest.Config, state: SessionState) -> None:
    """The parity summary section (see the module docstring).

    pytest prints it after the failures' sections (their diffs) and before its short
    summary. By default it is the at-a-glance summary (`parity.report.glance`), fitted
    to 80 columns; under `-v` the whole table and every line, fitted to 120."""
    verbose = config.option.verbose > 0
    width = WIDTH if verbose else GLANCE_WIDTH

    def write(line: str) -> None:
        for part in fit(line, width):
            terminalreporter.write_line(part)

    def section(lines: list[str], keep: int) -> None:
        for line in lines if verbose else collapsed(lines, keep, "-v lists them"):
            write(line)

    terminalreporter.write_sep("=", "parity summary")
    diffs = state.collected.diff_index()
    if verbose:
        for line in summary_table(state.outcomes, diffs):
            write(line)
    else:
        if config.option.verbose > -2:  # `parity run -q` (pytest -qq): no target lines
            for line in target_lines(state.outcomes, width):
                write(line)
        for line in failing_table(state.outcomes, diffs, width):
            write(line)
    for line in group_lines(difference_groups(state.outcomes, diffs)):
        write(line)
    write("")
    write(counts_line(state.outcomes))
    for line in skip_lines(state.outcomes, width):
        write(line)
    for line in parity_notes(state.outcomes, skips=verbose):
        write(line)
    section(mask_lines(state.masked), 1)
    section(findings_lines(state.findings), 3)
    section(summary_lines(state.expected), 1)
    declared = {name: spec.expect_problems for name, spec in state.config.targets.items()}
    for line in unclaimed_lines(unclaimed(declared, state.target_expect_uses)):
        write(line)
    if state.ledger is not None:
        shown = None if verbose else IDS_SHOWN
        for line in ledger_lines(state.ledger, len(state.known), shown):
            write(line)
    if state.invalid:
        write(f"{len(state.invalid)} scenario file(s) invalid (not run):")
        for name in sorted(state.invalid):
            write(f"  {os.path.relpath(name, config.invocation_params.dir)}")
    unused = state.unused
    if unused:
        delete = bool(config.option.update_snapshots)
        if delete:
            verb = "deleted"
        elif state.unused_fail:
            verb = (
                "unused: fails the run under CI (`parity record` deletes them; "
                "`-- --snapshot-warn-unused` keeps them)"
            )
        else:
            verb = "unused (run `parity record` to delete)"
        write(f"{len(unused)} snapshot file(s) {verb}:")
        for path in unused:
            write(f"  {os.path.relpath(path, config.invocation_params.dir)}")
            if delete:
                remove(path)
    for line in reports(config, state):
        write(line)
    write(more_line(verbose))


def reports(config: pytest.Config, state: SessionState) -> list[str]:
    """Write the files `--parity-report/junit/json` asked for; a line naming each."""
    wanted = {k: config.getoption(f"parity_{k}", None) for k in ("report", "junit", "json")}
    if not any(wanted.values()):
        return []
    data = session_data(
        outcomes=state.outcomes,
        collected=state.collected,
        masked=state.masked,
        findings=state.findings,
        invalid=state.invalid,
        root=state.config.root,
        generated=now(),
    )
    base = config.invocation_params.dir
    paths = {k: Path(base, v) if v else None for k, v in wanted.items()}
    return write_outputs(
        data,
        report=paths["report"],
        junit=paths["junit"],
        json_path=paths["json"],
        relative_to=base,
    )
