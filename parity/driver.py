"""The ACP stdio driver: plays a scenario's client script against one agent process.

`run_scenario` creates a private run directory, starts the agent in its own process
group, sends each step as raw NDJSON JSON-RPC, answers the agent's requests to the
client as the scenario says, and records every line in both directions as a `Frame`.
It never raises because of what an agent does: timeouts, crashes, garbage and protocol
slips become `StepRecord.problem` / `Transcript.problems`, with the exit status and the
stderr tail. It raises only for harness bugs.

Layout: pure helpers (placeholders, labels, answers to client requests) first, then the
`_Connection` (one process, its reader, pending requests), then `_Run` (the steps).
"""

from __future__ import annotations

import asyncio
import bisect
import concurrent.futures
import contextlib
import os
import re
import shutil
import signal
import tempfile
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal, Protocol

from parity import jsonrpc
from parity.process import AgentProcess, Ladder, agent_env, spawn
from parity.scenario import Scenario, Step
from parity.transcript import Direction, Frame, ModelRequest, StepRecord, Transcript

DEFAULT_TIMEOUTS: dict[str, float] = {"startup": 15.0, "response": 15.0, "run": 120.0}
"""Seconds; a scenario's `timeouts` override these per key."""

PROTOCOL_VERSION = 1
CLIENT_INFO = {"name": "acp-parity", "version": "0.1.0"}
MAX_FRAMES = 200_000
"""Frames recorded per run; a runaway agent's further lines are drained and counted,
so it cannot exhaust the harness's memory."""
MAX_PROBLEMS_PER_KIND = 20
"""Garbage lines beyond this many are counted instead of listed one by one."""
EXIT_DRAIN = 0.5
"""Seconds to let stdout drain after the process exited before calling it gone."""
RAW_GRACE = 0.5
"""Seconds a `send_raw` of a non-request waits for an `id: null` error answer."""
INTERRUPTED = "interrupted: the run was cancelled during this step"
_ANY = object()


class LlmRun(Protocol):
    """What the driver needs from the fake LLM's per-run handle (`parity.fakellm`)."""

    @property
    def base_url(self) -> str: ...

    @property
    def requests(self) -> list[ModelRequest]: ...

    def on_request(self, callback: Callable[[ModelRequest], None]) -> None:
        """Register `callback`; it is called from the server's thread per request."""
        ...

    def mark_start(self, t0: float) -> None:
        """Set the run's time origin (a `time.monotonic()` value)."""
        ...


@dataclass
class RunPaths:
    """The private directories of one run (all under `root`, removed afterwards)."""

    root: Path
    home: Path
    workdir: Path
    tmp: Path


@dataclass
class Launch:
    """A resolved target launch."""

    argv: list[str]
    env: dict[str, str]
    cwd: Path | None = None
    files: dict[str, str] = field(default_factory=dict)
    """Relative path under home -> content, written before the agent starts."""
    fixture_tools: Literal["stream", "mcp"] = "stream"
    """How scenario tools reach the agent: the parity-stream catalog, or an MCP server
    entry the driver appends to `mcpServers` in session/new, load and resume."""


# --- pure helpers -----------------------------------------------------------------------

_PLACEHOLDER = re.compile(r"\{(workdir|home|tmp|(?:session|request):[^{}\s]+)\}")


class ScriptError(Exception):
    """A step the driver cannot carry out as written (unknown session name, ...).

    Schema validation catches most mistakes before a run; these are the ones only the
    run can see, such as a session name whose `new_session` failed."""


def substitute(value: Any, lookup: Callable[[str], str]) -> Any:
    """`value` with every `{workdir}`, `{home}`, `{tmp}`, `{session:NAME}` and
    `{request:NAME}` in its strings replaced through `lookup` (recursively). Other
    braces are left alone, so JSON-looking text survives."""
    if isinstance(value, str):
        return _PLACEHOLDER.sub(lambda m: lookup(m.group(1)), value)
    if isinstance(value, list):
        return [substitute(v, lookup) for v in value]
    if isinstance(value, dict):
        return {k: substitute(v, lookup) for k, v in value.items()}
    return value


def step_label(step: Step) -> str:
    """A short human label for a step, e.g. `prompt s1 "go"`."""
    p = step.params if isinstance(step.params, dict) else {}
    if step.kind == "prompt":
        text = p.get("text")
        shown = f' "{text[:40]}"' if isinstance(text, str) else " <content>"
        return f"prompt {p.get('session', '?')}{shown}"
    if step.kind in ("request", "notify"):
        return f"{step.kind} {p.get('method', '?')}"
    if step.kind == "new_session":
        return f"new_session {p.get('as', '')}".rstrip()
    if "session" in p:
        return f"{step.kind} {p['session']}"
    if step.kind == "wait":
        return "wait " + ", ".join(f"{k}={v}" for k, v in sorted(p.items()))
    return step.kind


def pick_answer(policy: Any, index: int) -> Any:
    """The `index`-th (0-based) answer of a policy that may be a list (last repeats)."""
    if isinstance(policy, list):
        return policy[min(index, len(policy) - 1)] if policy else None
    return policy


def permission_policy(policy: Any, titles: set[str]) -> tuple[str, Any]:
    """Which answer list applies to a permission request, and the key counting its uses.

    `policy` is the scenario's `client.permission`: answer(s), or
    `{by_tool: {name: answer(s)}, default: answer(s)}` matched against `titles`.
    """
    if isinstance(policy, dict):
        by_tool = policy.get("by_tool") or {}
        for name in sorted(by_tool):
            if name in titles:
                return f"tool:{name}", by_tool[name]
        return "default", policy.get("default", "cancelled")
    return "all", policy


