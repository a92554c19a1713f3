"""The model loop end to end against a live parity-stream server (§2, §3, §4, §8.1)."""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, ClassVar

import pytest
from plus_agent import wait_for
from plus_stream_server import (
    HANG_AFTER_PARTIAL,
    ParityServer,
    error_response,
    max_tokens_response,
    reasoning_tool_call_script,
    text_response,
    tool_call_response,
)

from acp_plus.core.agent import Agent, Route, TurnInProgress
from acp_plus.core.approvals import ApprovalChain, ApprovalRequest
from acp_plus.core.events import ApprovalOutcome
from acp_plus.core.llm.base import Router
from acp_plus.core.llm.parity_stream import ParityStreamProvider
from acp_plus.core.store import SessionStore
from acp_plus.core.token_meter import request_tokens
from acp_plus.core.tool_arguments import parse_arguments
from acp_plus.core.tools.base import ToolContext, ToolRegistry, ToolResult
from acp_plus.core.tools.fixture import fixture_tools

GO = [{"type": "text", "text": "go"}]
ROUTE = Route("mock", "mock")


@dataclass
class Rig:
    agent: Agent
    seen: list[dict[str, Any]]
    asked: list[ApprovalRequest] = field(default_factory=list)

    def types(self) -> list[str]:
        return [e["type"] for e in self.seen]

    def of(self, kind: str) -> list[dict[str, Any]]:
        return [e for e in self.seen if e["type"] == kind]


@pytest.fixture
async def rig(server: ParityServer, tmp_path: Path) -> AsyncIterator[Rig]:
    provider = ParityStreamProvider(server.url)
    router = Router([provider])
    tools = ToolRegistry(await fixture_tools(provider))
    seen: list[dict[str, Any]] = []
    log = SessionStore(tmp_path / "home").create(str(tmp_path))
    rig = Rig(Agent(log, router, tools, ApprovalChain(), tmp_path, seen.append), seen)

    async def answer(req: ApprovalRequest) -> ApprovalOutcome | None:
        rig.asked.append(req)
        return "allowed-once"

    rig.agent.approvals.responders.append(answer)
    try:
        yield rig
    finally:
        await router.aclose()


async def test_text_turn_commits_message_with_usage_and_ends_completed(
    rig: Rig, server: ParityServer
) -> None:
    server.script.append(text_response("hello there"))
    reason = await rig.agent.run_turn([{"type": "text", "text": "say hello"}], ROUTE)
    assert reason == {"kind": "completed"}
    assert rig.types() == [
        "turn/start",
        "user/message",
        "route/set",
        "assistant/message",
        "turn/end",
    ]
    msg = rig.of("assistant/message")[0]
    assert msg["blocks"] == [{"type": "text", "text": "hello there"}]
    assert msg["usage"] == {"inputTokens": 5, "outputTokens": 11}
    assert msg["route"] == {"provider": "mock", "model": "mock", "effort": "high"}
    assert rig.of("turn/end")[0]["reason"] == {"kind": "completed"}
    # usage_update.used is native's token meter (core/token_meter.py): here its estimate
    # of the request and the answer, larger than the provider's 16.
    (step,) = server.streams()
    body = step.body
    estimate = request_tokens(
        body.get("system"), body.get("tools") or [], body["messages"], msg["blocks"]
    )
    assert estimate > 16
    assert rig.agent.used_tokens() == msg["meter"] == estimate
    # The committed events are exactly what on_event saw, in order.
    assert rig.agent.log.events() == rig.seen
    body = server.streams()[0].body
    assert body["reasoningEffort"] == "high"  # the model's default effort is filled in
    assert body["tools"] == [
        {
            "name": "echo",
            "description": "Return a deterministic result.",
            "parameters": {"type": "object", "properties": {}},
        }
    ]


