"""M2 `session/load` (docs/contract.md §6.1) through real acp-plus processes.

A turn in one process, a load in the next: the load replays what was sent live (plus the
user's own prompts, docs/contract-notes.md "session/load"), one current usage reading
after, then the session is live and the model sees its history. The gates, the refusals
and the three places where acp-plus does better than the reference (user prompts
replayed, the lock taken before replaying, a prompt during the load waiting for it).
"""

from __future__ import annotations

import asyncio
import base64
import copy
from pathlib import Path
from typing import Any, cast

import pytest
from acp import PROTOCOL_VERSION, text_block
from plus_agent import ECHO, RawAgent, World, WorldFactory, log_events, raw_agent, sdk_agent

from acp_plus.config import build
from acp_plus.core.llm.base import Router
from acp_plus.errors import RpcError
from acp_plus.features.session_load import NOT_ENABLED
from acp_plus.rpc import RequestContext
from acp_plus.server.methods import Server
from parity.scenario.model import DEFAULT_CATALOG

TOOL_TURN = [
    {
        "reasoning": "inspect first",
        "tool_calls": [{"id": "call-1", "name": "echo", "arguments": {}}],
        "usage": {"input": 8, "output": 2, "reasoning": 1},
    },
    {"text": "done", "usage": {"input": 5, "output": 4}},
]


def dump(model: Any) -> Any:
    return model.model_dump(mode="json", by_alias=True, exclude_unset=True)


