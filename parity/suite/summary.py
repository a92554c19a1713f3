"""The session's end: the parity summary in the terminal, and the report files.

The summary table (`parity.report.matrix`), the groups of identical changes, the counts
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
from parity.report.groups import difference_groups, group_lines
from parity.report.matrix import fit, summary_table
from parity.report.results import now, session_data, write_outputs
from parity.report.text import counts_line, findings_lines, mask_lines, parity_notes
from parity.suite.state import SessionState


def write_summary(terminalreporter: Any, config: pytest.Config, state: SessionState) -> None:
    """The parity summary section (see the module docstring)."""
    # Imported here: it imports syrupy, which must not load with the plugin.
    from parity.suite.snapshots import unused_snapshots

    def write(line: str) -> None:
        for part in fit(line):  # the summary fits 120 columns
            terminalreporter.write_line(part)

    terminalreporter.write_sep("=", "parity summary")
    diffs = state.collected.diff_index()
    for line in summary_table(state.outcomes, diffs):
        write(line)
    for line in group_lines(difference_groups(state.outcomes, diffs)):
        write(line)
    write("")
    write(counts_line(state.outcomes))
    for line in parity_notes(state.outcomes):
        write(line)
    for line in mask_lines(state.masked):
        write(line)
    for line in findings_lines(state.findings):
        write(line)
    for line in summary_lines(state.expected):
        write(line)
    declared = {name: spec.expect_problems for name, spec in state.config.targets.items()}
    for line in unclaimed_lines(unclaimed(declared, state.target_expect_uses)):
        write(line)
    if state.ledger is not None:
        for line in ledger_lines(state.ledger, len(state.known)):
            write(line)
    if state.invalid:
        write(f"{len(state.invalid)} scenario file(s) invalid (not run):")
        for name in sorted(state.invalid):
            write(f"  {os.path.relpath(name, config.invocation_params.dir)}")
    unused = unused_snapshots(
        state.config.snapshots_dir, state.scenarios, state.whole_suite, state.joinable
    )
    if unused:
        delete = bool(config.option.update_snapshots)
        verb = "deleted" if delete else "unused (run `parity record` to delete)"
        write(f"{len(unused)} snapshot file(s) {verb}:")
        for path in unused:
            write(f"  {os.path.relpath(path, config.invocation_params.dir)}")
            if delete:
                path.unlink()
    for line in reports(config, state):
        write(line)


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
