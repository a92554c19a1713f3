"""The pytest session's parity state, kept in `config.stash` (`STATE`).

One per process: what the options selected, the run cache this process shares with its
xdist siblings, the runner (created on first use, so a test run that collects no
scenario never imports the driver), and what the items reported, gathered for the
summary and the reports (on the xdist controller it arrives from the workers).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

from parity.checks.known_ledger import Ledger
from parity.config.project import Config
from parity.report.ledger import SessionLedger

if TYPE_CHECKING:
    from parity.engine.runner import Runner
    from parity.scenario.model import Rule


@dataclass
class SessionState:
    """Per-process parity state (see the module docstring)."""

    config: Config
    cache_dir: Path
    owns_cache: bool
    select: set[str] | None
    """`--targets`: the targets whose items run; None for all."""
    require: set[str]
    """`--require-targets`: every check involving them must compare, live or against
    their recorded snapshot (`REQUIRE_TARGETS_HELP`)."""
    require_live: set[str] = field(default_factory=set)
    """`--require-live`: they must run here; a recording does not stand in."""
    recorded: set[str] = field(default_factory=set)
    """`--recorded`: compared from their recorded snapshots even where they can run."""
    added: set[str] = field(default_factory=set)
    """`--targets +name`: targets added to every scenario whose reference target is of
    the same family (a user's own agent running the shipped suite)."""
    added_to: dict[str, int] = field(default_factory=dict)
    """Added target -> how many scenarios it was added to (0 is explained, not silent)."""
    ledger: SessionLedger = field(default_factory=SessionLedger)
    """What the items reported and what the session collected: the one record the
    summary and the report files are made of, and a shard writes
    (`parity.report.ledger`)."""
    shard: tuple[int, int] | None = None
    """`--parity-shard K/N`: run the K-th of N duration-balanced groups of scenarios."""
    verdict: Ledger | None = None
    """The verdict on the known differences, made at the session's end."""
    unused: list[Path] = field(default_factory=list)
    """Snapshot files no collected scenario target claims (`unused_snapshots`), found at
    the session's end."""
    unused_fail: bool = False
    """They fail this session: a whole-suite run under CI, not recording, not
    `--snapshot-warn-unused` (syrupy's rule, which fails on unused snapshots)."""
    previous_sigterm: Any = None
    """The SIGTERM handler before the session's own (restored at unconfigure)."""
    running: list[str] = field(default_factory=list)
    """Node ids of the items in flight (several under xdist, on the controller)."""
    interrupted: str | None = None
    """`interrupted by SIGTERM during <item>`: the summary's first line, when it was."""
    _runner: Runner | None = None
    _known: list[Rule] | None = None

    @property
    def known(self) -> list[Rule]:
        """The project's known differences, read on first use (`parity.scenario.known`);
        raises `ScenarioInvalid` for a broken file, which fails every parity check."""
        if self._known is None:
            from parity.checks.acp_schema import def_names

            self._known = self.config.known_rules(def_names())
        return self._known

    @property
    def runner(self) -> Runner:
        """The process's runner, created (with its imports) on first use."""
        if self._runner is None:
            from parity.engine.runner import Runner

            self._runner = Runner(self.config, self.cache_dir, frozenset(self.recorded))
        return self._runner

    def close(self) -> None:
        """Stop the runner's fake LLM, if a runner was made."""
        if self._runner is not None:
            self._runner.close()


STATE = pytest.StashKey[SessionState]()
