"""acp-plus's read, write and edit against native 0.2.1-rc.2: the definitions and the
guidance the recorded native showed its model, and the policies on a real file system
(fs-observation-policy, the file sandbox, escalation through the loop)."""

from __future__ import annotations

import os
import stat
from pathlib import Path
from typing import Any

import pytest
from plus_stream_server import ParityServer, text_response, tool_call_response

from acp_plus.core.agent import Agent, Route
from acp_plus.core.approvals import ApprovalChain, ApprovalRequest
from acp_plus.core.events import ApprovalOutcome
from acp_plus.core.llm.base import Router
from acp_plus.core.llm.parity_stream import ParityStreamProvider
from acp_plus.core.sandbox import SandboxMode
from acp_plus.core.store import SessionStore
from acp_plus.core.tools.base import Tool, ToolContext, ToolRegistry, ToolResult
from acp_plus.core.tools.fs_family import FS_GUIDANCE, fs_tools
from parity.view.dump import load_view

REPO = Path(__file__).resolve().parents[4]
NATIVE = REPO / "snapshots" / "tools" / "read-edit-write" / "native.yaml"


def _native_request() -> dict[str, Any]:
    recorded = load_view(NATIVE.read_text(encoding="utf-8"))
    body: dict[str, Any] = next(r["body"] for r in recorded["model"] if r["path"] == "/stream")
    return body


def test_definitions_are_the_ones_native_showed_its_model() -> None:
    native = {tool["name"]: tool for tool in _native_request()["tools"]}
    ours = ToolRegistry(fs_tools()).specs()
    assert [spec["name"] for spec in ours] == [
        "edit",
        "read",
        "write",
    ]  # sorted, as native lists them
    for spec in ours:
        assert spec == native[spec["name"]]


def test_guidance_is_natives_text_for_text() -> None:
    paragraphs = _native_request()["system"].split("\n\n")
    at = paragraphs.index(FS_GUIDANCE[0])
    assert tuple(paragraphs[at : at + len(FS_GUIDANCE)]) == FS_GUIDANCE


class Session:
    """The three tools of one session, called directly."""

    def __init__(self, cwd: Path, tools: list[Tool], sandbox: SandboxMode = "workspace-write"):
        self.ctx = ToolContext("s1", cwd, "c1", 1, sandbox)
        self.tools = {tool.name: tool for tool in tools}

    async def __call__(self, name: str, **args: Any) -> ToolResult:
        return await self.tools[name].run(args, self.ctx)


def _text(result: ToolResult) -> str:
    return str(result.content[0]["text"])


async def test_edit_and_write_need_a_read_and_refuse_a_stale_one(tmp_path: Path) -> None:
    f = tmp_path / "notes.txt"
    f.write_text("status: draft\n")
    tools = fs_tools()
    s1, s2 = Session(tmp_path, tools), Session(tmp_path, tools)
    s2.ctx = ToolContext("s2", tmp_path, "c1", 1)
    unread = await s1("edit", file_path="notes.txt", old_string="draft", new_string="final")
    assert unread.is_error and _text(unread) == (
        f'Error: cannot modify "{f}": file has not been read — read the file, then retry'
    )
    overwrite = await s1("write", file_path="notes.txt", content="x")
    assert overwrite.is_error and "has not been read" in _text(overwrite)
    assert f.read_text() == "status: draft\n"
    assert not (await s1("read", file_path="notes.txt")).is_error
    assert not (await s2("read", file_path="notes.txt")).is_error
    assert not (
        await s2("edit", file_path="notes.txt", old_string="draft", new_string="review")
    ).is_error
    stale = await s1("edit", file_path="notes.txt", old_string="status", new_string="state")
    assert _text(stale) == (
        f'Error: cannot edit "{f}": file changed since it was read — re-read the file, then retry'
    )
    assert f.read_text() == "status: review\n"
    # Its own write or edit counts as seen: a created file is edited without a read.
    created = await s1("write", file_path="new.txt", content="a\n")
    assert _text(created).endswith("<content>\nCreated file\n</content>")
    assert not (await s1("edit", file_path="new.txt", old_string="a", new_string="b")).is_error
    assert not (await s1("edit", file_path="new.txt", old_string="b", new_string="c")).is_error


