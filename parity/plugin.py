"""pytest plugin: scenario files become test items.

`scenarios/baseline/text-turn.yaml` yields one item per target (`...::plus`: run the
target, normalize, compare with `snapshots/baseline/text-turn/plus.yaml`) and one parity
item per non-reference target (`...::parity[plus~native]`: the target's view against the
first listed target's, under the scenario's profile). A file that does not validate
yields one failing item (`...::validate`) listing its errors as file:line.

Options: `--targets a,b` (deselect other targets' items), `--require-targets a,b` (a
missing target or a parity check that could not run is a failure, not a skip),
`--parity-root DIR` (where `parity.toml` is; default: found from the invocation dir),
`--parity-report DIR`, `--parity-junit FILE`, `--parity-json FILE` (an HTML report, JUnit
XML, the summary as JSON, written at the end from the plain data each item adds to
`State.collected`; see `parity.report.results` and docs/reports.md). Each target gets a marker
of its own name (`-m plus`) and parity items the `parity` marker. Under pytest-xdist
every worker has its own fake LLM; runs are shared between workers through a session
cache directory (see `parity.runner`).

Every run's conformance findings (`parity.checks.conformance`, computed by the runner) are
judged by the target's `conformance` policy: under `fail` they fail its item, findings
first; under `warn` they are only listed. The summary lists them all, per scenario x
target. A SIGTERM ends the session as Ctrl-C would (teardown, then the driver's atexit
hook kills any agent process group still alive).

Harness modules (driver, fake LLM, normalize, diff) are imported only when a scenario
item runs: this plugin loads for every pytest run of the repository, and unit tests of
other packages should neither pay for nor depend on them.
"""

from __future__ import annotations

import abc
import difflib
import json
import os
import shutil
import signal
import threading
import uuid
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest
from _pytest._code.code import ReprFileLocation, TerminalRepr
from _pytest._io import TerminalWriter

from parity.config import Config, find_root, load_config
from parity.report.collected import Collected
from parity.report.groups import difference_groups, group_lines
from parity.report.matrix import fit, summary_table
from parity.report.outcome import Kind, Outcome, Status
from parity.report.results import now, session_data, write_outputs
from parity.report.text import (
    FindingsRow,
    counts_line,
    failure_text,
    findings_block,
    findings_lines,
    mask_lines,
    parity_notes,
)
from parity.scenario.errors import ScenarioInvalid
from parity.scenario.load import load_scenario
from parity.scenario.model import Scenario
from parity.targets.spec import TargetConfigError

if TYPE_CHECKING:
    from parity.checks.diff import ParityReport
    from parity.checks.expected import Judged
    from parity.runner import Runner, RunResult
    from parity.transcript import Transcript

SUFFIXES = (".yaml", ".yml")
PARITY_MARK = "parity"


