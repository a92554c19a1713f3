"""The ACP stdio driver: plays a scenario's client script against one agent process.

`run_scenario` creates a private run directory, starts the agent in its own process
group, sends each step as raw NDJSON JSON-RPC, answers the agent's requests to the
client as the scenario says, and records every line in both directions as a `Frame`.
It never raises because of what an agent does: timeouts, crashes, garbage and protocol
slips become `StepRecord.problem` / `Transcript.problems`, with the exit status and the
stderr tail. It raises only for harness bugs.

This module is the run's orchestration: `_Run` (the steps, the recording, the client's
answers, the current agent process) and the `run_scenario` entry point. Its parts live
in modules of their own: `parity.steps` (labels, placeholders, the params each step
sends), `parity.client_answers` (answers to the agent's permission, elicitation and fs
requests), `parity.terminals` (the client's terminals) and `parity.connection` (one
agent process and its JSON-RPC traffic). Names that moved there are re-exported here.
"""

from __future__ import annotations

import asyncio
import bisect
import concurrent.futures
import contextlib
import os
import re
import shutil
import tempfile
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

from parity import jsonrpc
from parity.client_answers import elicitation_answer as elicitation_answer
from parity.client_answers import fs_answer as fs_answer
from parity.client_answers import inside
from parity.client_answers import method_not_found as method_not_found
from parity.client_answers import permission_answer as permission_answer
from parity.client_answers import permission_policy as permission_policy
from parity.client_answers import permission_titles as permission_titles
from parity.client_answers import pick_answer as pick_answer
from parity.connection import EXIT_DRAIN as EXIT_DRAIN
from parity.connection import AgentGone, Connection, StdinBlocked, id_key
from parity.process import Ladder, agent_env, spawn
from parity.scenario.model import Scenario, Step
from parity.steps import CLIENT_INFO as CLIENT_INFO
from parity.steps import PROTOCOL_VERSION as PROTOCOL_VERSION
from parity.steps import (
    SESSION_METHODS,
    initialize_params,
    list_params,
    prompt_outcome,
    session_params,
    trigger_text,
)
from parity.steps import ScriptError as ScriptError
from parity.steps import step_label as step_label
from parity.steps import substitute as substitute
from parity.targets.launch import Launch
from parity.terminals import Terminals
from parity.transcript import Direction, Frame, ModelRequest, StepRecord, Transcript

DEFAULT_TIMEOUTS: dict[str, float] = {"startup": 15.0, "response": 15.0, "run": 120.0}
"""Seconds; a scenario's `timeouts` override these per key."""

MAX_FRAMES = 200_000
"""Frames recorded per run; a runaway agent's further lines are drained and counted,
so it cannot exhaust the harness's memory."""
MAX_PROBLEMS_PER_KIND = 20
"""Garbage lines beyond this many are counted instead of listed one by one."""
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


# --- small helpers ----------------------------------------------------------------------


def _tail(text: str, limit: int = 2000) -> str:
    return text if len(text) <= limit else "..." + text[-limit:]


_MODEL_PATHS = ("/stream", "/chat/completions", "/responses", "/messages")


def _is_model_request(req: ModelRequest) -> bool:
    # A call for a model response in any dialect (side requests included: the fake
    # decides `side` only after telling listeners), not catalog, tool or MCP traffic.
    return req.method == "POST" and req.path.endswith(_MODEL_PATHS)


# --- the run ----------------------------------------------------------------------------


class _StepProblem(Exception):
    """A step went wrong; the run stops after recording it."""


