"""pytest plugin: scenario files become test items (`-p parity.suite.plugin`; the
repository's conftest.py loads it, and `parity run` passes it).

The plugin is the object `ParityPlugin`, whose methods are the hooks, registered per
config at configure; the session's state is in `config.stash` (`parity.suite.state`).
Collection is `parity.suite.collect` (one `TargetItem` per target, one `ParityItem` per
non-reference target, or one failing `...::validate` item for a file that does not
validate); the items are `parity.suite.target_item` and `parity.suite.parity_item`,
snapshots `parity.suite.snapshots`, the summary `parity.suite.summary`.

Options (the `parity` group): `--targets a,b` (deselect other targets' items; `+name`
adds a target), `--require-targets a,b` (every check involving them must compare, live
or against their recorded snapshot: a target with neither fails instead of skipping),
`--require-live a,b` (they must run here: one that cannot fails its items and its
parity checks, and no recording stands in for it), `--parity-root DIR` (where `parity.toml` is;
default: found from the invocation dir), `--parity-report DIR`, `--parity-junit FILE`,
`--parity-json FILE` (an HTML report, JUnit XML, the summary as JSON, written at the end
from the session's ledger, `SessionState.ledger`; see docs/reports.md). `--parity-shard K/N`
runs one of N duration-balanced groups of scenario files (`parity.suite.shard`), and
`--parity-ledger FILE` writes the ledger for `parity merge` (docs/ci.md).
Each target gets a marker of its own name (`-m plus`) and parity items the `parity`
marker. Under pytest-xdist every worker has its own fake LLM; runs are shared between
workers through a session cache directory (see `parity.engine.runner`). A SIGTERM ends
the session as Ctrl-C would (teardown, then the driver's atexit hook kills any agent
process group still alive).

Harness modules (driver, fake LLM, normalize, diff) are imported only when a scenario
item runs: this plugin loads for every pytest run of the repository, and unit tests of
other packages should neither pay for nor depend on them.
"""

from __future__ import annotations

import gc
import shutil
import signal
import threading
import uuid
from pathlib import Path
from typing import Any

import pytest

from parity.checks.known_ledger import judge
from parity.config.project import Config, find_root, load_config
from parity.driver.guard import guard_harness
from parity.driver.stale import owned_name, remove_stale
from parity.report.ledger import ItemRecord, partial_reason
from parity.suite.collect import ScenarioFile, is_scenario
from parity.suite.items import PARITY_MARK, FailureText, ScenarioItem, Terminated, signal_name
from parity.suite.options import add_options, given_config
from parity.suite.state import STATE, SessionState
from parity.suite.summary import write_summary
from parity.targets.spec import TargetConfigError, target_selection


def pytest_addoption(parser: pytest.Parser) -> None:
    add_options(parser)