@dataclass(eq=False)  # hashable by identity: pluggy keeps registered plugins in sets
class State:
    """Per-process plugin state, kept in `config.stash` and registered as a plugin."""

    config: Config
    cache_dir: Path
    owns_cache: bool
    select: set[str] | None
    require: set[str]
    added: set[str] = field(default_factory=set)
    """`--targets +name`: targets added to every scenario whose reference target is of
    the same family (a user's own agent running the shipped suite)."""
    added_to: dict[str, int] = field(default_factory=dict)
    """Added target -> how many scenarios it was added to (0 is explained, not silent)."""
    outcomes: list[Outcome] = field(default_factory=list)
    scenarios: dict[str, list[str]] = field(default_factory=dict)
    """Collected scenario name -> its targets (for unused-snapshot detection)."""
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
    _runner: Runner | None = None
    previous_sigterm: Any = None
    """The SIGTERM handler before the session's own (restored at unconfigure)."""

    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        """Collect scenario outcomes (on the xdist controller they arrive from workers).

        A hook of this object, registered per config: the hook gets no config to find
        the state through."""
        if report.when == "teardown":
            return
        for key, value in report.user_properties:
            if key == "parity_invalid" and value not in self.invalid:
                self.invalid.append(str(value))
            elif key == "parity_masked" and isinstance(value, str):
                row = tuple(json.loads(value))
                if row not in self.masked:
                    self.masked.append(row)
            elif key == "parity_findings" and isinstance(value, str):
                scenario, target, policy, found = json.loads(value)
                finding_row = (scenario, target, policy, tuple(found))
                if finding_row not in self.findings:
                    self.findings.append(finding_row)
            elif key == "parity_expected" and isinstance(value, str):
                expected_row = tuple(json.loads(value))
                if expected_row not in self.expected:
                    self.expected.append(expected_row)
        outcome = Outcome.from_properties(report.user_properties)
        if outcome is not None and outcome not in self.outcomes:
            self.outcomes.append(outcome)
        invalid = any(key == "parity_invalid" for key, _ in report.user_properties)
        self.collected.item(report, outcome, invalid)
        scenario_item = outcome is not None or any(
            key == "parity_invalid" for key, _ in report.user_properties
        )
        if scenario_item and report.failed and isinstance(report.longrepr, str):
            report.longrepr = FailureText(report.longrepr, str(report.fspath))

    @property
    def runner(self) -> Runner:
        """The process's runner, created (with its imports) on first use."""
        if self._runner is None:
            from parity.runner import Runner

            self._runner = Runner(self.config, self.cache_dir)
        return self._runner


STATE = pytest.StashKey[State]()


class FailureText(TerminalRepr):
    """A scenario item's failure text: whole in the failures section, only its first line
    (the headline) in the short summary, which would otherwise repeat all of it under CI
    or -vv. Plain text travels from xdist workers; the controller wraps it again."""

    def __init__(self, text: str, path: str) -> None:
        self.text = text
        self.reprcrash = ReprFileLocation(path, 0, text.splitlines()[0] if text else "")

    def toterminal(self, tw: TerminalWriter) -> None:
        for line in self.text.splitlines():
            tw.line(line)


class Terminated(KeyboardInterrupt):
    """The session got SIGTERM. A KeyboardInterrupt because pytest ends the whole session
    on one (running teardown, sessionfinish and unconfigure, then exiting, so the driver's
    atexit hook kills every agent group); a SystemExit raised inside a test would only
    fail that test, and the session would start the next agent."""


def _on_sigterm(signum: int, frame: Any) -> None:
    raise Terminated(f"parity: terminated by signal {signum}")


def _install_sigterm(state: State) -> None:
    """Install the session's SIGTERM handler, where Python allows it (the main thread;
    xdist workers run tests there too) and unless SIGTERM is inherited as ignored."""
    if threading.current_thread() is not threading.main_thread():
        return
    previous = signal.getsignal(signal.SIGTERM)
    if previous is signal.SIG_IGN:
        return
    state.previous_sigterm = previous
    signal.signal(signal.SIGTERM, _on_sigterm)


def _split(value: str | None) -> set[str] | None:
    if not value:
        return None
    return {v.strip() for v in value.split(",") if v.strip()}


