"""Hooks around real tool calls of the model loop (acp_plus/core/hook_runner.py): real hook
processes, a live parity-stream server, an in-process tool that counts its runs."""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, ClassVar

import pytest
from plus_stream_server import ParityServer, text_response, tool_call_response

from acp_plus.core.agent import Agent, Route
from acp_plus.core.approvals import ApprovalChain, ApprovalRequest
from acp_plus.core.events import ApprovalOutcome
from acp_plus.core.hook_runner import Hooks
from acp_plus.core.llm.base import Router
from acp_plus.core.llm.parity_stream import ParityStreamProvider
from acp_plus.core.store import SessionStore
from acp_plus.core.tools.backend import find_backend
from acp_plus.core.tools.base import ToolContext, ToolRegistry, ToolResult

GO = [{"type": "text", "text": "go"}]
ROUTE = Route("mock", "mock")
CALL = [{"type": "finish", "reason": {"kind": "tool-calls"}}]


@dataclass
class Note:
    """A tool that asks when told to and records its runs."""

    asks: bool = False
    runs: list[dict[str, Any]] = field(default_factory=list)
    name: str = "note"
    description: str = "A note."
    parameters: ClassVar[dict[str, Any]] = {"type": "object", "properties": {}}

    def approval_reason(self, args: dict[str, Any], ctx: ToolContext) -> str | None:
        return "the note asks" if self.asks else None

    async def run(self, args: dict[str, Any], ctx: ToolContext) -> ToolResult:
        self.runs.append(args)
        return ToolResult.text("note written")


@dataclass
class Rig:
    agent: Agent
    tool: Note
    seen: list[dict[str, Any]]
    workdir: Path
    answers: list[ApprovalOutcome] = field(default_factory=list)
    asked: list[ApprovalRequest] = field(default_factory=list)

    def hooks(self, config: dict[str, Any], codex: dict[str, Any] | None = None) -> None:
        (self.workdir / "hooks.json").write_text(json.dumps(config))
        if codex is not None:
            (self.workdir / "codex-hooks.json").write_text(json.dumps(codex))
        # danger-full-access: these tests are about the decisions, not the sandbox.
        self.agent.sandbox = "danger-full-access"
        self.agent.hooks = Hooks.load(self.workdir)

    def results(self) -> list[tuple[str, bool]]:
        return [
            (e["content"][0]["text"], e["isError"]) for e in self.seen if e["type"] == "tool/result"
        ]

    async def turn(self, server: ParityServer, *args: dict[str, Any]) -> None:
        server.script.append(
            [*tool_call_response("note", "call-1", args[0] if args else {}), *CALL]
        )
        server.script.append(text_response("done"))
        await self.agent.run_turn(GO, ROUTE)


@pytest.fixture
async def rig(server: ParityServer, tmp_path: Path) -> AsyncIterator[Rig]:
    router = Router([ParityStreamProvider(server.url)])
    tool = Note()
    seen: list[dict[str, Any]] = []
    workdir = tmp_path / "w"
    workdir.mkdir()
    log = SessionStore(tmp_path / "home").create(str(workdir))
    agent = Agent(log, router, ToolRegistry([tool]), ApprovalChain(), workdir, seen.append)
    rig = Rig(agent, tool, seen, workdir)

    async def answer(req: ApprovalRequest) -> ApprovalOutcome | None:
        rig.asked.append(req)
        return rig.answers.pop(0) if rig.answers else "allowed-once"

    agent.approvals.responders.append(answer)
    try:
        yield rig
    finally:
        await router.aclose()


def _hook(command: str, matcher: str | None = None, **extra: Any) -> dict[str, Any]:
    group: dict[str, Any] = {"hooks": [{"type": "command", "command": command, **extra}]}
    return group if matcher is None else {"matcher": matcher, **group}


def test_no_file_mounts_nothing_and_a_broken_one_is_ignored(tmp_path: Path) -> None:
    assert Hooks.load(tmp_path) is None
    (tmp_path / "hooks.json").write_text("{not json")
    assert Hooks.load(tmp_path) is None
    (tmp_path / "codex-hooks.json").write_text('{"PreToolUse": []}')
    hooks = Hooks.load(tmp_path)
    assert hooks is not None and [f.dialect for f in hooks.files] == ["codex"]


async def test_pre_deny_skips_the_call_and_its_question(rig: Rig, server: ParityServer) -> None:
    rig.tool.asks = True
    rig.hooks(
        {
            "PreToolUse": [
                _hook("cat > pre.json; echo 'not today' >&2; exit 2", "note"),
                _hook('echo \'{"decision": "approve"}\''),
            ],
            "PostToolUse": [_hook("cat > post.json")],
        }
    )
    await rig.turn(server, {"text": "hi"})
    assert rig.results() == [("Error: not today", True)]
    assert rig.tool.runs == [] and rig.asked == []
    pre = json.loads((rig.workdir / "pre.json").read_text())
    assert pre["tool_input"] == {"text": "hi"} and pre["cwd"] == str(rig.workdir)
    assert pre["transcript_path"] == str(rig.agent.log.lock_path.with_suffix(".jsonl"))
    post = json.loads((rig.workdir / "post.json").read_text())
    assert post["tool_response"] == "Error: not today"  # PostToolUse sees the denial


