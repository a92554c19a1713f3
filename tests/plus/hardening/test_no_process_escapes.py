"""No process a tool starts outlives it: every background job a `bash` call leaves (plain
`&`, `setsid`, a double fork) is gone when the call finishes, is cancelled, or its
session closes, and when acp-plus exits, even by SIGKILL. Checked on the real process
tree (/proc): the background job writes its own pid, and afterwards neither that pid nor
any process naming the test's marker is alive."""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
import subprocess
import sys
import uuid
from pathlib import Path

import pytest
from plus_agent import RawAgent, World, WorldFactory, processes_with, raw_agent, running, wait_for

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc")

# The background job announces itself (its pid, then `exec sleep`), so the test knows it
# really ran before the ending under test, whatever the machine's load.
JOB = "sh -c 'echo $$ > bg.pid; exec sleep {marker}' >/dev/null 2>&1"
SPAWNS = {
    "ampersand": JOB + " &",
    "setsid": "setsid " + JOB + " &",
    "double-fork": "(" + JOB + " &)",
}
WAIT_FOR_JOB = "while [ ! -s bg.pid ]; do sleep 0.01; done"
ENDINGS = ("finish", "cancel", "session-close", "stdin-eof", "sigkill")

# Death and reaping are asynchronous; a bound for a loaded machine, not a speed goal.
GONE_WITHIN = 10.0


def _world(world: WorldFactory, command: str) -> World:
    call = {"id": "call-1", "name": "bash", "arguments": {"description": "d", "command": command}}
    return world(
        llm=[{"tool_calls": [call]}, {"text": "done"}],
        builtin_tools=True,
        extra_config='sandbox = "danger-full-access"\n',
    )


async def _open_session(agent: RawAgent, w: World) -> str:
    await agent.call("initialize", {"protocolVersion": 1})
    new = await agent.call("session/new", {"cwd": str(w.workdir), "mcpServers": []})
    session_id: str = new["result"]["sessionId"]
    return session_id


def _job_pid(w: World) -> int | None:
    try:
        text = (w.workdir / "bg.pid").read_text(encoding="ascii").strip()
    except OSError:
        return None
    return int(text) if text.isdigit() else None


async def _run(agent: RawAgent, w: World, ending: str, marker: str) -> None:
    """Drive one prompt whose bash call left a background job, then end it `ending`."""
    session_id = await _open_session(agent, w)
    prompt = await agent.request(
        "session/prompt", {"sessionId": session_id, "prompt": [{"type": "text", "text": "go"}]}
    )
    if ending == "finish":
        response, _ = await agent.until_response(prompt, timeout=30)
        assert response["result"] == {"stopReason": "end_turn"}
        return
    # The command's foreground `sleep <marker>` is running once the job has written
    # its pid (the shell moves on to it at once); both are below the supervisor.
    await wait_for(lambda: _job_pid(w) is not None, timeout=30)
    if ending == "cancel":
        await agent.send(
            {"jsonrpc": "2.0", "method": "session/cancel", "params": {"sessionId": session_id}}
        )
        response, _ = await agent.until_response(prompt, timeout=30)
        assert response["result"] == {"stopReason": "cancelled"}
    elif ending == "session-close":
        closed = await agent.call("session/close", {"sessionId": session_id}, timeout=30)
        assert closed["result"] == {}
    elif ending == "stdin-eof":
        await agent.close()
    else:
        agent.process.send_signal(signal.SIGKILL)
        await asyncio.wait_for(agent.process.wait(), 10)


@pytest.mark.parametrize("ending", ENDINGS)
@pytest.mark.parametrize("spawn", list(SPAWNS))
async def test_a_background_job_dies_with_its_tool(
    world: WorldFactory, spawn: str, ending: str
) -> None:
    marker = f"3{uuid.uuid4().int % 10**6:06d}.5"  # a sleep length no other test uses
    lines = [SPAWNS[spawn].format(marker=marker), WAIT_FOR_JOB]
    if ending != "finish":
        lines.append(f"sleep {marker}")  # keeps the call running until the ending
    command = "\n".join(lines)
    w = _world(world, command)
    async with raw_agent(w) as agent:
        await _run(agent, w, ending, marker)
        pid = _job_pid(w)
        assert pid is not None, "the background job never started"
        try:
            await wait_for(lambda: not running(pid) and not processes_with(marker), GONE_WITHIN)
        except TimeoutError:
            left = [_describe(p) for p in sorted({pid, *processes_with(marker)}) if running(p)]
            raise AssertionError(f"alive {GONE_WITHIN} s after the {ending}: {left}") from None
    assert not processes_with(marker)


def _describe(pid: int) -> str:
    """A process as /proc shows it: pid, state, parent, command line (for a failure)."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_bytes().rsplit(b")", 1)[1].split()
        argv = Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ")
    except OSError:
        return f"{pid} (gone)"
    return (
        f"{pid} {stat[0].decode()} ppid {stat[1].decode()}: {argv.decode(errors='replace')[:200]}"
    )


def test_the_job_script_really_backgrounds(tmp_path: Path) -> None:
    # Guards the test above against vacuity: outside acp-plus, the same spawn lines
    # leave the job running after their shell has exited.
    marker = f"3{uuid.uuid4().int % 10**6:06d}.7"
    try:
        for spawn in SPAWNS.values():
            (tmp_path / "bg.pid").unlink(missing_ok=True)
            subprocess.run(
                ["bash", "-c", spawn.format(marker=marker) + "\n" + WAIT_FOR_JOB],
                cwd=tmp_path,
                check=True,
                timeout=10,
            )
            pid = int((tmp_path / "bg.pid").read_text(encoding="ascii"))
            assert running(pid), spawn
    finally:
        for pid in processes_with(marker):
            with contextlib.suppress(OSError):
                os.kill(pid, signal.SIGKILL)