def permission_answer(req_id: Any, params: Any, answer: Any) -> dict[str, Any]:
    """The response to a session/request_permission, for one scenario answer:
    `allow-once` / `reject-once` select the first offered option of that kind,
    `cancelled` cancels, `error` is a JSON-RPC -32603."""
    if answer == "error":
        return jsonrpc.error(req_id, -32603, "Internal error")
    if answer in ("allow-once", "reject-once"):
        kind = answer.replace("-", "_")
        options = params.get("options") if isinstance(params, dict) else None
        for option in options if isinstance(options, list) else []:
            if isinstance(option, dict) and option.get("kind") == kind:
                return jsonrpc.result(
                    req_id, {"outcome": {"outcome": "selected", "optionId": option.get("optionId")}}
                )
    # `cancelled`, or no option of the wanted kind was offered: the only neutral answer.
    return jsonrpc.result(req_id, {"outcome": {"outcome": "cancelled"}})


def permission_titles(params: Any, known_titles: Mapping[str, str]) -> set[str]:
    """Names a permission request can be matched by: its toolCall title, or the title
    of the earlier tool_call update with the same id (DSH sends only the id), each also
    without an MCP-style `server__` / `server/` prefix."""
    tool_call = params.get("toolCall") if isinstance(params, dict) else None
    tool_call = tool_call if isinstance(tool_call, dict) else {}
    names: set[str] = set()
    for title in (tool_call.get("title"), known_titles.get(str(tool_call.get("toolCallId")))):
        if isinstance(title, str):
            names |= {title, title.rsplit("__", 1)[-1], title.rsplit("/", 1)[-1]}
    return names


def elicitation_answer(req_id: Any, answer: Any) -> dict[str, Any]:
    """The response to an elicitation/create for one scenario answer: `accept`,
    `decline`, `cancel`, or `{action, content}`."""
    content: Any = None
    if isinstance(answer, dict):
        action, content = answer.get("action", "cancel"), answer.get("content")
    else:
        action = answer or "cancel"
    value: dict[str, Any] = {"action": action}
    if action == "accept":
        value["content"] = content if content is not None else {}
    return jsonrpc.result(req_id, value)


def method_not_found(req_id: Any, method: str) -> dict[str, Any]:
    """The standard JSON-RPC -32601 answer."""
    return jsonrpc.error(req_id, -32601, "Method not found", {"method": method})


def _inside(path: Path, root: Path) -> bool:
    try:
        path.relative_to(root)
    except ValueError:
        return False
    return True


def fs_answer(req_id: Any, method: str, params: Any, workdir: Path) -> dict[str, Any]:
    """Serve fs/read_text_file or fs/write_text_file against files under `workdir`."""
    params = params if isinstance(params, dict) else {}
    raw_path = params.get("path")
    if not isinstance(raw_path, str) or not os.path.isabs(raw_path):
        return jsonrpc.error(req_id, -32602, "Invalid params: path must be absolute")
    path = Path(os.path.realpath(raw_path))
    if not _inside(path, Path(os.path.realpath(workdir))):
        return jsonrpc.error(
            req_id, -32602, f"Invalid params: path outside the workdir: {raw_path}"
        )
    if method == "fs/write_text_file":
        content = params.get("content")
        if not isinstance(content, str):
            return jsonrpc.error(req_id, -32602, "Invalid params: content must be a string")
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(content, encoding="utf-8")
        except OSError as exc:
            return jsonrpc.error(req_id, -32603, f"Internal error: {exc}")
        return jsonrpc.result(req_id, {})
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return jsonrpc.error(req_id, -32002, "Resource not found", {"path": raw_path})
    except (OSError, UnicodeDecodeError) as exc:
        return jsonrpc.error(req_id, -32603, f"Internal error: {exc}")
    line, limit = params.get("line"), params.get("limit")
    if isinstance(line, int) or isinstance(limit, int):
        lines = text.splitlines(keepends=True)
        start = max(line - 1, 0) if isinstance(line, int) else 0
        end = start + limit if isinstance(limit, int) else None
        text = "".join(lines[start:end])
    return jsonrpc.result(req_id, {"content": text})


def _tail(text: str, limit: int = 2000) -> str:
    return text if len(text) <= limit else "..." + text[-limit:]


_MODEL_PATHS = ("/stream", "/chat/completions", "/responses", "/messages")


def _is_model_request(req: ModelRequest) -> bool:
    # A call for a model response in any dialect (side requests included: the fake
    # decides `side` only after telling listeners), not catalog, tool or MCP traffic.
    return req.method == "POST" and req.path.endswith(_MODEL_PATHS)


# --- one agent process ------------------------------------------------------------------


class _AgentGone(Exception):
    """The agent closed stdout (or its stdin broke) while a step needed it."""


class _StdinBlocked(Exception):
    """A line could not be written within the response timeout: the agent is not
    reading its stdin and the pipe is full."""


@dataclass(frozen=True)
class _Reply:
    """A response to one of our requests: its frame, and the message in it (an element
    when the frame is a batch)."""

    frame: Frame
    message: dict[str, Any]


