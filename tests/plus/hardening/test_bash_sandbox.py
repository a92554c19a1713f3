"""Escape attempts against the real `bash` sandbox under `workspace-write`, once per
backend: bubblewrap, and Landlock (`sandbox` parametrizes `ACP_PLUS_SANDBOX_BACKEND`).

Each case runs a real command through `BashTool` (the same path the agent loop takes:
supervisor, scrubbed environment, bubblewrap) and then checks the machine itself, never
the command's own report: a file that must not exist, a file that must be unchanged, a
secret that must not appear, a process that must be gone. The "agent" is this test
process: it runs the tool, so its /proc entries and a home beside the workspace are what
a command must not reach. Its environment cannot carry the planted secret (/proc shows a
process's environment as it was at exec), so a sibling process started with the secret
stands in for it there; `test_the_real_agent_...` does the same against a real acp-plus.

The tree lives under /var/tmp, not /tmp: under `workspace-write` the sandbox's /tmp is
private, so a target under /tmp would be missed for the wrong reason.

`UNCONFINED` runs the write cases again under `danger-full-access`: there each one must
escape, which shows the checks would see an escape (a check that cannot fail proves
nothing). docs/contract-notes.md, "The bash sandbox", has the matrix with native's column.

Landlock holds every write and secret case but cannot hide processes (no PID namespace):
where its answer differs, the test asserts Landlock's documented answer (`LANDLOCK_LIMITS`)
rather than skipping, so a change either way is seen.
"""

from __future__ import annotations

import asyncio
import json
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import time
import uuid
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from feature_support import open_session, prompt, requests_of
from plus_agent import WorldFactory, processes_with, raw_agent, sleeping

from acp_plus.core.sandbox import SandboxMode
from acp_plus.core.tools.backend import SWITCH, find_backend
from acp_plus.core.tools.base import ToolContext, ToolResult
from acp_plus.core.tools.bash import BashTool
from acp_plus.core.tools.job_table import JobTable
from acp_plus.core.tools.landlock_exec import MIN_ABI, abi_version

pytestmark = [
    pytest.mark.skipif(not sys.platform.startswith("linux"), reason="Linux sandbox"),
]

SECRET = "sk-sandbox-escape-canary"

LANDLOCK_LIMITS = {
    "process list": "no PID namespace: the host's processes are listed (tracing, signalling "
    "and reading their environ, maps or memory is denied)",
    "agent cmdline": "/proc/<pid>/cmdline is world-readable (as `ps` shows it); no ptrace "
    "check guards it, so Landlock cannot",
    "home listing": "the agent's home and its ancestors are unlistable (Permission denied), "
    "not an empty directory",
    "/tmp": "/tmp is read-only; the call's private directory is $TMPDIR",
    "unshare -r": "fails writing /proc/self/uid_map (Landlock), not at unshare(2)",
    "home in workspace": "a home inside the workspace stays reachable: a rule grants a "
    "whole hierarchy, and the workspace root must stay listable and writable",
}
"""Where Landlock's answer differs from bubblewrap's, and why (docs/contract-notes.md)."""


