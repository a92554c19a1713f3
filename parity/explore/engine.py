"""The exploration loop: Hypothesis draws scenarios (`parity.explore.generate`), each is
run on both targets through the engine's runner and compared exactly as `parity run`
compares (the scenario's profile, the project's known differences), and every
unexplained difference is a failing example that Hypothesis shrinks.

Hypothesis is used as it is built: `@given` with `settings(max_examples, deadline=None,
database=DirectoryBasedExampleDatabase(...))` and `@seed`. Two things adapt it:

- Findings are grouped by `Signature`: each one raises an exception class of its own,
  and Hypothesis tells failures apart by exception type, so it shrinks one minimal
  example per category and path shape (not one per failing example).
- A time budget. Once it is spent, the next example not run before stops Hypothesis
  with `_OutOfTime` (a `BaseException`, which Hypothesis lets through rather than
  counting it as a failure), shrinking included; each finding keeps the smallest example
  seen so far. `max_runs` ends it the same way after a number of runs, which unlike
  time does not depend on the machine (a seeded run then does the same work anywhere).
  Outcomes are memoized by the scenario's text, so the examples Hypothesis replays (its
  final report of each minimal example) cost nothing.

The example database under `.cache/explore/<A>~<B>/` holds every failing example, so the
next run of the same pair replays the known findings first. Logic around the runner;
the agents run in their own processes.
"""

from __future__ import annotations

import contextlib
import time
import traceback
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from hypothesis import HealthCheck, Phase, Verbosity, given, settings
from hypothesis import seed as hypothesis_seed
from hypothesis.database import DirectoryBasedExampleDatabase

from parity.checks.diff import compare
from parity.config.project import Config
from parity.engine.postrun import normalized
from parity.engine.runner import Runner
from parity.explore.findings import (
    HARNESS_ERROR,
    Finding,
    Signature,
    is_addition,
    signature,
)
from parity.explore.generate import scenarios, to_yaml
from parity.explore.hypothesis_env import without_local_constants
from parity.scenario.families import tools_named
from parity.scenario.load import build_scenario
from parity.scenario.model import Rule


def round_seed(seed: int | None, shard: tuple[int, int], round_no: int) -> int | None:
    """The seed of a round: shard K of N takes every N-th seed from `seed + K-1`, so
    shards of one base seed together run the rounds one explorer would, none twice."""
    k, n = shard
    return None if seed is None else seed + k - 1 + round_no * n


@dataclass(frozen=True)
class Options:
    targets: tuple[str, str]
    """Reference first, as in a scenario's `targets`."""
    out_dir: Path
    budget: float = 600.0
    """Seconds of running; shrinking shares it."""
    max_examples: int = 1000
    seed: int | None = None
    database_dir: Path | None = None
    """Hypothesis's example database; None: no replay, nothing kept."""
    additive: bool = False
    """What only the other target adds is no finding (`parity.explore.findings.signature`)."""
    shard: tuple[int, int] = (1, 1)
    """(K, N): this explorer's rounds take the seeds `seed + K-1 + round * N`, so N
    explorers with one base seed never repeat each other's rounds (`--shard`)."""
    max_runs: int | None = None
    """Examples run on both targets at most, shrinking included (`--max-runs`): the
    budget's counted twin, so a seeded exploration does the same work on any machine."""
    builtin_tools: bool = False
    """Draw calls to the agents' own tools too (`--builtin-tools`, `builtin_side`)."""


@dataclass
class Progress:
    """What the loop has done so far (read by the progress line and the summary)."""

    started: float
    budget: float
    tried: int = 0
    """Examples Hypothesis asked for (generated, shrunk or replayed)."""
    ran: int = 0
    """Examples run on both targets (the rest came from the memo or were over budget)."""
    over_budget: int = 0
    """1 when the budget (or `max_runs`) ended the run before Hypothesis did."""
    findings: set[Signature] = field(default_factory=set)
    agent_seconds: float = 0.0
    """Time inside the runs (agents, driver, fake LLM); the rest is the engine's."""

    @property
    def elapsed(self) -> float:
        return time.monotonic() - self.started

    @property
    def time_left(self) -> float:
        return max(0.0, self.budget - self.elapsed)