class _Connection:
    """One agent process with its JSON-RPC traffic: reader task, pending requests."""

    def __init__(self, run: _Run, agent: AgentProcess, index: int, spawned_at: float) -> None:
        self.run = run
        self.agent = agent
        self.index = index
        self.spawned_at = spawned_at
        self.initialized = False
        self.fresh = True
        """No step has used this process yet (an initialize now gets the startup timeout)."""
        self.pending: dict[Any, asyncio.Future[_Reply]] = {}
        self.reported_exit = False
        self.eof = asyncio.Event()
        self.answering: dict[Any, asyncio.Task[None]] = {}
        self.withdrawn: dict[Any, bool] = {}
        self.reader = asyncio.get_running_loop().create_task(self._read())

    async def response(self, fut: asyncio.Future[_Reply], timeout: float) -> _Reply:
        """The response frame `fut` resolves to, within `timeout` seconds.

        Raises TimeoutError, or `_AgentGone` when stdout ends or the process exits
        first (a child that inherited stdout can keep it open after a crash)."""
        exit_watch = asyncio.ensure_future(self.agent.wait_exit(timeout))
        either: set[asyncio.Future[Any]] = {fut, exit_watch}
        try:
            await asyncio.wait(either, timeout=timeout, return_when=asyncio.FIRST_COMPLETED)
        finally:
            exit_watch.cancel()
        if fut.done():
            return fut.result()
        if not self.agent.exited():
            raise TimeoutError
        # The process ended; its last lines may still be in the pipe.
        try:
            return await asyncio.wait_for(asyncio.shield(fut), EXIT_DRAIN)
        except TimeoutError:
            raise _AgentGone() from None

    async def _read(self) -> None:
        try:
            while (line := await jsonrpc.read_line(self.agent.stdout)) is not None:
                if len(self.run.transcript.frames) >= MAX_FRAMES:
                    self.run.dropped += 1
                    continue
                self._dispatch(self.run.record_in(line, self.index))
        except Exception as exc:
            # A harness bug: say so in the transcript rather than pass it off as a crash.
            self.run.problem("driver", f"driver error: stdout reader failed: {exc!r}")
            raise
        finally:
            self.eof.set()
            for fut in self.pending.values():
                if not fut.done():
                    fut.set_exception(_AgentGone())
            self.run.tick()

    def _dispatch(self, frame: Frame) -> None:
        value = frame.message
        if frame.parse_error is None and jsonrpc.is_batch(value):
            # JSON-RPC allows answering a batch (which only `send_raw` sends) with one.
            for item in value:
                self._dispatch_one(frame, item)
        else:
            self._dispatch_one(frame, value)
        self.run.tick()

    def _dispatch_one(self, frame: Frame, msg: Any) -> None:
        kind = jsonrpc.classify(msg) if frame.parse_error is None else "invalid"
        if kind == "response":
            fut = self.pending.pop(_id_key(msg["id"]), None)
            if fut is not None and not fut.done():
                fut.set_result(_Reply(frame, msg))
        elif kind == "request":
            key = _id_key(msg["id"])
            task = asyncio.get_running_loop().create_task(self._answer(msg))
            self.answering[key] = task
            task.add_done_callback(lambda _: self.answering.pop(key, None))
        elif kind == "notification":
            if msg["method"] == "session/update":
                self.run.note_update(frame.seq, msg.get("params"))
            elif msg["method"] == "$/cancel_request":
                self._withdrawn(msg.get("params"))
        elif frame.parse_error is None:
            self.run.problem(
                "not-jsonrpc",
                f"frame {frame.seq}: agent sent a JSON value that is not a JSON-RPC message",
            )

    async def _answer(self, msg: dict[str, Any]) -> None:
        """Compute and send the answer to one agent request (a task per request)."""
        try:
            reply = await self.run.client_answer(msg)
        except asyncio.CancelledError:
            if not self.withdrawn.pop(_id_key(msg["id"]), False):
                raise
            reply = jsonrpc.error(msg["id"], -32800, "Request cancelled")
        except Exception as exc:
            self.run.problem("driver", f"driver error answering {msg['method']}: {exc!r}")
            reply = jsonrpc.error(msg["id"], -32603, f"Internal error: {exc}")
        try:
            await self.send(reply)
        except _AgentGone:
            pass  # the step waiting on this agent reports it
        except _StdinBlocked:
            self.run.problem("stdin", f"the agent did not read our answer to {msg['method']}")

    def _withdrawn(self, params: Any) -> None:
        # The agent cancels a request it made (e.g. a terminal wait): stop answering it
        # and reply -32800, as JSON-RPC cancellation asks.
        key = _id_key(params.get("requestId") if isinstance(params, dict) else None)
        task = self.answering.get(key)
        if task is not None and not task.done():
            self.withdrawn[key] = True
            task.cancel()

    async def send(self, message: Any) -> Frame:
        """Record and write one message; raises `_AgentGone` if stdin is broken."""
        return await self.send_text(jsonrpc.encode(message), message)

    async def send_text(self, text: str, message: Any = None, error: str | None = None) -> Frame:
        """Record and write one line (the frame is recorded unless the agent is known to
        be gone; a write that then fails still shows what was attempted)."""
        if self.eof.is_set() and self.agent.exited():
            raise _AgentGone()
        frame = self.run.record_out(text, message, error, self.index)
        self.fresh = False
        try:
            self.agent.stdin.write(text.encode("utf-8") + b"\n")
            await asyncio.wait_for(self.agent.stdin.drain(), self.run.timeouts["response"])
        except TimeoutError:
            raise _StdinBlocked() from None
        except (ConnectionError, RuntimeError, OSError) as exc:
            raise _AgentGone() from exc
        return frame

    def expect(self, *ids: Any) -> asyncio.Future[_Reply]:
        """A future for the first response carrying any of `ids` (fails if stdout
        ends). The caller removes the ids from `pending` when done."""
        fut: asyncio.Future[_Reply] = asyncio.get_running_loop().create_future()
        if self.eof.is_set():
            fut.set_exception(_AgentGone())
        for id_ in ids:
            self.pending[_id_key(id_)] = fut
        return fut

    async def close(self, ladder: Ladder) -> None:
        """Shutdown ladder; then stop the reader and any answer still running."""
        await self.agent.shutdown(ladder)
        try:
            await asyncio.wait_for(asyncio.shield(self.reader), ladder.kill)
        except TimeoutError:
            # A grandchild that left the group can hold stdout open: stop listening.
            self.reader.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self.reader
        tasks = list(self.answering.values())
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)


def _id_key(id_: Any) -> Any:
    # Ids are JSON values; make unhashable ones (agents can send anything) hashable.
    return id_ if isinstance(id_, (str, int, float, type(None))) else repr(id_)


# --- the run ----------------------------------------------------------------------------


class _StepProblem(Exception):
    """A step went wrong; the run stops after recording it."""