def pytest_configure(config: pytest.Config) -> None:
    # Every process of the session, the xdist controller too (an agent can read its
    # grandparent's environment as well as its parent's): `parity.driver.guard`.
    guard_harness()
    workerinput: dict[str, Any] | None = getattr(config, "workerinput", None)
    given = given_config(config.pluginmanager.get_plugins())
    if given is None and workerinput is not None and "parity_config" in workerinput:
        given = Config.from_dict(workerinput["parity_config"])  # the controller's
    cfg = given or _load_config(config)
    # syrupy (through parity.suite.snapshots) is imported only now: importing it while
    # `-p parity.suite.plugin` loads would precede pytest's assertion-rewrite setup for it.
    from parity.suite.snapshots import ParitySnapshotExtension

    ParitySnapshotExtension.snapshots_dir = cfg.snapshots_dir
    ParitySnapshotExtension.scenarios_dir = cfg.scenarios_dir
    ParitySnapshotExtension.recordings_dir = cfg.recordings_dir
    for name in sorted(cfg.targets):
        config.addinivalue_line("markers", f"{name}: scenario items of the {name} target")
    config.addinivalue_line("markers", f"{PARITY_MARK}: cross-target parity checks")
    if workerinput is not None and "parity_cache" in workerinput:
        cache_dir, owns = Path(workerinput["parity_cache"]), False
    else:
        base = cfg.root / ".cache" / "parity-runs"
        remove_stale(base)  # caches of sessions that were killed before their cleanup
        cache_dir, owns = base / owned_name(uuid.uuid4().hex[:12]), True
    select, added = _target_selection(config.getoption("targets", None), cfg)
    state = SessionState(
        config=cfg,
        cache_dir=cache_dir,
        owns_cache=owns,
        select=select,
        require=_required(config, "require_targets", cfg),
        require_live=_required(config, "require_live", cfg),
        recorded=_required(config, "recorded", cfg),
        added=added,
    )
    both = sorted(state.recorded & state.require_live)
    if both:
        raise pytest.UsageError(
            f"parity: {', '.join(both)}: --recorded and --require-live contradict each other"
        )
    # Views are kept for an HTML report, and in a ledger: `parity merge` writes one from it.
    state.ledger.collected.keep_views = any(
        config.getoption(f"parity_{name}", None) for name in ("report", "ledger")
    )
    state.ledger.selected = select is not None
    config.stash[STATE] = state
    config.pluginmanager.register(ParityPlugin(config), "parity-session")
    shard = config.getoption("parity_shard", None)
    if shard:
        from parity.suite.shard import DURATIONS, ShardPlugin, parse_shard

        state.ledger.shard = shard
        durations = Path(config.getoption("parity_durations", None) or cfg.root / DURATIONS)
        config.pluginmanager.register(ShardPlugin(parse_shard(shard), durations), "parity-shard")
    _install_sigterm(state)


def _load_config(config: pytest.Config) -> Config:
    """The project's configuration, read here when no caller handed it over (`pytest`
    run directly; an xdist worker gets its controller's)."""
    root_opt = config.getoption("parity_root", None)
    root = Path(root_opt) if root_opt else find_root(config.invocation_params.dir)
    try:
        return load_config(root)
    except TargetConfigError as exc:
        raise pytest.UsageError(f"parity: {exc}") from None


def pytest_collection_finish(session: pytest.Session) -> None:
    """Freeze what start-up and collection built (every module imported, the items, the
    scenarios): it lives to the end of the session, and the cyclic garbage collector's
    passes, pytest's last one included, no longer walk it. A small `parity run` (two
    mini-agent runs) took 0.72 s of user CPU before, 0.58 s after (docs/performance.md,
    "make test: collection and the collector"); nothing it decides changes."""
    gc.freeze()


def pytest_unconfigure(config: pytest.Config) -> None:
    state = config.stash.get(STATE, None)
    if state is None:
        return
    for name in ("parity-session", "parity-shard"):
        plugin = config.pluginmanager.get_plugin(name)
        if plugin is not None:
            config.pluginmanager.unregister(plugin)
    if state.previous_sigterm is not None and threading.current_thread() is threading.main_thread():
        signal.signal(signal.SIGTERM, state.previous_sigterm)
    state.close()
    if state.owns_cache:
        shutil.rmtree(state.cache_dir, ignore_errors=True)


def pytest_terminal_summary(terminalreporter: Any, exitstatus: int, config: pytest.Config) -> None:
    # A module hook, unlike the others (`ParityPlugin`): where this module is registered
    # decides whether the parity summary comes before or after syrupy's snapshot report
    # (after it under `parity run`, which loads the plugin with `-p`, before it under the
    # repository's conftest.py), and a registered object would move it.
    if hasattr(config, "workerinput"):
        return
    state = config.stash.get(STATE, None)
    if state is None:
        return
    if not (state.ledger.outcomes or state.ledger.invalid or state.interrupted):
        return  # nothing ran (e.g. --collect-only, or no scenario selected)
    write_summary(terminalreporter, config, state)