def history_updates(updates: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The updates that tell the conversation: the command list (§6.4) is session state,
    sent after every new/resume/load, not history."""
    return [u for u in updates if u["sessionUpdate"] != "available_commands_update"]


def user_message_ids(w: World, session_id: str) -> list[str]:
    """The ids of the user's own prompts in the log (context messages carry a source)."""
    return [
        e["id"]
        for e in log_events(w.home, session_id)
        if e["type"] == "user/message" and "source" not in e
    ]


async def test_load_replays_the_live_sequence_after_a_restart(world: WorldFactory) -> None:
    w = world(
        llm=[*TOOL_TURN, {"text": "second answer", "usage": {"input": 30, "output": 5}}],
        tools=[ECHO],
    )
    async with sdk_agent(w) as first:
        await first.conn.initialize(protocol_version=PROTOCOL_VERSION)
        new = await first.conn.new_session(cwd=str(w.workdir), mcp_servers=[])
        sid = new.session_id
        await first.conn.prompt(session_id=sid, prompt=[text_block("first question")])
    live = history_updates(first.client.updates)
    kinds = [u["sessionUpdate"] for u in live]
    assert kinds == [
        "agent_thought_chunk",
        "usage_update",
        "tool_call",
        "tool_call_update",
        "agent_message_chunk",
        "usage_update",
    ]
    events = log_events(w.home, sid)
    # The log holds model context the agent added (runtime context): replay must not
    # show it as a prompt, so this test can only pass if it really is skipped.
    assert any(e["type"] == "user/message" and "source" in e for e in events), events
    (prompt_id,) = user_message_ids(w, sid)

    async with sdk_agent(w) as second:
        init = dump(await second.conn.initialize(protocol_version=PROTOCOL_VERSION))
        assert init["agentCapabilities"]["loadSession"] is True
        loaded = dump(await second.conn.load_session(cwd=str(w.workdir), session_id=sid))
        replayed = history_updates(second.client.updates)
        result = dump(
            await second.conn.prompt(session_id=sid, prompt=[text_block("second question")])
        )
    # The user's prompt first (with its own message id), then exactly what was sent live
    # without its historical usage, then one current reading: the live turn's last one.
    assert replayed == [
        {
            "sessionUpdate": "user_message_chunk",
            "messageId": prompt_id,
            "content": {"type": "text", "text": "first question"},
        },
        *[u for u in live if u["sessionUpdate"] != "usage_update"],
        live[-1],
    ]
    assert "configOptions" in loaded
    assert result == {"stopReason": "end_turn"}
    # The loaded session is live: the model sees the whole history before the new prompt.
    history = [m for m in w.model_requests()[-1]["messages"] if not _is_context(m)]
    assert history == [
        {"role": "user", "content": [{"type": "text", "text": "first question"}]},
        {
            "role": "assistant",
            "content": [
                {"type": "reasoning", "text": "inspect first"},
                {"type": "tool-call", "id": "call-1", "name": "echo", "arguments": "{}"},
            ],
        },
        {
            "role": "tool",
            "toolCallId": "call-1",
            "isError": False,
            "content": [{"type": "text", "text": "tool result"}],
        },
        {"role": "assistant", "content": [{"type": "text", "text": "done"}]},
        {"role": "user", "content": [{"type": "text", "text": "second question"}]},
    ]

    # list and resume keep working across restarts, and resume still replays nothing.
    async with sdk_agent(w) as third:
        await third.conn.initialize(protocol_version=PROTOCOL_VERSION)
        listed = dump(await third.conn.list_sessions(cwd=str(w.workdir)))
        assert [s["sessionId"] for s in listed["sessions"]] == [sid]
        resumed = dump(await third.conn.resume_session(session_id=sid, cwd=str(w.workdir)))
        assert "configOptions" in resumed
        await asyncio.sleep(0.2)
        assert history_updates(third.client.updates) == []


def _is_context(message: dict[str, Any]) -> bool:
    # Runtime context and workspace instructions are user-role messages the agent adds.
    texts = [b.get("text", "") for b in message.get("content", []) if isinstance(b, dict)]
    return message["role"] == "user" and any(
        t.startswith(("Current runtime context.", "<system-reminder>")) for t in texts
    )


async def _new_session_with_turn(agent: RawAgent, w: World, text: str = "hi") -> str:
    new = await agent.call("session/new", {"cwd": str(w.workdir), "mcpServers": []})
    sid: str = new["result"]["sessionId"]
    params = {"sessionId": sid, "prompt": [{"type": "text", "text": text}]}
    assert (await agent.call("session/prompt", params, timeout=15))["result"] == {
        "stopReason": "end_turn"
    }
    return sid


def _load(sid: str, cwd: str) -> dict[str, Any]:
    return {"sessionId": sid, "cwd": cwd, "mcpServers": []}


async def test_load_refusals_use_the_contract_texts(world: WorldFactory) -> None:
    w = world(llm=[{"text": "hello"}])
    other = w.workdir.parent / "elsewhere"
    other.mkdir()
    async with raw_agent(w) as agent:
        await agent.call("initialize", {"protocolVersion": 1})
        sid = await _new_session_with_turn(agent, w)
        cwd = str(w.workdir)
        missing = "0b6c2f2e-5a4e-4f5e-9a55-3d6f0f1e2a3b"
        cases = [
            (_load(sid, cwd), f"session is already active: {sid}"),
            (_load(missing, cwd), f"session is not loadable: {missing}"),
            (_load("../../etc/passwd", cwd), "session is not loadable: ../../etc/passwd"),
            (_load(sid, "relative"), "cwd must be an absolute path: relative"),
        ]
        for params, detail in cases:
            response = await agent.call("session/load", params)
            assert response["error"] == {"code": -32602, "message": f"Invalid params: {detail}"}
        await agent.call("session/close", {"sessionId": sid})
        frame, before = await agent.until_response(
            await agent.request("session/load", _load(sid, str(other)))
        )
        assert frame["error"]["message"] == f"Invalid params: session cwd does not match: {other}"
        assert before == []  # refused before replaying anything


async def test_gate_off_and_native_profile(world: WorldFactory) -> None:
    params = _load("0b6c2f2e-5a4e-4f5e-9a55-3d6f0f1e2a3b", "/tmp")
    w = world(extra_config="enable_session_load = false\n")
    async with raw_agent(w) as agent:
        init = await agent.call("initialize", {"protocolVersion": 1})
        assert "loadSession" not in init["result"]["agentCapabilities"]
        # Registered but off: the gate's own text, -32602 (§6.1), not -32601.
        response = await agent.call("session/load", params)
        assert response["error"] == {"code": -32602, "message": f"Invalid params: {NOT_ENABLED}"}

    w = world(profile="native")
    async with raw_agent(w) as agent:
        init = await agent.call("initialize", {"protocolVersion": 1})
        assert "loadSession" not in init["result"]["agentCapabilities"]
        response = await agent.call("session/load", params)
        assert response["error"] == {
            "code": -32601,
            "message": '"Method not found": session/load',
            "data": {"method": "session/load"},
        }


async def test_a_session_live_elsewhere_is_refused_before_any_replay(
    world: WorldFactory,
) -> None:
    w = world(llm=[{"text": "hello", "usage": {"input": 5, "output": 5}}])
    async with raw_agent(w) as holder, raw_agent(w) as loader:
        await holder.call("initialize", {"protocolVersion": 1})
        sid = await _new_session_with_turn(holder, w)
        await loader.call("initialize", {"protocolVersion": 1}, timeout=15)
        frame, before = await loader.until_response(
            await loader.request("session/load", _load(sid, str(w.workdir))), timeout=15
        )
        assert frame["error"] == {
            "code": -32602,
            "message": f"Invalid params: session is already active: {sid}",
        }
        # The reference replays first and fails after; acp-plus claims the lock first.
        assert before == []
        # The refused load left no claim behind: once the holder closes, a load works.
        await holder.call("session/close", {"sessionId": sid})
        frame, before = await loader.until_response(
            await loader.request("session/load", _load(sid, str(w.workdir))), timeout=15
        )
        assert "result" in frame, frame
        assert [f["params"]["update"]["sessionUpdate"] for f in before] == [
            "user_message_chunk",
            "agent_message_chunk",
            "usage_update",
            "available_commands_update",  # a load's command list precedes its answer
        ]


async def test_a_prompt_sent_during_the_load_waits_for_it(world: WorldFactory) -> None:
    w = world(llm=[{"text": "first"}, {"text": "second"}])
    async with raw_agent(w) as agent:
        await agent.call("initialize", {"protocolVersion": 1})
        sid = await _new_session_with_turn(agent, w, "one")
    async with raw_agent(w) as agent:
        await agent.call("initialize", {"protocolVersion": 1})
        load_id = await agent.request("session/load", _load(sid, str(w.workdir)))
        prompt_id = await agent.request(
            "session/prompt", {"sessionId": sid, "prompt": [{"type": "text", "text": "two"}]}
        )
        frames = []
        while not any(f.get("id") == prompt_id for f in frames):
            frames.append(await agent.recv(timeout=15))
    ids = [f.get("id") for f in frames if "method" not in f]
    assert ids == [load_id, prompt_id]
    prompt_response = next(f for f in frames if f.get("id") == prompt_id)
    assert prompt_response["result"] == {"stopReason": "end_turn"}, prompt_response
    # The load's answer comes before any update of the prompt's turn.
    load_at = next(i for i, f in enumerate(frames) if f.get("id") == load_id)
    second_chunk = next(
        i
        for i, f in enumerate(frames)
        if f.get("method") == "session/update"
        and f["params"]["update"].get("content", {}).get("text") == "second"
    )
    assert load_at < second_chunk


class _Conn:
    """A connection stand-in that records notifications; `$/cancel_request` lands after
    the first one, as it would while a long replay is being written."""

    def __init__(self, ctx: RequestContext) -> None:
        self.sent: list[dict[str, Any]] = []
        self.closed = False
        self.closes = False
        """Instead of the abort: the client goes away after the first notification."""
        self._ctx = ctx

    async def notify(self, method: str, params: Any) -> None:
        self.sent.append(params)
        if self.closes:
            self.closed = True
        else:
            self._ctx.aborted.set()


async def test_a_request_abort_stops_the_replay_between_events(tmp_path: Path) -> None:
    from acp_plus.core.attachments import AttachmentStore
    from acp_plus.core.store import SessionStore
    from acp_plus.rpc import REQUEST_CANCELLED, Connection
    from acp_plus.runtime import Runtime

    store = SessionStore(tmp_path)
    log = store.create("/w")
    for n in range(3):
        block = {"type": "text", "text": f"answer {n}"}
        log.append({"type": "assistant/message", "id": f"a{n}", "turn": n + 1, "blocks": [block]})
    runtime = Runtime(cast(Router, None), [], store, AttachmentStore(tmp_path / "attachments"))
    server = Server(build({"profile": "plus"}, tmp_path))
    ctx = RequestContext(1)
    conn = _Conn(ctx)
    server.attach(cast(Connection, conn))
    session = server._make_session(log.id, "/w", runtime)
    with pytest.raises(RpcError) as raised:
        await server._replay(session, log.events(), runtime, ctx)
    assert raised.value.code == REQUEST_CANCELLED
    # One event's updates went out; the abort was seen before the next event.
    assert conn.sent == [
        {
            "sessionId": log.id,
            "update": {
                "sessionUpdate": "agent_message_chunk",
                "messageId": "a0",
                "content": {"type": "text", "text": "answer 0"},
            },
        }
    ]


async def test_a_prompt_image_replays_from_the_attachment_store(world: WorldFactory) -> None:
    png = base64.b64decode(
        "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg=="
    )
    catalog = copy.deepcopy(DEFAULT_CATALOG)
    catalog["providers"][0]["models"][0]["inputModalities"] = ["text", "image"]
    w = world(llm=[{"text": "a dot"}], catalog=catalog)
    data = base64.b64encode(png).decode("ascii")
    prompt = [
        {"type": "text", "text": "what is "},
        {"type": "text", "text": "this?"},
        {"type": "image", "mimeType": "image/png", "data": data},
    ]
    async with raw_agent(w) as agent:
        await agent.call("initialize", {"protocolVersion": 1})
        new = await agent.call("session/new", {"cwd": str(w.workdir), "mcpServers": []})
        sid = new["result"]["sessionId"]
        done = await agent.call("session/prompt", {"sessionId": sid, "prompt": prompt}, 15)
        assert done["result"] == {"stopReason": "end_turn"}
    (prompt_id,) = user_message_ids(w, sid)
    async with raw_agent(w) as agent:
        await agent.call("initialize", {"protocolVersion": 1})
        frame, before = await agent.until_response(
            await agent.request("session/load", _load(sid, str(w.workdir))), timeout=15
        )
    assert "result" in frame, frame
    chunks = [f["params"]["update"] for f in before][:2]
    # The admitted prompt (text blocks joined, §5), the image read back by its digest.
    assert chunks == [
        {
            "sessionUpdate": "user_message_chunk",
            "messageId": prompt_id,
            "content": {"type": "text", "text": "what is this?"},
        },
        {
            "sessionUpdate": "user_message_chunk",
            "messageId": prompt_id,
            "content": {"type": "image", "data": data, "mimeType": "image/png"},
        },
    ]


async def test_a_client_gone_mid_replay_ends_the_load(tmp_path: Path) -> None:
    from acp_plus.core.attachments import AttachmentStore
    from acp_plus.core.store import SessionStore
    from acp_plus.rpc import Connection
    from acp_plus.runtime import Runtime

    store = SessionStore(tmp_path)
    log = store.create("/w")
    for n in range(2):
        block = {"type": "text", "text": f"answer {n}"}
        log.append({"type": "assistant/message", "id": f"a{n}", "turn": n + 1, "blocks": [block]})
    runtime = Runtime(cast(Router, None), [], store, AttachmentStore(tmp_path / "attachments"))
    server = Server(build({}, tmp_path))
    conn = _Conn(RequestContext(1))
    conn.closes = True
    server.attach(cast(Connection, conn))
    session = server._make_session(log.id, "/w", runtime)
    with pytest.raises(RpcError) as raised:
        await server._replay(session, log.events(), runtime, RequestContext(2))
    assert raised.value.to_json() == {
        "code": -32603,
        "message": "Internal error: connection closed during session/load",
    }
    assert len(conn.sent) == 1
