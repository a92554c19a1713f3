"""The trigger plumbing (`parity.driver.triggers`) on a bare recording: what each
trigger counts, from where, and how far one that never fired got."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from parity.core.transcript import ModelRequest, Transcript
from parity.driver.recording import ANY_SESSION, Recording
from parity.driver.triggers import Origin, after_text, fired, hold_answer, progress, seen


def _recording() -> Recording:
    return Recording(Transcript(scenario="s", target="t", run_id="r"))


def _tool_call(name: str, via: str = "parity-stream") -> ModelRequest:
    return ModelRequest(0, 0.0, "POST", "/tools/call", via, {"name": name, "callId": "c"})


async def _fires(recording: Recording, after: dict[str, Any], origin: Origin) -> bool:
    task = asyncio.ensure_future(fired(recording, after, origin))
    await asyncio.sleep(0.01)
    done = task.done()
    task.cancel()
    return done


async def test_tool_call_counts_calls_of_that_tool_over_the_run() -> None:
    rec = _recording()
    after = {"tool_call": "slow", "count": 2}
    origin = Origin(0, 0.0)
    task = asyncio.ensure_future(fired(rec, after, origin))
    rec.note_model_request(_tool_call("slow"))
    rec.note_model_request(_tool_call("other", "mcp"))
    await asyncio.sleep(0.01)
    assert not task.done()
    assert progress(rec, after, origin) == " (1 of 2 slow tool call(s) reached the fake)"
    rec.note_model_request(_tool_call("slow", "mcp"))  # MCP calls are forwarded here too
    await asyncio.wait_for(task, 1)
    # A tool call is not a model request.
    assert rec.model_turns == []


async def test_agent_requests_count_in_the_origin_session_from_the_origin() -> None:
    rec = _recording()
    ask = {"method": "session/request_permission", "params": {"sessionId": "a"}}
    rec.note_request(3, ask)
    rec.note_request(5, {**ask, "params": {"sessionId": "b"}})
    after = {"agent_request": "session/request_permission"}
    assert seen(rec, after, Origin(4, 0.0, "a")) == (0, 1)
    assert seen(rec, after, Origin(4, 0.0, "b")) == (1, 1)
    assert seen(rec, after, Origin(0, 0.0, ANY_SESSION)) == (2, 1)
    assert await _fires(rec, after, Origin(0, 0.0, "a"))
    assert not await _fires(rec, after, Origin(4, 0.0, "a"))


async def test_a_prompt_trigger_fires_when_that_prompt_ends() -> None:
    rec = _recording()
    task = asyncio.ensure_future(fired(rec, {"prompt": "p1"}, Origin(0, 0.0)))
    await asyncio.sleep(0.01)
    assert not task.done()
    assert progress(rec, {"prompt": "p1"}, Origin(0, 0.0)) == " (prompt p1 had not ended)"
    rec.prompt_ended("p1")
    await asyncio.wait_for(task, 1)


async def test_ms_counts_from_the_origin() -> None:
    rec = _recording()
    t0 = rec.now()
    await fired(rec, {"ms": 50}, Origin(0, t0))
    assert rec.now() - t0 >= 0.05


async def test_a_held_answer_never_sent_is_a_problem_but_never_is_not() -> None:
    rec = _recording()
    msg = {"id": 1, "method": "fs/read_text_file", "params": {"sessionId": "a"}}
    for after in ({"tool_call": "x"}, "never"):
        task = asyncio.ensure_future(hold_answer(rec, after, msg, 7))
        await asyncio.sleep(0.01)
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
    assert rec.transcript.problems == [
        "held answer to fs/read_text_file (frame 7) was not sent: its trigger "
        "`after tool_call x` never fired (0 of 1 x tool call(s) reached the fake)"
    ]


def test_after_text() -> None:
    assert after_text({"tool_call": "slow"}) == "after tool_call slow"
    assert after_text({"agent_request": "x/y", "count": 2}) == "after agent_request x/y, count 2"
    assert after_text({"prompt": "p1"}) == "after prompt p1"
    assert after_text("never") == "never"


def _model_request() -> ModelRequest:
    return ModelRequest(0, 0.0, "POST", "/stream", "parity-stream", {})


async def test_since_origin_counts_model_requests_and_tool_calls_from_the_origin() -> None:
    # One request and one call before the origin: a run-wide count sees them, a count
    # since the origin does not, so a turn an agent skipped earlier shifts nothing.
    rec = _recording()
    rec.note_model_request(_model_request())
    rec.note_model_request(_tool_call("slow"))
    await asyncio.sleep(0.01)
    origin = Origin(0, rec.now())
    for after in ({"llm_request": 1}, {"tool_call": "slow"}):
        assert seen(rec, after, origin) == (1, 1)
        assert seen(rec, {**after, "since": "run"}, origin) == (1, 1)
        assert seen(rec, {**after, "since": "origin"}, origin) == (0, 1)
    relative = {"llm_request": 1, "since": "origin"}
    assert progress(rec, relative, origin) == " (0 of 1 model request(s) came)"
    assert after_text(relative) == "after llm_request 1, since origin"
    task = asyncio.ensure_future(fired(rec, relative, origin))
    await asyncio.sleep(0.01)
    assert not task.done()
    rec.note_model_request(_model_request())
    await asyncio.wait_for(task, 1)
    assert seen(rec, {"tool_call": "slow", "since": "origin"}, origin) == (0, 1)
    rec.note_model_request(_tool_call("slow"))
    assert seen(rec, {"tool_call": "slow", "since": "origin"}, origin) == (1, 1)
