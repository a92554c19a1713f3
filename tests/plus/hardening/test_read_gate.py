"""The file tools and the agent's own secrets: reads outside the workspace ask the client
like writes do (below `danger-full-access`), and the agent's own process files
(/proc/self, /proc/<its pid or a thread id>, /proc/thread-self) and its home are refused
in every mode, without asking. Paths are decided after symlinks are resolved."""

from __future__ import annotations

import os
import sys
import threading
from pathlib import Path
from typing import Any

import pytest
from plus_agent import World, WorldFactory, sdk_agent

from acp_plus.core.sandbox import SandboxMode, agent_private, read_escalation
from acp_plus.core.tools.base import ToolContext
from acp_plus.core.tools.builtin import EditTool, ReadTool, Refused, WriteTool, builtin_tools
from acp_plus.core.tools.proctree import agent_pids

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc")

SECRET = "sk-h12-never-to-be-read"


def _ctx(cwd: Path, sandbox: SandboxMode = "workspace-write") -> ToolContext:
    return ToolContext("s", cwd, "c1", 1, sandbox)


@pytest.fixture
def layout(tmp_path: Path) -> tuple[Path, Path, Path]:
    """A workspace, the agent's home beside it, and a file outside both."""
    ws, home = tmp_path / "ws", tmp_path / "home"
    (home / "sessions").mkdir(parents=True)
    ws.mkdir()
    (home / "sessions" / "other.jsonl").write_text('{"type":"header"}\n')
    outside = tmp_path / "outside.txt"
    outside.write_text("outside\n")
    (ws / "in.txt").write_text("inside\n")
    return ws, home, outside


# -- the pure decisions -------------------------------------------------------------------


