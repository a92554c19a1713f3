"""The plugin's command-line options (the `parity` group), in one table.

What each does is in `parity.suite.plugin`'s docstring and docs/reports.md; `parity run`
and `parity record` pass them (`parity.cli.run.pytest_args`) and show the same help.
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    # Only for a type: `parity show` and the other commands read the help below, and
    # must not load pytest for it (0.7 s of a `parity show`, with syrupy).
    import pytest

    from parity.config.project import Config

REQUIRE_TARGETS_HELP = (
    "comma-separated targets every check involving them must be able to compare, live "
    "or against their recorded snapshot: a target with neither fails its items and "
    "parity checks instead of skipping (a recording stands in for a target that cannot "
    "run here; --require-live does not allow that)"
)
REQUIRE_LIVE_HELP = (
    "comma-separated targets that must run live here: one that cannot fails its items "
    "and every parity check involving it, even where a recorded snapshot exists"
)
RECORDED_HELP = (
    "comma-separated targets compared from their recorded snapshots even where they could "
    "run here: their own items skip, saying so, and their parity checks compare with the "
    "recording (a quick check of the other targets; `make test` uses it for native, whose "
    "live runs `make parity` and CI do)"
)
"""The help of these options; `parity run` shows the same text."""

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
    ("--recorded", "", None, RECORDED_HELP),
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


class GivenConfig:
    """The project's configuration, read by the caller that starts pytest: `parity run`
    passes it as a plugin object (`pytest.main(..., plugins=[...])`) and the plugin takes
    it instead of reading `parity.toml` a second time. Defined here, not in the plugin
    module: `-p parity.suite.plugin` must find that module not yet imported, or pytest
    cannot assertion-rewrite it (a warning in every run's output)."""

    def __init__(self, config: Config) -> None:
        self.config = config


def given_config(plugins: Iterable[object]) -> Config | None:
    """The configuration a `GivenConfig` among the registered plugins carries, if any."""
    return next((p.config for p in plugins if isinstance(p, GivenConfig)), None)


def pending_dir(config: pytest.Config) -> Path | None:
    """Where pending snapshots go: `--parity-pending DIR`, else the HTML report's
    `pending/` folder, else nowhere."""
    explicit = config.getoption("parity_pending", None)
    if explicit:
        return Path(explicit)
    report = config.getoption("parity_report", None)
    return Path(report) / "pending" if report else None
