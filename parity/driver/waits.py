"""The steps that wait on the wire rather than on one response: `send_raw` and `wait`.

`send_raw` writes a line verbatim (negative tests: garbage, batches, a request with a bad
shape) and waits as long as the line deserves: a request for its response, anything else
a short grace period for an answer. `wait` waits for a number of `session/update`s of a
kind (of one session, when named), or for a fixed time; `step_after` holds any step
until its `after` trigger fires.
"""

from __future__ import annotations

import asyncio
from collections.abc import Mapping
from typing import Any

from parity.core.transcript import StepRecord
from parity.driver import jsonrpc
from parity.driver.connection import AgentGone, OversizeAnswer, id_key
from parity.driver.recording import ANY_SESSION
from parity.driver.state import Run
from parity.driver.step_errors import StepProblem
from parity.driver.triggers import Origin, after_text, fired, progress

RAW_GRACE = 0.5
"""Seconds a `send_raw` of a non-request waits for an `id: null` error answer."""


async def send_raw_step(run: Run, record: StepRecord, p: dict[str, Any], since: int) -> None:
    """Send a line verbatim. A request waits for its response. Anything else gets a
    short grace period for an answer: the `id: null` error a conforming agent sends,
    or, for a batch, a response to one of its requests (silence is no problem)."""
    text = str(p.get("line", ""))
    conn = run.agent.live()
    parsed = jsonrpc.parse_line(jsonrpc.Line(text.encode("utf-8"), len(text)))
    kind = jsonrpc.classify(parsed.message) if parsed.error is None else "invalid"
    record.request = parsed.message
    ids: list[Any] = []
    if kind == "request":
        ids = [parsed.message["id"]]
    elif kind == "invalid":
        batch = parsed.message if jsonrpc.is_batch(parsed.message) else []
        ids = [None, *(m["id"] for m in batch if jsonrpc.classify(m) == "request")]
    fut = conn.expect(*ids) if ids else None
    marks = run.recording.marks
    try:
        frame = await conn.send_text(text, parsed.message, parsed.error)
        marks[record.index] = frame.seq + 1
        if fut is not None:
            grace = run.timeouts["response"] if kind == "request" else RAW_GRACE
            try:
                answer = await conn.response(fut, grace)
                record.response = answer.message
                marks[record.index] = answer.frame.seq + 1
            except TimeoutError:
                if kind == "request":
                    raise StepProblem(
                        f"no response to {record.label} within the response timeout ({grace:g} s)"
                    ) from None
    except AgentGone:
        raise await run.agent.gone(conn, record.label) from None
    except OversizeAnswer as exc:
        raise exc.named(record.label) from None
    finally:
        for id_ in ids:
            if conn.pending.get(id_key(id_)) is fut:
                del conn.pending[id_key(id_)]


async def step_after(run: Run, record: StepRecord, after: Mapping[str, Any], since: int) -> None:
    """Hold a step until its `after` trigger fires, counted from the step's start: the
    frames from `since` (in a parallel branch, the block's start) of any session, and
    the step's start time. Bounded by the response timeout: a trigger that never fires
    is the step's problem, and the step is not sent."""
    recording = run.recording
    origin = Origin(since, record.t_start)
    timeout = run.timeouts["response"]
    try:
        async with asyncio.timeout(timeout):
            await fired(recording, after, origin)
    except TimeoutError:
        raise StepProblem(
            f"the step's trigger `{after_text(after)}` never fired within the response "
            f"timeout ({timeout:g} s){progress(recording, after, origin)}; "
            f"{record.label} was not sent"
        ) from None


async def wait_step(run: Run, record: StepRecord, p: dict[str, Any], since: int) -> None:
    if "ms" in p:
        await asyncio.sleep(float(p["ms"]) / 1000)
        return
    kind, count = p.get("update"), int(p.get("count", 1))
    session: Any = ANY_SESSION
    after = since
    if "session" in p:
        # Counted from the session's own session/new request, not the previous step: an
        # agent may queue the update before it writes the session/new answer.
        session, since = run.session_id(p), run.session_since.get(str(p["session"]), 0)
    conn = run.agent.live()
    timeout = float(p["within_ms"]) / 1000 if "within_ms" in p else run.timeouts["response"]
    recording = run.recording

    def seen() -> list[int]:
        return recording.update_seqs(kind, since, session)

    try:
        async with asyncio.timeout(timeout):
            await recording.until(lambda: len(seen()) >= count or conn.eof.is_set())
    except TimeoutError:
        if p.get("optional"):
            # ACP leaves the update to the agent (an agent without slash commands sends
            # no available_commands_update): not coming is an answer, not a problem.
            return
        within = "within_ms" if "within_ms" in p else "the response timeout"
        raise StepProblem(
            f"{record.label}: only {len(seen())} of {count} {kind} "
            f"update(s) within {within} ({timeout:g} s)"
        ) from None
    matching = seen()
    if len(matching) < count:
        raise await run.agent.gone(conn, record.label)
    # Never back before the previous step's mark: an update found before it (the raced
    # one) must not be counted again by a later wait of the same sequence.
    recording.marks[record.index] = max(after, matching[count - 1] + 1)