async def test_reasoning_tool_call_then_text(rig: Rig, server: ParityServer) -> None:
    server.tools["echo"] = {"content": [{"type": "text", "text": "tool result"}], "isError": False}
    server.script += [reasoning_tool_call_script(), text_response("done")]
    reason = await rig.agent.run_turn(GO, ROUTE)
    assert reason == {"kind": "completed"}
    assert rig.types() == [
        "turn/start",
        "user/message",
        "route/set",
        "assistant/message",
        "tool/call",
        "tool/result",
        "assistant/message",
        "turn/end",
    ]
    first, second = rig.of("assistant/message")
    assert first["blocks"] == [
        {"type": "reasoning", "text": "inspect first"},
        {"type": "tool-call", "id": "call-1", "name": "echo", "arguments": "{}"},
    ]
    assert first["id"] != second["id"]
    call = rig.of("tool/call")[0]
    assert (call["callId"], call["name"], call["arguments"]) == ("call-1", "echo", "{}")
    result = rig.of("tool/result")[0]
    assert result["content"] == [{"type": "text", "text": "tool result"}]
    assert result["isError"] is False
    tool_request = next(r for r in server.requests if r.path == "/tools/call")
    assert tool_request.body == {"name": "echo", "callId": "call-1", "arguments": {}}
    # The second step's request carries the whole history in canonical form.
    assert server.streams()[1].body["messages"] == [
        {"role": "user", "content": GO},
        {"role": "assistant", "content": first["blocks"]},
        {
            "role": "tool",
            "toolCallId": "call-1",
            "isError": False,
            "content": [{"type": "text", "text": "tool result"}],
        },
    ]
    assert rig.asked == []  # approval "none" tools run directly


async def test_empty_effort_means_the_model_default(rig: Rig, server: ParityServer) -> None:
    server.script.append(text_response("x"))
    await rig.agent.run_turn(GO, Route("mock", "mock", ""))
    assert server.streams()[0].body["reasoningEffort"] == "high"


async def test_max_tokens(rig: Rig, server: ParityServer) -> None:
    server.script.append(max_tokens_response("cut short"))
    reason = await rig.agent.run_turn([{"type": "text", "text": "keep going"}], ROUTE)
    assert reason == {"kind": "max-tokens"}
    msg = rig.of("assistant/message")[0]
    assert msg["blocks"] == [{"type": "text", "text": "cut short"}]
    assert "usage" not in msg


async def test_provider_error_commits_nothing(rig: Rig, server: ParityServer) -> None:
    server.script.append(error_response("provider blew up"))
    reason = await rig.agent.run_turn([{"type": "text", "text": "boom"}], ROUTE)
    assert reason == {
        "kind": "error",
        "error": {"message": "provider blew up", "code": "PROVIDER_ERROR"},
    }
    assert rig.of("assistant/message") == []
    assert rig.of("turn/end")[0]["reason"] == reason


async def test_protocol_failure_ends_the_turn_with_its_text(rig: Rig, server: ParityServer) -> None:
    reason = await rig.agent.run_turn(GO, ROUTE)  # empty script -> 409
    assert reason == {
        "kind": "error",
        "error": {
            "message": "no script entry left",
            "code": "PARITY_PROTOCOL",
        },
    }


async def test_cancel_during_stream_commits_the_prefix(rig: Rig, server: ParityServer) -> None:
    server.script.append(HANG_AFTER_PARTIAL)
    turn = asyncio.create_task(rig.agent.run_turn([{"type": "text", "text": "hang"}], ROUTE))
    await asyncio.wait_for(server.hanging.wait(), 5)
    await asyncio.sleep(0.05)  # let the partial delta reach the agent
    assert rig.agent.running
    assert rig.agent.cancel() is True
    reason = await asyncio.wait_for(turn, 5)
    assert reason == {"kind": "aborted"}
    msg = rig.of("assistant/message")[0]
    assert msg["blocks"] == [{"type": "text", "text": "partial"}]
    assert rig.types()[-2:] == ["assistant/message", "turn/end"]
    await wait_for(lambda: server.streams()[0].aborted)
    assert not rig.agent.running
    assert rig.agent.cancel() is False