def _target_selection(value: str | None, cfg: Config) -> tuple[set[str] | None, set[str]]:
    """`--targets` -> (targets whose items run, or None for all; targets added with `+`).

    `+name` alone keeps every scenario's own targets (the reference runs or its
    recording stands in) and adds `name`; plain names select as before."""
    names = _split(value)
    if names is None:
        return None, set()
    added = {n[1:] for n in names if n.startswith("+")}
    plain = {n for n in names if not n.startswith("+")}
    unknown = sorted((added | plain) - cfg.targets.keys())
    if unknown:
        known = ", ".join(sorted(cfg.targets))
        raise pytest.UsageError(
            f"--targets: unknown target(s) {', '.join(unknown)} (known: {known}; "
            f"declare a target in {cfg.source})"
        )
    return (plain | added if plain else None), added


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("parity", "ACP parity scenarios")
    group.addoption(
        "--targets",
        default=None,
        help=(
            "comma-separated targets whose items run; the others are deselected. "
            "+NAME adds target NAME to every scenario whose reference target is of its "
            "family (e.g. --targets +my-agent runs the shipped suite against my-agent)"
        ),
    )
    group.addoption(
        "--require-targets",
        default="",
        help="comma-separated targets that must run: unavailable means failed, not skipped",
    )
    group.addoption(
        "--parity-root",
        default=None,
        help="project root holding parity.toml (default: found from the invocation dir)",
    )
    group.addoption(
        "--parity-report",
        default=None,
        metavar="DIR",
        help="write a static HTML report (index.html, one page per scenario) to DIR",
    )
    group.addoption(
        "--parity-junit",
        default=None,
        metavar="FILE",
        help="write JUnit XML to FILE: one testcase per scenario item (see docs/reports.md)",
    )
    group.addoption(
        "--parity-json",
        default=None,
        metavar="FILE",
        help="write the session's summary data as JSON to FILE (see docs/reports.md)",
    )


def pytest_configure(config: pytest.Config) -> None:
    root_opt = config.getoption("parity_root", None)
    root = Path(root_opt) if root_opt else find_root(config.invocation_params.dir)
    try:
        cfg = load_config(root)
    except TargetConfigError as exc:
        raise pytest.UsageError(f"parity: {exc}") from None
    # syrupy (through parity.snapshot) is imported only now: importing it while `-p
    # parity.plugin` loads would precede pytest's assertion-rewrite setup for it.
    from parity.snapshot import ParitySnapshotExtension

    ParitySnapshotExtension.snapshots_dir = cfg.snapshots_dir
    ParitySnapshotExtension.scenarios_dir = cfg.scenarios_dir
    for name in sorted(cfg.targets):
        config.addinivalue_line("markers", f"{name}: scenario items of the {name} target")
    config.addinivalue_line("markers", f"{PARITY_MARK}: cross-target parity checks")
    workerinput: dict[str, Any] | None = getattr(config, "workerinput", None)
    if workerinput is not None and "parity_cache" in workerinput:
        cache_dir, owns = Path(workerinput["parity_cache"]), False
    else:
        base = cfg.root / ".cache" / "parity-runs"
        cache_dir, owns = base / uuid.uuid4().hex[:12], True
    select, added = _target_selection(config.getoption("targets", None), cfg)
    state = State(
        config=cfg,
        cache_dir=cache_dir,
        owns_cache=owns,
        select=select,
        require=_split(config.getoption("require_targets", "")) or set(),
        added=added,
    )
    state.collected.keep_views = bool(config.getoption("parity_report", None))
    config.stash[STATE] = state
    config.pluginmanager.register(state, "parity-state")
    _install_sigterm(state)


@pytest.hookimpl(optionalhook=True)
def pytest_configure_node(node: Any) -> None:
    """xdist controller: every worker shares the controller's run cache directory."""
    node.workerinput["parity_cache"] = str(node.config.stash[STATE].cache_dir)


def pytest_unconfigure(config: pytest.Config) -> None:
    state = config.stash.get(STATE, None)
    if state is None:
        return
    config.pluginmanager.unregister(state)
    if state.previous_sigterm is not None and threading.current_thread() is threading.main_thread():
        signal.signal(signal.SIGTERM, state.previous_sigterm)
    if state._runner is not None:
        state._runner.close()
    if state.owns_cache:
        shutil.rmtree(state.cache_dir, ignore_errors=True)


def _is_scenario(path: Path, state: State) -> bool:
    return path.suffix in SUFFIXES and path.resolve().is_relative_to(
        state.config.scenarios_dir.resolve()
    )


def pytest_collect_file(file_path: Path, parent: pytest.Collector) -> pytest.Collector | None:
    state = parent.config.stash[STATE]
    if _is_scenario(file_path, state):
        collector: ScenarioFile = ScenarioFile.from_parent(parent, path=file_path)
        return collector
    return None