class _Run:
    """One scenario run: the steps, the recording, the client's answers, and the
    current agent process (`restart` replaces it)."""

    def __init__(
        self,
        scenario: Scenario,
        launch: Launch,
        paths: RunPaths,
        transcript: Transcript,
        llm_run: LlmRun | None,
        ladder: Ladder,
    ) -> None:
        self.scenario = scenario
        self.launch = launch
        self.paths = paths
        self.transcript = transcript
        self.llm_run = llm_run
        self.ladder = ladder
        self.timeouts = {**DEFAULT_TIMEOUTS, **(scenario.timeouts or {})}
        self.client = scenario.client or {}
        self.t0 = time.monotonic()
        self.loop = asyncio.get_running_loop()
        self.env = agent_env(os.environ, paths.home, paths.tmp, launch.env)
        self.conn: _Connection | None = None
        self.next_id = 0
        self.sessions: dict[str, Any] = {}
        self.prompts: dict[str, Any] = {}
        self.last_cursor: Any = None
        self.updates: dict[str, list[tuple[int, Any]]] = {}
        """sessionUpdate kind -> (frame seq, sessionId) of each such update, in order."""
        self.tool_titles: dict[str, str] = {}
        self.model_turns: list[float] = []
        self.counters: dict[str, int] = {}
        self.problem_counts: dict[str, int] = {}
        self.marks: dict[int, int] = {}
        self.steps_done = 0
        self.dropped = 0
        """Lines read after the frame limit (neither recorded nor acted on)."""
        self.current = 0
        """Index in `transcript.steps` of the top-level step being run."""
        self._tick = asyncio.Event()
        self.terminals = _Terminals(self)

    # -- recording --

    def now(self) -> float:
        return time.monotonic() - self.t0

    def _append(self, frame_args: dict[str, Any]) -> Frame:
        frame = Frame(seq=len(self.transcript.frames), t=self.now(), **frame_args)
        self.transcript.frames.append(frame)
        return frame

    def record_in(self, line: jsonrpc.Line, process: int) -> Frame:
        parsed = jsonrpc.parse_line(line)
        frame = self._append(
            {
                "direction": "in",
                "raw": parsed.raw,
                "message": parsed.message,
                "parse_error": parsed.error,
                "oversize": line.oversize,
                "process": process,
            }
        )
        if parsed.error is not None:
            what = "oversize frame" if line.oversize else "non-JSON line"
            self.problem(what, f"frame {frame.seq}: {what} on stdout: {parsed.error}")
        return frame

    def record_out(self, raw: str, message: Any, error: str | None, process: int) -> Frame:
        direction: Direction = "out"
        return self._append(
            {
                "direction": direction,
                "raw": raw,
                "message": message,
                "parse_error": error,
                "process": process,
            }
        )

    def problem(self, kind: str, text: str) -> None:
        """A run-level problem; a flood of one kind is capped and then summarised."""
        n = self.problem_counts.get(kind, 0) + 1
        self.problem_counts[kind] = n
        if n <= MAX_PROBLEMS_PER_KIND:
            self.transcript.problems.append(text)

    def tick(self) -> None:
        """Wake everything waiting for a frame, an update or a model request."""
        self._tick.set()
        self._tick = asyncio.Event()

    async def until(self, predicate: Callable[[], bool]) -> None:
        while not predicate():
            await self._tick.wait()

    def note_update(self, seq: int, params: Any) -> None:
        params = params if isinstance(params, dict) else {}
        update = params.get("update") if isinstance(params.get("update"), dict) else {}
        kind = update.get("sessionUpdate")
        if isinstance(kind, str):
            self.updates.setdefault(kind, []).append((seq, params.get("sessionId")))
        if kind in ("tool_call", "tool_call_update") and isinstance(update.get("title"), str):
            self.tool_titles[str(update.get("toolCallId"))] = update["title"]

    def note_model_request(self, req: ModelRequest) -> None:
        if _is_model_request(req):
            self.model_turns.append(self.now())
            self.tick()

    # -- answers to the agent's requests --

    def _count(self, key: str) -> int:
        n = self.counters.get(key, 0)
        self.counters[key] = n + 1
        return n

    async def client_answer(self, msg: dict[str, Any]) -> dict[str, Any]:
        """The response to one agent->client request, per the scenario's `client`."""
        req_id, method, params = msg["id"], msg["method"], msg.get("params")
        if method == "session/request_permission":
            titles = permission_titles(params, self.tool_titles)
            key, answers = permission_policy(self.client.get("permission", "cancelled"), titles)
            answer = pick_answer(answers, self._count(f"permission:{key}"))
            return permission_answer(req_id, params, answer)
        if method == "elicitation/create":
            answers = self.client.get("elicitation", "cancel")
            return elicitation_answer(req_id, pick_answer(answers, self._count(method)))
        fs = self.client.get("fs") or {}
        if method in ("fs/read_text_file", "fs/write_text_file"):
            if fs.get("read" if method == "fs/read_text_file" else "write"):
                return fs_answer(req_id, method, params, self.paths.workdir)
            self.problem("capability", f"agent called {method} without the client capability")
            return method_not_found(req_id, method)
        if method.startswith("terminal/"):
            if self.client.get("terminal"):
                return await self.terminals.answer(req_id, method, params)
            self.problem("capability", f"agent called {method} without the client capability")
        return method_not_found(req_id, method)

    # -- placeholders --

    def lookup(self, name: str) -> str:
        if name == "workdir":
            return str(self.paths.workdir)
        if name == "home":
            return str(self.paths.home)
        if name == "tmp":
            return str(self.paths.tmp)
        kind, _, key = name.partition(":")
        table = self.sessions if kind == "session" else self.prompts
        if key not in table:
            raise ScriptError(f"unknown {kind} name {key!r}")
        return str(table[key])

    def session_id(self, params: Mapping[str, Any]) -> Any:
        name = params.get("session")
        if name not in self.sessions:
            raise ScriptError(f"unknown session name {name!r} (no session was created `as` it)")
        return self.sessions[name]

    # -- the agent process --

    async def start(self) -> None:
        argv = [str(a) for a in self.launch.argv]
        cwd = self.launch.cwd or self.paths.workdir
        spawned_at = self.now()
        try:
            agent = await spawn(argv, self.env, cwd)
        except OSError as exc:
            raise _StepProblem(f"cannot start target {argv[0]!r}: {exc}") from exc
        self.transcript.processes.append(agent.record)
        self.conn = _Connection(self, agent, len(self.transcript.processes) - 1, spawned_at)

    async def stop(self) -> None:
        conn, self.conn = self.conn, None
        if conn is None:
            return
        await conn.close(self.ladder)
        record = conn.agent.record
        if record.stopped_by == "exit" and not conn.reported_exit:
            self.problem("exit", f"agent exited by itself before teardown ({conn.agent.status()})")

    def _live(self) -> _Connection:
        if self.conn is None:
            raise _StepProblem("no agent process is running")
        return self.conn

    async def _gone(self, conn: _Connection, label: str) -> _StepProblem:
        # Give the process a moment to finish exiting so the status and tail are whole.
        await conn.agent.settle(1.0)
        conn.reported_exit = True
        if conn.agent.exited():
            text = f"agent exited during {label} ({conn.agent.status()})"
        else:
            text = f"agent closed its stdout during {label} (the process is still running)"
        tail = _tail(conn.agent.stderr_tail().rstrip())
        return _StepProblem(f"{text}; stderr tail:\n{tail}" if tail else f"{text}; stderr empty")

    # -- requests --

    def new_id(self) -> int:
        id_, self.next_id = self.next_id, self.next_id + 1
        return id_

    async def call(self, record: StepRecord, method: str, params: Any) -> dict[str, Any]:
        """Send a request for a step and wait for its response (recorded on `record`)."""
        msg = jsonrpc.request(self.new_id(), method, params)
        return await self.exchange(record, self._live(), msg)

    async def exchange(
        self, record: StepRecord, conn: _Connection, msg: dict[str, Any]
    ) -> dict[str, Any]:
        """Send `msg` (a request) and wait for the response with its id."""
        fut = conn.expect(msg["id"])
        record.request = msg
        which = "response"
        timeout = self.timeouts["response"]
        if conn.fresh and msg.get("method") == "initialize":
            # The startup timeout runs from spawn to the answer of an initialize that is
            # the first thing the process is asked to do.
            which = "startup"
            timeout = max(self.timeouts["startup"] - (self.now() - conn.spawned_at), 0.0)
        try:
            await conn.send_text(jsonrpc.encode(msg), msg)
            reply = await conn.response(fut, timeout)
        except _AgentGone:
            raise await self._gone(conn, record.label) from None
        except TimeoutError:
            raise _StepProblem(
                f"no response to {record.label} within the {which} timeout "
                f"({self.timeouts[which]:g} s)"
            ) from None
        finally:
            conn.pending.pop(_id_key(msg["id"]), None)
        record.response = reply.message
        self.marks[record.index] = reply.frame.seq + 1
        if msg.get("method") == "initialize" and not conn.initialized:
            conn.initialized = True
            # Spawn to first initialize answer, per process (a restart adds one).
            key = "startup" if conn.index == 0 else f"startup.{conn.index}"
            self.transcript.timings[key] = self.now() - conn.spawned_at
        return reply.message

    async def notify(self, record: StepRecord, method: str, params: Any) -> None:
        conn = self._live()
        msg = jsonrpc.notification(method, params)
        record.request = msg
        try:
            frame = await conn.send(msg)
        except _AgentGone:
            raise await self._gone(conn, record.label) from None
        self.marks[record.index] = frame.seq + 1

    # -- steps --

    async def run_steps(self, steps: list[Step]) -> None:
        """Run the scenario's steps in order until one has a problem that stops the
        run; `steps_done` counts those that completed."""
        mark = len(self.transcript.frames)
        for step in steps:
            self.current = len(self.transcript.steps)
            try:
                mark = await self.run_step(step, since=mark)
            except _StepProblem:
                return
            self.steps_done += 1

    async def run_step(self, step: Step, since: int) -> int:
        """Run one step and record it; returns the seq from which the next step in the
        same sequence counts "more" updates (just past this step's response, or past
        the update a wait was waiting for), so a late update is never missed."""
        record = StepRecord(
            index=len(self.transcript.steps),
            kind=step.kind,
            label=step_label(step),
            line=step.where.line,
            t_start=self.now(),
        )
        self.transcript.steps.append(record)
        if self.conn is not None and step.kind not in ("initialize", "restart", "parallel"):
            # Time a step spends before initialize is the scenario's, not the agent's.
            self.conn.fresh = False
        first = len(self.transcript.frames)
        try:
            await self._step(step, record, since)
        except _StepProblem as exc:
            record.problem = str(exc)
            raise
        except ScriptError as exc:
            record.problem = f"{step.where}: {exc}"
            raise _StepProblem(record.problem) from exc
        except _StdinBlocked:
            record.problem = (
                f"could not send {record.label} within the response timeout "
                f"({self.timeouts['response']:g} s): the agent is not reading its stdin"
            )
            raise _StepProblem(record.problem) from None
        except asyncio.CancelledError:
            record.problem = INTERRUPTED
            raise
        finally:
            record.t_end = self.now()
            record.frames = list(range(first, len(self.transcript.frames)))
        return self.marks.get(record.index, len(self.transcript.frames))

    async def _step(self, step: Step, record: StepRecord, since: int) -> None:
        kind = step.kind
        if kind == "parallel":
            await self.parallel_step(record, step.params.get("steps") or [])
            return
        p: dict[str, Any] = substitute(step.params or {}, self.lookup)
        if kind == "initialize":
            await self.call(record, "initialize", self.initialize_params(p))
        elif kind == "authenticate":
            await self.call(record, "authenticate", {"methodId": p.get("method_id")})
        elif kind in ("new_session", "load_session", "resume_session"):
            await self.session_step(record, kind, p)
        elif kind == "list_sessions":
            await self.list_step(record, p)
        elif kind == "close_session":
            await self.call(record, "session/close", {"sessionId": self.session_id(p)})
        elif kind == "set_config_option":
            params = {"sessionId": self.session_id(p), "configId": p.get("config_id")}
            await self.call(
                record, "session/set_config_option", {**params, "value": p.get("value")}
            )
        elif kind == "set_mode":
            params = {"sessionId": self.session_id(p), "modeId": p.get("mode")}
            await self.call(record, "session/set_mode", params)
        elif kind == "cancel":
            await self.notify(record, "session/cancel", {"sessionId": self.session_id(p)})
        elif kind == "prompt":
            await self.prompt_step(record, p)
        elif kind == "request":
            await self.call(record, str(p.get("method")), p.get("params"))
        elif kind == "notify":
            await self.notify(record, str(p.get("method")), p.get("params"))
        elif kind == "send_raw":
            await self.raw_step(record, str(p.get("line", "")))
        elif kind == "restart":
            await self.stop()
            await self.start()
        elif kind == "wait":
            await self.wait_step(record, p, since)
        else:
            raise ScriptError(f"unknown step kind {kind!r}")

    def initialize_params(self, p: Mapping[str, Any]) -> dict[str, Any]:
        caps = dict(p.get("capabilities", self.client.get("capabilities")) or {})
        fs = self.client.get("fs")
        if isinstance(fs, dict):
            caps["fs"] = {
                **(caps.get("fs") or {}),
                "readTextFile": bool(fs.get("read")),
                "writeTextFile": bool(fs.get("write")),
            }
        if self.client.get("terminal"):
            caps["terminal"] = True
        return {
            "protocolVersion": p.get("protocol_version", PROTOCOL_VERSION),
            "clientCapabilities": caps,
            "clientInfo": CLIENT_INFO,
        }

    def mcp_servers(self, p: Mapping[str, Any]) -> list[Any]:
        servers = list(p.get("mcp_servers") or [])
        mode = p.get("fixture_tools", "auto")
        wanted = mode == "mcp" or (mode == "auto" and self.launch.fixture_tools == "mcp")
        if wanted and self.scenario.tools and self.llm_run is not None:
            # Imported here: the fake LLM package is heavier than the driver needs
            # for stream targets.
            from parity import fakellm

            servers.append(fakellm.mcp_server_entry(self.llm_run.base_url))
        return servers

    async def session_step(self, record: StepRecord, kind: str, p: Mapping[str, Any]) -> None:
        params: dict[str, Any] = {}
        if kind != "new_session":
            params["sessionId"] = self.session_id(p)
        params["cwd"] = p.get("cwd", str(self.paths.workdir))
        params["mcpServers"] = self.mcp_servers(p)
        if "additional_directories" in p:
            params["additionalDirectories"] = p["additional_directories"]
        method = {"new_session": "session/new", "load_session": "session/load"}.get(
            kind, "session/resume"
        )
        response = await self.call(record, method, params)
        if kind == "new_session":
            result = response.get("result")
            sid = result.get("sessionId") if isinstance(result, dict) else None
            if sid is not None:
                self.sessions[str(p.get("as"))] = sid

    async def list_step(self, record: StepRecord, p: Mapping[str, Any]) -> None:
        params: dict[str, Any] = {}
        if "cwd" in p:
            params["cwd"] = p["cwd"]
        if p.get("cursor") == "next":
            if not isinstance(self.last_cursor, str):
                raise ScriptError("cursor: next, but the previous list had no nextCursor")
            params["cursor"] = self.last_cursor
        elif "cursor" in p:
            params["cursor"] = p["cursor"]
        response = await self.call(record, "session/list", params)
        result = response.get("result")
        self.last_cursor = result.get("nextCursor") if isinstance(result, dict) else None

    async def prompt_step(self, record: StepRecord, p: Mapping[str, Any]) -> None:
        sid = self.session_id(p)
        content = p.get("content")
        if content is None:
            content = [{"type": "text", "text": p.get("text", "")}]
        conn = self._live()
        msg = jsonrpc.request(
            self.new_id(), "session/prompt", {"sessionId": sid, "prompt": content}
        )
        if p.get("as"):
            self.prompts[str(p["as"])] = msg["id"]
        trigger = p.get("cancel")
        if not isinstance(trigger, dict):
            await self.exchange(record, conn, msg)
            return
        start = len(self.transcript.frames)
        watcher = self.loop.create_task(self.cancel_when(conn, trigger, sid, msg["id"], start))
        try:
            await self.exchange(record, conn, msg)
        finally:
            fired = watcher.done() and not watcher.cancelled() and watcher.exception() is None
            watcher.cancel()
            await asyncio.gather(watcher, return_exceptions=True)
        if not fired:
            # Not fatal: the transcript shows how the prompt ended without the cancel.
            record.problem = "the cancel trigger never fired before the prompt ended"

    async def cancel_when(
        self, conn: _Connection, trigger: Mapping[str, Any], sid: Any, req_id: Any, start: int
    ) -> None:
        """Wait for a prompt's cancel trigger, then send the cancel."""
        after = trigger.get("after") or {}
        t_sent = self.now()
        if "update" in after:
            kind, count = after["update"], int(after.get("count", 1))
            await self.until(lambda: len(self.update_seqs(kind, start, sid)) >= count)
        elif "llm_request" in after:
            # Counted over the whole run, as the scenario schema defines it.
            k = int(after["llm_request"])
            await self.until(lambda: len(self.model_turns) >= k)
        elif "ms" in after:
            await asyncio.sleep(max(float(after["ms"]) / 1000 - (self.now() - t_sent), 0.0))
        if trigger.get("via", "session_cancel") == "cancel_request":
            await conn.send(jsonrpc.notification("$/cancel_request", {"requestId": req_id}))
        else:
            await conn.send(jsonrpc.notification("session/cancel", {"sessionId": sid}))

    def update_seqs(self, kind: Any, since: int, session: Any = _ANY) -> list[int]:
        """Frame seqs of the session/update notifications of `kind` (of `session`, when
        given) received at or after frame `since`."""
        updates = self.updates.get(kind, []) if isinstance(kind, str) else []
        start = bisect.bisect_left(updates, since, key=lambda u: u[0])
        return [seq for seq, sid in updates[start:] if session is _ANY or sid == session]

    async def raw_step(self, record: StepRecord, text: str) -> None:
        """Send a line verbatim. A request waits for its response. Anything else gets a
        short grace period for an answer: the `id: null` error a conforming agent sends,
        or, for a batch, a response to one of its requests (silence is no problem)."""
        conn = self._live()
        parsed = jsonrpc.parse_line(jsonrpc.Line(text.encode("utf-8"), len(text)))
        kind = jsonrpc.classify(parsed.message) if parsed.error is None else "invalid"
        record.request = parsed.message
        ids: list[Any] = []
        if kind == "request":
            ids = [parsed.message["id"]]
        elif kind == "invalid":
            batch = parsed.message if jsonrpc.is_batch(parsed.message) else []
            ids = [None, *(m["id"] for m in batch if jsonrpc.classify(m) == "request")]
        fut = conn.expect(*ids) if ids else None
        try:
            frame = await conn.send_text(text, parsed.message, parsed.error)
            self.marks[record.index] = frame.seq + 1
            if fut is not None:
                grace = self.timeouts["response"] if kind == "request" else RAW_GRACE
                try:
                    answer = await conn.response(fut, grace)
                    record.response = answer.message
                    self.marks[record.index] = answer.frame.seq + 1
                except TimeoutError:
                    if kind == "request":
                        raise _StepProblem(
                            f"no response to {record.label} within the response timeout "
                            f"({grace:g} s)"
                        ) from None
        except _AgentGone:
            raise await self._gone(conn, record.label) from None
        finally:
            for id_ in ids:
                if conn.pending.get(_id_key(id_)) is fut:
                    del conn.pending[_id_key(id_)]

    async def wait_step(self, record: StepRecord, p: Mapping[str, Any], since: int) -> None:
        if "ms" in p:
            await asyncio.sleep(float(p["ms"]) / 1000)
            return
        kind, count = p.get("update"), int(p.get("count", 1))
        conn = self._live()
        timeout = self.timeouts["response"]
        try:
            async with asyncio.timeout(timeout):
                await self.until(
                    lambda: len(self.update_seqs(kind, since)) >= count or conn.eof.is_set()
                )
        except TimeoutError:
            raise _StepProblem(
                f"{record.label}: only {len(self.update_seqs(kind, since))} of {count} {kind} "
                f"update(s) within the response timeout ({timeout:g} s)"
            ) from None
        matching = self.update_seqs(kind, since)
        if len(matching) < count:
            raise await self._gone(conn, record.label)
        self.marks[record.index] = matching[count - 1] + 1

    async def parallel_step(self, record: StepRecord, children: list[Step]) -> None:
        since = len(self.transcript.frames)
        results = await asyncio.gather(
            *(self.run_step(child, since) for child in children), return_exceptions=True
        )
        marks = [since]
        for res in results:
            if isinstance(res, _StepProblem):
                raise _StepProblem(f"a parallel step failed: {res}")
            if isinstance(res, BaseException):
                raise res
            marks.append(res)
        self.marks[record.index] = max(marks)