class ParityPlugin:
    """The session's hooks, registered per config at configure (its state is in the
    stash: `self.state`)."""

    def __init__(self, config: pytest.Config) -> None:
        self.config = config

    @property
    def state(self) -> SessionState:
        return self.config.stash[STATE]

    def pytest_runtest_logstart(self, nodeid: str, location: Any) -> None:
        # On the xdist controller too: the items in flight, named should the session
        # be interrupted (`pytest_keyboard_interrupt`).
        self.state.running.append(nodeid)

    def pytest_runtest_logfinish(self, nodeid: str, location: Any) -> None:
        if nodeid in self.state.running:
            self.state.running.remove(nodeid)

    def pytest_keyboard_interrupt(self, excinfo: pytest.ExceptionInfo[BaseException]) -> None:
        """SIGTERM or Ctrl-C outside an item's own handling (collection, the summary, an
        xdist controller): the summary still names what was running."""
        if self.state.interrupted is None:
            during = ", ".join(self.state.running) or "no item (between items)"
            self.state.interrupted = f"interrupted by {signal_name(excinfo.value)} during {during}"

    def pytest_collect_file(
        self, file_path: Path, parent: pytest.Collector
    ) -> pytest.Collector | None:
        if is_scenario(file_path, self.state.config.scenarios_dir):
            collector: ScenarioFile = ScenarioFile.from_parent(parent, path=file_path)
            return collector
        return None

    def pytest_collection_modifyitems(
        self, session: pytest.Session, config: pytest.Config, items: list[pytest.Item]
    ) -> None:
        """`--targets`: deselect (not skip) the other targets' items, as `-k` would."""
        state = self.state
        scenarios_dir = state.config.scenarios_dir.resolve()
        state.ledger.whole_suite = any(
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
        scenario_items = [i for i in items if isinstance(i, ScenarioItem)]
        unmatched = sorted(
            name
            for name in state.select - state.added
            if scenario_items and not any(i.target == name for i in scenario_items)
        )
        if unmatched:
            names = ", ".join(unmatched)
            raise pytest.UsageError(
                f"--targets {names}: no collected scenario lists {names}; --targets "
                f"selects among a scenario's own targets. To run the scenarios against "
                f"an agent they do not name, add it: --targets "
                + ",".join(f"+{n}" for n in unmatched)
            )
        if drop:
            config.hook.pytest_deselected(items=drop)
            items[:] = keep

    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        """Collect scenario items' records (on the xdist controller they arrive from
        workers) into the session's ledger."""
        if report.when == "teardown":
            return
        ledger = self.state.ledger
        record = ItemRecord.of(report.user_properties)
        if record is None:
            return  # not a scenario item
        ledger.add(record)
        ledger.collected.item(report, record.outcome, bool(record.invalid))
        if report.failed and isinstance(report.longrepr, str):
            report.longrepr = FailureText(report.longrepr, str(report.fspath))

    @pytest.hookimpl(optionalhook=True)
    def pytest_configure_node(self, node: Any) -> None:
        """xdist controller: every worker shares the controller's run cache directory,
        and takes the configuration it read (`parity.toml` is read once per command)."""
        node.workerinput["parity_cache"] = str(self.state.cache_dir)
        node.workerinput["parity_config"] = self.state.config.to_dict()

    def pytest_deselected(self, items: list[pytest.Item]) -> None:
        # Other shards' items are not missing from the whole run: the merge has them.
        shard = self.config.pluginmanager.get_plugin("parity-shard")
        others = shard.others if shard is not None else set()
        self.state.ledger.deselected += sum(1 for i in items if i.nodeid not in others)

    def pytest_sessionfinish(self, session: pytest.Session) -> None:
        """xdist worker: hand what this worker collected to the controller, which collects
        nothing itself but reports unused snapshots. Controller (or a run without
        workers): find unused snapshots (under CI they fail a whole-suite run) and judge
        the project's known differences over the whole session; a stale one fails the
        session."""
        output: dict[str, Any] | None = getattr(session.config, "workeroutput", None)
        ledger = self.state.ledger
        if output is not None:
            output["parity_scenarios"] = ledger.scenarios
            output["parity_joinable"] = {k: sorted(v) for k, v in ledger.joinable.items()}
            output["parity_whole_suite"] = ledger.whole_suite
            output["parity_deselected"] = ledger.deselected
            output["parity_collected"] = ledger.collected.to_output()
            return
        state = self.state
        # A shard leaves to `parity merge` what only the whole run can judge.
        if (ledger.outcomes or ledger.invalid) and not ledger.shard:
            # Imported here: it imports syrupy, which must not load with the plugin.
            from parity.engine.store import unused_snapshots
            from parity.suite.snapshots import unused_fail

            state.unused = unused_snapshots(
                state.config.snapshots_dir, ledger.scenarios, ledger.whole_suite, ledger.joinable
            )
            state.unused_fail = unused_fail(state.unused, ledger.whole_suite, self.config.option)
            if state.unused_fail and session.exitstatus == pytest.ExitCode.OK:
                session.exitstatus = pytest.ExitCode.TESTS_FAILED
        if not any(o.kind == "parity" for o in ledger.outcomes):
            return
        try:
            known = state.known
        except Exception:  # an invalid file already failed every parity check
            return
        state.verdict = judge(known, ledger.known_uses, partial_reason(ledger))
        if not state.verdict.ok and session.exitstatus == pytest.ExitCode.OK:
            session.exitstatus = pytest.ExitCode.TESTS_FAILED

    @pytest.hookimpl(optionalhook=True)
    def pytest_testnodedown(self, node: Any, error: Any) -> None:
        """xdist controller: merge a finished worker's collection (see pytest_sessionfinish)."""
        output = getattr(node, "workeroutput", None) or {}
        ledger = self.state.ledger
        ledger.scenarios.update(output.get("parity_scenarios", {}))
        for name, targets in output.get("parity_joinable", {}).items():
            ledger.joinable.setdefault(name, set()).update(targets)
        ledger.whole_suite = ledger.whole_suite or bool(output.get("parity_whole_suite"))
        # Every worker collects (and deselects) the same items.
        ledger.deselected = max(ledger.deselected, int(output.get("parity_deselected", 0)))
        ledger.collected.merge(output.get("parity_collected", {}))


def _on_sigterm(signum: int, frame: Any) -> None:
    raise Terminated(f"parity: terminated by signal {signum}")


def _install_sigterm(state: SessionState) -> None:
    """Install the session's SIGTERM handler, where Python allows it (the main thread;
    xdist workers run tests there too) and unless SIGTERM is inherited as ignored."""
    if threading.current_thread() is not threading.main_thread():
        return
    previous = signal.getsignal(signal.SIGTERM)
    if previous is signal.SIG_IGN:
        return
    state.previous_sigterm = previous
    signal.signal(signal.SIGTERM, _on_sigterm)


def _required(config: pytest.Config, option: str, cfg: Config) -> set[str]:
    """`--require-targets` / `--require-live` / `--recorded`: declared target names (a
    typo is an error, not a requirement nothing checks)."""
    names = _split(config.getoption(option, "")) or set()
    unknown = sorted(names - set(cfg.targets))
    if unknown:
        known = ", ".join(sorted(cfg.targets))
        flag = "--" + option.replace("_", "-")
        raise pytest.UsageError(
            f"parity: {flag}: unknown target(s) {', '.join(unknown)} (known: {known})"
        )
    return names


def _split(value: str | None) -> set[str] | None:
    if not value:
        return None
    return {v.strip() for v in value.split(",") if v.strip()}


def _target_selection(value: str | None, cfg: Config) -> tuple[set[str] | None, set[str]]:
    """`--targets`, read as every command reads it (`parity.targets.spec`)."""
    try:
        return target_selection(value, cfg.targets, cfg.source)
    except TargetConfigError as exc:
        raise pytest.UsageError(str(exc)) from None
