"""Built-in tools that hold up: encodings and line endings survive edits, windows reach
any part of a large file, bash returns when its shell exits, and no tool process
outlives its call or the agent, nor sees the agent's credentials."""

from __future__ import annotations

import asyncio
import signal
import sys
import time
from pathlib import Path

import pytest
from plus_agent import (
    WorldFactory,
    bash_world,
    processes_with,
    raw_agent,
    sleeping,
    start_prompt,
    wait_for,
)

from acp_plus.core.sandbox import SandboxMode
from acp_plus.core.tools.base import Tool, ToolContext
from acp_plus.core.tools.bash import BashTool
from acp_plus.core.tools.bash_text import MAX_OUTPUT_BYTES
from acp_plus.core.tools.fs_family import fs_tools
from acp_plus.core.tools.fs_text import READ_MAX_BYTES
from acp_plus.core.tools.job_table import JobTable
from acp_plus.core.tools.procs import is_secret_name, protect_env, tool_env

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc")


def _ctx(cwd: Path, sandbox: SandboxMode = "danger-full-access") -> ToolContext:
    return ToolContext("s", cwd, "c1", 1, sandbox)


def _text(result: object) -> str:
    return str(result.content[0]["text"])  # type: ignore[attr-defined]


# -- 1. encodings and line endings (native's: tools/fs-edit-matches) ----------------------


async def _seen(path: str, tmp_path: Path) -> tuple[Tool, Tool]:
    read, write, edit = fs_tools()
    await read.run({"file_path": path}, _ctx(tmp_path))
    return write, edit


async def test_edit_keeps_crlf_and_drops_a_utf8_bom(tmp_path: Path) -> None:
    f = tmp_path / "win.txt"
    f.write_bytes(b"\xef\xbb\xbfone\r\ntwo\r\nthree\r\n")
    _, edit = await _seen("win.txt", tmp_path)
    edited = await edit.run(
        {"file_path": "win.txt", "old_string": "one\ntwo\n", "new_string": "1\n2\n2b\n"},
        _ctx(tmp_path),
    )
    assert not edited.is_error, _text(edited)
    # As native decodes it, the byte-order mark is gone; the file's CRLF stays.
    assert f.read_bytes() == b"1\r\n2\r\n2b\r\nthree\r\n"
    again = await edit.run(
        {"file_path": "win.txt", "old_string": "2b\r\n", "new_string": "x\n"}, _ctx(tmp_path)
    )
    assert not again.is_error
    assert f.read_bytes() == b"1\r\n2\r\nx\r\nthree\r\n"


async def test_edit_keeps_lf_and_refuses_utf16_as_binary(tmp_path: Path) -> None:
    lf = tmp_path / "lf.txt"
    lf.write_bytes(b"a\nb\n")
    _, edit = await _seen("lf.txt", tmp_path)
    await edit.run({"file_path": "lf.txt", "old_string": "a", "new_string": "A\nA"}, _ctx(tmp_path))
    assert lf.read_bytes() == b"A\nA\nb\n"
    u16 = tmp_path / "u16.txt"
    u16.write_bytes("\ufeffhello\r\nworld\r\n".encode("utf-16-le"))
    read, _, edit = fs_tools()
    shown = await read.run({"file_path": "u16.txt"}, _ctx(tmp_path))
    assert _text(shown) == f'Error: cannot read "{tmp_path}/u16.txt": binary file'
    bad = tmp_path / "latin1.txt"
    bad.write_bytes(b"caf\xe9\n")
    shown = await read.run({"file_path": "latin1.txt"}, _ctx(tmp_path))
    assert _text(shown) == f'Error: cannot read "{tmp_path}/latin1.txt": invalid UTF-8 text'


async def test_write_replaces_content_as_given(tmp_path: Path) -> None:
    f = tmp_path / "bom.txt"
    f.write_bytes(b"\xef\xbb\xbfold\r\n")
    write, _ = await _seen("bom.txt", tmp_path)
    wrote = await write.run({"file_path": "bom.txt", "content": "new\n"}, _ctx(tmp_path))
    assert not wrote.is_error
    assert f.read_bytes() == b"new\n"
    assert (
        _text(wrote) == f"<path>{f}</path>\n<type>file</type>\n<content>\nUpdated file\n</content>"
    )


# -- 2. read windows --------------------------------------------------------------------


async def test_read_window_reaches_any_part_of_a_big_file(tmp_path: Path) -> None:
    big = tmp_path / "big.txt"
    lines = [f"line {i:07d} " + "x" * 50 for i in range(20_000)]
    big.write_text("\n".join(lines) + "\n")
    assert big.stat().st_size > 20 * READ_MAX_BYTES
    read = fs_tools()[0]
    tail = await read.run({"file_path": "big.txt", "offset": 19_991, "limit": 3}, _ctx(tmp_path))
    numbered = "\n".join(f"{n}: {lines[n - 1]}" for n in range(19_991, 19_994))
    assert f"<content>\n{numbered}\n\n(Showing lines 19991-19993 of 20000." in _text(tail)
    rest = await read.run({"file_path": "big.txt", "offset": 19_999}, _ctx(tmp_path))
    assert _text(rest).endswith(
        "20000: " + lines[-1] + "\n\n(End of file - total 20000 lines)\n</content>"
    )
    head = await read.run({"file_path": "big.txt"}, _ctx(tmp_path))
    assert "(Output capped. Showing lines 1-" in _text(head)


