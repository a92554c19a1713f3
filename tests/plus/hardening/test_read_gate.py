"""The file tools and the agent's own secrets: reads go anywhere unasked, as on native,
but the agent's own process files (/proc/self, /proc/<its pid or a thread id>,
/proc/thread-self) and its home are refused in every mode, without asking (a protection
native lacks). Paths are decided after symlinks are resolved."""

from __future__ import annotations

import os
import shutil
import sys
import tempfile
import threading
from pathlib import Path
from typing import Any

import pytest
from plus_agent import World, WorldFactory, sdk_agent

from acp_plus.core.sandbox import SandboxMode, agent_private
from acp_plus.core.tools.base import ToolContext
from acp_plus.core.tools.builtin import builtin_tools
from acp_plus.core.tools.fs_family import fs_tools
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


def test_reads_are_never_a_question(tmp_path: Path) -> None:
    """Native's file sandbox confines writes, not reads: `read` asks nobody, anywhere."""
    read = fs_tools()[0]
    for mode in ("read-only", "workspace-write", "danger-full-access"):
        ctx = _ctx(tmp_path / "ws", mode)  # type: ignore[arg-type]
        assert read.approval_reason({"file_path": str(tmp_path / "b")}, ctx) is None
        assert read.approval_reason({"file_path": "/etc/passwd"}, ctx) is None


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
    read = fs_tools()[0]
    for given in ours:
        assert read.approval_reason({"file_path": given}, ctx) is None
        result = await read.run({"file_path": given}, ctx)
        text = result.content[0]["text"]
        assert result.is_error and text.startswith("Error: refused:"), given
        assert "the agent's own process" in text
    os.close(pipe_r)
    os.close(pipe_w)
    assert os.getpid() in agent_pids() and tid in agent_pids()
    # Another process's entries are ordinary files, read like any other.
    other = await read.run({"file_path": "/proc/1/status"}, _ctx(tmp_path))
    assert not other.is_error and "Name:" in other.content[0]["text"]


async def test_the_agents_home_is_refused_to_every_file_tool(
    layout: tuple[Path, Path, Path],
) -> None:
    ws, home, _ = layout
    log = home / "sessions" / "other.jsonl"
    (ws / "home-link").symlink_to(home)
    tools = {tool.name: tool for tool in builtin_tools(home)}
    read, write, edit = tools["read"], tools["write"], tools["edit"]
    ctx = _ctx(ws, "danger-full-access")
    wider = {"sandbox_permissions": "danger-full-access", "justification": "j"}
    for given in (str(log), "home-link/sessions/other.jsonl", str(home)):
        calls = [
            (read, {"file_path": given}),
            (write, {"file_path": given, "content": "forged"}),
            (edit, {"file_path": given, "old_string": "header", "new_string": "forged"}),
        ]
        for tool, args in calls:
            # Not even an escalation the model asks for is put to the user.
            assert tool.approval_reason({**args, **wider}, _ctx(ws)) is None
            result = await tool.run(args, ctx)
            assert result.is_error and "the agent's home" in result.content[0]["text"]
    assert log.read_text() == '{"type":"header"}\n'
    # The same tools without a home configured read it like any other file.
    assert not (await fs_tools()[0].run({"file_path": str(log)}, ctx)).is_error


async def test_symlinks_are_followed_before_deciding(tmp_path: Path) -> None:
    """The file sandbox judges the real path: a link in the workspace to a place outside
    the writable roots is outside, and `..` walks the physical parent."""
    ws = tmp_path / "ws"
    ws.mkdir()
    outside = Path(tempfile.mkdtemp(dir="/var/tmp", prefix="acp-plus-test-"))
    try:
        (outside / "f.txt").write_text("outside\n")
        (ws / "looks-inside.txt").symlink_to(outside / "f.txt")
        (ws / "dir-link").symlink_to(outside)
        read, write, edit = fs_tools()
        ctx = _ctx(ws)
        for given in (
            "looks-inside.txt",
            "dir-link/f.txt",
            "dir-link/../" + outside.name + "/f.txt",
        ):
            seen = await read.run({"file_path": given}, ctx)
            assert f"<path>{outside.resolve()}/f.txt</path>" in seen.content[0]["text"]
            for tool, args in (
                (write, {"file_path": given, "content": "x"}),
                (edit, {"file_path": given, "old_string": "outside", "new_string": "x"}),
            ):
                result = await tool.run(args, ctx)
                assert result.content[0]["text"].startswith(
                    "Error: [sandbox: file access denied under workspace-write mode]"
                ), given
        assert (outside / "f.txt").read_text() == "outside\n"
    finally:
        shutil.rmtree(outside)


async def test_a_fifo_is_refused_instead_of_blocking(tmp_path: Path) -> None:
    os.mkfifo(tmp_path / "pipe")
    read_tool, write_tool, _ = fs_tools()
    read = await read_tool.run({"file_path": "pipe"}, _ctx(tmp_path))
    assert read.content[0]["text"] == f'Error: cannot read "{tmp_path}/pipe": not a regular file'
    write = await write_tool.run({"file_path": "pipe", "content": "x"}, _ctx(tmp_path))
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


async def test_acp_plus_reads_outside_unasked_and_refuses_its_own(
    world: WorldFactory, tmp_path: Path
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
    async with sdk_agent(w, permission="reject-once") as s:
        await s.conn.initialize(protocol_version=1)
        new = await s.conn.new_session(cwd=str(w.workdir), mcp_servers=[])
        result = await s.conn.prompt(
            session_id=new.session_id, prompt=[{"type": "text", "text": "look around"}]
        )
    assert result.stop_reason == "end_turn"
    # Nothing was a question: reads go anywhere, and the refusals ask nobody.
    assert s.client.permission_requests == []
    results = _results(s.client.updates)
    assert results["own-env"][0] == "failed"
    assert "refused: /proc/self/environ is the agent's own process" in results["own-env"][1]
    assert results["home"][0] == "failed" and "the agent's home" in results["home"][1]
    assert results["outside"][0] == "completed" and "1: outside text" in results["outside"][1]
    assert results["inside"][0] == "completed" and "1: inside text" in results["inside"][1]
    # The key was in acp-plus's environment and never reached the client or the model.
    wire = repr(s.client.updates) + repr(w.model_requests())
    assert SECRET not in wire