async def test_task_cancellation_also_aborts_and_propagates(rig: Rig, server: ParityServer) -> None:
    server.script.append(HANG_AFTER_PARTIAL)
    turn = asyncio.create_task(rig.agent.run_turn(GO, ROUTE))
    await asyncio.wait_for(server.hanging.wait(), 5)
    await asyncio.sleep(0.05)
    turn.cancel()
    with pytest.raises(asyncio.CancelledError):
        await asyncio.wait_for(turn, 5)
    assert rig.of("turn/end")[0]["reason"] == {"kind": "aborted"}
    await wait_for(lambda: server.streams()[0].aborted)


async def test_cancel_during_a_hanging_tool_resolves_promptly(
    rig: Rig, server: ParityServer
) -> None:
    server.tools["echo"] = "hang"
    server.script.append(
        [
            *tool_call_response("echo", "call-1", {}),
            {"type": "finish", "reason": {"kind": "tool-calls"}},
        ]
    )
    turn = asyncio.create_task(rig.agent.run_turn(GO, ROUTE))
    await asyncio.wait_for(server.hanging.wait(), 5)
    started = time.monotonic()
    rig.agent.cancel()
    reason = await asyncio.wait_for(turn, 5)
    assert time.monotonic() - started < 1.0
    assert reason == {"kind": "aborted"}
    assert rig.types()[-3:] == ["tool/call", "tool/result", "turn/end"]
    assert rig.of("tool/result")[0]["isError"] is True
    # Native's text for a fixture tool cancelled while running (tools/hang-cancelled).
    assert rig.of("tool/result")[0]["content"] == [
        {"type": "text", "text": "Error: [object Object]"}
    ]
    tool_request = next(r for r in server.requests if r.path == "/tools/call")
    await wait_for(lambda: tool_request.aborted)


async def test_approval_ask_tool_refused_gives_failed_result_and_no_call(
    rig: Rig, server: ParityServer
) -> None:
    server.catalog["tools"][0]["approval"] = "ask"
    rig.agent.tools = ToolRegistry(await fixture_tools(ParityStreamProvider(server.url)))
    rig.agent.approvals.responders.insert(0, _always("rejected"))
    server.script += [
        [
            *tool_call_response("echo", "call-1", {}),
            {"type": "finish", "reason": {"kind": "tool-calls"}},
        ],
        text_response("ok"),
    ]
    reason = await rig.agent.run_turn(GO, ROUTE)
    assert reason == {"kind": "completed"}
    assert rig.types()[3:8] == [
        "assistant/message",
        "tool/call",
        "approval/asked",
        "approval/decided",
        "tool/result",
    ]
    assert rig.of("approval/decided")[0]["outcome"] == "rejected"
    assert rig.of("tool/result")[0]["isError"] is True
    assert [r for r in server.requests if r.path == "/tools/call"] == []


async def test_approval_ask_tool_allowed_runs(rig: Rig, server: ParityServer) -> None:
    server.catalog["tools"][0]["approval"] = "ask"
    host = ParityStreamProvider(server.url)
    rig.agent.tools = ToolRegistry(await fixture_tools(host))
    server.tools["echo"] = {"content": [{"type": "text", "text": "ran"}], "isError": False}
    server.script += [
        [
            *tool_call_response("echo", "call-1", {}),
            {"type": "finish", "reason": {"kind": "tool-calls"}},
        ],
        text_response("ok"),
    ]
    await rig.agent.run_turn(GO, ROUTE)
    await host.aclose()
    assert [r.call_id for r in rig.asked] == ["call-1"]
    assert rig.of("approval/decided")[0]["outcome"] == "allowed-once"
    assert rig.of("tool/result")[0]["content"] == [{"type": "text", "text": "ran"}]


def _raw_call(index: int, call_id: str, name: str, arguments: str) -> list[dict[str, Any]]:
    block = {"type": "tool-call", "id": call_id, "name": name, "arguments": arguments}
    return [
        {"type": "block-start", "index": index, "blockType": "tool-call"},
        {"type": "block-end", "index": index, "block": block},
    ]


