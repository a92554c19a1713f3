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

from parity.checks.known_ledger import Ledger, Use
from parity.config import Config
from parity.report.collected import Collected
from parity.report.outcome import Outcome
from parity.report.text import FindingsRow

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
    added: set[str] = field(default_factory=set)
    """`--targets +name`: targets added to every scenario whose reference target is of
    the same family (a user's own agent running the shipped suite)."""
    added_to: dict[str, int] = field(default_factory=dict)
    """Added target -> how many scenarios it was added to (0 is explained, not silent)."""
    outcomes: list[Outcome] = field(default_factory=list)
    scenarios: dict[str, list[str]] = field(default_factory=dict)
    """Collected scenario name -> its targets (for unused-snapshot detection)."""
    joinable: dict[str, set[str]] = field(default_factory=dict)
    """Collected scenario name -> the declared targets `--targets +NAME` could add to it:
    their recordings are a user's own agent's, used whenever it is added, never unused."""
    whole_suite: bool = False
    """The scenarios directory itself was collected (so orphan directories count)."""
    invalid: list[str] = field(default_factory=list)
    """Scenario files that did not validate (their items failed)."""
    masked: list[tuple[str, str, str, int, str]] = field(default_factory=list)
    """Masks applied per run: (scenario, target, path, values masked, reason)."""
    findings: list[FindingsRow] = field(default_factory=list)
    """Conformance findings per run: (scenario, target, policy, findings)."""
    collected: Collected = field(default_factory=Collected)
    """Plain data for the summary's categories and the reports (`parity.report.results`)."""
    expected: list[tuple[str, str, str, str, int]] = field(default_factory=list)
    """Expected run problems: (scenario, target, problem, reason, how many times)
    (`parity.checks.expected.summary_lines`)."""
    target_expect_uses: list[tuple[str, tuple[int, ...]]] = field(default_factory=list)
    """Per judged run of a target whose table has `expect_problems`: (target, indexes of
    the entries that claimed a problem) (`parity.checks.expected.unclaimed`)."""
    known_uses: list[Use] = field(default_factory=list)
    """What each parity check did with the project's known differences."""
    deselected: int = 0
    """Items deselected (`-k`, `-m`, `--targets`): the run is partial."""
    ledger: Ledger | None = None
    """The verdict on the known differences, made at the session's end."""
    unused: list[Path] = field(default_factory=list)
    """Snapshot files no collected scenario target claims (`unused_snapshots`), found at
    the session's end."""
    unused_fail: bool = False
    """They fail this session: a whole-suite run under CI, not recording, not
    `--snapshot-warn-unused` (syrupy's rule, which fails on unused snapshots)."""
    previous_sigterm: Any = None
    """The SIGTERM handler before the session's own (restored at unconfigure)."""
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

            self._runner = Runner(self.config, self.cache_dir)
        return self._runner

    def close(self) -> None:
        """Stop the runner's fake LLM, if a runner was made."""
        if self._runner is not None:
            self._runner.close()


STATE = pytest.StashKey[SessionState]()
