"""Helpers that run the real `acp-plus` process against the harness's fake LLM, and read
what it leaves behind (session logs, processes). The fixtures are in `conftest.py`.

Two clients: the official ACP Python SDK (`acp.spawn_agent_process`), which is how a real
client sees acp-plus, and `RawAgent`, a bare line client for what the SDK cannot send
(malformed lines, `$/cancel_request`, parameters it would reshape).
"""

from __future__ import annotations

import asyncio
import json
import os
import sys
import uuid
from collections.abc import AsyncIterator, Callable, Sequence
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, cast

from acp import Client, RequestError, spawn_agent_process
from acp.client.connection import ClientSideConnection
from acp.schema import AllowedOutcome, DeniedOutcome, RequestPermissionResponse

from parity.fakellm.run import Run
from parity.fakellm.thread import FakeLLMThread
from parity.scenario.model import DEFAULT_CATALOG, Tool

PYTHON = sys.executable
REPO = Path(__file__).resolve().parents[2]
ECHO = Tool(
    name="echo",
    description="Return a deterministic result.",
    parameters={"type": "object", "properties": {}},
    content=[{"type": "text", "text": "tool result"}],
)


@dataclass
class Recorder:
    """The SDK client's callbacks: records updates, answers permissions as scripted."""

    permission: str = "cancelled"
    """`allow-once`, `reject-once`, `cancelled`, or `error` (answer with a JSON-RPC error)."""
    updates: list[dict[str, Any]] = field(default_factory=list)
    permission_requests: list[dict[str, Any]] = field(default_factory=list)

    async def request_permission(
        self, session_id: str, tool_call: Any, options: Any, **kwargs: Any
    ) -> RequestPermissionResponse:
        self.permission_requests.append(
            {
                "sessionId": session_id,
                "toolCall": tool_call.model_dump(mode="json", by_alias=True, exclude_unset=True),
                "options": [
                    o.model_dump(mode="json", by_alias=True, exclude_unset=True) for o in options
                ],
                "updatesBefore": len(self.updates),
            }
        )
        if self.permission == "error":
            raise RequestError(-32000, "client refused to answer")
        if self.permission == "cancelled":
            return RequestPermissionResponse(outcome=DeniedOutcome(outcome="cancelled"))
        return RequestPermissionResponse(
            outcome=AllowedOutcome(outcome="selected", option_id=self.permission)
        )

    async def session_update(self, session_id: str, update: Any, **kwargs: Any) -> None:
        self.updates.append(update.model_dump(mode="json", by_alias=True, exclude_unset=True))


def normalized(updates: Sequence[dict[str, Any]]) -> list[dict[str, Any]]:
    """§7.3: messageIds become message-1, message-2 ... in order of first appearance."""
    ids: dict[str, str] = {}
    out = []
    for update in updates:
        update = dict(update)
        if "messageId" in update:
            update["messageId"] = ids.setdefault(update["messageId"], f"message-{len(ids) + 1}")
        out.append(update)
    return out


@dataclass
class World:
    """Everything one test run needs: the fake's run, a workdir, a home, a config."""

    run: Run
    workdir: Path
    home: Path
    config: Path
    stderr: Path

    def argv(self) -> list[str]:
        """How to start acp-plus for this world."""
        return ["-m", "acp_plus", "--config", str(self.config), "--home", str(self.home)]

    def env(self) -> dict[str, str]:
        """A minimal environment (the SDK trims the rest)."""
        return {"PYTHONPATH": str(REPO), "ACP_PLUS_LOG": "INFO"}

    def model_requests(self) -> list[dict[str, Any]]:
        """Bodies of the `/stream` requests the fake received."""
        return [r.body for r in self.run.requests if r.path == "/stream"]

    def paths(self) -> list[str]:
        """Every request path the fake received, in order."""
        return [r.path for r in self.run.requests]


WorldFactory = Callable[..., World]