async def test_unknown_tool_and_bad_arguments_fail_the_call_not_the_turn(
    rig: Rig, server: ParityServer
) -> None:
    # Native's texts and order: the JSON round trip first (even for an unknown name),
    # then the name, then the shape an own tool needs.
    rig.agent.tools.register(_LocalTool("own", "return"))
    server.tools["echo"] = {"content": [{"type": "text", "text": "echoed"}], "isError": False}
    server.script += [
        [
            *tool_call_response("nope", "c1", {}),
            *_raw_call(1, "c2", "own", "[1]"),
            *_raw_call(2, "c3", "own", "not json"),
            *_raw_call(3, "c4", "nope", '{"x": -0.0}'),
            *_raw_call(4, "c5", "echo", "[1e400]"),
            *_raw_call(5, "c6", "echo", "not json"),
            *_raw_call(6, "c7", "echo", "[1]"),
            *_raw_call(7, "c8", "echo", "null"),
            {"type": "finish", "reason": {"kind": "tool-calls"}},
        ],
        text_response("ok"),
    ]
    assert await rig.agent.run_turn(GO, ROUTE) == {"kind": "completed"}
    results = [(r["content"][0]["text"], r["isError"]) for r in rig.of("tool/result")]
    assert results == [
        ('Error: unknown tool "nope"', True),
        ('Error: invalid arguments: "arguments" must be an object', True),
        ('Error: invalid arguments: "arguments" must be an object', True),
        ("Error: tool execution arguments must be losslessly JSON-serializable", True),
        ("Error: tool execution arguments must be losslessly JSON-serializable", True),
        ("echoed", False),
        ("echoed", False),
        ("echoed", False),
    ]
    # A catalog tool gets what the model wrote; null reads as {} (the DSH plugin's body).
    sent = [r.body["arguments"] for r in server.requests if r.path == "/tools/call"]
    assert sent == ["not json", [1], {}]


@pytest.mark.parametrize(
    ("raw", "value"),
    [
        ("", {}),
        ("   ", "   "),  # JSON.parse("   ") throws: the text itself, as native keeps it
        ("not json", "not json"),
        ("[1, 2]", [1, 2]),
        ("null", None),
        ('{"n": 1.0, "big": 9007199254740993}', {"n": 1, "big": 9007199254740992}),
    ],
)
def test_arguments_are_read_as_native_reads_them(raw: str, value: Any) -> None:
    parsed = parse_arguments(raw)
    assert parsed == value
    assert type(parsed) is type(value)


async def test_second_turn_numbering_route_change_and_busy_guard(
    rig: Rig, server: ParityServer
) -> None:
    server.script += [text_response("a"), HANG_AFTER_PARTIAL]
    await rig.agent.run_turn(GO, ROUTE)
    second = asyncio.create_task(rig.agent.run_turn(GO, Route("mock", "mock", "low", True)))
    await asyncio.wait_for(server.hanging.wait(), 5)
    with pytest.raises(TurnInProgress):
        await rig.agent.run_turn(GO, ROUTE)
    rig.agent.cancel()
    await second
    assert [e["turn"] for e in rig.of("turn/start")] == [1, 2]
    routes = rig.of("route/set")
    assert [(r["effort"], r["explicitEffort"]) for r in routes] == [(None, False), ("low", True)]
    assert server.streams()[1].body["reasoningEffort"] == "low"


async def test_settle_interrupted_closes_a_crashed_turn(tmp_path: Path) -> None:
    store = SessionStore(tmp_path)
    log = store.create(str(tmp_path))
    log.append({"type": "turn/start", "turn": 1})
    seen: list[dict[str, Any]] = []
    agent = Agent(
        store.open(log.id), Router([]), ToolRegistry(), ApprovalChain(), tmp_path, seen.append
    )
    ended = agent.settle_interrupted()
    assert ended is not None and ended["reason"] == {"kind": "interrupted"}
    assert agent.settle_interrupted() is None
    assert seen == [ended]


