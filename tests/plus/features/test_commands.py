"""M5 slash commands (docs/contract.md §6.4): the command list after new/resume and on
change, `/help`, `/status`, `/mode`, no model turn, and what stays an ordinary prompt."""

from __future__ import annotations

import asyncio
from typing import Any

from feature_support import exchange, kinds, open_session, prompt, texts, updates
from plus_agent import WorldFactory, log_events, raw_agent

from acp_plus.core.token_meter import request_tokens, used
from acp_plus.features import commands
from parity.scenario.model import Tool

REGISTRY = commands.registry("default")


def _text(text: str) -> list[dict[str, Any]]:
    return [{"type": "text", "text": text}]


# -- pure ---------------------------------------------------------------------------------


def test_the_grammar_finds_registered_names_only() -> None:
    line = commands.parse(_text("  \u00a0/mode   plan  "), REGISTRY)
    assert line == commands.CommandLine("mode", "   plan  ")
    assert line is not None and line.text == "/mode   plan  "
    # Joined blocks count as one line.
    assert commands.parse(_text("/sta") + _text("tus"), REGISTRY) == commands.CommandLine(
        "status", ""
    )
    for ordinary in (
        "/etc/hosts looks wrong",  # a path: `/etc` is followed by `/`, not whitespace
        "/helpme",
        "/unknown thing",
        "help",
        "x /help",
        "/",
        "",
    ):
        assert commands.parse(_text(ordinary), REGISTRY) is None, ordinary
    image = {"type": "image", "mimeType": "image/png", "data": ""}
    assert commands.parse([*_text("/help"), image], REGISTRY) is None
    assert commands.parse([], REGISTRY) is None
    assert commands.parse("not blocks", REGISTRY) is None


def test_the_list_names_the_current_mode() -> None:
    listed = commands.available_commands(commands.registry("plan"))
    assert [c["name"] for c in listed] == ["help", "status", "mode"]
    assert listed[2] == {
        "name": "mode",
        "description": "Switch the session mode: default or plan (now plan).",
        "input": {"hint": "default | plan"},
    }
    assert "input" not in listed[0]
    assert commands.available_commands(commands.registry("default")) != listed


def test_status_and_mode_texts() -> None:
    status = commands.Status(
        model="Mock Reasoner (mock/mock)",
        effort="",
        mode="plan",
        sandbox="read-only",
        roots=("/w", "/extra"),
        used_tokens=256,
        context_window=1024,
    )
    assert commands.status_text(status) == (
        "Model: Mock Reasoner (mock/mock)\nReasoning effort: provider default\nMode: plan\n"
        "Sandbox: read-only\nRoots: /w, /extra\nContext: 256 of 1024 tokens (25%)"
    )
    bare = commands.Status(None, None, "default", "workspace-write", ("/w",), 7, None)
    assert commands.status_text(bare).splitlines()[::5] == [
        "Model: none configured",
        "Context: 7 tokens (context window unknown)",
    ]
    assert commands.mode_choice(" plan ", "default") == commands.ModeChoice(
        "plan", "Mode: plan. Research and present a plan before making changes."
    )
    assert commands.mode_choice("", "plan").target is None
    assert commands.mode_choice("plan", "plan").text == "Mode: plan (unchanged)."
    assert (
        commands.mode_choice("fast", "plan").text == "Unknown mode: fast. Available: default, plan."
    )


# -- through the real process -------------------------------------------------------------


async def test_the_command_list_comes_with_new_and_resume(world: WorldFactory) -> None:
    w = world()
    async with raw_agent(w) as agent:
        await agent.call("initialize", {"protocolVersion": 1})
        msg_id = await agent.request("session/new", {"cwd": str(w.workdir), "mcpServers": []})
        new, before = await agent.until_response(msg_id)
        # Never before the answer: a client does not know the session id until then.
        assert before == []
        follow = await agent.recv()
        session_id = new["result"]["sessionId"]
        assert follow["params"] == {
            "sessionId": session_id,
            "update": commands.available_commands_update(REGISTRY),
        }
        await agent.call("session/close", {"sessionId": session_id})
        msg_id = await agent.request(
            "session/resume", {"sessionId": session_id, "cwd": str(w.workdir), "mcpServers": []}
        )
        _, before = await agent.until_response(msg_id)
        # The client named the session: the list comes just before the answer, so it
        # cannot race the client's next request about it.
        assert kinds(before) == ["available_commands_update"]