async def test_a_new_file_is_private_and_an_old_one_keeps_its_bits(tmp_path: Path) -> None:
    session = Session(tmp_path, fs_tools())
    await session("write", file_path="new.txt", content="x")
    assert stat.S_IMODE(os.stat(tmp_path / "new.txt").st_mode) == 0o600 & ~_umask()
    old = tmp_path / "old.sh"
    old.write_text("a")
    old.chmod(0o751)
    await session("read", file_path="old.sh")
    assert not (await session("write", file_path="old.sh", content="b")).is_error
    assert stat.S_IMODE(os.stat(old).st_mode) == 0o751


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


async def test_the_file_sandbox_refuses_without_asking(tmp_path: Path) -> None:
    workspace = tmp_path / "ws"
    workspace.mkdir()
    outside = Path("/var/tmp") / f"acp-plus-test-{os.getpid()}.txt"
    denied = (
        "Error: [sandbox: file access denied under {mode} mode]\n[sandbox: escalation "
        "available — retry this exact operation once with sandbox_permissions (the narrowest "
        "wider mode that suffices) + justification; the approval prompt asks the user]"
    )
    ws = Session(workspace, fs_tools())
    result = await ws("write", file_path=str(outside), content="x")
    assert _text(result) == denied.format(mode="workspace-write")
    assert not outside.exists()
    assert (
        ws.tools["write"].approval_reason({"file_path": str(outside), "content": "x"}, ws.ctx)
        is None
    )
    # The temp areas are writable roots, as on native.
    assert not (await ws("write", file_path=str(tmp_path / "t.txt"), content="x")).is_error
    ro = Session(workspace, fs_tools(), "read-only")
    refused = await ro("write", file_path="in.txt", content="x")
    assert _text(refused) == denied.format(mode="read-only")
    # Reads go anywhere, unasked, in every mode.
    assert ro.tools["read"].approval_reason({"file_path": "/etc/hostname"}, ro.ctx) is None


@pytest.mark.parametrize(
    ("outcome", "text"),
    [
        ("allowed-once", None),
        (
            "rejected",
            'Error: the user rejected escalating this operation to "danger-full-access"; '
            "it stays denied, so stop and explain instead of working around it",
        ),
        ("cancelled", 'Error: approval for escalating to "danger-full-access" was cancelled'),
    ],
)
async def test_an_escalation_asks_and_runs_wider_once_allowed(
    server: ParityServer, tmp_path: Path, outcome: ApprovalOutcome, text: str | None
) -> None:
    workspace = tmp_path / "ws"
    workspace.mkdir()
    target = Path("/var/tmp") / f"acp-plus-escalated-{os.getpid()}-{outcome}.txt"
    asked: list[ApprovalRequest] = []

    async def responder(req: ApprovalRequest) -> ApprovalOutcome:
        asked.append(req)
        return outcome

    provider = ParityStreamProvider(server.url)
    router = Router([provider])
    seen: list[dict[str, Any]] = []
    log = SessionStore(tmp_path / "home").create(str(workspace))
    agent = Agent(
        log, router, ToolRegistry(fs_tools()), ApprovalChain([responder]), workspace, seen.append
    )
    args = {
        "file_path": str(target),
        "content": "hi",
        "sandbox_permissions": "danger-full-access",
        "justification": "the user asked",
    }
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
        written = target.exists()
        target.unlink(missing_ok=True)
    assert [r.reason for r in asked] == ["escalate sandbox to danger-full-access: the user asked"]
    assert written is (outcome == "allowed-once")
    result = next(e for e in seen if e["type"] == "tool/result")
    assert result["isError"] is (text is not None)
    if text is not None:
        assert result["content"][0]["text"] == text


def test_only_an_escalation_gets_the_escalation_refusal() -> None:
    """Another question about a write (a guard rule's ask) keeps the loop's own refusal."""
    write = fs_tools()[1]
    assert write.refusal({"file_path": "a", "content": ""}, "rejected") is None  # type: ignore[attr-defined]
    escalated = {"file_path": "a", "content": "", "sandbox_permissions": "danger-full-access"}
    assert write.refusal(escalated, "unavailable") == (  # type: ignore[attr-defined]
        'Error: sandbox escalation to "danger-full-access" requires approval, but no approval '
        "channel is available"
    )
