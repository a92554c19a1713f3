"""Held client answers and the fixture-tool trigger, against the echo agent: an answer
is sent only when its trigger fires (the order of frames shows it), `never` leaves the
request unanswered, a trigger that never fires is a run problem, and a cancel fires
once the fake LLM (on its own thread) has received the fixture tool call."""

from __future__ import annotations

from typing import Any

from parity.core.transcript import Transcript
from parity.fakellm.thread import FakeLLMThread
from parity.scenario.model import DEFAULT_CATALOG, Tool
from parity.view.normalize import view
from tests.support.driver import BASIC, chunks, run, st


def _seq(t: Transcript, pred: Any) -> int:
    return next(f.seq for f in t.frames if isinstance(f.message, dict) and pred(f.message))


def _is_permission(m: dict[str, Any]) -> bool:
    return m.get("method") == "session/request_permission"


def _answer(t: Transcript, asked: int) -> int | None:
    """The seq of the harness's answer to the agent's request in frame `asked`."""
    req_id = t.frames[asked].message["id"]
    return next(
        (
            f.seq
            for f in t.frames
            if f.direction == "out" and f.message.get("id") == req_id and "method" not in f.message
        ),
        None,
    )


async def test_a_held_answer_is_sent_when_its_trigger_fires() -> None:
    """The answer waits for the prompt to end: the frames show the request, the prompt's
    response, and only then the answer."""
    client = {"permission": {"answer": "cancelled", "after": {"prompt": "p1"}}}
    steps = [
        *BASIC,
        st("prompt", session="s1", text="abandon", as_="p1"),
        st("prompt", session="s1", text="next"),
    ]
    t = await run(steps, client=client)
    assert t.problems == []
    asked = _seq(t, _is_permission)
    ended = _seq(t, lambda m: m.get("id") == t.steps[-2].request["id"] and "result" in m)
    answer = _answer(t, asked)
    assert answer is not None
    # ... and before the next step: the order never depends on the event loop.
    assert asked < ended < answer < t.steps[-1].frames[0]
    assert t.frames[answer].message["result"] == {"outcome": {"outcome": "cancelled"}}
    # The view says the answer came after the step's response.
    (request,) = view(t, "exact", [])["steps"][-2]["agent_requests"]
    assert request["answer"] == {"result": {"outcome": {"outcome": "cancelled"}}}
    assert request["answered_after_result"] is True


async def test_a_held_answer_counts_from_its_request() -> None:
    client = {"permission": [{"answer": "reject-once", "after": {"ms": 300}}]}
    t = await run([*BASIC, st("prompt", session="s1", text="permission")], client=client)
    assert t.problems == []
    asked = _seq(t, _is_permission)
    answer = _answer(t, asked)
    assert answer == asked + 1
    assert t.frames[answer].t - t.frames[asked].t >= 0.3
    assert '"optionId": "no"' in chunks(t)[0]
    (request,) = view(t, "exact", [])["steps"][-1]["agent_requests"]
    assert "answered_after_result" not in request


async def test_never_leaves_the_request_unanswered() -> None:
    t = await run(
        [*BASIC, st("prompt", session="s1", text="permission")],
        client={"permission": "never"},
        timeouts={"response": 1.0},
    )
    assert _answer(t, _seq(t, _is_permission)) is None
    assert "no response to prompt" in (t.steps[-1].problem or "")
    assert not any("held answer" in p for p in t.problems)


async def test_a_held_answer_whose_trigger_never_fires_is_a_run_problem() -> None:
    client = {"elicitation": {"answer": "accept", "after": {"tool_call": "nope"}}}
    t = await run(
        [*BASIC, st("prompt", session="s1", text="ask q")],
        client=client,
        timeouts={"response": 1.0},
    )
    asked = _seq(t, lambda m: m.get("method") == "elicitation/create")
    assert (
        f"held answer to elicitation/create (frame {asked}) was not sent: its trigger "
        "`after tool_call nope` never fired (0 of 1 nope tool call(s) reached the fake)"
    ) in t.problems


async def test_fs_answers_can_be_held() -> None:
    client = {"fs": {"read": True, "after": {"ms": 200}}}
    t = await run(
        [*BASIC, st("prompt", session="s1", text="read {workdir}/a.txt")],
        files={"a.txt": "A"},
        client=client,
    )
    asked = _seq(t, lambda m: m.get("method") == "fs/read_text_file")
    answer = asked + 1
    assert t.frames[answer].message["result"] == {"content": "A"}
    assert t.frames[answer].t - t.frames[asked].t >= 0.2


SLOW = Tool("slow", "Hangs.", {"type": "object", "properties": {}}, [], hang=True)


async def test_cancel_fires_once_the_fake_has_the_tool_call() -> None:
    """The fake runs on its own thread; its notice reaches the driver's loop, through
    parity-stream `/tools/call` and through MCP's forwarded call alike."""
    with FakeLLMThread() as fake:
        for i, via in enumerate(("", " mcp")):
            llm_run = fake.open_run(f"t{i}", llm=[], tools=[SLOW], catalog=DEFAULT_CATALOG)
            cancel = {"after": {"tool_call": "slow"}}
            t = await run(
                [*BASIC, st("prompt", session="s1", text=f"tool slow{via}", cancel=cancel)],
                llm_run=llm_run,
                env={"PARITY_LLM_BASE": llm_run.base_url},
                tools=[SLOW],
            )
            fake.close_run(f"t{i}")
            prompt = t.steps[-1]
            assert prompt.problem is None
            assert prompt.response["result"] == {"stopReason": "cancelled"}
            (call,) = [r for r in t.model_requests if r.path == "/tools/call"]
            assert call.dialect == ("mcp" if via else "parity-stream")
            cancel_frame = _seq(t, lambda m: m.get("method") == "session/cancel")
            assert call.t < t.frames[cancel_frame].t