def _always(outcome: ApprovalOutcome) -> Any:
    async def responder(req: ApprovalRequest) -> ApprovalOutcome:
        return outcome

    return responder


class _LocalTool:
    """A tool defined in the test, to misbehave on purpose."""

    description = "test tool"
    parameters: ClassVar[dict[str, Any]] = {"type": "object", "properties": {}}

    def __init__(self, name: str, behaviour: str):
        self.name = name
        self.behaviour = behaviour
        self.started = asyncio.Event()
        self.finished = asyncio.Event()

    def approval_reason(self, args: dict[str, Any], ctx: ToolContext) -> str | None:
        return None

    async def run(self, args: dict[str, Any], ctx: ToolContext) -> ToolResult:
        self.started.set()
        try:
            if self.behaviour == "hang":
                await asyncio.sleep(3600)
            if self.behaviour == "swallow":
                # Catches the cancellation once and returns as if nothing happened.
                try:
                    await asyncio.sleep(3600)
                except asyncio.CancelledError:
                    return ToolResult.text("swallowed")
            # "stubborn": ignores cancellation for a while.
            deadline = time.monotonic() + 1.0
            while time.monotonic() < deadline:
                with contextlib.suppress(asyncio.CancelledError):
                    await asyncio.sleep(0.05)
            return ToolResult.text("too late")
        finally:
            self.finished.set()


def _call_step(name: str) -> list[dict[str, Any]]:
    return [
        *tool_call_response(name, "call-1", {}),
        {"type": "finish", "reason": {"kind": "tool-calls"}},
    ]


async def test_a_tool_that_swallows_cancellation_still_ends_the_turn(
    rig: Rig, server: ParityServer
) -> None:
    tool = _LocalTool("swallow", "swallow")
    rig.agent.tools.register(tool)
    server.script += [_call_step("swallow"), text_response("should not be requested")]
    turn = asyncio.create_task(rig.agent.run_turn(GO, ROUTE))
    await asyncio.wait_for(tool.started.wait(), 5)
    rig.agent.cancel()
    assert await asyncio.wait_for(turn, 5) == {"kind": "aborted"}
    assert len(server.streams()) == 1


async def test_a_built_in_tool_cancelled_while_running_reads_as_natives_abort(
    rig: Rig, server: ParityServer
) -> None:
    """Native's registry text for a body that ends on the abort (a `bash` it killed)."""
    tool = _LocalTool("hang", "hang")
    rig.agent.tools.register(tool)
    server.script.append(_call_step("hang"))
    turn = asyncio.create_task(rig.agent.run_turn(GO, ROUTE))
    await asyncio.wait_for(tool.started.wait(), 5)
    rig.agent.cancel()
    assert await asyncio.wait_for(turn, 5) == {"kind": "aborted"}
    [result] = rig.of("tool/result")
    assert (result["content"], result["isError"]) == (
        [{"type": "text", "text": "Error: tool call aborted"}],
        True,
    )


async def test_a_tool_that_ignores_cancellation_is_abandoned_after_the_grace(
    rig: Rig, server: ParityServer
) -> None:
    rig.agent.cancel_grace = 0.2
    tool = _LocalTool("stubborn", "stubborn")
    rig.agent.tools.register(tool)
    server.script += [_call_step("stubborn"), text_response("next turn")]
    turn = asyncio.create_task(rig.agent.run_turn(GO, ROUTE))
    await asyncio.wait_for(tool.started.wait(), 5)
    started = time.monotonic()
    rig.agent.cancel()
    assert await asyncio.wait_for(turn, 5) == {"kind": "aborted"}
    assert time.monotonic() - started < 0.8
    assert not rig.agent.running
    ended = len(rig.seen)
    await asyncio.wait_for(tool.finished.wait(), 5)
    await asyncio.sleep(0.05)
    # The abandoned task's late tool/result never reaches the log.
    assert len(rig.seen) == ended
    assert rig.types()[-1] == "turn/end"
    assert await rig.agent.run_turn(GO, ROUTE) == {"kind": "completed"}


