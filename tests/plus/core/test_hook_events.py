"""The hook events around a turn (SessionStart, UserPromptSubmit, Stop) as native
0.1.0-rc.8 runs them; scenarios/hooks/{session-start,prompt-submit,stop}.yaml compare
them live with rc.8."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from plus_agent import wait_for
from plus_stream_server import ParityServer, text_response

from acp_plus.core import hooks as hk
from acp_plus.core.agent import Agent, Route
from acp_plus.core.approvals import ApprovalChain
from acp_plus.core.hook_events import payload_text
from acp_plus.core.hook_runner import Hooks
from acp_plus.core.llm.base import Router
from acp_plus.core.llm.parity_stream import ParityStreamProvider
from acp_plus.core.store import SessionStore
from acp_plus.core.tools.base import ToolRegistry

ROUTE = Route("mock", "mock")


def _prompt(text: str) -> list[dict[str, Any]]:
    return [{"type": "text", "text": text}]


@dataclass
class Rig:
    agent: Agent
    seen: list[dict[str, Any]]
    workdir: Path

    def hooks(self, claude: dict[str, Any], codex: dict[str, Any] | None = None) -> Hooks:
        (self.workdir / "hooks.json").write_text(json.dumps({"hooks": claude}))
        if codex is not None:
            (self.workdir / "codex-hooks.json").write_text(json.dumps({"hooks": codex}))
        self.agent.sandbox = "danger-full-access"  # the decisions, not the sandbox
        hooks = Hooks.load(self.workdir)
        assert hooks is not None
        self.agent.hooks = hooks
        return hooks


@pytest.fixture
async def rig(server: ParityServer, tmp_path: Path) -> AsyncIterator[Rig]:
    router = Router([ParityStreamProvider(server.url)])
    workdir = tmp_path / "w"
    workdir.mkdir()
    seen: list[dict[str, Any]] = []
    log = SessionStore(tmp_path / "home").create(str(workdir))
    agent = Agent(log, router, ToolRegistry(), ApprovalChain(), workdir, seen.append)
    try:
        yield Rig(agent, seen, workdir)
    finally:
        await router.aclose()


def _cmd(command: str) -> list[dict[str, Any]]:
    return [{"hooks": [{"type": "command", "command": command}]}]


def _texts(messages: list[dict[str, Any]]) -> list[str]:
    return [m["content"][0]["text"] for m in messages]


async def test_a_rejected_prompt_leaves_nothing_and_context_follows_the_prompt(
    rig: Rig, server: ParityServer
) -> None:
    said = {"hookEventName": "UserPromptSubmit", "additionalContext": "likes tea"}
    rig.hooks(
        {
            "UserPromptSubmit": _cmd(
                "tee -a prompts | grep -q forbidden && { echo no >&2; exit 2; }; "
                f"echo '{json.dumps({'hookSpecificOutput': said})}'"
            )
        }
    )
    assert await rig.agent.run_turn(_prompt("forbidden words"), ROUTE) == {"kind": "completed"}
    assert server.streams() == []  # no model request
    assert [e["type"] for e in rig.seen] == ["turn/start", "route/set", "turn/end"]
    server.script.append(text_response("ok"))
    await rig.agent.run_turn(_prompt("hello"), ROUTE)
    assert _texts(server.streams()[0].body["messages"]) == ["hello", "likes tea"]
    first = json.loads((rig.workdir / "prompts").read_text().splitlines()[0])
    assert (first["hook_event_name"], first["prompt"]) == ("UserPromptSubmit", "forbidden words")


async def test_a_blocking_stop_hook_runs_another_step(rig: Rig, server: ParityServer) -> None:
    rig.hooks({"Stop": _cmd("cat >> stops; [ $(grep -c Stop stops) -lt 3 ] || exit 0; exit 2")})
    server.script += [text_response("one"), text_response("two"), text_response("three")]
    assert await rig.agent.run_turn(_prompt("go"), ROUTE) == {"kind": "completed"}
    last = server.streams()[-1].body["messages"]
    # exit 2 with no stderr: native's fallback text.
    assert _texts(last)[1:] == [
        "one",
        "continue: blocked by Stop hook",
        "two",
        "continue: blocked by Stop hook",
    ]
    stops = (rig.workdir / "stops").read_text().replace("}{", "}\n{").splitlines()
    assert [json.loads(s)["stop_hook_active"] for s in stops] == [False, False, False]


async def test_session_start_context_waits_for_the_first_step(
    rig: Rig, server: ParityServer
) -> None:
    said = {"hookEventName": "SessionStart", "additionalContext": "a tea shop"}
    hooks = rig.hooks(
        {
            "SessionStart": [
                {
                    "matcher": "startup",
                    **_cmd(f"echo '{json.dumps({'hookSpecificOutput': said})}'")[0],
                }
            ]
        },
        {"SessionStart": _cmd("sleep 0.2; cat > codex-start; echo plain start")},
    )
    hooks.session_start(rig.agent, "startup")
    await wait_for(lambda: len(hooks.started.get(rig.agent.log.id, [])) == 2, timeout=10)
    server.script.append(text_response("hi"))
    await rig.agent.run_turn(_prompt("hello"), ROUTE)
    assert _texts(server.streams()[0].body["messages"]) == ["a tea shop", "plain start", "hello"]
    codex = json.loads((rig.workdir / "codex-start").read_text())
    assert list(codex) == [
        "session_id",
        "transcript_path",
        "cwd",
        "hook_event_name",
        "model",
        "permission_mode",
        "source",
    ]
    assert codex["source"] == "startup"


def test_codex_stop_payload_is_rc8s() -> None:
    text = payload_text(hk.CODEX, "Stop", ("s", "/t.jsonl", "/w"), 3, stop_hook_active=False)
    assert text == (
        '{"session_id":"s","transcript_path":"/t.jsonl","cwd":"/w","hook_event_name":"Stop",'
        '"model":"","permission_mode":"default","turn_id":"3","stop_hook_active":false,'
        '"last_assistant_message":null}'
    )
    claude = payload_text(hk.CLAUDE, "UserPromptSubmit", ("s", "/t", "/w"), 1, prompt="p")
    assert claude.endswith('"hook_event_name":"UserPromptSubmit","prompt":"p"}\n')