@pytest.fixture(params=["bwrap", "landlock"])
def sandbox(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> str:
    """The backend a test runs under, forced by the switch; unusable here: skipped."""
    monkeypatch.setenv(SWITCH, request.param)
    if find_backend() is None:
        pytest.skip(f"no usable {request.param} on this host")
    return str(request.param)


@dataclass(frozen=True)
class Tree:
    """The workspace, a directory outside it, the agent's home, the agent's pid, and a
    process of the same user started with the secret in its environment."""

    ws: Path
    outside: Path
    home: Path
    pid: int
    holder: int


@pytest.fixture
def tree(monkeypatch: pytest.MonkeyPatch) -> Iterator[Tree]:
    base = Path("/var/tmp") / f"acp-sbx-{uuid.uuid4().hex[:12]}"
    ws, outside, home = base / "ws", base / "outside", base / "home"
    for directory in (ws, outside, home / "sessions"):
        directory.mkdir(parents=True)
    (outside / "target.txt").write_text("original\n")
    (home / "sessions" / "s.jsonl").write_text(f'{{"key": "{SECRET}"}}\n')
    # The agent's credential in its environment (the tool's own is scrubbed of it) ...
    monkeypatch.setenv("ACP_SBX_TEST_API_KEY", SECRET)
    # ... and in the exec-time environment of a process of the same user.
    holder = subprocess.Popen(
        [sys.executable, "-c", "import time; time.sleep(120)"],
        env={"ACP_SBX_TEST_API_KEY": SECRET},
    )
    try:
        for _ in range(500):  # until it has exec'd (its environ is empty before)
            if SECRET.encode() in Path(f"/proc/{holder.pid}/environ").read_bytes():
                break
            time.sleep(0.01)
        else:
            raise AssertionError("the secret holder never started")
        yield Tree(ws, outside, home, os.getpid(), holder.pid)
    finally:
        holder.kill()
        holder.wait()
        shutil.rmtree(base, ignore_errors=True)


async def _bash(t: Tree, command: str, mode: SandboxMode = "workspace-write") -> ToolResult:
    tool = BashTool(JobTable(), homes=(t.home,))
    return await tool.run(
        {"description": "d", "command": command}, ToolContext("s", t.ws, "c1", 1, mode)
    )


def _text(result: ToolResult) -> str:
    return str(result.content[0]["text"])


def _unchanged(t: Tree) -> bool:
    return (t.outside / "target.txt").read_text() == "original\n"


def _no_new_file(t: Tree) -> bool:
    return sorted(os.listdir(t.outside)) == ["target.txt"] and _unchanged(t)


# name -> (command, held?); each command tries to change something outside the workspace.
WRITES: dict[str, tuple[str, Callable[[Tree, str], bool]]] = {
    "absolute path": ("echo x > {outside}/abs.txt", lambda t, _: _no_new_file(t)),
    "overwrite by absolute path": ("echo pwned > {outside}/target.txt", lambda t, _: _unchanged(t)),
    "truncate": (  # truncate(2) by path needs no open for writing: the TRUNCATE right
        "truncate -s 0 {outside}/target.txt; "
        "python3 -c \"import os; os.truncate('{outside}/target.txt', 0)\"",
        lambda t, _: _unchanged(t),
    ),
    "remove": ("rm -f {outside}/target.txt", lambda t, _: _unchanged(t)),
    "rename out": ("echo x > w.txt && mv w.txt {outside}/mv.txt", lambda t, _: _no_new_file(t)),
    "dot-dot": ("echo x > ../outside/dotdot.txt", lambda t, _: _no_new_file(t)),
    "symlink": ("ln -s {outside} lnk && echo x > lnk/sym.txt", lambda t, _: _no_new_file(t)),
    "hardlink": ("ln {outside}/target.txt hl && echo pwned > hl", lambda t, _: _unchanged(t)),
    "/proc/self/root": (
        "echo x > /proc/self/root{outside}/procroot.txt",
        lambda t, _: _no_new_file(t),
    ),
    "python": (
        "python3 -c \"open('{outside}/py.txt', 'w').write('x')\"",
        lambda t, _: _no_new_file(t),
    ),
    # Native's profile, run as root, lets each of the next three through.
    "mount": (
        "mount -o remount,rw,bind / ; echo x > {outside}/mount.txt",
        lambda t, _: _no_new_file(t),
    ),
    "unshare": (
        "unshare -m sh -c 'mount -o remount,rw,bind / ; echo x > {outside}/unshare.txt' ; "
        "unshare -rm sh -c 'mount -o remount,rw,bind / ; echo x > {outside}/unshare.txt'",
        lambda t, text: (
            text.count("unshare failed") + text.count("uid_map: Permission denied") == 2
            and _no_new_file(t)
        ),
    ),
    "chroot": (
        "chroot / true",
        lambda t, text: "chroot: cannot change root directory" in text and _no_new_file(t),
    ),
}

# Every command first leaves this mark inside the workspace: a sandbox that ran nothing
# would "hold" every case, so each case also shows its command really ran.
RAN = "echo ran > ran.txt; "


@pytest.mark.parametrize("name", list(WRITES))
async def test_writes_outside_the_workspace_are_contained(
    tree: Tree, sandbox: str, name: str
) -> None:
    command, held = WRITES[name]
    result = await _bash(tree, RAN + command.format(outside=tree.outside))
    assert (tree.ws / "ran.txt").exists(), _text(result)
    assert held(tree, _text(result)), (name, _text(result))


# The control: the same commands unconfined. Those that need no privilege escape, so the
# checks above do see an escape when there is one.
UNCONFINED = [
    "absolute path",
    "overwrite by absolute path",
    "truncate",
    "rename out",
    "dot-dot",
    "symlink",
    "python",
]


@pytest.mark.parametrize("name", UNCONFINED)
async def test_the_same_writes_escape_without_the_sandbox(tree: Tree, name: str) -> None:
    command, held = WRITES[name]
    result = await _bash(tree, command.format(outside=tree.outside), "danger-full-access")
    assert not held(tree, _text(result)), name


async def test_a_write_inside_the_workspace_and_tmp_work(tree: Tree, sandbox: str) -> None:
    result = await _bash(
        tree, 'echo in > in.txt && t="${TMPDIR:-/tmp}/t" && echo t > "$t" && cat "$t"'
    )
    assert (tree.ws / "in.txt").read_text() == "in\n"
    assert _text(result) == "t\n"
    if sandbox == "landlock":  # LANDLOCK_LIMITS["/tmp"]; the private dir goes with the call
        result = await _bash(tree, 'echo "$TMPDIR"; echo t > /tmp/acp-sbx-t')
        assert "/tmp/acp-sbx-t: Permission denied" in _text(result)
        private = Path(_text(result).split("\n", 1)[0])
        assert private.parent == Path(tempfile.gettempdir()) and not private.exists()


async def test_a_refused_write_carries_natives_markers(tree: Tree, sandbox: str) -> None:
    result = await _bash(tree, f"echo x > {tree.outside}/m.txt")
    assert not result.is_error  # a failed command is reported, not an error (native)
    text = _text(result)
    assert text.startswith("[stderr]\n")
    assert ("Read-only file system" if sandbox == "bwrap" else "Permission denied") in text
    assert text.endswith(
        "[sandbox: file access denied under workspace-write mode]\n"
        "[sandbox: escalation available — retry this exact command once with "
        "sandbox_permissions (the narrowest wider mode that suffices) + justification; the "
        "approval prompt asks the user]\n[exit code: 1]"
    )


async def test_a_background_job_cannot_write_after_the_call(tree: Tree, sandbox: str) -> None:
    marker = f"7{uuid.uuid4().int % 10**6:06d}"
    command = (
        f"(setsid sh -c 'sleep 1.{marker}; echo late > late.txt' &) ; "
        f"nohup sh -c 'sleep 1.{marker}; echo late > late2.txt' >/dev/null 2>&1 & echo started"
    )
    result = await _bash(tree, command)
    assert _text(result).startswith("started")
    assert processes_with(f"1.{marker}") == []
    await asyncio.sleep(2.5)
    assert not (tree.ws / "late.txt").exists() and not (tree.ws / "late2.txt").exists()


READS = {
    "agent environ": "cat /proc/{pid}/environ /proc/{holder}/environ",
    "agent environ by scan": "cat /proc/[0-9]*/environ",
    "agent cmdline and maps": "cat /proc/{pid}/cmdline /proc/{pid}/maps",
    "agent home": "cat {home}/sessions/s.jsonl; ls -a {home}",
    "tool environment": "env; cat /proc/self/environ",
}


@pytest.mark.parametrize("name", list(READS))
async def test_the_agents_secrets_are_out_of_reach(tree: Tree, sandbox: str, name: str) -> None:
    command = READS[name].format(pid=tree.pid, holder=tree.holder, home=tree.home)
    result = await _bash(tree, RAN + command)
    text = _text(result)
    assert (tree.ws / "ran.txt").exists(), text
    assert SECRET not in text, name
    if name == "agent cmdline and maps" and sandbox == "bwrap":
        assert "pytest" not in text
    if name == "agent cmdline and maps" and sandbox == "landlock":  # LANDLOCK_LIMITS
        # The agent's own argv[0], whatever runs the tests (pytest, or an xdist worker).
        argv0 = Path(f"/proc/{tree.pid}/cmdline").read_bytes().split(b"\0")[0].decode()
        assert argv0 in text and f"/proc/{tree.pid}/maps: Permission denied" in text
    if name == "agent home" and sandbox == "bwrap":  # empty: `ls -a` lists only . and ..
        assert text.startswith(".\n..\n[stderr]\n")
        assert text.endswith("No such file or directory\n")
    if name == "agent home" and sandbox == "landlock":
        assert f"cannot open directory '{tree.home}': Permission denied" in text


async def test_the_agents_process_is_invisible_and_cannot_be_traced(
    tree: Tree, sandbox: str
) -> None:
    script = (
        "import ctypes, os; libc = ctypes.CDLL(None, use_errno=True); "
        "r = libc.ptrace(16, {pid}, 0, 0); "  # PTRACE_ATTACH
        "print('attach', r, os.strerror(ctypes.get_errno())); "
        "print('pids', sorted(int(p) for p in os.listdir('/proc') if p.isdigit()))"
    )
    result = await _bash(tree, f'python3 -c "{script.format(pid=tree.pid)}"')
    text = _text(result)
    assert "attach -1" in text, text
    status = Path(f"/proc/{tree.pid}/status").read_text()
    assert "TracerPid:\t0\n" in status
    seen = text.split("pids [", 1)[1].split("]", 1)[0].split(", ")
    if sandbox == "bwrap":  # only the sandbox's own (its init, the shell, python)
        assert len(seen) <= 4, seen
    else:  # LANDLOCK_LIMITS["process list"]: the agent is listed, but not to be signalled
        assert str(tree.pid) in seen
        killed = await _bash(tree, f"kill -CONT {tree.pid}; kill -0 {tree.holder}")
        assert _text(killed).count("Operation not permitted") == 2, _text(killed)


async def test_read_only_writes_nowhere_but_reads(tree: Tree, sandbox: str) -> None:
    result = await _bash(tree, "cat ../outside/target.txt; echo x > in.txt", "read-only")
    assert _text(result).startswith("original\n")
    assert not (tree.ws / "in.txt").exists()
    assert "[sandbox: file access denied under read-only mode]" in _text(result)


async def test_an_escalated_call_runs_unconfined_and_only_that_call(
    tree: Tree, sandbox: str
) -> None:
    """`run` after the loop's approval: the call's requested mode is its mode."""
    tool = BashTool(JobTable(), homes=(tree.home,))
    ctx = ToolContext("s", tree.ws, "c1", 1, "workspace-write")
    command = f"echo x > {tree.outside}/granted.txt"
    escalated = {
        "description": "d",
        "command": command,
        "sandbox_permissions": "danger-full-access",
    }
    escalated["justification"] = "The user asked for it."
    assert tool.approval_reason(escalated, ctx) == (
        "escalate sandbox to danger-full-access: The user asked for it."
    )
    assert not (await tool.run(escalated, ctx)).is_error
    assert (tree.outside / "granted.txt").exists()
    again = await tool.run(
        {"description": "d", "command": f"echo x > {tree.outside}/again.txt"}, ctx
    )
    assert "[exit code: 1]" in _text(again) and not (tree.outside / "again.txt").exists()


@pytest.mark.parametrize(
    ("args", "message"),
    [
        ({"sandbox_permissions": "danger-full-access"}, "requires a justification"),
        ({"justification": "why"}, "only valid together with sandbox_permissions"),
        ({"sandbox_permissions": "danger-full-access", "justification": " "}, "non-empty"),
        (
            {"sandbox_permissions": "read-only", "justification": "why"},
            '"sandbox_permissions" must be one of ["workspace-write","danger-full-access"]',
        ),
    ],
)
async def test_malformed_escalations_fail_before_anything_runs(
    tree: Tree, args: dict[str, str], message: str
) -> None:
    ctx = ToolContext("s", tree.ws, "c1", 1, "workspace-write")
    call = {"description": "d", "command": "echo ran > ran.txt", **args}
    assert BashTool(JobTable()).approval_reason(call, ctx) is None  # nobody is asked
    result = await BashTool(JobTable()).run(call, ctx)
    assert result.is_error and _text(result).startswith("Error: ") and message in _text(result)
    assert not (tree.ws / "ran.txt").exists()


def _path_without_bwrap(tmp_path: Path, names: tuple[str, ...] = ("bash", "sh")) -> str:
    bin_dir = tmp_path / "no-bwrap"
    bin_dir.mkdir()
    for name in names:
        found = shutil.which(name)
        assert found is not None
        (bin_dir / name).symlink_to(found)
    return str(bin_dir)


async def test_without_bubblewrap_landlock_confines_the_command(
    tree: Tree, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """bubblewrap removed from PATH, the default chain: Landlock, where the kernel offers
    it, runs the command confined (a write inside works, one outside is refused)."""
    monkeypatch.setenv("PATH", _path_without_bwrap(tmp_path))
    monkeypatch.delenv(SWITCH, raising=False)
    backend = find_backend()
    if abi_version() < MIN_ABI:  # the kernel offers none: native's refusal, tested below
        assert backend is None
        return
    assert backend is not None and backend.kind == "landlock" and backend.abi == abi_version()
    result = await _bash(tree, f"echo in > in.txt; echo x > {tree.outside}/abs.txt")
    assert (tree.ws / "in.txt").exists() and _no_new_file(tree), _text(result)
    assert "[sandbox: file access denied under workspace-write mode]" in _text(result)


@pytest.mark.parametrize("switch", ["bwrap", "none"])
async def test_without_a_backend_confined_commands_are_refused(
    tree: Tree, monkeypatch: pytest.MonkeyPatch, tmp_path: Path, switch: str
) -> None:
    """bubblewrap removed from PATH and Landlock switched off (`bwrap` only, or `none`):
    native's refusal, nothing runs; an escalation to danger-full-access still runs (it
    needs no sandbox), as on native."""
    monkeypatch.setenv("PATH", _path_without_bwrap(tmp_path))
    monkeypatch.setenv(SWITCH, switch)
    assert find_backend() is None
    result = await _bash(tree, "echo x > in.txt")
    assert result.is_error and not (tree.ws / "in.txt").exists()
    assert _text(result).startswith(
        'sandbox mode "workspace-write" is requested but no sandbox backend is usable on this '
        "host; refusing to run the command unconfined."
    )
    tool = BashTool(JobTable())
    ctx = ToolContext("s", tree.ws, "c1", 1, "workspace-write")
    granted = {
        "description": "d",
        "command": "echo x > in.txt",
        "sandbox_permissions": "danger-full-access",
        "justification": "no sandbox here",
    }
    assert not (await tool.run(granted, ctx)).is_error
    assert (tree.ws / "in.txt").exists()


def _allow(frame: dict[str, Any]) -> Any:
    return {"outcome": {"outcome": "selected", "optionId": "allow-once"}}


async def test_the_real_agent_runs_bash_unasked_and_asks_only_to_escalate(
    world: WorldFactory, tree: Tree, sandbox: str
) -> None:
    """A real acp-plus (its provider-key stand-in in its exec-time environment): a plain
    call runs unasked in the sandbox and cannot read the agent's environment or write
    outside; an escalated call asks the client once and is granted; the next plain call
    is confined again."""
    escalate = {"sandbox_permissions": "danger-full-access", "justification": "Asked for."}
    calls = [
        {
            "id": "plain",
            "name": "bash",
            "arguments": {
                "description": "d",
                "command": "cat /proc/[0-9]*/environ | tr '\\0' '\\n'; echo in > in.txt; "
                f"echo x > {tree.outside}/plain.txt",
            },
        },
        {
            "id": "escalated",
            "name": "bash",
            "arguments": {
                "description": "d",
                "command": f"echo x > {tree.outside}/granted.txt",
                **escalate,
            },
        },
        {
            "id": "after",
            "name": "bash",
            "arguments": {"description": "d", "command": f"echo x > {tree.outside}/after.txt"},
        },
    ]
    w = world(llm=[{"tool_calls": calls}, {"text": "done"}], builtin_tools=True, profile="plus")
    async with raw_agent(w) as agent:
        for _ in range(500):  # empty until the agent's process has exec'd
            agent_environ = Path(f"/proc/{agent.process.pid}/environ").read_bytes()
            if agent_environ:
                break
            await asyncio.sleep(0.01)
        assert SECRET.encode() in agent_environ  # the secret is there to be stolen
        session_id, _ = await open_session(agent, w)
        answer, frames = await prompt(agent, session_id, "go", _allow)
    assert answer["result"] == {"stopReason": "end_turn"}
    asked = requests_of(frames, "session/request_permission")
    assert [r["params"]["toolCall"]["toolCallId"] for r in asked] == ["escalated"]
    assert (w.workdir / "in.txt").read_text() == "in\n"
    assert sorted(os.listdir(tree.outside)) == ["granted.txt", "target.txt"]
    results = json.dumps(w.model_requests()[-1]["messages"])
    assert SECRET not in results and "[exit code: 1]" in results


async def test_the_real_agent_without_bubblewrap_refuses_as_native_does(
    world: WorldFactory, tree: Tree, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """acp-plus started with a PATH that has no `bwrap` and Landlock switched off: the
    plain call fails with native's text and nobody is asked; nothing runs."""
    monkeypatch.setenv("PATH", _path_without_bwrap(tmp_path, ("bash", "sh", "echo")))
    monkeypatch.setenv(SWITCH, "bwrap")
    call = {
        "id": "plain",
        "name": "bash",
        "arguments": {"description": "d", "command": "echo in > in.txt"},
    }
    w = world(llm=[{"tool_calls": [call]}, {"text": "done"}], builtin_tools=True, profile="plus")
    async with raw_agent(w) as agent:
        session_id, _ = await open_session(agent, w)
        answer, frames = await prompt(agent, session_id, "go", _allow)
    assert answer["result"] == {"stopReason": "end_turn"}
    assert requests_of(frames, "session/request_permission") == []
    assert not (w.workdir / "in.txt").exists()
    results = json.dumps(w.model_requests()[-1]["messages"])
    assert 'sandbox mode \\"workspace-write\\" is requested but no sandbox backend' in results


@pytest.mark.parametrize("ending", ["timeout", "cancel"])
async def test_a_confined_tree_dies_with_its_call(tree: Tree, sandbox: str, ending: str) -> None:
    """Cancelled, or timed out (native moves it to a background job) and that job killed,
    a sandboxed call leaves no process: not the command, not its setsid'd or
    double-forked children, not bubblewrap (found by a marker on the host)."""
    marker = f"9{uuid.uuid4().int % 10**6:06d}"
    command = (
        f"(setsid sleep 3{marker} &) ; nohup sleep 3{marker} >/dev/null 2>&1 & "
        f"echo started > started.txt; sleep 3{marker}"
    )
    jobs = JobTable()
    tool = BashTool(jobs, homes=(tree.home,))
    ctx = ToolContext("s", tree.ws, "c1", 1, "workspace-write")
    args: dict[str, Any] = {"description": "d", "command": command}
    if ending == "timeout":
        args["timeoutMs"] = 1000
    task = asyncio.create_task(tool.run(args, ctx))
    for _ in range(3000):  # a loaded CI machine took over 10 s to start all three
        if len(sleeping(f"3{marker}")) == 3 or task.done():
            break
        await asyncio.sleep(0.01)
    assert len(sleeping(f"3{marker}")) == 3, task  # all three really started
    if ending == "cancel":
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
    else:
        result = await task
        assert "[still running after 1000ms; moved to background job " in _text(result)
        (job,) = jobs.list("s")
        assert jobs.kill(job, None, by_model=True)
    for _ in range(500):
        if not processes_with(f"3{marker}"):
            break
        await asyncio.sleep(0.01)
    assert processes_with(f"3{marker}") == []


async def test_an_abstract_socket_of_the_host(tree: Tree, sandbox: str) -> None:
    """A listener on an abstract unix socket outside the sandbox (the kind a session bus
    or X server offers). Landlock's ABI 6 scope refuses the connection; bubblewrap's
    profile shares the network namespace, where abstract sockets live, as native's does:
    there the connection succeeds (documented, docs/contract-notes.md)."""
    name = f"acp-sbx-{uuid.uuid4().hex[:12]}"
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    listener.bind(f"\0{name}")
    listener.listen(1)
    try:
        script = (
            "import socket; s = socket.socket(socket.AF_UNIX); "
            f"print('connected', s.connect_ex(chr(0) + '{name}'))"
        )
        result = await _bash(tree, RAN + f'python3 -c "{script}"')
    finally:
        listener.close()
    text = _text(result)
    assert (tree.ws / "ran.txt").exists(), text
    if sandbox == "landlock" and abi_version() >= 6:
        assert "connected 1\n" in text, text  # EPERM
    else:
        assert "connected 0\n" in text, text


async def test_a_home_inside_the_workspace_leaves_the_workspace_writable(
    tree: Tree, sandbox: str
) -> None:
    """The agent's home under the workspace: the rest of the workspace stays writable.
    bubblewrap covers the home; Landlock cannot (a rule grants the whole workspace), so
    there it stays reachable, as documented (`LANDLOCK_LIMITS`)."""
    home = tree.ws / ".agent-home"
    (home / "sessions").mkdir(parents=True)
    (home / "sessions" / "s.jsonl").write_text(f'{{"key": "{SECRET}"}}\n')
    tool = BashTool(JobTable(), homes=(home,))
    ctx = ToolContext("s", tree.ws, "c1", 1, "workspace-write")
    command = "echo ok > ok.txt; cat .agent-home/sessions/s.jsonl; echo x > .agent-home/new"
    result = await tool.run({"description": "d", "command": command}, ctx)
    assert (tree.ws / "ok.txt").exists(), _text(result)
    if sandbox == "bwrap":
        assert SECRET not in _text(result)
        assert sorted(os.listdir(home)) == ["sessions"]
    else:
        assert SECRET in _text(result) and (home / "new").exists()