async def test_steered_content_joins_the_running_turn_at_the_next_step(
    rig: Rig, server: ParityServer
) -> None:
    server.catalog["tools"][0]["approval"] = "ask"
    host = ParityStreamProvider(server.url)
    rig.agent.tools = ToolRegistry(await fixture_tools(host))
    server.tools["echo"] = {"content": [{"type": "text", "text": "r"}], "isError": False}
    steer = [{"type": "text", "text": "also do this"}]
    assert rig.agent.steer(steer) is False  # idle: nothing to steer

    async def steering(req: ApprovalRequest) -> ApprovalOutcome | None:
        assert rig.agent.steer(steer) is True
        return None

    rig.agent.approvals.responders.insert(0, steering)
    server.script += [_call_step("echo"), text_response("ok")]
    await rig.agent.run_turn(GO, ROUTE)
    await host.aclose()
    users = rig.of("user/message")
    assert [u["content"] for u in users] == [GO, steer]
    assert users[1]["turn"] == 1
    assert server.streams()[1].body["messages"][-1] == {"role": "user", "content": steer}


async def test_cancel_while_an_approval_is_pending(rig: Rig, server: ParityServer) -> None:
    server.catalog["tools"][0]["approval"] = "ask"
    host = ParityStreamProvider(server.url)
    rig.agent.tools = ToolRegistry(await fixture_tools(host))
    pending = asyncio.Event()

    async def never_answers(req: ApprovalRequest) -> ApprovalOutcome | None:
        pending.set()
        await asyncio.sleep(3600)
        return None

    rig.agent.approvals.responders.insert(0, never_answers)
    server.script.append(_call_step("echo"))
    turn = asyncio.create_task(rig.agent.run_turn(GO, ROUTE))
    await asyncio.wait_for(pending.wait(), 5)
    rig.agent.cancel()
    assert await asyncio.wait_for(turn, 5) == {"kind": "aborted"}
    await host.aclose()
    assert rig.types()[-5:] == [
        "tool/call",
        "approval/asked",
        "approval/decided",
        "tool/result",
        "turn/end",
    ]
    assert rig.of("approval/decided")[0]["outcome"] == "cancelled"
    assert rig.of("tool/result")[0]["isError"] is True
    # Native's text, seen live (scenarios/tools/cancel-permission-pending).
    assert rig.of("tool/result")[0]["content"] == [
        {"type": "text", "text": "Error: tool call aborted before dispatch"}
    ]
    assert [r for r in server.requests if r.path == "/tools/call"] == []


async def test_a_repeat_reminder_waits_for_the_rest_of_its_step(
    server: ParityServer, tmp_path: Path
) -> None:
    """The reminder tripped by the first call of a two-call step follows both results, as
    native queues it for the next step boundary (scenarios/context/repeat-reminder-mid-step:
    committed at once, it split the step and the second call read as cancelled)."""
    server.catalog["tools"] = [
        {"name": "alpha", "description": "a", "parameters": {"type": "object"}},
    ]
    provider = ParityStreamProvider(server.url)
    router = Router([provider])
    log = SessionStore(tmp_path / "home").create(str(tmp_path))
    tools = ToolRegistry(await fixture_tools(provider))
    agent = Agent(log, router, tools, ApprovalChain([]), tmp_path, lambda event: None)
    call = [{"type": "finish", "reason": {"kind": "tool-calls"}}]
    server.script += [
        [*tool_call_response("alpha", "c1", {"q": 1}), *call],
        [*tool_call_response("alpha", "c2", {"q": 1}), *call],
        [
            *tool_call_response("alpha", "c3", {"q": 1}),
            *tool_call_response("alpha", "c4", {}, index=1),
            *call,
        ],
        text_response("done"),
    ]
    try:
        await agent.run_turn(GO, ROUTE)
    finally:
        await router.aclose()
    last = server.streams()[-1].body["messages"]
    assert [(m["role"], m.get("toolCallId")) for m in last[-4:]] == [
        ("assistant", None),
        ("tool", "c3"),
        ("tool", "c4"),
        ("user", None),
    ]
    assert last[-2]["content"] == last[-3]["content"]  # c4's own result, not "cancelled"
    assert last[-1]["content"][0]["text"].startswith("You are repeating the exact same")