def pytest_collection_modifyitems(
    session: pytest.Session, config: pytest.Config, items: list[pytest.Item]
) -> None:
    """`--targets`: deselect (not skip) the other targets' items, as `-k` would."""
    state = config.stash[STATE]
    scenarios_dir = state.config.scenarios_dir.resolve()
    state.whole_suite = any(
        Path(arg.split("::")[0]).resolve() in (scenarios_dir, state.config.root.resolve())
        for arg in config.args
    )
    for name, count in sorted(state.added_to.items()):
        if count == 0:
            family = state.config.targets[name].family
            raise pytest.UsageError(
                f"--targets +{name}: no collected scenario can run it: {name} is a "
                f"{family} target, and no scenario's reference (first) target is one"
            )
    if state.select is None:
        return
    keep, drop = [], []
    for item in items:
        if isinstance(item, ScenarioItem) and item.target not in state.select:
            drop.append(item)
        else:
            keep.append(item)
    if drop:
        config.hook.pytest_deselected(items=drop)
        items[:] = keep


class ScenarioFile(pytest.File):
    """One scenario file: its target items and parity items, or one invalid-file item."""

    def collect(self) -> Iterator[pytest.Item]:
        state = self.config.stash[STATE]
        try:
            scenario = load_scenario(self.path, state.config.scenarios_dir)
        except ScenarioInvalid as exc:
            yield InvalidScenarioItem.from_parent(self, name="validate", message=str(exc))
            return
        except (OSError, UnicodeDecodeError) as exc:
            yield InvalidScenarioItem.from_parent(
                self, name="validate", message=f"{self.path}: cannot read: {exc}"
            )
            return
        reference = scenario.targets[0]
        family = state.config.targets[reference].family if reference in state.config.targets else ""
        extra = []
        for name in sorted(state.added):
            state.added_to.setdefault(name, 0)
            if name not in scenario.targets and state.config.targets[name].family == family:
                extra.append(name)
                state.added_to[name] += 1
        all_targets = [*scenario.targets, *extra]
        state.scenarios[scenario.name] = all_targets
        state.collected.scenario(scenario, all_targets, state.config.root)
        for target in all_targets:
            item = TargetItem.from_parent(self, name=target, scenario=scenario, target=target)
            item.added = target in extra
            item.add_marker(target)
            yield item
        if scenario.compare == "none":
            return
        for other in all_targets[1:]:
            check = ParityItem.from_parent(
                self,
                name=f"parity[{other}~{reference}]",
                scenario=scenario,
                target=other,
                reference=reference,
            )
            check.added = other in extra
            check.add_marker(PARITY_MARK)
            check.add_marker(other)
            yield check


