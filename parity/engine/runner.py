"""Runner: scenario x target -> Transcript -> normalized view.

One `Runner` per process owns one `FakeLLMThread` (started on first use) and gives each
run its own run id, hence its own base URL and script. Results can be shared between
processes through a cache directory: under pytest-xdist, a target's snapshot item and the
parity items that need the same run may land on different workers, and a file lock per
(scenario, target) makes sure the agent runs once per session, not once per item.

Every run is also checked for conformance (`parity.checks.conformance`), contained and
bounded with its normalization (`parity.engine.postrun`): the findings travel with the
result, never into its view, so snapshots stay free of them (some peers send
late updates nondeterministically); the target's `conformance` policy decides what
they do (see `parity.suite.target_item`).
"""

from __future__ import annotations

import asyncio
import contextlib
import fcntl
import itertools
import json
import os
import sys
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from parity.config.project import Config
from parity.core.transcript import Transcript
from parity.driver import orphans
from parity.driver.process import Ladder
from parity.driver.run import run_scenario
from parity.driver.state import RunPaths
from parity.engine.postrun import check_run
from parity.engine.store import read_view_at
from parity.fakellm.parity_stream import catalog as served_catalog
from parity.fakellm.run import Run
from parity.fakellm.thread import FakeLLMThread
from parity.scenario.families import FAMILIES
from parity.scenario.model import Scenario
from parity.targets.launch import Launch, availability, plan, run_setup
from parity.targets.spec import TargetSpec

if TYPE_CHECKING:
    from parity.fakellm.upstream import Upstream


@dataclass(frozen=True)
class RunResult:
    """What one (scenario, target) run left for the checks: plain data only."""

    scenario: str
    target: str
    view: Any
    """The normalized view (the snapshot's content)."""
    transcript: Transcript
    """Frames, steps, model requests, processes, problems."""
    findings: list[str]
    """Conformance findings of the run, rendered (`str(Finding)`), in frame order."""
    checks_seconds: float = 0.0
    """Seconds its view and findings took, out of the checks' allowance
    (`parity.engine.postrun`): the judgement gets what is left."""
    text: str | None = None
    """The view's snapshot YAML, when the checks wrote it (`dump_view(view)`; it reads
    back as `view`, `tests/view/test_any_json.py`)."""


def make_launcher(
    spec: TargetSpec,
    repo: Path,
    llm_base: str,
    catalog: Mapping[str, Any] | None = None,
    families: Sequence[str] = FAMILIES,
) -> Callable[[RunPaths], Launch]:
    """The driver's `make_launch`: render the target for the run's own directories."""

    def make_launch(paths: RunPaths) -> Launch:
        return plan(
            spec,
            repo=repo,
            llm_base=llm_base,
            workdir=paths.workdir,
            home=paths.home,
            catalog=catalog,
            families=families,
        )

    return make_launch


CLOSE_GRACE = 1.0
"""Seconds the fake LLM gets to notice that an exited agent's requests are closed."""


RECORDED = "--recorded: its recorded snapshot stands in for a live run"