# --- terminals (served only when the scenario declares `client.terminal`) --------------


@dataclass
class _Terminal:
    proc: asyncio.subprocess.Process
    limit: int | None
    output: bytearray = field(default_factory=bytearray)
    truncated: bool = False
    pump: asyncio.Task[None] | None = None


class _Terminals:
    """terminal/* for agents that use the client's terminals: real processes in their
    own groups under the workdir, killed at teardown."""

    def __init__(self, run: _Run) -> None:
        self.run = run
        self.items: dict[str, _Terminal] = {}
        self.released: list[_Terminal] = []
        self.created = 0

    async def answer(self, req_id: Any, method: str, params: Any) -> dict[str, Any]:
        """Serve one terminal/* request."""
        params = params if isinstance(params, dict) else {}
        if method == "terminal/create":
            return await self.create(req_id, params)
        if method not in _TERMINAL_METHODS:
            return method_not_found(req_id, method)
        term_id = str(params.get("terminalId"))
        term = self.items.get(term_id)
        if term is None:
            return jsonrpc.error(req_id, -32602, f"Invalid params: unknown terminalId: {term_id}")
        if method == "terminal/output":
            value: dict[str, Any] = {
                "output": term.output.decode("utf-8", errors="replace"),
                "truncated": term.truncated,
            }
            if term.proc.returncode is not None:
                value["exitStatus"] = _exit_status(term.proc.returncode)
            return jsonrpc.result(req_id, value)
        if method == "terminal/wait_for_exit":
            returncode = await term.proc.wait()
            if term.pump is not None:
                await term.pump
            return jsonrpc.result(req_id, _exit_status(returncode))
        _kill(term)
        if method == "terminal/release":
            # Kept for teardown, which waits for the process and its output pump.
            self.released.append(self.items.pop(term_id))
        return jsonrpc.result(req_id, {})

    async def create(self, req_id: Any, params: Mapping[str, Any]) -> dict[str, Any]:
        command = params.get("command")
        args = params.get("args") or []
        if not isinstance(command, str) or not isinstance(args, list):
            return jsonrpc.error(req_id, -32602, "Invalid params: command must be a string")
        env = dict(self.run.env)
        for item in params.get("env") or []:
            if isinstance(item, dict) and isinstance(item.get("name"), str):
                env[item["name"]] = str(item.get("value", ""))
        cwd = params.get("cwd") or str(self.run.paths.workdir)
        try:
            proc = await asyncio.create_subprocess_exec(
                command,
                *[str(a) for a in args],
                stdin=asyncio.subprocess.DEVNULL,
                stdout=asyncio.subprocess.PIPE,
                stderr=asyncio.subprocess.STDOUT,
                env=env,
                cwd=cwd,
                start_new_session=True,
            )
        except OSError as exc:
            return jsonrpc.error(req_id, -32603, f"Internal error: {exc}")
        limit = params.get("outputByteLimit")
        term = _Terminal(proc, limit if isinstance(limit, int) else None)
        term.pump = self.run.loop.create_task(_pump(term))
        self.created += 1
        term_id = f"term-{self.created}"
        self.items[term_id] = term
        return jsonrpc.result(req_id, {"terminalId": term_id})

    async def close(self) -> None:
        """Kill every terminal's process group and wait for it (teardown)."""
        terms = [*self.items.values(), *self.released]
        self.items.clear()
        self.released.clear()
        for term in terms:
            _kill(term)
        for term in terms:
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(term.proc.wait(), 2.0)
            if term.pump is not None:
                term.pump.cancel()
                await asyncio.gather(term.pump, return_exceptions=True)