async def test_the_model_view_has_context_sorted_tools_and_native_refusals(
    server: ParityServer, tmp_path: Path
) -> None:
    """What acp-plus adds for the model (docs/native.md, "The model's view"): the
    system prompt, the instructions and the runtime context after the first prompt only,
    the session id, tools sorted by name, native's refusal text, the repeat reminder."""
    from acp_plus.core.context import ContextSettings

    (tmp_path / "AGENTS.md").write_text("be brief\n")
    server.catalog["tools"] = [
        {"name": "zeta", "description": "z", "parameters": {"type": "object"}, "approval": "ask"},
        {"name": "alpha", "description": "a", "parameters": {"type": "object"}},
    ]
    provider = ParityStreamProvider(server.url)
    router = Router([provider])
    log = SessionStore(tmp_path / "home").create(str(tmp_path))
    context = ContextSettings(home=tmp_path / "home").for_session(str(tmp_path), "read-only")
    agent = Agent(
        log,
        router,
        ToolRegistry(await fixture_tools(provider)),
        ApprovalChain([_always("rejected")]),
        tmp_path,
        lambda event: None,
        context=context,
    )
    call = [{"type": "finish", "reason": {"kind": "tool-calls"}}]
    server.script += [
        [*tool_call_response("zeta", "c1", {"q": 1}), *call],
        [*tool_call_response("zeta", "c2", {"q": 1}), *call],
        [*tool_call_response("zeta", "c3", {"q": 1}), *call],
        text_response("done"),
        text_response("again"),
    ]
    try:
        await agent.run_turn(GO, ROUTE)
        await agent.run_turn([{"type": "text", "text": "more"}], ROUTE)
    finally:
        await router.aclose()
    first, last = server.streams()[0].body, server.streams()[-1].body
    assert first["sessionId"] == log.id
    assert first["system"].startswith("You are an AI agent powered by DeepSeek Harness.\n\n")
    assert [t["name"] for t in first["tools"]] == ["alpha", "zeta"]
    texts = [str(m["content"][0].get("text", m["content"][0]["type"])) for m in last["messages"]]
    assert texts[0] == "go"
    assert texts[1].startswith("<system-reminder>") and "be brief" in texts[1]
    assert texts[2].startswith("Current runtime context.") and "read-only" in texts[2]
    assert texts.count(texts[2]) == 1  # not repeated at the second turn
    # prompt, instructions, context, then three (call, refusal) pairs, then the reminder
    assert texts[3:9] == ["tool-call", 'Error: the user rejected tool "zeta"'] * 3
    assert texts[9].startswith("You are repeating the exact same tool call")
    assert texts[-1] == "more"
    sources = [e.get("source") for e in log.events() if e["type"] == "user/message"]
    assert sources == [None, "workspace-instructions", "runtime-context", "repeat-reminder", None]


@pytest.mark.parametrize("keep_inbox", [False, True])
async def test_cancel_drops_what_waits_in_the_inbox_unless_told_to_keep_it(
    rig: Rig, server: ParityServer, keep_inbox: bool
) -> None:
    # Native's cancel clears the inbox (session/cancel); interrupt_agent keeps it.
    server.catalog["tools"][0]["approval"] = "ask"
    host = ParityStreamProvider(server.url)
    rig.agent.tools = ToolRegistry(await fixture_tools(host))
    steer = [{"type": "text", "text": "also do this"}]
    pending = asyncio.Event()

    async def steer_then_wait(req: ApprovalRequest) -> ApprovalOutcome | None:
        rig.agent.steer(steer)
        pending.set()
        await asyncio.sleep(3600)
        return None

    rig.agent.approvals.responders.insert(0, steer_then_wait)
    server.script += [_call_step("echo"), text_response("next")]
    turn = asyncio.create_task(rig.agent.run_turn(GO, ROUTE))
    await asyncio.wait_for(pending.wait(), 5)
    rig.agent.cancel(keep_inbox=keep_inbox)
    assert await asyncio.wait_for(turn, 5) == {"kind": "aborted"}
    await rig.agent.run_turn(GO, ROUTE)
    await host.aclose()
    carried = [u["content"] for u in rig.of("user/message") if u["turn"] == 2]
    assert carried == ([steer, GO] if keep_inbox else [GO])


