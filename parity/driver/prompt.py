"""The `prompt` step: session/prompt, and its cancel trigger.

A prompt with `cancel` watches for its trigger (`parity.driver.triggers`: an update, an
agent request, a model request, a fixture tool call reaching the fake, another prompt's
end, a delay) while the prompt runs and then sends session/cancel (or
`$/cancel_request` for the prompt's own id). A trigger that never fired is a problem of
the step, with how far it got; the run goes on when the prompt ended anyway.
"""

from __future__ import annotations

import asyncio
from collections.abc import Mapping
from typing import Any

from parity.core.transcript import StepRecord
from parity.driver import jsonrpc
from parity.driver.connection import Connection
from parity.driver.state import Run
from parity.driver.step_errors import NoResponse, StepProblem
from parity.driver.steps import prompt_outcome, trigger_text
from parity.driver.triggers import Origin, fired, progress, released


async def prompt_step(run: Run, record: StepRecord, p: dict[str, Any], since: int) -> None:
    sid = run.session_id(p)
    content = p.get("content")
    if content is None:
        content = [{"type": "text", "text": p.get("text", "")}]
    conn = run.agent.live()
    msg = jsonrpc.request(
        run.requests.new_id(), "session/prompt", {"sessionId": sid, "prompt": content}
    )
    name = str(p["as"]) if p.get("as") else None
    if name is not None:
        run.prompts[name] = msg["id"]
    _in_flight(run, name, sid, True)
    try:
        await _exchange(run, record, conn, msg, sid, p.get("cancel"))
    finally:
        _in_flight(run, name, sid, False)
        if name is not None:
            run.recording.prompt_ended(name)
    # The answers held for this prompt's end go out before the next step.
    await released(run.recording)


def _in_flight(run: Run, name: str | None, sid: Any, flying: bool) -> None:
    """A named prompt was sent or answered: the script's entries for it (`prompt: NAME`)
    and the permission answers for it (`by_prompt`) apply only in between."""
    if name is None:
        return
    if flying:
        run.flying.start(sid, name)
    else:
        run.flying.end(sid, name)
    if run.llm_run is not None:
        run.llm_run.prompt_in_flight(name, flying)


async def _exchange(
    run: Run, record: StepRecord, conn: Connection, msg: dict[str, Any], sid: Any, trigger: Any
) -> None:
    if not isinstance(trigger, dict):
        await run.requests.exchange(record, conn, msg)
        return
    after = trigger.get("after") or {}
    origin = Origin(len(run.transcript.frames), run.recording.now(), sid)
    watcher = run.loop.create_task(_cancel_when(run, conn, trigger, origin, msg["id"]))
    try:
        response = await run.requests.exchange(record, conn, msg)
    except NoResponse as exc:
        if watcher.done() and not watcher.cancelled() and watcher.exception() is None:
            raise StepProblem(f"{exc}, although its cancel trigger fired") from None
        # What went wrong is the trigger, not (only) the agent's silence.
        seen = progress(run.recording, after, origin)
        raise StepProblem(
            f"cancel trigger `{trigger_text(trigger)}` never fired{seen}; "
            f"no response within {exc.seconds:g} s"
        ) from None
    finally:
        went_off = watcher.done() and not watcher.cancelled() and watcher.exception() is None
        watcher.cancel()
        await asyncio.gather(watcher, return_exceptions=True)
    if not went_off:
        # Not fatal: the transcript shows how the prompt ended without the cancel.
        seen = progress(run.recording, after, origin)
        record.problem = (
            f"cancel trigger `{trigger_text(trigger)}` never fired{seen}; "
            f"the prompt ended first, {prompt_outcome(response)}"
        )


async def _cancel_when(
    run: Run, conn: Connection, trigger: Mapping[str, Any], origin: Origin, req_id: Any
) -> None:
    """Wait for a prompt's cancel trigger, then send the cancel."""
    await fired(run.recording, trigger.get("after") or {}, origin)
    if trigger.get("via", "session_cancel") == "cancel_request":
        await conn.send(jsonrpc.notification("$/cancel_request", {"requestId": req_id}))
    else:
        await conn.send(jsonrpc.notification("session/cancel", {"sessionId": origin.session}))