class _NoResponse(_StepProblem):
    """A request got no response within its timeout (`seconds`)."""

    def __init__(self, text: str, seconds: float) -> None:
        super().__init__(text)
        self.seconds = seconds


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
        self.conn: Connection | None = None
        self.next_id = 0
        self.sessions: dict[str, Any] = {}
        self.session_since: dict[str, int] = {}
        """Session name -> the frame seq of its session/new request (for `wait` with a
        `session`: an update may race ahead of the session/new response)."""
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
        self.terminals = Terminals(self.env, paths.workdir)

    # -- recording --

    def now(self) -> float:
        return time.monotonic() - self.t0

    def _append(self, frame_args: dict[str, Any]) -> Frame:
        frame = Frame(seq=len(self.transcript.frames), t=self.now(), **frame_args)
        self.transcript.frames.append(frame)
        return frame

    def record_in(self, line: jsonrpc.Line, process: int) -> Frame | None:
        """Record a line read from `process`; None past `MAX_FRAMES` (the line is then
        only counted in `dropped`, so a runaway agent cannot exhaust memory)."""
        if len(self.transcript.frames) >= MAX_FRAMES:
            self.dropped += 1
            return None
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
        self.conn = Connection(self, agent, len(self.transcript.processes) - 1, spawned_at)

    async def stop(self) -> None:
        conn, self.conn = self.conn, None
        if conn is None:
            return
        await conn.close(self.ladder)
        record = conn.agent.record
        if record.stopped_by == "exit" and not conn.reported_exit:
            self.problem("exit", f"agent exited by itself before teardown ({conn.agent.status()})")

    def _live(self) -> Connection:
        if self.conn is None:
            raise _StepProblem("no agent process is running")
        return self.conn

    async def _gone(self, conn: Connection, label: str) -> _StepProblem:
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
        self, record: StepRecord, conn: Connection, msg: dict[str, Any]
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
        except AgentGone:
            raise await self._gone(conn, record.label) from None
        except TimeoutError:
            raise _NoResponse(
                f"no response to {record.label} within the {which} timeout "
                f"({self.timeouts[which]:g} s)",
                self.timeouts[which],
            ) from None
        finally:
            conn.pending.pop(id_key(msg["id"]), None)
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
        except AgentGone:
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
        except StdinBlocked:
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
            await self.call(record, "initialize", initialize_params(p, self.client))
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
        sid = self.session_id(p) if kind != "new_session" else None
        params = session_params(kind, p, sid, self.paths.workdir, self.mcp_servers(p))
        sent_at = len(self.transcript.frames)
        response = await self.call(record, SESSION_METHODS[kind], params)
        if kind == "new_session":
            self.session_since[str(p.get("as"))] = sent_at
            result = response.get("result")
            sid = result.get("sessionId") if isinstance(result, dict) else None
            if sid is not None:
                self.sessions[str(p.get("as"))] = sid

    async def list_step(self, record: StepRecord, p: Mapping[str, Any]) -> None:
        response = await self.call(record, "session/list", list_params(p, self.last_cursor))
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
            response = await self.exchange(record, conn, msg)
        except _NoResponse as exc:
            if watcher.done() and not watcher.cancelled() and watcher.exception() is None:
                raise _StepProblem(f"{exc}, although its cancel trigger fired") from None
            # What went wrong is the trigger, not (only) the agent's silence.
            seen = self.trigger_progress(trigger, sid, start)
            raise _StepProblem(
                f"cancel trigger `{trigger_text(trigger)}` never fired{seen}; "
                f"no response within {exc.seconds:g} s"
            ) from None
        finally:
            fired = watcher.done() and not watcher.cancelled() and watcher.exception() is None
            watcher.cancel()
            await asyncio.gather(watcher, return_exceptions=True)
        if not fired:
            # Not fatal: the transcript shows how the prompt ended without the cancel.
            seen = self.trigger_progress(trigger, sid, start)
            record.problem = (
                f"cancel trigger `{trigger_text(trigger)}` never fired{seen}; "
                f"the prompt ended first, {prompt_outcome(response)}"
            )

    def trigger_progress(self, trigger: Mapping[str, Any], sid: Any, start: int) -> str:
        """How far a trigger that never fired got: ` (1 of 2 tool_call updates came)`."""
        after = trigger.get("after") or {}
        if "update" in after:
            kind, count = after["update"], int(after.get("count", 1))
            n = len(self.update_seqs(kind, start, sid))
            return f" ({n} of {count} {kind} update(s) came)"
        if "llm_request" in after:
            wanted = int(after["llm_request"])
            return f" ({len(self.model_turns)} of {wanted} model request(s) came)"
        return ""

    async def cancel_when(
        self, conn: Connection, trigger: Mapping[str, Any], sid: Any, req_id: Any, start: int
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
        except AgentGone:
            raise await self._gone(conn, record.label) from None
        finally:
            for id_ in ids:
                if conn.pending.get(id_key(id_)) is fut:
                    del conn.pending[id_key(id_)]

    async def wait_step(self, record: StepRecord, p: Mapping[str, Any], since: int) -> None:
        if "ms" in p:
            await asyncio.sleep(float(p["ms"]) / 1000)
            return
        kind, count = p.get("update"), int(p.get("count", 1))
        session: Any = _ANY
        if "session" in p:
            # Counted from the session's own session/new request, not the previous step.
            session, since = self.session_id(p), self.session_since.get(str(p["session"]), 0)
        conn = self._live()
        timeout = self.timeouts["response"]

        def seen() -> list[int]:
            return self.update_seqs(kind, since, session)

        try:
            async with asyncio.timeout(timeout):
                await self.until(lambda: len(seen()) >= count or conn.eof.is_set())
        except TimeoutError:
            raise _StepProblem(
                f"{record.label}: only {len(seen())} of {count} {kind} "
                f"update(s) within the response timeout ({timeout:g} s)"
            ) from None
        matching = seen()
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


# --- entry point ------------------------------------------------------------------------


def _seed(base: Path, files: Mapping[str, str], what: str) -> None:
    for rel, text in files.items():
        path = (base / rel).resolve()
        if os.path.isabs(rel) or not inside(path, base):
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
        transcript.agent = dict(launch.stamp)
        for name, path in launch.paths.items():
            transcript.paths.setdefault(name, path)
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


WORKSPACE_FILE_LIMIT = 64 * 1024
"""Bytes of one `expect_files` file kept in the transcript (the rest is counted)."""


def workspace_files(workdir: Path, names: Sequence[str]) -> dict[str, str | None]:
    """The scenario's `expect_files` after the run, read once the agent has stopped:
    text (invalid UTF-8 replaced, cut at `WORKSPACE_FILE_LIMIT` with a note), or None
    for a file that does not exist. A name escaping the workdir is refused."""
    out: dict[str, str | None] = {}
    root = workdir.resolve()
    for name in names:
        path = (workdir / name).resolve()
        if not path.is_relative_to(root):
            out[name] = "<refused: outside the workdir>"
            continue
        try:
            with open(path, "rb") as fh:
                data = fh.read(WORKSPACE_FILE_LIMIT + 1)
        except FileNotFoundError:
            out[name] = None
            continue
        except OSError as exc:
            out[name] = f"<unreadable: {exc.strerror}>"
            continue
        text = data[:WORKSPACE_FILE_LIMIT].decode("utf-8", errors="replace")
        if len(data) > WORKSPACE_FILE_LIMIT:
            text += f"\n<cut at {WORKSPACE_FILE_LIMIT} bytes>"
        out[name] = text
    return out


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
                f"run stopped at step {last.index + 1} ({last.label}); "
                f"{later} later step(s) not run"
            )
    finally:
        t = run.now()
        await run.terminals.close()
        await run.stop()
        transcript.timings["teardown"] = run.now() - t
        transcript.files = workspace_files(run.paths.workdir, run.scenario.expect_files)
        if run.dropped:
            transcript.problems.append(
                f"frame limit ({MAX_FRAMES}) reached: {run.dropped} later line(s) from the"
                " agent were read but not recorded or acted on"
            )
        for kind, n in sorted(run.problem_counts.items()):
            if n > MAX_PROBLEMS_PER_KIND:
                transcript.problems.append(f"... and {n - MAX_PROBLEMS_PER_KIND} more ({kind})")