class Runner:
    """Runs scenarios against targets; one per process (see the module docstring)."""

    def __init__(
        self, config: Config, cache_dir: Path | None = None, recorded: frozenset[str] = frozenset()
    ) -> None:
        self.config = config
        self.cache_dir = cache_dir
        self.recorded = recorded
        """Targets compared from their recorded snapshots even where they can run."""
        self._fake: FakeLLMThread | None = None
        self._ids = itertools.count(1)
        self._why_not: dict[str, str | None] = {}

    def close(self) -> None:
        """Stop the fake LLM server if this runner started one."""
        if self._fake is not None:
            self._fake.stop()
            self._fake = None

    def __enter__(self) -> Runner:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _fakellm(self) -> FakeLLMThread:
        if self._fake is None:
            fake = FakeLLMThread()
            fake.start()
            self._fake = fake
        return self._fake

    def spec(self, target: str) -> TargetSpec:
        """The declared target; `KeyError` names the unknown target and the known ones."""
        try:
            return self.config.targets[target]
        except KeyError:
            known = ", ".join(sorted(self.config.targets))
            raise KeyError(f"unknown target {target!r} (known: {known})") from None

    def unavailable(self, target: str) -> str | None:
        """Why `target` cannot run here (unknown, missing, setup failed), or None.

        The setup command runs at most once per process; with a cache directory, once
        per session (a marker file records that it succeeded). A target of `recorded`
        does not run: its recorded snapshot stands in (`RECORDED`)."""
        if target in self.recorded and target in self.config.targets:
            return RECORDED
        if target not in self._why_not:
            try:
                spec = self.spec(target)
            except KeyError as exc:
                self._why_not[target] = str(exc.args[0])
                return self._why_not[target]
            reason = availability(spec, self.config.root)
            if reason is None and spec.setup:
                with self._locked(f"setup-{target}") as marker:
                    if marker is not None and marker.exists():
                        reason = None
                    else:
                        reason = run_setup(spec, self.config.root)
                        if reason is None and marker is not None:
                            marker.write_text("ok\n")
            self._why_not[target] = reason
        return self._why_not[target]

    def execute(self, scenario: Scenario, target: str) -> Transcript:
        """Run `scenario` against `target` once, now: a fresh agent and a fresh script."""
        transcript, _ = self.run_once(scenario, target)
        return transcript

    def run_once(
        self, scenario: Scenario, target: str, upstream: Upstream | None = None
    ) -> tuple[Transcript, Run]:
        """`execute`, also returning the fake LLM's run; with `upstream`, a recording run
        whose model calls go to that provider (`parity.capture`)."""
        spec = self.spec(target)
        fake = self._fakellm()
        # Fixed width, like the run directory that carries it (`parity.driver.stale`).
        run_id = f"p{os.getpid():07d}r{next(self._ids):06d}"
        run = fake.open_run(
            run_id,
            llm=scenario.script_for(target),
            tools=scenario.tools,
            catalog=scenario.fake_catalog,
            upstream=upstream,
        )
        # Paths the run's own directories do not cover, for the script's tokens.
        machine = {"llm": run.base_url, "python": sys.executable, "repo": str(self.config.root)}
        run.bind_paths(machine)
        try:
            launcher = make_launcher(
                spec,
                self.config.root,
                run.base_url,
                # What GET /catalog serves (the fixture tools too): the native plugin
                # registers it before the served one arrives (parity/targets/dsh_rows.py).
                served_catalog(scenario.catalog, scenario.tools),
                families=scenario.builtin_families,
            )
            transcript: Transcript = asyncio.run(
                run_scenario(
                    scenario,
                    launcher,
                    llm_run=run,
                    run_id=run_id,
                    target=target,
                    ladder=Ladder(eof=spec.shutdown_eof),
                    timeouts=spec.timeouts,
                )
            )
        finally:
            # The agent has exited: what it opened closes with it within the grace; a
            # request still open after it is held by something the agent left behind.
            fake.close_run(run_id, grace=CLOSE_GRACE)
        # Machine- and process-specific values that reach the wire (the fake's URL with
        # its port and run id, e.g. in an MCP server entry; the interpreter and checkout
        # paths) are masked like the run's directories, so snapshots are reproducible.
        transcript.dialect = spec.dialect
        for name, value in machine.items():
            transcript.paths.setdefault(name, value)
        # The mark every agent's environment carries (parity/driver/orphans.py) names
        # this process: an agent that prints its environment must not make views vary.
        transcript.paths.setdefault("harness", f"{orphans.MARK}={os.getpid()}")
        return transcript, run

    def result(self, scenario: Scenario, target: str) -> RunResult:
        """The run's result, taken from the session cache when another item already ran
        it; otherwise run now (and cache it)."""
        key = f"{scenario.name.replace('/', '__')}~{target}"
        with self._locked(key) as path:
            if path is not None and path.exists():
                data = json.loads(path.read_text(encoding="utf-8"))
                transcript = Transcript.from_dict(data["transcript"])
                return RunResult(
                    scenario.name,
                    target,
                    data["view"],
                    transcript,
                    data["findings"],
                    data.get("checks_seconds", 0.0),
                    data.get("text"),
                )
            transcript = self.execute(scenario, target)
            # Contained and bounded: the agent's data never crashes them, nor holds them.
            checked = check_run(scenario, transcript)
            result = RunResult(
                scenario.name,
                target,
                checked.view,
                transcript,
                checked.findings,
                checked.seconds,
                checked.text,
            )
            if path is not None:
                blob = {
                    "view": result.view,
                    "transcript": result.transcript.to_dict(),
                    "findings": result.findings,
                    "checks_seconds": result.checks_seconds,
                    "text": result.text,
                }
                tmp = path.with_suffix(".tmp")
                tmp.write_text(json.dumps(blob, default=str), encoding="utf-8")
                tmp.replace(path)
            return result

    def live_or_recorded(
        self, scenario: Scenario, target: str
    ) -> tuple[Any, RunResult | None, str | None]:
        """`(view, result, None)` from a run when `target` can run here; otherwise
        `(recorded view or None, None, why it cannot run)` from its snapshot."""
        why = self.unavailable(target)
        if why is None:
            result = self.result(scenario, target)
            return result.view, result, None
        # The project's recording, else a shipped suite's (`Config.recording`).
        return read_view_at(self.config.recording(scenario.name, target)), None, why

    @contextlib.contextmanager
    def _locked(self, key: str) -> Iterator[Path | None]:
        """Hold an exclusive lock for `key` across processes; yield its data path."""
        if self.cache_dir is None:
            yield None
            return
        self.cache_dir.mkdir(parents=True, exist_ok=True)
        with open(self.cache_dir / f"{key}.lock", "w") as lock:
            fcntl.flock(lock, fcntl.LOCK_EX)
            try:
                yield self.cache_dir / f"{key}.json"
            finally:
                fcntl.flock(lock, fcntl.LOCK_UN)