# -- 3. bash results --------------------------------------------------------------------


async def test_bash_returns_when_its_shell_exits_despite_a_background_child(
    tmp_path: Path,
) -> None:
    started = time.monotonic()
    result = await BashTool(JobTable()).run(
        {"description": "d", "command": "sleep 100 & echo started"}, _ctx(tmp_path)
    )
    assert time.monotonic() - started < 5
    assert _text(result) == "started\n"  # native's result: the child is no job of the call
    assert not result.is_error


async def test_bash_marks_a_failure_and_keeps_each_streams_tail(tmp_path: Path) -> None:
    ok = await BashTool(JobTable()).run(
        {"description": "d", "command": "pwd; echo hi >&2"}, _ctx(tmp_path)
    )
    assert _text(ok) == f"{tmp_path}\n[stderr]\nhi\n"
    failed = await BashTool(JobTable()).run(
        {"description": "d", "command": "printf no-newline; exit 3"}, _ctx(tmp_path)
    )
    assert not failed.is_error and _text(failed) == "no-newline\n[exit code: 3]"
    size = MAX_OUTPUT_BYTES * 3
    command = f"echo HEAD; head -c {size} /dev/zero | tr '\\0' a; echo TAIL; echo short >&2"
    big = await BashTool(JobTable()).run({"description": "d", "command": command}, _ctx(tmp_path))
    out, _, err = _text(big).partition("\n[stderr]\n")
    kept, _, spill = out.partition("\n[output truncated; full output: ")
    assert kept == "a" * (MAX_OUTPUT_BYTES - 5) + "TAIL\n" and err == "short\n"
    assert Path(spill.removesuffix("]")).read_bytes() == b"HEAD\n" + b"a" * size + b"TAIL\n"


# -- 4. no process outlives its tool or the agent ---------------------------------------


async def test_finished_bash_leaves_no_descendant_even_after_setsid(tmp_path: Path) -> None:
    marker = "301.11"
    result = await BashTool(JobTable()).run(
        {"description": "d", "command": f"setsid sleep {marker} & (sleep {marker} &) ; echo done"},
        _ctx(tmp_path),
    )
    assert _text(result).startswith("done\n")
    await wait_for(lambda: not processes_with(marker), timeout=2.0)


async def test_cancelled_bash_leaves_no_descendant_even_after_setsid(tmp_path: Path) -> None:
    marker = "301.13"
    task = asyncio.create_task(
        BashTool(JobTable()).run(
            {"description": "d", "command": f"setsid sleep {marker} & sleep {marker}"},
            _ctx(tmp_path),
        )
    )
    await wait_for(lambda: len(sleeping(marker)) == 2)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    await wait_for(lambda: not processes_with(marker), timeout=2.0)


async def test_timed_out_bash_leaves_no_descendant_once_its_session_closes(
    tmp_path: Path,
) -> None:
    marker = "301.17"
    jobs = JobTable()
    command = f"setsid sleep {marker} & sleep {marker}"
    args = {"description": "d", "command": command, "timeoutMs": 300}
    result = await BashTool(jobs).run(args, _ctx(tmp_path))
    # Native's timeout moves the command to the background: it keeps running ...
    assert not result.is_error and "moved to background job bash-" in _text(result)
    assert len(sleeping(marker)) == 2
    # ... as a job of its session, whose end takes the whole tree with it.
    await jobs.close("s")
    await wait_for(lambda: not processes_with(marker), timeout=2.0)


async def test_sigkilled_agent_leaves_no_tool_process(world: WorldFactory) -> None:
    marker = "300.19"
    w = bash_world(world, f"setsid sleep {marker} & sleep {marker}")
    async with raw_agent(w) as agent:
        await start_prompt(agent, w)
        await wait_for(lambda: len(sleeping(marker)) == 2)
        agent.process.send_signal(signal.SIGKILL)
        await asyncio.wait_for(agent.process.wait(), 5)
    await wait_for(
        lambda: not processes_with(marker), timeout=10.0
    )  # a bound under load, not a speed goal


# -- 5. credentials stay with the agent -------------------------------------------------


def test_secret_names() -> None:
    for name in ("DEEPSEEK_API_KEY", "GITHUB_TOKEN", "AWS_SECRET", "AWS_SECRET_ACCESS_KEY"):
        assert is_secret_name(name), name
    for name in ("PGPASSWORD", "db_password_file", "LOCAL_LLM_KEY", "api_key"):
        assert is_secret_name(name), name
    for name in ("PATH", "HOME", "LANG", "KEYBOARD", "TOKENIZERS_PARALLELISM"):
        assert not is_secret_name(name), name
    protect_env("ODDLY_NAMED_PROVIDER_CRED")
    assert tool_env({"ODDLY_NAMED_PROVIDER_CRED": "x", "PATH": "/bin"}) == {"PATH": "/bin"}


async def test_bash_env_cannot_print_the_users_key(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("DEEPSEEK_API_KEY", "sk-very-secret-1")
    monkeypatch.setenv("SOME_SERVICE_TOKEN", "tok-very-secret-2")
    monkeypatch.setenv("MYSQL_PASSWORD", "pw-very-secret-3")
    monkeypatch.setenv("HARMLESS_SETTING", "visible-4")
    result = await BashTool(JobTable()).run({"description": "d", "command": "env"}, _ctx(tmp_path))
    text = _text(result)
    assert "very-secret" not in text
    assert "HARMLESS_SETTING=visible-4" in text