def make_world(fake: FakeLLMThread, tmp_path: Path) -> WorldFactory:
    """A `World` factory over one fake LLM and one tmp dir (the `world` fixture):
    `world(llm=[...], tools=[...], extra_config="...", profile="native" | "plus")`."""

    def make(
        llm: Sequence[dict[str, Any]] = (),
        tools: Sequence[Tool] = (),
        catalog: dict[str, Any] | None = None,
        extra_config: str = "",
        builtin_tools: bool = False,
        profile: str = "native",
    ) -> World:
        # `native` by default: most tests check the baseline wire, which the native
        # profile keeps exactly native's; increment tests ask for `profile="plus"`.
        run = fake.open_run(
            uuid.uuid4().hex,
            llm=list(llm),
            tools=list(tools),
            catalog=catalog if catalog is not None else DEFAULT_CATALOG,
        )
        workdir = tmp_path / "work"
        home = tmp_path / "home"
        workdir.mkdir(exist_ok=True)
        config = tmp_path / "acp-plus.toml"
        config.write_text(
            f'provider = "mock"\nmodel = "mock"\nbuiltin_tools = {str(builtin_tools).lower()}\n'
            + f'profile = "{profile}"\n'
            + extra_config
            + f'\n[providers.fixture]\napi = "parity-stream"\nbase_url = "{run.base_url}"\n',
            encoding="utf-8",
        )
        return World(run, workdir, home, config, tmp_path / "stderr.log")

    return make


@dataclass
class Session:
    """A spawned acp-plus driven by the official SDK client."""

    conn: ClientSideConnection
    process: asyncio.subprocess.Process
    client: Recorder


@asynccontextmanager
async def sdk_agent(w: World, permission: str = "cancelled") -> AsyncIterator[Session]:
    """Spawn acp-plus for `w` and connect the official ACP client to it."""
    client = Recorder(permission=permission)
    with open(w.stderr, "ab") as err:
        async with spawn_agent_process(
            # The Client protocol also lists fs/terminal methods; acp-plus never calls
            # them (§1.3), so the recorder implements only what the agent can send.
            cast(Client, client),
            PYTHON,
            *w.argv(),
            env=w.env(),
            cwd=w.workdir,
            transport_kwargs={"stderr": err.fileno(), "shutdown_timeout": 3.0},
        ) as (conn, process):
            yield Session(conn, process, client)


class RawAgent:
    """acp-plus over bare NDJSON lines: send anything, read frames as parsed JSON."""

    def __init__(self, process: asyncio.subprocess.Process) -> None:
        self.process = process
        self._next = 1000

    @classmethod
    async def start(cls, w: World) -> RawAgent:
        """Spawn the process (own process group, so tests can check for leftovers)."""
        err = open(w.stderr, "ab")  # noqa: SIM115 - lives as long as the process
        process = await asyncio.create_subprocess_exec(
            PYTHON,
            *w.argv(),
            stdin=asyncio.subprocess.PIPE,
            stdout=asyncio.subprocess.PIPE,
            stderr=err,
            cwd=w.workdir,
            env={**os.environ, **w.env()},
            limit=1 << 24,
            start_new_session=True,
        )
        err.close()
        return cls(process)

    async def send_line(self, line: bytes | str) -> None:
        """Write one raw line."""
        assert self.process.stdin is not None
        data = line.encode() if isinstance(line, str) else line
        self.process.stdin.write(data + b"\n")
        await self.process.stdin.drain()

    async def send(self, message: dict[str, Any]) -> None:
        """Write one JSON message."""
        await self.send_line(json.dumps(message))

    async def recv(self, timeout: float = 5.0) -> dict[str, Any]:
        """The next frame from the agent."""
        assert self.process.stdout is not None
        line = await asyncio.wait_for(self.process.stdout.readline(), timeout)
        if not line:
            raise EOFError("agent closed stdout")
        frame: dict[str, Any] = json.loads(line)
        return frame

    async def request(self, method: str, params: Any = None) -> int:
        """Send a request; returns its id."""
        self._next += 1
        message: dict[str, Any] = {"jsonrpc": "2.0", "id": self._next, "method": method}
        if params is not None:
            message["params"] = params
        await self.send(message)
        return self._next

    async def until_response(
        self, msg_id: int, timeout: float = 5.0
    ) -> tuple[dict[str, Any], list[dict[str, Any]]]:
        """Read until the response to `msg_id`; returns it and the frames before it."""
        before: list[dict[str, Any]] = []
        while True:
            frame = await self.recv(timeout)
            if frame.get("id") == msg_id and "method" not in frame:
                return frame, before
            before.append(frame)

    async def call(self, method: str, params: Any = None, timeout: float = 5.0) -> dict[str, Any]:
        """Request and wait for the response frame."""
        frame, _ = await self.until_response(await self.request(method, params), timeout)
        return frame

    async def close(self) -> int:
        """Close stdin and wait for exit (kill after 5 s); returns the exit status."""
        assert self.process.stdin is not None
        self.process.stdin.close()
        try:
            return await asyncio.wait_for(self.process.wait(), 5)
        except TimeoutError:
            self.process.kill()
            return await self.process.wait()


