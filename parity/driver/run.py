"""The ACP stdio driver's entry point: play a scenario's client script against one agent.

`run_scenario` creates a private run directory, starts the agent in its own process
group, sends each step as raw NDJSON JSON-RPC, answers the agent's requests to the
client as the scenario says, and records every line in both directions as a `Frame`.
It never raises because of what an agent does: timeouts, crashes, garbage and protocol
slips become `StepRecord.problem` / `Transcript.problems`, with the exit status and the
stderr tail. It raises only for harness bugs.

The run's parts live in modules of their own (docs/driver.md): `state` (the `Run` the
step handlers share), `recording`, `answers` (the client's side), `agent` (the process),
`requests`, `dispatch` (the step table), `prompt` and `waits` (the steps that wait on
the wire), `steps` (pure params), `connection`, `jsonrpc`, `process` and `terminals`.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextlib
import os
import re
import shutil
import tempfile
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

from parity.core.transcript import ModelRequest, Transcript
from parity.driver.answers import inside
from parity.driver.dispatch import run_steps
from parity.driver.process import Ladder
from parity.driver.stale import owned_name, remove_stale
from parity.driver.state import LlmRun, Run, RunPaths
from parity.driver.step_errors import INTERRUPTED, ScriptError, StepProblem
from parity.scenario.model import Scenario
from parity.targets.launch import Launch


def _seed(base: Path, files: Mapping[str, str], what: str) -> None:
    for rel, text in files.items():
        path = (base / rel).resolve()
        if os.path.isabs(rel) or not inside(path, base):
            raise ScriptError(f"{what} path escapes its directory: {rel!r}")
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")


def _link(tmp: Path, links: Mapping[str, str]) -> None:
    """The launch's caches, linked into the run's TMPDIR (`Launch.tmp_links`). Removing
    the run directory removes the links, never what they point to."""
    for name, target in links.items():
        path = (tmp / name).resolve()
        if os.path.isabs(name) or not inside(path, tmp):
            raise ScriptError(f"launch link escapes the run's TMPDIR: {name!r}")
        Path(target).mkdir(parents=True, exist_ok=True)
        path.symlink_to(target, target_is_directory=True)


# Removing a run directory costs ~15 ms on a journaling filesystem; a worker thread
# does it while the next run starts. The executor's own exit hook finishes pending
# removals before the interpreter exits.
_remover = concurrent.futures.ThreadPoolExecutor(max_workers=1, thread_name_prefix="parity-rm")
_removals: set[concurrent.futures.Future[None]] = set()


def _remove_later(root: Path) -> None:
    fut = _remover.submit(shutil.rmtree, root, True)
    _removals.add(fut)
    fut.add_done_callback(_removals.discard)


def wait_for_cleanup() -> None:
    """Block until every finished run's directory has been removed."""
    for fut in list(_removals):
        fut.result()


_swept = False


def _sweep_once() -> None:
    """At a harness's first run, remove the run directories killed harnesses left."""
    global _swept
    if not _swept:
        _swept = True
        remove_stale(Path(tempfile.gettempdir()))


def make_paths(prefix: str) -> RunPaths:
    """Create a fresh run root with `home`, `workdir` and `tmp` (paths fully resolved,
    so they match what agents report after `realpath`)."""
    root = Path(tempfile.mkdtemp(prefix=prefix)).resolve()
    paths = RunPaths(root, root / "home", root / "workdir", root / "tmp")
    for d in (paths.home, paths.workdir, paths.tmp):
        d.mkdir()
    return paths


