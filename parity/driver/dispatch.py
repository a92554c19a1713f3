"""Step dispatch: each scenario step kind -> its handler, and the loop that runs them.

`STEP_KINDS` is the table: a new step kind is one entry here (with its handler) plus its
shape in the scenario schema (`parity/schema/scenario.schema.json`). `run_step` records
every step (`StepRecord`), fills in its placeholders, runs its handler and turns what
went wrong into the step's `problem`; `run_steps` stops at the first step with one.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass
from typing import Any

from parity.core.transcript import StepRecord
from parity.driver.connection import StdinBlocked
from parity.driver.prompt import prompt_step
from parity.driver.state import Run
from parity.driver.step_errors import INTERRUPTED, ScriptError, StepProblem
from parity.driver.steps import (
    SESSION_METHODS,
    initialize_params,
    list_params,
    session_params,
    step_label,
    substitute,
)
from parity.driver.waits import send_raw_step, step_after, wait_step
from parity.scenario.model import Step

Handler = Callable[[Run, StepRecord, dict[str, Any], int], Awaitable[None]]
"""(run, the step's record, its params, the frame seq its "more updates" count from)."""


@dataclass(frozen=True)
class StepKind:
    """How the driver runs one step kind."""

    run: Handler
    placeholders: bool = True
    """Its params get `{workdir}`, `{session:s1}`, ... filled in (`parallel` holds steps)."""
    uses_agent: bool = True
    """It counts as using the agent process, so a later `initialize` no longer gets the
    startup timeout (time spent before initialize is the scenario's, not the agent's)."""


async def run_steps(run: Run, steps: list[Step]) -> None:
    """Run the scenario's steps in order until one has a problem that stops the run;
    `run.steps_done` counts those that completed."""
    mark = len(run.transcript.frames)
    for step in steps:
        run.current = len(run.transcript.steps)
        try:
            mark = await run_step(run, step, since=mark)
        except StepProblem:
            return
        run.steps_done += 1


async def run_step(run: Run, step: Step, since: int) -> int:
    """Run one step and record it; returns the seq from which the next step in the
    same sequence counts "more" updates (just past this step's response, or past
    the update a wait was waiting for), so a late update is never missed."""
    transcript = run.transcript
    record = StepRecord(
        index=len(transcript.steps),
        kind=step.kind,
        label=step_label(step),
        line=step.where.line,
        t_start=run.recording.now(),
    )
    transcript.steps.append(record)
    kind = STEP_KINDS.get(step.kind)
    if run.agent.conn is not None and (kind is None or kind.uses_agent):
        run.agent.conn.fresh = False
    first = len(transcript.frames)
    try:
        placeholders = kind is None or kind.placeholders
        params = substitute(step.params or {}, run.lookup) if placeholders else step.params
        if kind is None:
            raise ScriptError(f"unknown step kind {step.kind!r}")
        if step.after is not None:
            await step_after(run, record, step.after, since)
        await kind.run(run, record, params, since)
    except StepProblem as exc:
        record.problem = str(exc)
        raise
    except ScriptError as exc:
        record.problem = f"{step.where}: {exc}"
        raise StepProblem(record.problem) from exc
    except StdinBlocked:
        record.problem = (
            f"could not send {record.label} within the response timeout "
            f"({run.timeouts['response']:g} s): the agent is not reading its stdin"
        )
        raise StepProblem(record.problem) from None
    except asyncio.CancelledError:
        record.problem = INTERRUPTED
        raise
    finally:
        record.t_end = run.recording.now()
        record.frames = list(range(first, len(transcript.frames)))
    return run.recording.marks.get(record.index, len(transcript.frames))


# -- the handlers -------------------------------------------------------------------------


async def _initialize(run: Run, record: StepRecord, p: dict[str, Any], since: int) -> None:
    await run.requests.call(record, "initialize", initialize_params(p, run.client))


async def _authenticate(run: Run, record: StepRecord, p: dict[str, Any], since: int) -> None:
    await run.requests.call(record, "authenticate", {"methodId": p.get("method_id")})


def _mcp_servers(run: Run, p: Mapping[str, Any]) -> list[Any]:
    servers = list(p.get("mcp_servers") or [])
    mode = p.get("fixture_tools", "auto")
    wanted = mode == "mcp" or (mode == "auto" and run.launch.fixture_tools == "mcp")
    served = run.scenario.tools or run.scenario.mcp_resources is not None
    if wanted and served and run.llm_run is not None:
        # Imported here: the fake LLM package is heavier than the driver needs for
        # stream targets.
        from parity.fakellm.mcp_stdio import mcp_server_entry

        servers.append(mcp_server_entry(run.llm_run.base_url))
    return servers


async def _open_session(run: Run, record: StepRecord, p: dict[str, Any], since: int) -> None:
    """new_session, load_session, resume_session."""
    kind = record.kind
    sid = run.session_id(p) if kind != "new_session" else None
    params = session_params(kind, p, sid, run.paths.workdir, _mcp_servers(run, p))
    sent_at = len(run.transcript.frames)
    response = await run.requests.call(record, SESSION_METHODS[kind], params)
    if kind == "new_session":
        run.session_since[str(p.get("as"))] = sent_at
        result = response.get("result")
        sid = result.get("sessionId") if isinstance(result, dict) else None
        if sid is not None:
            run.sessions[str(p.get("as"))] = sid


async def _list_sessions(run: Run, record: StepRecord, p: dict[str, Any], since: int) -> None:
    response = await run.requests.call(record, "session/list", list_params(p, run.last_cursor))
    result = response.get("result")
    run.last_cursor = result.get("nextCursor") if isinstance(result, dict) else None


async def _close_session(run: Run, record: StepRecord, p: dict[str, Any], since: int) -> None:
    await run.requests.call(record, "session/close", {"sessionId": run.session_id(p)})


async def _set_config_option(run: Run, record: StepRecord, p: dict[str, Any], since: int) -> None:
    params = {"sessionId": run.session_id(p), "configId": p.get("config_id")}
    await run.requests.call(
        record, "session/set_config_option", {**params, "value": p.get("value")}
    )


async def _set_mode(run: Run, record: StepRecord, p: dict[str, Any], since: int) -> None:
    params = {"sessionId": run.session_id(p), "modeId": p.get("mode")}
    await run.requests.call(record, "session/set_mode", params)


async def _cancel(run: Run, record: StepRecord, p: dict[str, Any], since: int) -> None:
    await run.requests.notify(record, "session/cancel", {"sessionId": run.session_id(p)})


async def _request(run: Run, record: StepRecord, p: dict[str, Any], since: int) -> None:
    await run.requests.call(record, str(p.get("method")), p.get("params"))


async def _notify(run: Run, record: StepRecord, p: dict[str, Any], since: int) -> None:
    await run.requests.notify(record, str(p.get("method")), p.get("params"))


async def _restart(run: Run, record: StepRecord, p: dict[str, Any], since: int) -> None:
    await run.agent.stop()
    await run.agent.start()


async def _parallel(run: Run, record: StepRecord, p: dict[str, Any], since: int) -> None:
    children: list[Step] = p.get("steps") or []
    start = len(run.transcript.frames)
    results = await asyncio.gather(
        *(run_step(run, child, start) for child in children), return_exceptions=True
    )
    marks = [start]
    for res in results:
        if isinstance(res, StepProblem):
            raise StepProblem(f"a parallel step failed: {res}")
        if isinstance(res, BaseException):
            raise res
        marks.append(res)
    run.recording.marks[record.index] = max(marks)


STEP_KINDS: dict[str, StepKind] = {
    "initialize": StepKind(_initialize, uses_agent=False),
    "authenticate": StepKind(_authenticate),
    "new_session": StepKind(_open_session),
    "load_session": StepKind(_open_session),
    "resume_session": StepKind(_open_session),
    "list_sessions": StepKind(_list_sessions),
    "close_session": StepKind(_close_session),
    "set_config_option": StepKind(_set_config_option),
    "set_mode": StepKind(_set_mode),
    "cancel": StepKind(_cancel),
    "prompt": StepKind(prompt_step),
    "request": StepKind(_request),
    "notify": StepKind(_notify),
    "send_raw": StepKind(send_raw_step),
    "restart": StepKind(_restart, uses_agent=False),
    "wait": StepKind(wait_step),
    "parallel": StepKind(_parallel, placeholders=False, uses_agent=False),
}
"""Every step kind the driver runs (the scenario schema's `step` properties)."""