class _PreStepWork:
    """A tool whose context before each step (as the skill catalog's) awaits `work`."""

    name = "pre_step"
    description = "Never called."
    parameters: ClassVar[dict[str, Any]] = {"type": "object"}

    def __init__(self, work: Callable[[int], Awaitable[None]]) -> None:
        self.work = work
        self.steps = 0

    def approval_reason(self, args: dict[str, Any], ctx: ToolContext) -> str | None:
        return None

    async def run(self, args: dict[str, Any], ctx: ToolContext) -> ToolResult:
        raise AssertionError("not called")

    async def step_context(self, events: Any, cwd: Path, turn: int) -> list[Any]:
        self.steps += 1
        await self.work(self.steps)
        return []


async def test_a_notice_arriving_during_the_pre_step_work_waits_for_the_next_step(
    rig: Rig, server: ParityServer
) -> None:
    # Native's pre-step claims the inbox before its own work (the skill catalog, the
    # hooks): what arrives meanwhile (a job's notice) is the next step's.
    notice = [{"type": "text", "text": "background job finished"}]

    async def notice_arrives(step: int) -> None:
        if step == 1:
            await asyncio.sleep(0)
            assert rig.agent.steer(notice, "job-notice") is True

    host = ParityStreamProvider(server.url)
    rig.agent.tools = ToolRegistry([*await fixture_tools(host), _PreStepWork(notice_arrives)])
    server.tools["echo"] = {"content": [{"type": "text", "text": "r"}], "isError": False}
    server.script += [_call_step("echo"), text_response("ok")]
    assert await rig.agent.run_turn(GO, ROUTE) == {"kind": "completed"}
    await host.aclose()
    first, second = (s.body["messages"] for s in server.streams())
    assert {"role": "user", "content": notice} not in first
    assert second[-1] == {"role": "user", "content": notice}


@pytest.mark.parametrize("keep_inbox", [False, True])
async def test_a_cancel_during_the_pre_step_work_keeps_the_claimed_input_only_if_told(
    rig: Rig, server: ParityServer, keep_inbox: bool
) -> None:
    steer = [{"type": "text", "text": "also do this"}]
    working = asyncio.Event()

    async def steer_then_block(step: int) -> None:
        if step == 1:
            rig.agent.steer(steer)  # claimed by step 2, which then blocks
        else:
            working.set()
            await asyncio.sleep(3600)

    host = ParityStreamProvider(server.url)
    blocking = _PreStepWork(steer_then_block)
    rig.agent.tools = ToolRegistry([*await fixture_tools(host), blocking])
    server.tools["echo"] = {"content": [{"type": "text", "text": "r"}], "isError": False}
    server.script += [_call_step("echo"), text_response("next")]
    turn = asyncio.create_task(rig.agent.run_turn(GO, ROUTE))
    await asyncio.wait_for(working.wait(), 5)
    rig.agent.cancel(keep_inbox=keep_inbox)
    assert await asyncio.wait_for(turn, 5) == {"kind": "aborted"}
    blocking.work = lambda step: asyncio.sleep(0)
    await rig.agent.run_turn(GO, ROUTE)
    await host.aclose()
    carried = [u["content"] for u in rig.of("user/message") if u["turn"] == 2]
    assert carried == ([steer, GO] if keep_inbox else [GO])