def test_reads_outside_the_workspace_need_full_access(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    for mode in ("read-only", "workspace-write"):
        assert read_escalation(ws / "a", mode, ws) is None
        assert read_escalation(ws, mode, ws) is None
        assert read_escalation(tmp_path / "b", mode, ws) == (
            f"escalate sandbox to danger-full-access: read outside the workspace: {tmp_path / 'b'}"
        )
    assert read_escalation(tmp_path / "b", "danger-full-access", ws) is None
    # A sibling that merely shares the prefix is outside.
    assert read_escalation(tmp_path / "ws-other" / "x", "read-only", ws) is not None


def test_agent_private_paths() -> None:
    home, pids = Path("/h/acp"), {41, 42}
    own = "the agent's own process"
    assert agent_private(Path("/proc/41/environ"), [home], pids) == own
    assert agent_private(Path("/proc/42/task/42/mem"), [home], pids) == own
    assert agent_private(Path("/proc/self/environ"), [home], pids) == own
    assert agent_private(Path("/proc/thread-self"), [home], pids) == own
    assert agent_private(Path("/proc/43/environ"), [home], pids) is None
    assert agent_private(Path("/proc/cpuinfo"), [home], pids) is None
    assert agent_private(Path("/h/acp"), [home], pids) is not None
    assert agent_private(Path("/h/acp/sessions/x.jsonl"), [home], pids) is not None
    assert agent_private(Path("/h/acp-other/x"), [home], pids) is None


# -- the tools on the real file system and this real process -------------------------------


@pytest.mark.parametrize("mode", ["read-only", "workspace-write", "danger-full-access"])
async def test_own_process_files_are_refused_without_asking(tmp_path: Path, mode: str) -> None:
    ctx = _ctx(tmp_path, mode)  # type: ignore[arg-type]
    tid = threading.get_native_id()
    pipe_r, pipe_w = os.pipe()  # /proc/self/fd/<pipe> names no file: it stays in /proc
    ours = [
        "/proc/self/environ",
        f"/proc/{os.getpid()}/environ",
        "/proc/thread-self/environ",
        f"/proc/{tid}/environ",  # a thread id is a /proc entry of this process too
        f"/proc/{os.getpid()}/task/{tid}/environ",
        f"/proc/self/fd/{pipe_r}",
    ]
    (tmp_path / "env-link").symlink_to("/proc/self/environ")
    ours.append("env-link")
    for given in ours:
        with pytest.raises(Refused, match="the agent's own process"):
            ReadTool().approval_reason({"file_path": given}, ctx)
        result = await ReadTool().run({"file_path": given}, ctx)
        assert result.is_error and "refused:" in result.content[0]["text"], given
    os.close(pipe_r)
    os.close(pipe_w)
    assert os.getpid() in agent_pids() and tid in agent_pids()
    # Another process's entries are ordinary paths outside the workspace.
    reason = ReadTool().approval_reason({"file_path": "/proc/1/status"}, _ctx(tmp_path))
    assert reason is not None and reason.startswith("escalate sandbox to danger-full-access")


async def test_the_agents_home_is_refused_to_every_file_tool(
    layout: tuple[Path, Path, Path],
) -> None:
    ws, home, _ = layout
    log = home / "sessions" / "other.jsonl"
    (ws / "home-link").symlink_to(home)
    read, write, edit = (tool for tool in builtin_tools(home)[:3])
    ctx = _ctx(ws, "danger-full-access")
    for given in (str(log), "home-link/sessions/other.jsonl", str(home)):
        with pytest.raises(Refused, match="the agent's home"):
            read.approval_reason({"file_path": given}, ctx)
        with pytest.raises(Refused):
            write.approval_reason({"file_path": given, "content": "x"}, ctx)
        with pytest.raises(Refused):
            edit.approval_reason({"file_path": given, "old_string": "a", "new_string": "b"}, ctx)
    wrote = await write.run({"file_path": str(log), "content": "forged"}, ctx)
    assert wrote.is_error
    assert log.read_text() == '{"type":"header"}\n'
    # The same tools without a home configured read it like any other file.
    assert ReadTool().approval_reason({"file_path": str(log)}, ctx) is None


def test_symlinks_are_followed_before_deciding(layout: tuple[Path, Path, Path]) -> None:
    ws, _, outside = layout
    (ws / "looks-inside.txt").symlink_to(outside)
    (ws / "dir-link").symlink_to(outside.parent)
    ctx = _ctx(ws)
    for given in ("looks-inside.txt", "dir-link/outside.txt", "../outside.txt"):
        reason = ReadTool().approval_reason({"file_path": given}, ctx)
        assert reason == (
            f"escalate sandbox to danger-full-access: read outside the workspace: {outside}"
        )
    assert ReadTool().approval_reason({"file_path": "in.txt"}, _ctx(ws, "read-only")) is None
    assert WriteTool().approval_reason({"file_path": "looks-inside.txt", "content": ""}, ctx)
    assert EditTool().approval_reason(
        {"file_path": "looks-inside.txt", "old_string": "a", "new_string": "b"}, ctx
    )


async def test_a_fifo_is_refused_instead_of_blocking(tmp_path: Path) -> None:
    os.mkfifo(tmp_path / "pipe")
    read = await ReadTool().run({"file_path": "pipe"}, _ctx(tmp_path))
    assert read.is_error and "not a regular file" in read.content[0]["text"]
    write = await WriteTool().run({"file_path": "pipe", "content": "x"}, _ctx(tmp_path))
    assert write.is_error and "not a regular file" in write.content[0]["text"]


# -- through the real acp-plus, as a client sees it -----------------------------------------


def _read(call_id: str, path: str) -> dict[str, Any]:
    return {"tool_calls": [{"id": call_id, "name": "read", "arguments": {"file_path": path}}]}


def _with_secret(w: World) -> World:
    base = w.env()
    w.env = lambda: {**base, "DEEPSEEK_API_KEY": SECRET}  # type: ignore[method-assign]
    return w


def _results(updates: list[dict[str, Any]]) -> dict[str, tuple[str, str]]:
    """toolCallId -> (final status, text) of every finished tool call."""
    out = {}
    for update in updates:
        if update.get("sessionUpdate") == "tool_call_update" and update.get("content"):
            text = update["content"][0]["content"]["text"]
            out[update["toolCallId"]] = (update["status"], text)
    return out


@pytest.mark.parametrize(
    ("answer", "outside_status"), [("reject-once", "failed"), ("allow-once", "completed")]
)
async def test_acp_plus_asks_for_outside_reads_and_refuses_its_own(
    world: WorldFactory, tmp_path: Path, answer: str, outside_status: str
) -> None:
    outside = tmp_path / "outside.txt"
    outside.write_text("outside text\n")
    session_log_dir = tmp_path / "home" / "sessions"  # the world's home (plus_agent)
    w = _with_secret(
        world(
            builtin_tools=True,
            llm=[
                _read("own-env", "/proc/self/environ"),
                _read("outside", str(outside)),
                _read("home", str(session_log_dir)),
                _read("inside", "notes.txt"),
                {"text": "done"},
            ],
        )
    )
    (w.workdir / "notes.txt").write_text("inside text\n")
    async with sdk_agent(w, permission=answer) as s:
        await s.conn.initialize(protocol_version=1)
        new = await s.conn.new_session(cwd=str(w.workdir), mcp_servers=[])
        result = await s.conn.prompt(
            session_id=new.session_id, prompt=[{"type": "text", "text": "look around"}]
        )
    assert result.stop_reason == "end_turn"
    # Only the read outside the workspace was a question; the refusals asked nobody.
    assert [r["toolCall"]["toolCallId"] for r in s.client.permission_requests] == ["outside"]
    results = _results(s.client.updates)
    assert results["own-env"][0] == "failed"
    assert "refused: /proc/self/environ is the agent's own process" in results["own-env"][1]
    assert results["home"][0] == "failed" and "the agent's home" in results["home"][1]
    assert results["outside"][0] == outside_status
    assert ("outside text" in results["outside"][1]) is (answer == "allow-once")
    assert results["inside"] == ("completed", "inside text\n")
    # The key was in acp-plus's environment and never reached the client or the model.
    wire = repr(s.client.updates) + repr(w.model_requests())
    assert SECRET not in wire
