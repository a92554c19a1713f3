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
from acp_plus.core.tools.bash import BashTool
from acp_plus.core.tools.bash_text import MAX_OUTPUT_BYTES
from acp_plus.core.tools.fs_family import fs_tools
from acp_plus.core.tools.job_table import JobTable


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


async def test_bash_runs_in_cwd_reports_exit_code_and_keeps_the_tail(tmp_path: Path) -> None:
    ctx = _ctx(tmp_path, "danger-full-access")
    bash = BashTool(JobTable())
    ok = await bash.run({"description": "d", "command": "pwd; echo hi >&2"}, ctx)
    assert ok.content[0]["text"] == f"{tmp_path}\n[stderr]\nhi\n"
    # A failing command is reported, not an error: the model decides (native's rule).
    failed = await bash.run({"description": "d", "command": "exit 3"}, ctx)
    assert not failed.is_error and failed.content[0]["text"] == "(no output)\n[exit code: 3]"
    size = MAX_OUTPUT_BYTES * 3
    command = f"head -c {size - 4} /dev/zero | tr '\\0' a; echo END"
    big = await bash.run({"description": "d", "command": command}, ctx)
    text = big.content[0]["text"]
    kept, _, note = text.partition("\n[output truncated; full output: ")
    assert kept == "a" * (MAX_OUTPUT_BYTES - 4) + "END\n"
    assert note.endswith("-stdout.log]")
    assert len(Path(note.removesuffix("]")).read_bytes()) == size


async def test_bash_timeout_moves_the_command_to_a_job(tmp_path: Path) -> None:
    marker = tmp_path / "child.pid"
    jobs = JobTable()
    started = time.monotonic()
    result = await BashTool(jobs).run(
        {
            "description": "d",
            "command": f"echo early; sleep 30 & echo $! > {marker}; wait",
            "timeoutMs": 300,
        },
        # Unconfined, so `$!` is a pid of this machine's namespace.
        _ctx(tmp_path, "danger-full-access"),
    )
    assert time.monotonic() - started < 5
    text = result.content[0]["text"]
    assert not result.is_error and text.startswith("early\n[still running after 300ms; moved")
    (job,) = jobs.list("s")
    assert job.id in text and running(int(marker.read_text()))
    assert jobs.kill(job, None, by_model=True)
    await job.settled.wait()
    assert job.status == "killed" and job.detail == "signal: SIGTERM"
    await _gone(int(marker.read_text()))


async def test_cancelling_bash_kills_the_process_group(tmp_path: Path) -> None:
    marker = tmp_path / "child.pid"
    task = asyncio.create_task(
        BashTool(JobTable()).run(
            {"description": "d", "command": f"sleep 30 & echo $! > {marker}; wait"},
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
    assert BashTool(JobTable()).approval_reason({"description": "d", "command": "ls"}, ws) is None
    escalate = {
        "description": "d",
        "command": "ls",
        "sandbox_permissions": "danger-full-access",
        "justification": "j",
    }
    assert (
        BashTool(JobTable()).approval_reason(escalate, ws)
        == "escalate sandbox to danger-full-access: j"
    )


async def test_parity_configuration_offers_only_catalog_tools(server: ParityServer) -> None:
    provider = ParityStreamProvider(server.url)
    try:
        tools = await session_tools(fixture_host=provider, builtin_tools=False)
    finally:
        await provider.aclose()
    assert tools.names() == ["echo"]
