"""The plugin's command-line options (the `parity` group), in one table.

What each does is in `parity.suite.plugin`'s docstring and docs/reports.md; `parity run`
and `parity record` pass them (`parity.cli.run.pytest_args`).
"""

from __future__ import annotations

import pytest

from parity.suite.state import REQUIRE_LIVE_HELP, REQUIRE_TARGETS_HELP

OPTIONS: tuple[tuple[str, str | None, str | None, str], ...] = (
    (
        "--targets",
        None,
        None,
        "comma-separated targets whose items run; the others are deselected. +NAME adds "
        "target NAME to every scenario whose reference target is of its family (e.g. "
        "--targets +my-agent runs the shipped suite against my-agent)",
    ),
    ("--require-targets", "", None, REQUIRE_TARGETS_HELP),
    ("--require-live", "", None, REQUIRE_LIVE_HELP),
    (
        "--parity-root",
        None,
        None,
        "project root holding parity.toml (default: found from the invocation dir)",
    ),
    (
        "--parity-report",
        None,
        "DIR",
        "write a static HTML report (index.html, one page per scenario) to DIR",
    ),
    (
        "--parity-pending",
        None,
        "DIR",
        "write the new snapshot of every drifted or missing clean run to "
        "DIR/<scenario>/<target>.yaml, for `parity review --from DIR` (default with "
        "--parity-report: its pending/ folder)",
    ),
    (
        "--parity-junit",
        None,
        "FILE",
        "write JUnit XML to FILE: one testcase per scenario item (see docs/reports.md)",
    ),
    (
        "--parity-json",
        None,
        "FILE",
        "write the session's summary data as JSON to FILE (see docs/reports.md)",
    ),
    (
        "--parity-ledger",
        None,
        "FILE",
        "write the session's ledger (every item's record) as JSON to FILE, for "
        "`parity merge` (docs/ci.md)",
    ),
    (
        "--parity-shard",
        None,
        "K/N",
        "run only the K-th of N groups of scenarios, balanced by recorded durations; a "
        "scenario's items stay together (docs/ci.md)",
    ),
    (
        "--parity-durations",
        None,
        "FILE",
        "the durations --parity-shard balances by (default: parity-durations.json at "
        "the project root; pytest-split's format)",
    ),
)
"""(flag, default, metavar, help) of each option."""


def add_options(parser: pytest.Parser) -> None:
    group = parser.getgroup("parity", "ACP parity scenarios")
    for flag, default, metavar, text in OPTIONS:
        if metavar is None:
            group.addoption(flag, default=default, help=text)
        else:
            group.addoption(flag, default=default, metavar=metavar, help=text)