async def run_scenario(
    scenario: Scenario,
    make_launch: Callable[[RunPaths], Launch],
    *,
    llm_run: LlmRun | None,
    run_id: str,
    target: str,
    keep_dir: bool = False,
    ladder: Ladder | None = None,
    timeouts: Mapping[str, float] | None = None,
) -> Transcript:
    """Play `scenario` against the agent `make_launch` describes; return the transcript.

    A fresh run directory (`parity-p<pid>-<run id>-...`, so the next harness can remove
    it if this one is killed: `parity.driver.stale`) holds the agent's HOME, workdir
    (seeded with the scenario's `files`) and TMPDIR; it is removed afterwards unless
    `keep_dir` (in a worker thread: `wait_for_cleanup()` waits for that). Agent misbehaviour
    (timeouts, crashes, garbage, protocol slips) is recorded, never raised. `ladder`
    overrides the shutdown ladder's waits (tests use short ones); `timeouts` are the
    target table's (the larger of its and the scenario's wins, per key).
    """
    safe_id = re.sub(r"[^A-Za-z0-9_.-]", "_", run_id)[:60]
    _sweep_once()
    paths = make_paths(owned_name(f"{safe_id}-"))
    transcript = Transcript(
        scenario=scenario.name,
        target=target,
        run_id=run_id,
        paths={"workdir": str(paths.workdir), "home": str(paths.home), "tmp": str(paths.tmp)},
    )
    try:
        launch = make_launch(paths)
        transcript.agent = dict(launch.stamp)
        for name, path in launch.paths.items():
            transcript.paths.setdefault(name, path)
        run = Run(scenario, launch, paths, transcript, llm_run, ladder or Ladder(), timeouts)
        if llm_run is not None:
            llm_run.bind_paths(transcript.paths)
            llm_run.mark_start(run.recording.t0)
            run.recording.on_session = llm_run.client_session
            llm_run.on_request(
                lambda req: _call_soon(run.loop, run.recording.note_model_request, req),
            )
        await _play(run)
        if llm_run is not None:
            transcript.model_requests = list(llm_run.requests)
        transcript.timings["run"] = run.recording.now()
        return transcript
    finally:
        if not keep_dir:
            _remove_later(paths.root)


WORKSPACE_FILE_LIMIT = 64 * 1024
"""Bytes of one `expect_files` file kept in the transcript (the rest is counted)."""


def workspace_files(workdir: Path, names: Sequence[str]) -> dict[str, str | None]:
    """The scenario's `expect_files` after the run, read once the agent has stopped:
    text (invalid UTF-8 replaced, cut at `WORKSPACE_FILE_LIMIT` with a note), or None
    for a file that does not exist. A name escaping the workdir is refused."""
    out: dict[str, str | None] = {}
    root = workdir.resolve()
    for name in names:
        path = (workdir / name).resolve()
        if not path.is_relative_to(root):
            out[name] = "<refused: outside the workdir>"
            continue
        try:
            with open(path, "rb") as fh:
                data = fh.read(WORKSPACE_FILE_LIMIT + 1)
        except FileNotFoundError:
            out[name] = None
            continue
        except OSError as exc:
            out[name] = f"<unreadable: {exc.strerror}>"
            continue
        text = data[:WORKSPACE_FILE_LIMIT].decode("utf-8", errors="replace")
        if len(data) > WORKSPACE_FILE_LIMIT:
            text += f"\n<cut at {WORKSPACE_FILE_LIMIT} bytes>"
        out[name] = text
    return out


def _call_soon(
    loop: asyncio.AbstractEventLoop, fn: Callable[[ModelRequest], None], req: Any
) -> None:
    # Called from the fake LLM's thread; the loop may already be gone after the run.
    with contextlib.suppress(RuntimeError):
        loop.call_soon_threadsafe(fn, req)


async def _play(run: Run) -> None:
    transcript = run.transcript
    recording = run.recording
    try:
        try:
            _seed(run.paths.workdir, run.scenario.files, "scenario file")
            _seed(run.paths.home, run.scenario.home_files, "scenario home file")
            _seed(run.paths.home, run.launch.files, "launch file")
            _link(run.paths.tmp, run.launch.tmp_links)
        except ScriptError as exc:
            transcript.problems.append(str(exc))
            return
        try:
            async with asyncio.timeout(run.timeouts["run"]):
                await run.agent.start()
                await run_steps(run, run.scenario.steps)
        except StepProblem as exc:
            transcript.problems.append(str(exc))  # only start() raises it out of run_steps
        except TimeoutError:
            text = f"run timeout ({run.timeouts['run']:g} s) reached"
            for record in transcript.steps:
                if record.problem == INTERRUPTED:
                    record.problem = f"{text} during {record.label}"
            transcript.problems.append(text)
        if run.steps_done < len(run.scenario.steps) and transcript.steps:
            last = transcript.steps[run.current]
            later = len(run.scenario.steps) - run.steps_done - 1
            transcript.problems.append(
                f"run stopped at step {last.index + 1} ({last.label}); "
                f"{later} later step(s) not run"
            )
    finally:
        t = recording.now()
        await run.terminals.close()
        await run.agent.stop()
        transcript.timings["teardown"] = recording.now() - t
        for i, proc in enumerate(transcript.processes):
            if proc.leftovers:
                transcript.problems.append(
                    f"leftover processes: {proc.leftovers} process(es) agent process {i}"
                    " started were still running after it ended; the harness killed them"
                )
        transcript.files = workspace_files(run.paths.workdir, run.scenario.expect_files)
        recording.finish()
