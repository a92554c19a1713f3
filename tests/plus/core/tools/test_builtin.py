"""Built-in tools on a real file system and real processes, and their sandbox approvals."""

from __future__ import annotations

import asyncio
import time
from pathlib import Path

import pytest
from plus_agent import running, wait_for
from plus_stream_server import ParityServer

from acp_plus.core.llm.parity_stream import ParityStreamProvider
from acp_plus.core.sandbox import SandboxMode
from acp_plus.core.tools import session_tools
from acp_plus.core.tools.base import ToolContext
from acp_plus.core.tools.bash import OUTPUT_CAP, BashTool
from acp_plus.core.tools.fs_family import fs_tools


def _ctx(cwd: Path, sandbox: SandboxMode = "workspace-write") -> ToolContext:
    return ToolContext("s", cwd, "c1", 1, sandbox)


async def test_write_read_edit_roundtrip(tmp_path: Path) -> None:
    ctx = _ctx(tmp_path)
    read, write, edit = fs_tools()
    wrote = await write.run({"file_path": "sub/a.txt", "content": "one\ntwo\nthree\n"}, ctx)
    assert not wrote.is_error
    assert (tmp_path / "sub" / "a.txt").read_text() == "one\ntwo\nthree\n"
    window = await read.run({"file_path": "sub/a.txt", "offset": 2, "limit": 1}, ctx)
    assert window.content[0]["text"] == (
        f"<path>{tmp_path.resolve()}/sub/a.txt</path>\n<type>file</type>\n<content>\n2: two\n\n"
        "(Showing lines 2-2 of 3. Use offset=3 to continue.)\n</content>"
    )
    edited = await edit.run(
        {"file_path": str(tmp_path / "sub/a.txt"), "old_string": "two", "new_string": "2"}, ctx
    )
    assert not edited.is_error
    assert (tmp_path / "sub" / "a.txt").read_text() == "one\n2\nthree\n"


async def test_edit_refuses_missing_and_ambiguous_matches(tmp_path: Path) -> None:
    (tmp_path / "f").write_text("x x")
    ctx = _ctx(tmp_path)
    read, _, edit = fs_tools()
    await read.run({"file_path": "f"}, ctx)
    missing = await edit.run({"file_path": "f", "old_string": "y", "new_string": "z"}, ctx)
    ambiguous = await edit.run({"file_path": "f", "old_string": "x", "new_string": "z"}, ctx)
    assert missing.is_error and ambiguous.is_error
    assert "matched 2 times" in ambiguous.content[0]["text"]
    everywhere = await edit.run(
        {"file_path": "f", "old_string": "x", "new_string": "z", "replace_all": True}, ctx
    )
    assert not everywhere.is_error
    assert (tmp_path / "f").read_text() == "z z"


async def test_read_of_a_missing_file_is_a_failed_result(tmp_path: Path) -> None:
    result = await fs_tools()[0].run({"file_path": "nope"}, _ctx(tmp_path))
    assert result.is_error
    assert result.content[0]["text"] == f'Error: cannot read "{tmp_path}/nope": not found'


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
    """Only an escalation the model asks for is a question (the file sandbox refuses the
    rest without asking: tests/plus/core/tools/test_fs_family.py)."""
    ws = _ctx(tmp_path)
    read, write, edit = fs_tools()
    outside = str(tmp_path.parent / "elsewhere.txt")
    assert write.approval_reason({"file_path": outside, "content": ""}, ws) is None
    assert read.approval_reason({"file_path": outside}, _ctx(tmp_path, "read-only")) is None
    wider = {"sandbox_permissions": "workspace-write", "justification": "j"}
    assert edit.approval_reason(
        {"file_path": "in.txt", "old_string": "a", "new_string": "b", **wider},
        _ctx(tmp_path, "read-only"),
    ) == ("escalate sandbox to workspace-write: j")
    # The standing mode again, or an unpaired field, asks nothing.
    assert write.approval_reason({"file_path": "in.txt", "content": "", **wider}, ws) is None
    assert (
        write.approval_reason({"file_path": "a", "content": "", "justification": "j"}, ws) is None
    )
    # bash runs inside the OS sandbox: it asks only for an escalation the model requests.
    assert BashTool().approval_reason({"command": "ls"}, ws) is None
    escalate = {"command": "ls", "sandbox_permissions": "danger-full-access", "justification": "j"}
    assert BashTool().approval_reason(escalate, ws) == "escalate sandbox to danger-full-access: j"


async def test_parity_configuration_offers_only_catalog_tools(server: ParityServer) -> None:
    provider = ParityStreamProvider(server.url)
    try:
        tools = await session_tools(fixture_host=provider, builtin_tools=False)
    finally:
        await provider.aclose()
    assert tools.names() == ["echo"]
