"""Built-in tools on a real file system and real processes, and their sandbox approvals
through the loop."""

from __future__ import annotations

import asyncio
import time
from pathlib import Path
from typing import Any

import pytest
from plus_agent import running, wait_for
from plus_stream_server import ParityServer, text_response, tool_call_response

from acp_plus.core.agent import Agent, Route
from acp_plus.core.approvals import ApprovalChain, ApprovalRequest
from acp_plus.core.events import ApprovalOutcome
from acp_plus.core.llm.base import Router
from acp_plus.core.llm.parity_stream import ParityStreamProvider
from acp_plus.core.sandbox import SandboxMode
from acp_plus.core.store import SessionStore
from acp_plus.core.tools import session_tools
from acp_plus.core.tools.base import ToolContext
from acp_plus.core.tools.bash import OUTPUT_CAP, BashTool
from acp_plus.core.tools.builtin import EditTool, ReadTool, WriteTool


def _ctx(cwd: Path, sandbox: SandboxMode = "workspace-write") -> ToolContext:
    return ToolContext("s", cwd, "c1", 1, sandbox)


async def test_write_read_edit_roundtrip(tmp_path: Path) -> None:
    ctx = _ctx(tmp_path)
    wrote = await WriteTool().run({"file_path": "sub/a.txt", "content": "one\ntwo\nthree\n"}, ctx)
    assert not wrote.is_error
    assert (tmp_path / "sub" / "a.txt").read_text() == "one\ntwo\nthree\n"
    window = await ReadTool().run({"file_path": "sub/a.txt", "offset": 1, "limit": 1}, ctx)
    assert window.content == [{"type": "text", "text": "two\n"}]
    edited = await EditTool().run(
        {"file_path": str(tmp_path / "sub/a.txt"), "old_string": "two", "new_string": "2"}, ctx
    )
    assert not edited.is_error
    assert (tmp_path / "sub" / "a.txt").read_text() == "one\n2\nthree\n"


async def test_edit_refuses_missing_and_ambiguous_matches(tmp_path: Path) -> None:
    (tmp_path / "f").write_text("x x")
    ctx = _ctx(tmp_path)
    missing = await EditTool().run({"file_path": "f", "old_string": "y", "new_string": "z"}, ctx)
    ambiguous = await EditTool().run({"file_path": "f", "old_string": "x", "new_string": "z"}, ctx)
    assert missing.is_error and ambiguous.is_error
    assert "2 times" in ambiguous.content[0]["text"]
    everywhere = await EditTool().run(
        {"file_path": "f", "old_string": "x", "new_string": "z", "replace_all": True}, ctx
    )
    assert not everywhere.is_error
    assert (tmp_path / "f").read_text() == "z z"


async def test_read_of_a_missing_file_is_a_failed_result(tmp_path: Path) -> None:
    result = await ReadTool().run({"file_path": "nope"}, _ctx(tmp_path))
    assert result.is_error and "cannot read" in result.content[0]["text"]


async def test_bash_runs_in_cwd_reports_exit_code_and_caps_output(tmp_path: Path) -> None:
    ctx = _ctx(tmp_path, "danger-full-access")
    ok = await BashTool().run({"command": "pwd; echo hi >&2"}, ctx)
    assert ok.content[0]["text"] == f"{tmp_path}\nhi\n[exit code: 0]"
    failed = await BashTool().run({"command": "exit 3"}, ctx)
    assert failed.is_error and failed.content[0]["text"].endswith("[exit code: 3]")
    big = await BashTool().run({"command": f"head -c {OUTPUT_CAP * 3} /dev/zero | tr '\\0' a"}, ctx)
    text = big.content[0]["text"]
    assert len(text) < OUTPUT_CAP + 200
    assert "bytes omitted] ..." in text


async def test_bash_timeout_kills_the_process_group(tmp_path: Path) -> None:
    marker = tmp_path / "child.pid"
    started = time.monotonic()
    result = await BashTool().run(
        {"command": f"sleep 30 & echo $! > {marker}; wait", "timeout": 1},
        # Unconfined, so `$!` is a pid of this machine's namespace.
        _ctx(tmp_path, "danger-full-access"),
    )
    assert time.monotonic() - started < 5
    assert result.is_error and "timed out after 1s" in result.content[0]["text"]
    await _gone(int(marker.read_text()))