class InvalidScenarioItem(pytest.Item):
    """Stands for a scenario file that does not validate; fails with its errors."""

    def __init__(self, *, message: str, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.message = message

    def runtest(self) -> None:
        self.user_properties.append(("parity_invalid", str(self.path)))
        raise ScenarioFailure(f"invalid scenario file:\n{self.message}")

    def repr_failure(self, excinfo: pytest.ExceptionInfo[BaseException], style: Any = None) -> str:
        if isinstance(excinfo.value, ScenarioFailure):
            return str(excinfo.value)
        return str(super().repr_failure(excinfo, style=style))

    def reportinfo(self) -> tuple[Path, int, str]:
        return self.path, 0, f"{self.path.name}: invalid scenario"


class ScenarioFailure(Exception):
    """A scenario item's failure; its text is the whole report (no traceback)."""


class _Origin:
    """Stands in for `item.obj`: syrupy names snapshots from `__module__`/`__name__`,
    also when rebuilding items that xdist workers report to the controller."""

    def __init__(self, module: str, name: str) -> None:
        self.__module__ = module
        self.__name__ = name


class ScenarioItem(pytest.Item):
    """Common part of target and parity items."""

    def __init__(self, *, scenario: Scenario, target: str, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.scenario = scenario
        self.target = target
        self.obj = _Origin(f"scenarios.{scenario.name}", self.name)

    @property
    def state(self) -> State:
        return self.config.stash[STATE]

    reference = ""
    """Parity items: the scenario's first target."""

    def record(self, status: Status, reason: str = "") -> None:
        """Attach this item's outcome for the summary (once; the first one counts)."""
        if Outcome.from_properties(self.user_properties) is not None:
            return
        kind: Kind = "parity" if isinstance(self, ParityItem) else "target"
        outcome = Outcome(self.scenario.name, kind, self.target, status, self.reference, reason)
        self.user_properties.extend(outcome.to_properties())

    def runtest(self) -> None:
        try:
            self.check()
        except pytest.skip.Exception:
            raise
        except ScenarioFailure as exc:
            self.record("fail", str(exc).splitlines()[0])
            raise
        except Exception as exc:
            self.record("fail", f"harness error: {type(exc).__name__}: {exc}")
            raise

    @abc.abstractmethod
    def check(self) -> None:
        """The item's work; records its outcome, raises ScenarioFailure or skips."""

    def repr_failure(self, excinfo: pytest.ExceptionInfo[BaseException], style: Any = None) -> str:
        if isinstance(excinfo.value, ScenarioFailure):
            return str(excinfo.value)
        return str(super().repr_failure(excinfo, style=style))

    def reportinfo(self) -> tuple[Path, int, str]:
        return self.path, 0, f"{self.scenario.name}::{self.name}"

    def unavailable(self, target: str, *, required_fails: bool = True) -> str | None:
        """Why `target` cannot run, or None. Fails at once when the scenario names a
        target nobody declared (a typo is not a skip), and, unless `required_fails` is
        off, when the target is one of `--require-targets`."""
        if target not in self.state.config.targets:
            known = ", ".join(sorted(self.state.config.targets))
            raise ScenarioFailure(
                f"{self.scenario.path}: target {target!r} is not declared "
                f"(known: {known}; declare it in {self.state.config.source})"
            )
        why = self.state.runner.unavailable(target)
        if why is not None and required_fails and target in self.state.require:
            raise ScenarioFailure(f"required target {target} cannot run: {why}")
        return why


class TargetItem(ScenarioItem):
    """Run one target and check its normalized view against the recorded snapshot."""

    added = False
    """Added to this scenario by `--targets +name` rather than listed by it."""

    def check(self) -> None:
        # A required target that cannot run here still serves its parity checks from its
        # recorded snapshot (how CI compares with native, which it cannot install); only
        # with no recording either does the requirement fail this item.
        from parity.snapshot import snapshot_path

        recorded = snapshot_path(self.state.config.snapshots_dir, self.scenario.name, self.target)
        why = self.unavailable(self.target, required_fails=False)
        if why is not None:
            if self.target in self.state.require and not recorded.is_file():
                raise ScenarioFailure(
                    f"required target {self.target} cannot run: {why} "
                    f"(and it has no recorded snapshot at {recorded})"
                )
            self.record("skip", why)
            pytest.skip(f"{self.target} unavailable: {why}")
        if self.added and not recorded.is_file():
            reason = (
                f"added with --targets +{self.target} and not recorded: its parity "
                f"checks compare it with {self.scenario.targets[0]}"
            )
            self.record("skip", reason)
            pytest.skip(reason)
        result = self.state.runner.result(self.scenario, self.target)
        self.state.collected.view(self.scenario.name, self.target, result.view, live=True)
        policy = self.state.config.targets[self.target].conformance
        self._note_findings(result.findings, policy)
        judged = self._judge(result)
        status: Status = "fail"
        reason, failure = "", None
        if not (judged.unexpected and self.config.option.update_snapshots):
            status, reason, failure = self._snapshot(result)
        else:
            self._note_masks(result.view)  # never record a broken run (nor compare it)
        if not judged.ok:
            # Problems first: a broken run explains a snapshot change, not the reverse.
            status, reason, failure = self._broken(result, judged, status, reason, failure)
        blocking = result.findings if policy == "fail" else []
        if blocking:
            # Findings first: a protocol slip explains a snapshot change, not the reverse.
            counted = f"{len(blocking)} conformance finding(s)"
            self.record("fail", f"{counted}; {reason}" if reason else counted)
            headline = (
                f"{self.scenario.name}: {self.target} broke the ACP protocol "
                f'(conformance = "fail" for this target)'
            )
            block = findings_block(blocking, policy)
            if failure is None:
                text = failure_text(
                    headline,
                    f"{block}\n\nsnapshot: {status}",
                    {self.target: result.transcript},
                )
            else:
                text = f"{headline}\n\n{block}\n\n{failure}"
            raise ScenarioFailure(text)
        if failure is not None:
            self.record("fail", reason)
            raise ScenarioFailure(failure)
        self.record(status)

    def _judge(self, result: RunResult) -> Judged:
        """The run's problems against the scenario's `expect_problems`; the expected ones
        are attached for the summary."""
        from parity.checks.expected import judge
        from parity.checks.problems import run_problems

        judged = judge(
            run_problems(self.scenario, result.transcript),
            self.scenario.expect_problems,
            self.target,
        )
        counted = Counter((p.headline(), e.reason) for p, e in judged.expected)
        for (headline, reason), times in counted.items():
            row = [self.scenario.name, self.target, headline, reason, times]
            self.user_properties.append(("parity_expected", json.dumps(row)))
        return judged

    def _broken(
        self,
        result: RunResult,
        judged: Judged,
        status: Status,
        reason: str,
        failure: str | None,
    ) -> tuple[Status, str, str]:
        """The failure of a run with undeclared problems or stale `expect_problems`:
        the problems, then what happened to the snapshot."""
        from parity.checks.expected import failure_block

        rel = self._snapshot_rel()
        counted = []
        if judged.unexpected:
            counted.append(f"{len(judged.unexpected)} run problem(s)")
        if judged.stale:
            counted.append(f"{len(judged.stale)} stale expect_problems")
        if judged.unexpected:
            headline = (
                f"{self.scenario.name}: the {self.target} run had {counted[0]} "
                "the scenario does not expect"
            )
        else:
            headline = (
                f"{self.scenario.name}: {len(judged.stale)} expect_problems entr(ies) "
                f"did not occur on {self.target}"
            )
        block = failure_block(judged, self.target)
        if judged.unexpected and self.config.option.update_snapshots:
            block += f"\n\nnothing was written to {rel}: a broken run is never recorded"
        elif failure is None:
            done = "recorded to" if status == "new" else "matches"
            block += f"\n\nsnapshot: {done} {rel}"
        if failure is None:
            text = failure_text(headline, block, {self.target: result.transcript})
        else:
            text = f"{headline}\n\n{block}\n\n{failure}"
        why = "; ".join(counted) + (f"; {reason}" if reason else "")
        return "fail", why, text

    def _snapshot_rel(self) -> str:
        """The target's snapshot file, relative to where pytest was started."""
        from parity.snapshot import snapshot_path

        path = snapshot_path(self.state.config.snapshots_dir, self.scenario.name, self.target)
        return os.path.relpath(path, self.config.invocation_params.dir)

    def _snapshot(self, result: RunResult) -> tuple[Status, str, str | None]:
        """Check (or record) the snapshot: `(status, reason, failure text or None)`."""
        from syrupy.assertion import SnapshotAssertion
        from syrupy.location import PyTestLocation

        from parity.snapshot import ParitySnapshotExtension
        from parity.view.dump import dump_view

        text = dump_view(result.view)
        assertion = SnapshotAssertion(
            session=self.config._syrupy,  # type: ignore[attr-defined]
            extension_class=ParitySnapshotExtension,
            test_location=PyTestLocation(self),
            # Only `parity record` (--snapshot-update) writes; `parity run` never does.
            update_snapshots=bool(self.config.option.update_snapshots),
        )
        self._note_masks(result.view)
        matched = assertion == text
        execution = assertion.executions[0]
        if matched:
            return ("new" if execution.created else "pass"), "", None
        rel = self._snapshot_rel()
        if execution.recalled_data is None:
            scenario_file = os.path.relpath(self.scenario.path, self.config.invocation_params.dir)
            headline = (
                f"{self.scenario.name}: no snapshot for {self.target} at {rel}; record it with "
                f"`parity record {scenario_file} --targets {self.target}`, review it, commit it"
            )
            body = f"this run's view (what `parity record` would write):\n\n{text}"
            failure = failure_text(headline, body, {self.target: result.transcript})
            return "fail", "no snapshot", failure
        recorded = str(execution.recalled_data)
        headline = (
            f"{self.scenario.name}: {self.target} no longer matches its snapshot {rel} "
            "(if the change is intended: `parity record`, then review the diff)"
        )
        compared = _categorized(self.scenario, recorded, text, ("snapshot", self.target))
        self.state.collected.diff(self.scenario.name, "target", self.target, "snapshot", compared)
        failure = failure_text(
            headline,
            compared.render() + "\n\n" + _unified(recorded, text, rel),
            {self.target: result.transcript},
        )
        return "fail", "snapshot differs", failure

    def _note_findings(self, findings: list[str], policy: str) -> None:
        """Attach the run's conformance findings for the summary (not to the snapshot)."""
        if findings:
            row = [self.scenario.name, self.target, policy, findings]
            self.user_properties.append(("parity_findings", json.dumps(row)))

    def _note_masks(self, view: Any) -> None:
        """Attach the masks this run applied (and their reasons) for the summary."""
        reasons = {m.path: m.reason for m in self.scenario.masks}
        counts = view.get("masked", {}) if isinstance(view, dict) else {}
        for path, count in counts.items():
            row = [self.scenario.name, self.target, path, int(count), reasons.get(path, "")]
            self.user_properties.append(("parity_masked", json.dumps(row)))


class ParityItem(ScenarioItem):
    """Compare one target's view with the reference target's, under the profile."""

    added = False
    """The compared target was added by `--targets +name`: the scenario's diverge rules
    were written for its own targets, so one that explains nothing for this newcomer is
    not stale (an agent that behaves like the reference is not a failure)."""

    def __init__(self, *, reference: str, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.reference = reference

    def _view(self, target: str) -> tuple[Any, Transcript | None, str]:
        """(view, transcript or None, note): a live run, else the recorded snapshot;
        `--require-targets` fails the check only where it would otherwise skip."""
        self.unavailable(target, required_fails=False)  # undeclared targets fail here
        view, result, why = self.state.runner.live_or_recorded(self.scenario, target)
        if result is not None:
            return view, result.transcript, ""
        if view is None:
            reason = f"{target} unavailable ({why}) and no recorded snapshot"
            if target in self.state.require:
                raise ScenarioFailure(f"required parity check cannot run: {reason}")
            self.record("skip", reason)
            pytest.skip(reason)
        return view, None, f"{target} unavailable, compared with its recorded snapshot"

    def check(self) -> None:
        ref_view, ref_transcript, ref_note = self._view(self.reference)
        view, transcript, note = self._view(self.target)
        from parity.checks.diff import compare

        result = compare(
            ref_view,
            view,
            profile=self.scenario.profile,
            diverge=self.scenario.diverge,
            ref_name=self.reference,
            other_name=self.target,
            scenario=self.scenario.name,
        )
        if self.added:
            result.stale = []
        collected = self.state.collected
        collected.view(self.scenario.name, self.reference, ref_view, live=not ref_note)
        collected.view(self.scenario.name, self.target, view, live=not note)
        collected.diff(self.scenario.name, "parity", self.target, self.reference, result)
        notes = "; ".join(n for n in (ref_note, note) if n)
        if result.ok:
            self.record("pass", notes)
            return
        self.record("differs", notes)
        transcripts = {
            name: t
            for name, t in ((self.reference, ref_transcript), (self.target, transcript))
            if t is not None
        }
        headline = (
            f"{self.scenario.name}: {self.target} differs from {self.reference} "
            f"({self.scenario.profile} profile)" + (f" [{notes}]" if notes else "")
        )
        raise ScenarioFailure(failure_text(headline, result.render(), transcripts))


def _categorized(scenario: Scenario, old: str, new: str, names: tuple[str, str]) -> ParityReport:
    """The categorized diff of two serialized views (the diff module's report)."""
    from parity.checks.diff import compare
    from parity.view.dump import load_view

    result = compare(
        load_view(old),
        load_view(new),
        profile=scenario.profile,
        diverge=[],
        ref_name=names[0],
        other_name=names[1],
        scenario=scenario.name,
    )
    return result


def _unified(old: str, new: str, name: str, limit: int = 80) -> str:
    lines = list(
        difflib.unified_diff(
            old.splitlines(),
            new.splitlines(),
            f"{name} (recorded)",
            f"{name} (this run)",
            n=2,
            lineterm="",
        )
    )
    if len(lines) > limit:
        lines = [*lines[:limit], f"... {len(lines) - limit} more diff lines"]
    return "\n".join(lines)


# -- results and summary ---------------------------------------------------------------


def pytest_sessionfinish(session: pytest.Session) -> None:
    """xdist worker: hand what this worker collected to the controller, which collects
    nothing itself but reports unused snapshots."""
    output: dict[str, Any] | None = getattr(session.config, "workeroutput", None)
    state = session.config.stash.get(STATE, None)
    if output is not None and state is not None:
        output["parity_scenarios"] = state.scenarios
        output["parity_whole_suite"] = state.whole_suite
        output["parity_collected"] = state.collected.to_output()


@pytest.hookimpl(optionalhook=True)
def pytest_testnodedown(node: Any, error: Any) -> None:
    """xdist controller: merge a finished worker's collection (see pytest_sessionfinish)."""
    output = getattr(node, "workeroutput", None) or {}
    state = node.config.stash[STATE]
    state.scenarios.update(output.get("parity_scenarios", {}))
    state.whole_suite = state.whole_suite or bool(output.get("parity_whole_suite"))
    state.collected.merge(output.get("parity_collected", {}))


def unused_snapshots(state: State) -> list[Path]:
    """Snapshot files no collected scenario target claims: targets dropped from a
    scenario, and (when the whole suite was collected) scenarios that no longer exist."""
    snapshots = state.config.snapshots_dir
    if not snapshots.is_dir():
        return []
    unused = []
    for path in sorted(snapshots.rglob("*.yaml")):
        scenario = path.parent.relative_to(snapshots).as_posix()
        if scenario in state.scenarios:
            if path.stem not in state.scenarios[scenario]:
                unused.append(path)
        elif state.whole_suite:
            unused.append(path)
    return unused


def pytest_terminal_summary(terminalreporter: Any, exitstatus: int, config: pytest.Config) -> None:
    if hasattr(config, "workerinput"):
        return
    state = config.stash.get(STATE, None)
    if state is None or not (state.outcomes or state.invalid):
        return  # nothing ran (e.g. --collect-only, or no scenario selected)

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
    from parity.checks.expected import summary_lines

    for line in summary_lines(state.expected):
        write(line)
    if state.invalid:
        write(f"{len(state.invalid)} scenario file(s) invalid (not run):")
        for name in sorted(state.invalid):
            write(f"  {os.path.relpath(name, config.invocation_params.dir)}")
    unused = unused_snapshots(state)
    if unused:
        delete = bool(config.option.update_snapshots)
        verb = "deleted" if delete else "unused (run `parity record` to delete)"
        write(f"{len(unused)} snapshot file(s) {verb}:")
        for path in unused:
            write(f"  {os.path.relpath(path, config.invocation_params.dir)}")
            if delete:
                path.unlink()
    for line in _reports(config, state):
        write(line)


def _reports(config: pytest.Config, state: State) -> list[str]:
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
