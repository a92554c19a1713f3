"""M5 session modes (docs/contract.md §6.3): `default` and `plan`, offered as ACP `modes`
and as a `configOptions` entry of category `mode`; the switch is durable, reaches the
model as runtime context, and never changes the sandbox or the approvals."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from feature_support import exchange, kinds, open_session, prompt, requests_of, texts, updates
from plus_agent import WorldFactory, log_events, raw_agent

from acp_plus.core.tools.backend import find_backend
from acp_plus.features import modes
from acp_plus.wire.errors import RpcError

# -- pure ---------------------------------------------------------------------------------

RUNTIME = "Current runtime context.\n\nApproval policy: ask."


def test_current_mode_is_the_last_switch_in_the_log() -> None:
    assert modes.current_mode([]) == "default"
    log = [{"type": "turn/start"}, modes.mode_event("plan"), {"type": "turn/end"}]
    assert modes.current_mode(log) == "plan"
    assert modes.current_mode([*log, modes.mode_event("default")]) == "default"
    assert modes.current_mode([{"type": "plan/mode", "mode": "bogus"}]) == "default"


def test_runtime_note_follows_the_mode_and_leaves_an_unswitched_session_alone() -> None:
    # Never switched: the runtime context stays byte for byte what native sends.
    assert modes.runtime_for_mode(RUNTIME, "default", switched=False) == RUNTIME
    plan = modes.runtime_for_mode(RUNTIME, "plan", switched=True)
    assert plan == f"{RUNTIME}\n\n{modes.PLAN_NOTE}"
    # Back to default: the plan note is replaced, not stacked, and leaving is explicit.
    back = modes.runtime_for_mode(plan, "default", switched=True)
    assert back == f"{RUNTIME}\n\n{modes.DEFAULT_NOTE}"
    assert modes.runtime_for_mode(back, "plan", switched=True) == plan
    # With the runtime context off, the note is the whole message.
    assert modes.runtime_for_mode(None, "plan", switched=True) == modes.PLAN_NOTE
    assert modes.runtime_for_mode(modes.PLAN_NOTE, "default", switched=False) is None


def test_unknown_mode_text() -> None:
    assert modes.check_mode("plan") == "plan"
    for bad in ("Plan", "", None, 3):
        with pytest.raises(RpcError) as caught:
            modes.check_mode(bad)
        assert caught.value.to_json() == {
            "code": -32602,
            "message": f"Invalid params: unknown session mode: {bad}",
        }


# -- through the real process -------------------------------------------------------------

AVAILABLE = [
    {"id": "default", "name": "Default", "description": "Carry out the task directly."},
    {
        "id": "plan",
        "name": "Plan",
        "description": "Research and present a plan before making changes.",
    },
]


def _mode_option(current: str) -> dict[str, Any]:
    return {
        "id": "mode",
        "name": "Mode",
        "category": "mode",
        "type": "select",
        "currentValue": current,
        "options": [
            {"value": m["id"], "name": m["name"], "description": m["description"]}
            for m in AVAILABLE
        ],
    }


async def test_modes_are_offered_switched_and_restored_on_resume(world: WorldFactory) -> None:
    w = world(llm=[{"text": "a plan", "usage": {"input": 5, "output": 3}}, {"text": "more"}])
    async with raw_agent(w) as agent:
        session_id, new = await open_session(agent, w)
        assert new["modes"] == {"currentModeId": "default", "availableModes": AVAILABLE}
        assert new["configOptions"][-1] == _mode_option("default")
        assert [o["id"] for o in new["configOptions"]] == ["model", "reasoning_effort", "mode"]

        msg_id = await agent.request(
            "session/set_mode", {"sessionId": session_id, "modeId": "plan"}
        )
        answer, before = await exchange(agent, msg_id)
        assert answer["result"] == {}
        # The switch, the command list naming the new mode, and the options for clients
        # that show config options instead of modes: all before the answer.
        assert kinds(before) == [
            "current_mode_update",
            "available_commands_update",
            "config_option_update",
        ]
        assert updates(before)[0] == {
            "sessionUpdate": "current_mode_update",
            "currentModeId": "plan",
        }
        assert updates(before)[2]["configOptions"][-1] == _mode_option("plan")

        # Choosing the current mode again changes nothing and says nothing.
        msg_id = await agent.request(
            "session/set_mode", {"sessionId": session_id, "modeId": "plan"}
        )
        assert await exchange(agent, msg_id) == ({"jsonrpc": "2.0", "id": msg_id, "result": {}}, [])

        _, before = await prompt(agent, session_id, "make a plan")
        assert kinds(before) == ["agent_message_chunk", "usage_update"]
        await agent.call("session/close", {"sessionId": session_id})

        resumed = await agent.call(
            "session/resume", {"sessionId": session_id, "cwd": str(w.workdir), "mcpServers": []}
        )
        assert resumed["result"]["modes"]["currentModeId"] == "plan"
        assert resumed["result"]["configOptions"][-1] == _mode_option("plan")
        await prompt(agent, session_id, "go on")
    # The resumed agent still holds the plan note, so no runtime context follows "go on":
    # the model's latest one (with the note) still stands.
    last = w.model_requests()[-1]["messages"]
    assert texts(last[-1]) == ["go on"]
    context = [t for m in last for t in texts(m) if t.startswith("Current runtime context")]
    assert context[-1].endswith("\n\n" + modes.PLAN_NOTE)
    events = log_events(w.home, session_id)
    assert [e for e in events if e["type"] == "plan/mode"] == [
        {"type": "plan/mode", "mode": "plan", "seq": 1, "at": events[0]["at"]}
    ]


async def test_the_model_hears_of_a_switch_at_its_next_prompt(world: WorldFactory) -> None:
    w = world(llm=[{"text": "one"}, {"text": "two"}, {"text": "three"}])
    async with raw_agent(w) as agent:
        session_id, _ = await open_session(agent, w)
        await prompt(agent, session_id, "first")
        await agent.call("session/set_mode", {"sessionId": session_id, "modeId": "plan"})
        await prompt(agent, session_id, "second")
        await agent.call(
            "session/set_config_option",
            {"sessionId": session_id, "configId": "mode", "value": "default"},
        )
        await prompt(agent, session_id, "third")
    first, second, third = (r["messages"] for r in w.model_requests())
    context = [t for m in first for t in texts(m) if t.startswith("Current runtime context")]
    assert len(context) == 1 and "Session mode" not in context[0]
    # A new runtime-context snapshot follows the prompt after each switch.
    assert texts(second[-1])[0].endswith("\n\n" + modes.PLAN_NOTE)
    assert texts(second[-2]) == ["second"]
    assert texts(third[-1])[0].endswith("\n\n" + modes.DEFAULT_NOTE)


async def test_mode_option_and_set_mode_errors(world: WorldFactory) -> None:
    w = world()
    async with raw_agent(w) as agent:
        session_id, _ = await open_session(agent, w)
        answer = await agent.call(
            "session/set_config_option",
            {"sessionId": session_id, "configId": "mode", "value": "plan"},
        )
        # The complete options, the mode option switched.
        options = answer["result"]["configOptions"]
        assert [o["id"] for o in options] == ["model", "reasoning_effort", "mode"]
        assert options[-1]["currentValue"] == "plan"
        cases: list[tuple[str, dict[str, Any], str]] = [
            (
                "session/set_mode",
                {"sessionId": session_id, "modeId": "ask"},
                "unknown session mode: ask",
            ),
            ("session/set_mode", {"sessionId": "nope", "modeId": "plan"}, "unknown session: nope"),
            (
                "session/set_config_option",
                {"sessionId": session_id, "configId": "mode", "value": "build"},
                "unknown session mode: build",
            ),
            (
                "session/set_config_option",
                {"sessionId": session_id, "configId": "mode", "type": "boolean", "value": True},
                "mode requires a select value",
            ),
        ]
        for method, params, detail in cases:
            error = (await agent.call(method, params))["error"]
            assert error == {"code": -32602, "message": f"Invalid params: {detail}"}, method
        missing = (await agent.call("session/set_mode", {"sessionId": session_id}))["error"]
        assert (missing["code"], missing["message"]) == (-32602, "Invalid params")
        # A boolean without `type: "boolean"` matches neither value variant of the schema.
        untyped = {"sessionId": session_id, "configId": "mode", "value": True}
        refused = (await agent.call("session/set_config_option", untyped))["error"]
        assert (refused["message"], refused["data"]) == (
            "Invalid params",
            {
                "_errors": [],
                "type": {"_errors": ['Invalid input: expected "boolean"']},
                "value": {"_errors": ["Invalid input: expected string, received boolean"]},
            },
        )


def _writes(outside: Path) -> list[dict[str, Any]]:
    calls = [
        {"id": "w-in", "name": "write", "arguments": {"file_path": "inside.txt", "content": "in"}},
        {
            "id": "w-out",
            "name": "write",
            "arguments": {
                "file_path": str(outside),
                "content": "out",
                "sandbox_permissions": "danger-full-access",
                "justification": "the user asked",
            },
        },
        {
            "id": "sh",
            "name": "bash",
            "arguments": {
                "description": "d",
                "command": f"echo hi > shell.txt; echo hi > {outside.parent}/sh.txt",
            },
        },
    ]
    return [{"tool_calls": calls}, {"text": "done"}]


@pytest.mark.parametrize("mode", ["default", "plan"])
async def test_plan_mode_changes_neither_sandbox_nor_approvals(
    world: WorldFactory, tmp_path: Path, mode: str
) -> None:
    outside = tmp_path / "outside" / "out.txt"
    outside.parent.mkdir()
    w = world(llm=_writes(outside), builtin_tools=True)
    async with raw_agent(w) as agent:
        session_id, _ = await open_session(agent, w)
        await agent.call("session/set_mode", {"sessionId": session_id, "modeId": mode})
        answer, frames = await prompt(agent, session_id, "write both")
        _, status_frames = await prompt(agent, session_id, "/status")
    assert answer["result"] == {"stopReason": "end_turn"}
    # The same decisions in both modes: the write inside the workspace runs unasked, the
    # write that asks for a wider sandbox asks the client (rejected here), and the shell
    # command runs unasked
    # in the OS sandbox, which lets it write inside the workspace only.
    permissions = requests_of(frames, "session/request_permission")
    assert [r["params"]["toolCall"]["toolCallId"] for r in permissions] == ["w-out"]
    results = {
        u["toolCallId"]: u["status"]
        for u in updates(frames)
        if u["sessionUpdate"] == "tool_call_update"
    }
    # In the sandbox the command writes inside only (its failed write outside is reported,
    # not an error: native's rule); with no sandbox backend on this machine it is refused
    # whole (native's behaviour), in both modes alike.
    sandboxed = find_backend() is not None
    shell = "completed" if sandboxed else "failed"
    assert results == {"w-in": "completed", "w-out": "failed", "sh": shell}
    assert (w.workdir / "inside.txt").read_text() == "in"
    assert (w.workdir / "shell.txt").exists() == sandboxed
    assert not outside.exists() and not (outside.parent / "sh.txt").exists()
    report = updates(status_frames)[-1]["content"]["text"]
    assert f"Mode: {mode}\nSandbox: workspace-write\n" in report