_TERMINAL_METHODS = (
    "terminal/output",
    "terminal/wait_for_exit",
    "terminal/kill",
    "terminal/release",
)


def _exit_status(returncode: int) -> dict[str, Any]:
    if returncode < 0:
        return {"exitCode": None, "signal": signal.Signals(-returncode).name}
    return {"exitCode": returncode, "signal": None}


def _kill(term: _Terminal) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(term.proc.pid, signal.SIGKILL)


async def _pump(term: _Terminal) -> None:
    assert term.proc.stdout is not None
    while chunk := await term.proc.stdout.read(65536):
        term.output += chunk
        if term.limit is not None and len(term.output) > term.limit:
            # Keep the tail, cut at a character boundary (ACP truncates from the start).
            cut = len(term.output) - term.limit
            while cut < len(term.output) and (term.output[cut] & 0xC0) == 0x80:
                cut += 1
            del term.output[:cut]
            term.truncated = True


# --- entry point ------------------------------------------------------------------------


def _seed(base: Path, files: Mapping[str, str], what: str) -> None:
    for rel, text in files.items():
        path = (base / rel).resolve()
        if os.path.isabs(rel) or not _inside(path, base):
            raise ScriptError(f"{what} path escapes its directory: {rel!r}")
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")


# Removing a run directory costs ~15 ms on a journaling filesystem; a worker thread
# does it while the next run starts. The executor's own exit hook finishes pending
# removals before the interpreter exits.
_remover = concurrent.futures.ThreadPoolExecutor(max_workers=1, thread_name_prefix="parity-rm")
_removals: set[concurrent.futures.Future[None]] = set()


