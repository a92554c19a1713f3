"""The session's end: the parity summary in the terminal (`parity.report.session_summary`,
a function of the session's ledger), and the files `--parity-report`, `--parity-junit`,
`--parity-json` and `--parity-ledger` asked for (`parity.report.results`,
`parity.report.ledger`).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from parity.core.printable import printable
from parity.engine.store import remove
from parity.report.glance import more_line
from parity.report.ledger import write_ledger
from parity.report.matrix import fit
from parity.report.results import ledger_data, now, write_outputs
from parity.report.session_summary import Context, summary_lines, unused_verb, width
from parity.suite.state import SessionState


def write_summary(terminalreporter: Any, config: pytest.Config, state: SessionState) -> None:
    """The parity summary section (`parity.report.session_summary`), then the report
    files asked for.

    pytest prints it after the failures' sections (their diffs) and before its short
    summary. Under `parity record` the unused snapshot files it lists are deleted."""
    delete = bool(config.option.update_snapshots)
    ctx = Context(
        verbosity=config.option.verbose,
        known_total=len(state.known) if state.verdict is not None else 0,
        verdict=state.verdict,
        declared={name: spec.expect_problems for name, spec in state.config.targets.items()},
        unused=state.unused,
        unused_verb=unused_verb(deleted=delete, fails=state.unused_fail),
        cwd=config.invocation_params.dir,
    )
    terminalreporter.write_sep("=", "parity summary")
    if state.interrupted is not None:
        # First: every count below is of a session that did not finish.
        terminalreporter.write_line(f"{state.interrupted}; the items after it did not run")
    for line in summary_lines(state.ledger, ctx):
        # Scenario names, masks, paths and findings may carry what an agent sent.
        terminalreporter.write_line(printable(line))
    if delete:
        for path in state.unused:
            remove(path)
    for line in reports(config, state):
        for part in fit(line, width(ctx.verbosity)):
            terminalreporter.write_line(part)
    terminalreporter.write_line(more_line(ctx.verbosity > 0))


def reports(config: pytest.Config, state: SessionState) -> list[str]:
    """Write the files `--parity-report/junit/json` asked for; a line naming each."""
    keys = ("report", "junit", "json", "ledger")
    wanted = {k: config.getoption(f"parity_{k}", None) for k in keys}
    if not any(wanted.values()):
        return []
    base = config.invocation_params.dir
    paths = {k: Path(base, v) if v else None for k, v in wanted.items()}
    return write_outputs(
        ledger_data(state.ledger, state.config.root, now()),
        report=paths["report"],
        junit=paths["junit"],
        json_path=paths["json"],
        relative_to=base,
    ) + write_ledger(state.ledger, paths["ledger"], base)