@asynccontextmanager
async def raw_agent(w: World) -> AsyncIterator[RawAgent]:
    """A `RawAgent`, closed (and killed if needed) at the end."""
    agent = await RawAgent.start(w)
    try:
        yield agent
    finally:
        if agent.process.returncode is None:
            await agent.close()


async def partial_delta_read(w: World, requests: int = 1) -> None:
    """Wait until the agent has most likely read the scripted `partial` delta.

    The fake writes it right after it records the request; deltas never reach the wire
    (§2), so there is no observable signal that the agent consumed one. Without this
    grace a cancel can win the race and the committed prefix is legitimately empty.
    """
    await wait_for(lambda: len(w.model_requests()) == requests)
    await asyncio.sleep(0.5)


async def wait_for(predicate: Callable[[], bool], timeout: float = 5.0) -> None:
    """Poll every 5 ms until `predicate()` holds (§7.1 `waitFor`)."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout
    while not predicate():
        if loop.time() > deadline:
            raise TimeoutError("condition not reached")
        await asyncio.sleep(0.005)


def log_events(home: Path, session_id: str) -> list[dict[str, Any]]:
    """The committed events of a session log (header excluded)."""
    lines = (home / "sessions" / f"{session_id}.jsonl").read_text(encoding="utf-8").splitlines()
    return [json.loads(line) for line in lines[1:]]


def process_state(pid: int) -> str | None:
    """The process state letter from /proc/<pid>/stat, or None when the pid is gone."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_bytes()
    except OSError:
        return None
    return stat[stat.rfind(b")") + 2 :].split()[0].decode()


def running(pid: int) -> bool:
    """Whether `pid` is alive (a zombie is dead all the same, only not yet reaped)."""
    return process_state(pid) not in (None, "Z", "X")


def processes_with(marker: str) -> list[int]:
    """Live (not zombie) processes whose command line contains `marker`."""
    found = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            cmdline = Path(f"/proc/{entry}/cmdline").read_bytes()
        except OSError:
            continue
        if marker.encode() in cmdline and running(int(entry)):
            found.append(int(entry))
    return found


def sleeping(seconds: str) -> list[int]:
    """Live processes that are exactly `sleep <seconds>`: the started command itself, never
    a forked shell on its way to exec it (that copy carries the marker in its command line
    too, and vanishes a moment later: counting it made "all started" checks race)."""
    return [pid for pid in processes_with(seconds) if _argv(pid) == [b"sleep", seconds.encode()]]


def _argv(pid: int) -> list[bytes] | None:
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes().rstrip(b"\0").split(b"\0")
    except OSError:
        return None


def children(pid: int) -> list[int]:
    """The direct children of `pid` (its main thread's, from /proc)."""
    with open(f"/proc/{pid}/task/{pid}/children", encoding="ascii") as fh:
        return [int(x) for x in fh.read().split()]


def bash_world(world: WorldFactory, command: str) -> World:
    """A world whose model runs one bash `command`, unasked (danger-full-access)."""
    call = {"id": "call-1", "name": "bash", "arguments": {"description": "d", "command": command}}
    return world(
        llm=[{"tool_calls": [call]}],
        builtin_tools=True,
        extra_config='sandbox = "danger-full-access"\n',
    )


async def start_prompt(agent: RawAgent, w: World) -> None:
    """initialize, session/new, then send one prompt without waiting for its answer."""
    await agent.call("initialize", {"protocolVersion": 1})
    new = await agent.call("session/new", {"cwd": str(w.workdir), "mcpServers": []})
    await agent.request(
        "session/prompt",
        {"sessionId": new["result"]["sessionId"], "prompt": [{"type": "text", "text": "x"}]},
    )


def conversation(messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """A request's messages without what acp-plus adds for the model (the system
    message of chat dialects, the runtime context, workspace instructions): the
    prompts, answers and tool results that tests about other things check. The added
    parts themselves are tested in tests/plus/core/test_context.py."""
    from acp_plus.core.context import RUNTIME_CONTEXT_HEADER

    def added(message: dict[str, Any]) -> bool:
        if message.get("role") == "system":
            return True
        content = message.get("content")
        first = content[0] if isinstance(content, list) and content else {}
        text = first.get("text", "") if isinstance(first, dict) else ""
        text = content if isinstance(content, str) else text
        return message.get("role") == "user" and (
            text.startswith(RUNTIME_CONTEXT_HEADER) or text.startswith("<system-reminder>")
        )

    return [m for m in messages if not added(m)]