def _remove_later(root: Path) -> None:
    fut = _remover.submit(shutil.rmtree, root, True)
    _removals.add(fut)
    fut.add_done_callback(_removals.discard)


def wait_for_cleanup() -> None:
    """Block until every finished run's directory has been removed."""
    for fut in list(_removals):
        fut.result()


def make_paths(prefix: str) -> RunPaths:
    """Create a fresh run root with `home`, `workdir` and `tmp` (paths fully resolved,
    so they match what agents report after `realpath`)."""
    root = Path(tempfile.mkdtemp(prefix=prefix)).resolve()
    paths = RunPaths(root, root / "home", root / "workdir", root / "tmp")
    for d in (paths.home, paths.workdir, paths.tmp):
        d.mkdir()
    return paths


async def run_scenario(
    scenario: Scenario,
    make_launch: Callable[[RunPaths], Launch],
    *,
    llm_run: LlmRun | None,
    run_id: str,
    target: str,
    keep_dir: bool = False,
    ladder: Ladder | None = None,
) -> Transcript:
    """Play `scenario` against the agent `make_launch` describes; return the transcript.

    A fresh run directory holds the agent's HOME, workdir (seeded with the scenario's
    `files`) and TMPDIR; it is removed afterwards unless `keep_dir` (in a worker
    thread: `wait_for_cleanup()` waits for that). Agent misbehaviour
    (timeouts, crashes, garbage, protocol slips) is recorded, never raised. `ladder`
    overrides the shutdown ladder's waits (tests use short ones).
    """
    safe_id = re.sub(r"[^A-Za-z0-9_.-]", "_", run_id)[:60]
    paths = make_paths(f"parity-{safe_id}-")
    transcript = Transcript(
        scenario=scenario.name,
        target=target,
        run_id=run_id,
        paths={"workdir": str(paths.workdir), "home": str(paths.home), "tmp": str(paths.tmp)},
    )
    try:
        launch = make_launch(paths)
        run = _Run(scenario, launch, paths, transcript, llm_run, ladder or Ladder())
        if llm_run is not None:
            llm_run.mark_start(run.t0)
            llm_run.on_request(
                lambda req: _call_soon(run.loop, run.note_model_request, req),
            )
        await _play(run)
        if llm_run is not None:
            transcript.model_requests = list(llm_run.requests)
        transcript.timings["run"] = run.now()
        return transcript
    finally:
        if not keep_dir:
            _remove_later(paths.root)