async def test_help_status_and_mode_run_without_a_model_turn(world: WorldFactory) -> None:
    w = world(llm=[{"text": "hi", "usage": {"input": 40, "output": 8}}])
    async with raw_agent(w) as agent:
        session_id, _ = await open_session(agent, w)
        await prompt(agent, session_id, "hello")  # some context use for /status
        answer, frames = await prompt(agent, session_id, "/help")
        assert answer["result"] == {"stopReason": "end_turn"}
        assert updates(frames) == [
            {"sessionUpdate": "user_message_chunk", "content": {"type": "text", "text": "/help"}},
            {
                "sessionUpdate": "agent_message_chunk",
                "content": {"type": "text", "text": commands.help_text(REGISTRY)},
            },
        ]
        _, frames = await prompt(agent, session_id, "/status")
        # The context use is the token meter's reading after "hello" (core/token_meter.py).
        (request,) = w.model_requests()
        answer = [{"type": "text", "text": "hi"}]
        estimate = request_tokens(request.get("system"), [], request["messages"], answer)
        reading = used({"inputTokens": 40, "outputTokens": 8}, estimate)
        assert updates(frames)[1]["content"]["text"] == (
            "Model: Mock Reasoner (mock/mock)\nReasoning effort: high\nMode: default\n"
            f"Sandbox: workspace-write\nRoots: {w.workdir}\n"
            f"Context: {reading} of 1024 tokens ({round(100 * reading / 1024)}%)"
        )
        _, frames = await prompt(agent, session_id, "  /mode plan")
        assert kinds(frames) == [
            "user_message_chunk",
            "current_mode_update",
            "available_commands_update",
            "config_option_update",
            "agent_message_chunk",
        ]
        assert updates(frames)[0]["content"]["text"] == "/mode plan"
        assert updates(frames)[2] == commands.available_commands_update(commands.registry("plan"))
        _, frames = await prompt(agent, session_id, "/status")
        assert "\nMode: plan\n" in updates(frames)[1]["content"]["text"]
    # One model request in all: the commands never reached the model.
    assert len(w.model_requests()) == 1
    run = [e for e in log_events(w.home, session_id) if e["type"].startswith("command/")]
    assert [(e["type"], e["name"]) for e in run] == [
        ("command/run", "help"),
        ("command/done", "help"),
        ("command/run", "status"),
        ("command/done", "status"),
        ("command/run", "mode"),
        ("command/done", "mode"),
        ("command/run", "status"),
        ("command/done", "status"),
    ]


async def test_other_slash_lines_go_to_the_model(world: WorldFactory) -> None:
    w = world(llm=[{"text": "it is fine"}, {"text": "no such command"}])
    async with raw_agent(w) as agent:
        session_id, _ = await open_session(agent, w)
        for text in ("/etc/hosts looks wrong", "/deploy now"):
            answer, frames = await prompt(agent, session_id, text)
            assert answer["result"] == {"stopReason": "end_turn"}
            assert kinds(frames) == ["agent_message_chunk"]
    last = w.model_requests()[-1]["messages"]
    said = [t for m in last if m["role"] == "user" for t in texts(m)]
    assert [t for t in said if t.startswith("/")] == ["/etc/hosts looks wrong", "/deploy now"]


async def test_a_command_runs_while_a_prompt_is_in_flight(world: WorldFactory) -> None:
    hold = {"tool_calls": [{"id": "call-1", "name": "slow"}]}
    slow = Tool("slow", "Takes a while.", {"type": "object"}, [], delay_ms=1500)
    w = world(llm=[hold, {"text": "done"}], tools=[slow])
    async with raw_agent(w) as agent:
        session_id, _ = await open_session(agent, w)
        turn = await agent.request(
            "session/prompt", {"sessionId": session_id, "prompt": _text("go")}
        )
        while kinds([await agent.recv()]) != ["tool_call"]:
            pass
        status = await agent.request(
            "session/prompt", {"sessionId": session_id, "prompt": _text("/status")}
        )
        answer, frames = await exchange(agent, status)
        assert answer["result"] == {"stopReason": "end_turn"}
        assert kinds(frames) == ["user_message_chunk", "agent_message_chunk"]
        # An ordinary prompt now is refused: the slot belongs to the running turn.
        second = await agent.call(
            "session/prompt", {"sessionId": session_id, "prompt": _text("again")}
        )
        assert second["error"]["message"].endswith("a prompt is already in flight for this session")
        answer, _ = await exchange(agent, turn)
        assert answer["result"] == {"stopReason": "end_turn"}


async def test_a_closing_session_runs_no_command(world: WorldFactory) -> None:
    hang = {"text": "partial", "then": "hang"}
    w = world(llm=[hang])
    async with raw_agent(w) as agent:
        session_id, _ = await open_session(agent, w)
        turn = await agent.request(
            "session/prompt", {"sessionId": session_id, "prompt": _text("go")}
        )
        await asyncio.sleep(0.3)
        close = await agent.request("session/close", {"sessionId": session_id})
        late = await agent.request(
            "session/prompt", {"sessionId": session_id, "prompt": _text("/help")}
        )
        answers: dict[int, dict[str, Any]] = {}
        while len(answers) < 3:
            frame = await agent.recv()
            if "id" in frame and "method" not in frame:
                answers[frame["id"]] = frame
    assert answers[turn]["result"] == {"stopReason": "cancelled"}
    assert answers[close]["result"] == {}
    assert answers[late]["error"]["code"] == -32602
    assert answers[late]["error"]["message"] in (
        f"Invalid params: session is closing: {session_id}",
        f"Invalid params: unknown session: {session_id}",
    )