async def test_pre_ask_goes_to_the_client_with_the_hooks_reason(
    rig: Rig, server: ParityServer
) -> None:
    ask = {"hookSpecificOutput": {"hookEventName": "PreToolUse", "permissionDecision": "ask"}}
    rig.hooks({"PreToolUse": [_hook(f"echo '{json.dumps(ask)}'")]})
    rig.answers = ["rejected"]
    await rig.turn(server)
    assert [r.reason for r in rig.asked] == ["PreToolUse hook asks for approval"]
    assert rig.results() == [('Error: the user rejected tool "note"', True)]
    await rig.turn(server)  # allowed this time
    assert rig.tool.runs == [{}] and rig.results()[-1] == ("note written", False)


async def test_allow_spares_no_question_and_codex_ignores_ask(
    rig: Rig, server: ParityServer
) -> None:
    rig.tool.asks = True
    allow = {"hookSpecificOutput": {"hookEventName": "PreToolUse", "permissionDecision": "allow"}}
    ask = {"hookSpecificOutput": {"hookEventName": "PreToolUse", "permissionDecision": "ask"}}
    rig.hooks(
        {"PreToolUse": [_hook(f"echo '{json.dumps(allow)}'")]},
        {"PreToolUse": [_hook(f"echo '{json.dumps(ask)}'; touch codex-ran")]},
    )
    await rig.turn(server)
    assert [r.reason for r in rig.asked] == ["the note asks"]
    assert rig.tool.runs == [{}] and (rig.workdir / "codex-ran").exists()


async def test_post_block_and_context(rig: Rig, server: ParityServer) -> None:
    def context(text: str) -> str:
        said = {"hookEventName": "PostToolUse", "additionalContext": text}
        return f"echo '{json.dumps({'hookSpecificOutput': said})}'"

    rig.hooks(
        {"PostToolUse": [_hook(context("ctx")), _hook(context("more"))]},
        {"PostToolUse": [_hook(context("codex")), _hook("echo withheld >&2; exit 2")]},
    )
    await rig.turn(server)
    assert rig.tool.runs == [{}]
    assert rig.results() == [("withheld", True)]
    notes = [e for e in rig.seen if e.get("source") == "hook-context"]
    # One message per bridge, the blocking bridge's context included.
    assert [[b["text"] for b in n["content"]] for n in notes] == [["ctx", "more"], ["codex"]]
    # The context reaches the model with the step after the call.
    last = server.streams()[-1].body["messages"]
    assert [m["content"][0]["text"] for m in last[-2:]] == ["ctx", "codex"]


async def test_failing_and_slow_hooks_say_nothing(rig: Rig, server: ParityServer) -> None:
    rig.hooks(
        {
            "PreToolUse": [
                _hook("echo broke >&2; exit 1"),
                _hook("no-such-command-for-a-hook"),
                _hook("kill -9 $$"),
                _hook("sleep 30; exit 2", timeout=0.5),
            ]
        }
    )
    started = time.monotonic()
    await rig.turn(server)
    assert time.monotonic() - started < 10
    assert rig.tool.runs == [{}] and rig.results() == [("note written", False)]


async def test_a_cancelled_turn_kills_a_running_hook(rig: Rig, server: ParityServer) -> None:
    rig.hooks({"PreToolUse": [_hook("echo $$ > hook.pid; exec sleep 60")]})
    server.script.append([*tool_call_response("note", "call-1", {}), *CALL])
    turn = asyncio.ensure_future(rig.agent.run_turn(GO, ROUTE))
    pid_file = rig.workdir / "hook.pid"
    for _ in range(200):
        if pid_file.exists() and pid_file.read_text().strip():
            break
        await asyncio.sleep(0.05)
    pid = int(pid_file.read_text())
    rig.agent.cancel()
    assert await turn == {"kind": "aborted"}
    assert not Path(f"/proc/{pid}").exists() or "zombie" in Path(f"/proc/{pid}/status").read_text()
    assert rig.tool.runs == []


async def test_hooks_run_confined_like_bash(rig: Rig, server: ParityServer, tmp_path: Path) -> None:
    outside = tmp_path / "outside.txt"
    rig.hooks({"PreToolUse": [_hook(f"touch inside.txt; touch {outside}")]})
    rig.agent.sandbox = "workspace-write"
    hooks = rig.agent.hooks
    assert hooks is not None
    if find_backend() is None:
        # No sandbox here: the hook cannot run confined, so it does not run (and says nothing).
        await rig.turn(server)
        assert not (rig.workdir / "inside.txt").exists()
    else:
        await rig.turn(server)
        assert (rig.workdir / "inside.txt").exists()
    assert not outside.exists()
    assert rig.tool.runs == [{}]
    hooks.find = lambda: None  # the no-backend path, everywhere
    (rig.workdir / "inside.txt").unlink(missing_ok=True)
    await rig.turn(server)
    assert not (rig.workdir / "inside.txt").exists() and len(rig.tool.runs) == 2


async def test_the_repeat_reminder_goes_before_the_hooks_context(
    rig: Rig, server: ParityServer
) -> None:
    said = {"hookEventName": "PostToolUse", "additionalContext": "ctx"}
    rig.hooks({"PostToolUse": [_hook(f"echo '{json.dumps({'hookSpecificOutput': said})}'")]})
    for n in range(3):
        server.script.append([*tool_call_response("note", f"call-{n}", {}), *CALL])
    server.script.append(text_response("done"))
    await rig.agent.run_turn(GO, ROUTE)
    # rc.8's repeat reminder folds its message before what later listeners (the hooks) add.
    sources = [e.get("source") for e in rig.seen if e["type"] == "user/message"][-2:]
    assert sources == ["repeat-reminder", "hook-context"]