class _OutOfTime(BaseException):
    """The budget is spent: ends the Hypothesis run (see the module docstring)."""


class _Stopped(BaseException):
    """SIGTERM (`SystemExit`, parity.cli.main) during an example. Hypothesis counts a
    SystemExit as a failure and would go on shrinking it; this passes through instead,
    and `explore` raises the SystemExit again."""

    def __init__(self, code: object) -> None:
        self.code = code


class _Found(Exception):
    """Raised for a finding; one subclass per signature (see the module docstring)."""


_CLASSES: dict[Signature, type[_Found]] = {}


def _exception_for(sig: Signature) -> type[_Found]:
    if sig not in _CLASSES:
        _CLASSES[sig] = type(f"Found_{len(_CLASSES)}", (_Found,), {})
    return _CLASSES[sig]


@dataclass(frozen=True)
class Judged:
    signature: Signature | None
    report: str


class Explorer:
    """One exploration of one target pair."""

    def __init__(
        self,
        config: Config,
        options: Options,
        runner: Runner,
        known: list[Rule],
        on_progress: Callable[[Progress], None] = lambda p: None,
    ) -> None:
        self.config = config
        self.options = options
        self.runner = runner
        self.known = known
        self.on_progress = on_progress
        self.progress = Progress(time.monotonic(), options.budget)
        self._memo: dict[str, Judged] = {}
        # Tools asking first only where both targets get the catalog the same way: over
        # MCP a tool carries no `approval: ask`, so plus,plus-openai would differ there
        # by transport, not by agent.
        transports = {config.targets[t].fixture_tools for t in options.targets}
        self._approvals = len(transports) == 1
        self.ignored = {
            method: f"{target}: {why}"
            for target in options.targets
            for method, why in config.targets[target].ignores.items()
        }
        """ACP methods a target of the pair ignores (`ignores` in its table) -> whose and
        why: never sent, and said at the start."""
        self.lacking: dict[str, str] = {}
        for target in options.targets:
            for name, why in config.targets[target].lacks_tools.items():
                said = f"{target}: {why}"
                self.lacking[name] = (
                    f"{self.lacking[name]}; {said}" if name in self.lacking else said
                )
        """Built-in tools and families a target of the pair lacks (`lacks_tools` in its
        table) -> whose and why: with `--builtin-tools`, never called, and said at the
        start: a declared gap, not a finding in every example that calls one."""
        self._latest: dict[Signature, Finding] = {}
        self._first: dict[Signature, int] = {}

    def judge(self, scenario: dict[str, Any]) -> Judged:
        """Run `scenario` on both targets and compare: a fresh run every call."""
        text = to_yaml(scenario)
        path = self.options.out_dir / "explore.yaml"
        ref, other = self.options.targets
        try:
            loaded = build_scenario(text, path, self.config.scenarios_dir)
            views = []
            for target in (ref, other):
                began = time.monotonic()
                transcript = self.runner.execute(loaded, target)
                self.progress.agent_seconds += time.monotonic() - began
                views.append(normalized(loaded, transcript))
            report = compare(
                views[0],
                views[1],
                profile=loaded.profile,
                diverge=loaded.diverge,
                ref_name=ref,
                other_name=other,
                scenario=loaded.name,
                known=self.known,
            )
        except Exception as exc:  # a harness failure is a finding of its own kind
            return Judged(Signature(HARNESS_ERROR, type(exc).__name__), traceback.format_exc())
        if self.options.additive:
            # The written report shows what is a finding, not the increments' additions.
            added = [d for d in report.differences if is_addition(d)]
            report.differences = [d for d in report.differences if not is_addition(d)]
            text = report.render() + f"\n  ({len(added)} addition(s) of {other} not shown)"
            return Judged(signature(report), text)
        return Judged(signature(report), report.render())

    def _memoized(self, scenario: dict[str, Any]) -> Judged:
        key = to_yaml(scenario)
        if key in self._memo:
            return self._memo[key]
        if self.progress.time_left <= 0 or self._runs_spent():
            self.progress.over_budget += 1
            raise _OutOfTime
        try:
            judged = self.judge(scenario)
        except SystemExit as exc:
            raise _Stopped(exc.code) from None
        self.progress.ran += 1
        self._memo[key] = judged
        return judged

    def _runs_spent(self) -> bool:
        limit = self.options.max_runs
        return limit is not None and self.progress.ran >= limit

    def _example(self, scenario: dict[str, Any]) -> None:
        """The body Hypothesis calls: a finding raises its signature's exception."""
        self.progress.tried += 1
        judged = self._memoized(scenario)
        if judged.signature is not None:
            self.progress.findings.add(judged.signature)
            # The size it was first seen at: how far shrinking got is said at the end.
            self._first.setdefault(judged.signature, len(to_yaml(scenario).splitlines()))
            # Hypothesis replays each minimal example last; a run stopped by the budget
            # keeps the shortest example seen, a stand-in for Hypothesis's own order.
            known = self._latest.get(judged.signature)
            if known is None or len(to_yaml(scenario)) <= len(to_yaml(known.scenario)):
                self._latest[judged.signature] = Finding(judged.signature, scenario, judged.report)
        self.on_progress(self.progress)
        if judged.signature is not None:
            raise _exception_for(judged.signature)(str(judged.signature))

    def _round(self, seed: int | None, max_examples: int, replay: bool) -> None:
        """One Hypothesis run: generate, shrink, replay the database first."""
        database = (
            DirectoryBasedExampleDatabase(self.options.database_dir)
            if self.options.database_dir is not None
            else None
        )
        drawn = scenarios(
            self.options.targets,
            self._approvals,
            frozenset(self.ignored),
            builtin=self.options.builtin_tools,
            lacking=frozenset(tools_named(self.lacking)),
        )
        test = given(drawn)(self._example)
        if seed is not None:
            # `@seed` turns the database off (a seeded run is meant to reproduce); the
            # settings applied after it turn it back on, so a seeded exploration still
            # starts from the known findings. `--no-database` gives the pure seeded run.
            test = hypothesis_seed(seed)(test)
        test = settings(
            max_examples=max_examples,
            deadline=None,
            database=database,
            verbosity=Verbosity.quiet,
            suppress_health_check=list(HealthCheck),
            report_multiple_bugs=True,
            print_blob=False,
            # Later rounds do not replay the database: Hypothesis goes straight to
            # shrinking when a replay fails, and would never generate anything new.
            phases=list(Phase) if replay else [p for p in Phase if p is not Phase.reuse],
        )(test)
        # Hypothesis ends by raising the findings (one exception, or a group of them):
        # they are already in `_latest`, with the minimal example of each.
        try:
            with contextlib.suppress(Exception, _OutOfTime), without_local_constants():
                test()
        except _Stopped as stop:
            raise SystemExit(stop.code) from None

    def explore(self) -> list[Finding]:
        """Generate, run, shrink; then run each minimal example once more, fresh, to say
        whether it reproduces. Findings in the order of their signatures.

        Hypothesis stops generating soon after its first failure, to shrink it: with
        budget and examples left, another round starts (the next seed), until either
        is spent. Examples a round repeats come from the memo, at no cost."""
        rounds = 0
        while True:
            seed = round_seed(self.options.seed, self.options.shard, rounds)
            ran = self.progress.ran
            self._round(seed, self.options.max_examples - self.progress.tried, rounds == 0)
            rounds += 1
            spent = self.progress.time_left <= 0 or self._runs_spent()
            if spent or self.progress.tried >= self.options.max_examples:
                break
            if self.progress.ran == ran:  # the round drew nothing new
                break
        out = []
        for sig in sorted(self._latest, key=lambda s: (s.category, s.shape)):
            finding = self._latest[sig]
            again = self.judge(finding.scenario)
            first = self._first.get(sig)
            same = again.signature == sig
            out.append(Finding(sig, finding.scenario, finding.report, same, first))
        return out