def _call_soon(
    loop: asyncio.AbstractEventLoop, fn: Callable[[ModelRequest], None], req: Any
) -> None:
    # Called from the fake LLM's thread; the loop may already be gone after the run.
    with contextlib.suppress(RuntimeError):
        loop.call_soon_threadsafe(fn, req)


async def _play(run: _Run) -> None:
    transcript = run.transcript
    try:
        try:
            _seed(run.paths.workdir, run.scenario.files, "scenario file")
            _seed(run.paths.home, run.launch.files, "launch file")
        except ScriptError as exc:
            transcript.problems.append(str(exc))
            return
        try:
            async with asyncio.timeout(run.timeouts["run"]):
                await run.start()
                await run.run_steps(run.scenario.steps)
        except _StepProblem as exc:
            transcript.problems.append(str(exc))  # only start() raises it out of run_steps
        except TimeoutError:
            text = f"run timeout ({run.timeouts['run']:g} s) reached"
            for record in transcript.steps:
                if record.problem == INTERRUPTED:
                    record.problem = f"{text} during {record.label}"
            transcript.problems.append(text)
        if run.steps_done < len(run.scenario.steps) and transcript.steps:
            last = transcript.steps[run.current]
            later = len(run.scenario.steps) - run.steps_done - 1
            transcript.problems.append(
                f"run stopped at step {last.index} ({last.label}); {later} later step(s) not run"
            )
    finally:
        t = run.now()
        await run.terminals.close()
        await run.stop()
        transcript.timings["teardown"] = run.now() - t
        if run.dropped:
            transcript.problems.append(
                f"frame limit ({MAX_FRAMES}) reached: {run.dropped} later line(s) from the"
                " agent were read but not recorded or acted on"
            )
        for kind, n in sorted(run.problem_counts.items()):
            if n > MAX_PROBLEMS_PER_KIND:
                transcript.problems.append(f"... and {n - MAX_PROBLEMS_PER_KIND} more ({kind})")
