"""The `prompt` step: session/prompt, and its cancel trigger.

A prompt with `cancel` watches for its trigger (`after: {update, count}`, `after:
{llm_request}`, `after: {ms}`) while the prompt runs and then sends session/cancel (or
`$/cancel_request` for the prompt's own id). A trigger that never fired is a problem of
the step, with how far it got; the run goes on when the prompt ended anyway.
"""

from __future__ import annotations

import asyncio
from collections.abc import Mapping
from typing import Any

from parity.driver import jsonrpc
from parity.driver.connection import Connection
from parity.driver.state import Run
from parity.driver.step_errors import NoResponse, StepProblem
from parity.driver.steps import prompt_outcome, trigger_text
from parity.transcript import StepRecord


async def prompt_step(run: Run, record: StepRecord, p: dict[str, Any], since: int) -> None:
    sid = run.session_id(p)
    content = p.get("content")
    if content is None:
        content = [{"type": "text", "text": p.get("text", "")}]
    conn = run.agent.live()
    msg = jsonrpc.request(
        run.requests.new_id(), "session/prompt", {"sessionId": sid, "prompt": content}
    )
    if p.get("as"):
        run.prompts[str(p["as"])] = msg["id"]
    trigger = p.get("cancel")
    if not isinstance(trigger, dict):
        await run.requests.exchange(record, conn, msg)
        return
    start = len(run.transcript.frames)
    watcher = run.loop.create_task(_cancel_when(run, conn, trigger, sid, msg["id"], start))
    try:
        response = await run.requests.exchange(record, conn, msg)
    except NoResponse as exc:
        if watcher.done() and not watcher.cancelled() and watcher.exception() is None:
            raise StepProblem(f"{exc}, although its cancel trigger fired") from None
        # What went wrong is the trigger, not (only) the agent's silence.
        seen = _trigger_progress(run, trigger, sid, start)
        raise StepProblem(
            f"cancel trigger `{trigger_text(trigger)}` never fired{seen}; "
            f"no response within {exc.seconds:g} s"
        ) from None
    finally:
        fired = watcher.done() and not watcher.cancelled() and watcher.exception() is None
        watcher.cancel()
        await asyncio.gather(watcher, return_exceptions=True)
    if not fired:
        # Not fatal: the transcript shows how the prompt ended without the cancel.
        seen = _trigger_progress(run, trigger, sid, start)
        record.problem = (
            f"cancel trigger `{trigger_text(trigger)}` never fired{seen}; "
            f"the prompt ended first, {prompt_outcome(response)}"
        )


def _trigger_progress(run: Run, trigger: Mapping[str, Any], sid: Any, start: int) -> str:
    """How far a trigger that never fired got: ` (1 of 2 tool_call updates came)`."""
    after = trigger.get("after") or {}
    if "update" in after:
        kind, count = after["update"], int(after.get("count", 1))
        n = len(run.recording.update_seqs(kind, start, sid))
        return f" ({n} of {count} {kind} update(s) came)"
    if "llm_request" in after:
        wanted = int(after["llm_request"])
        return f" ({len(run.recording.model_turns)} of {wanted} model request(s) came)"
    return ""


async def _cancel_when(
    run: Run, conn: Connection, trigger: Mapping[str, Any], sid: Any, req_id: Any, start: int
) -> None:
    """Wait for a prompt's cancel trigger, then send the cancel."""
    recording = run.recording
    after = trigger.get("after") or {}
    t_sent = recording.now()
    if "update" in after:
        kind, count = after["update"], int(after.get("count", 1))
        await recording.until(lambda: len(recording.update_seqs(kind, start, sid)) >= count)
    elif "llm_request" in after:
        # Counted over the whole run, as the scenario schema defines it.
        k = int(after["llm_request"])
        await recording.until(lambda: len(recording.model_turns) >= k)
    elif "ms" in after:
        await asyncio.sleep(max(float(after["ms"]) / 1000 - (recording.now() - t_sent), 0.0))
    if trigger.get("via", "session_cancel") == "cancel_request":
        await conn.send(jsonrpc.notification("$/cancel_request", {"requestId": req_id}))
    else:
        await conn.send(jsonrpc.notification("session/cancel", {"sessionId": sid}))