async def test_cancelling_bash_kills_the_process_group(tmp_path: Path) -> None:
    marker = tmp_path / "child.pid"
    task = asyncio.create_task(
        BashTool().run(
            {"command": f"sleep 30 & echo $! > {marker}; wait"},
            _ctx(tmp_path, "danger-full-access"),
        )
    )
    for _ in range(200):
        if marker.exists() and marker.read_text().strip():
            break
        await asyncio.sleep(0.01)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    await _gone(int(marker.read_text()))


async def _gone(pid: int) -> None:
    # A killed orphan may stay a zombie until its new parent reaps it: dead all the same.
    await wait_for(lambda: not running(pid), timeout=3.0)


def test_sandbox_reasons_of_the_builtins(tmp_path: Path) -> None:
    ws = _ctx(tmp_path)
    outside = str(tmp_path.parent / "elsewhere.txt")
    assert WriteTool().approval_reason({"file_path": "in.txt", "content": ""}, ws) is None
    reason = WriteTool().approval_reason({"file_path": outside, "content": ""}, ws)
    assert reason == (
        "escalate sandbox to danger-full-access: write outside the workspace: "
        f"{Path(outside).resolve()}"
    )
    assert EditTool().approval_reason(
        {"file_path": "in.txt", "old_string": "a", "new_string": "b"}, _ctx(tmp_path, "read-only")
    ) == (f"escalate sandbox to workspace-write: write {(tmp_path / 'in.txt').resolve()}")
    # Reads ask outside the workspace like writes do (tests/plus/hardening/test_read_gate.py).
    assert ReadTool().approval_reason({"file_path": "in.txt"}, _ctx(tmp_path, "read-only")) is None
    assert ReadTool().approval_reason({"file_path": outside}, _ctx(tmp_path, "read-only")) == (
        f"escalate sandbox to danger-full-access: read outside the workspace: "
        f"{Path(outside).resolve()}"
    )
    # bash runs inside the OS sandbox: it asks only for an escalation the model requests.
    assert BashTool().approval_reason({"command": "ls"}, ws) is None
    escalate = {"command": "ls", "sandbox_permissions": "danger-full-access", "justification": "j"}
    assert BashTool().approval_reason(escalate, ws) == "escalate sandbox to danger-full-access: j"


@pytest.mark.parametrize(("outcome", "written"), [("allowed-once", True), ("rejected", False)])
async def test_write_outside_the_workspace_asks_for_escalation(
    server: ParityServer, tmp_path: Path, outcome: ApprovalOutcome, written: bool
) -> None:
    workspace = tmp_path / "ws"
    workspace.mkdir()
    target = tmp_path / "outside.txt"
    asked: list[ApprovalRequest] = []

    async def responder(req: ApprovalRequest) -> ApprovalOutcome:
        asked.append(req)
        return outcome

    provider = ParityStreamProvider(server.url)
    router = Router([provider])
    tools = await session_tools(fixture_host=provider, builtin_tools=True)
    assert tools.names() == ["echo", "read", "write", "edit", "bash"]
    seen: list[dict[str, Any]] = []
    log = SessionStore(tmp_path / "home").create(str(workspace))
    agent = Agent(log, router, tools, ApprovalChain([responder]), workspace, seen.append)
    args = {"file_path": str(target), "content": "hi"}
    server.script += [
        [
            *tool_call_response("write", "w1", args),
            {"type": "finish", "reason": {"kind": "tool-calls"}},
        ],
        text_response("done"),
    ]
    try:
        await agent.run_turn([{"type": "text", "text": "write"}], Route("mock", "mock"))
    finally:
        await router.aclose()
    assert [r.reason for r in asked] == [
        f"escalate sandbox to danger-full-access: write outside the workspace: {target}"
    ]
    assert asked[0].arguments == args and asked[0].tool == "write" and asked[0].call_id == "w1"
    assert target.exists() is written
    result = next(e for e in seen if e["type"] == "tool/result")
    assert result["isError"] is (not written)
    decided = next(e for e in seen if e["type"] == "approval/decided")
    assert decided["outcome"] == outcome


async def test_parity_configuration_offers_only_catalog_tools(server: ParityServer) -> None:
    provider = ParityStreamProvider(server.url)
    try:
        tools = await session_tools(fixture_host=provider, builtin_tools=False)
    finally:
        await provider.aclose()
    assert tools.names() == ["echo"]
