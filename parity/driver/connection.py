"""One agent process and its JSON-RPC traffic over stdio.

A `Connection` reads the agent's stdout line by line in a task of its own, hands each
line to the run for recording, resolves the futures of our pending requests with their
responses, and answers the agent's requests to the client (one task per request, so a
slow answer, such as a terminal wait, never blocks reading). It records through a
`Recorder` (`parity.driver.recording.Recording`) and answers through an `Answer`
(`parity.driver.answers.ClientAnswers.answer`).
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any, Protocol

from parity.core.transcript import Frame
from parity.driver import jsonrpc
from parity.driver.process import AgentProcess, Ladder
from parity.driver.step_errors import StepProblem

EXIT_DRAIN = 0.5
"""Seconds to let stdout drain after the process exited before calling it gone."""


class Recorder(Protocol):
    """What a `Connection` records through."""

    def record_in(self, line: jsonrpc.Line, process: int) -> Frame | None:
        """Record a line read from process `process`; None when the run records no more
        frames (the line is then neither recorded nor acted on)."""
        ...

    def record_out(self, raw: str, message: Any, error: str | None, process: int) -> Frame:
        """Record a line about to be written to process `process`."""
        ...

    def problem(self, kind: str, text: str) -> None:
        """Note a run-level problem of `kind`."""
        ...

    def tick(self) -> None:
        """Wake everything waiting for a frame, an update or a model request."""
        ...

    def note_update(self, seq: int, params: Any) -> None:
        """Note a session/update notification (frame `seq`, its params)."""
        ...

    def note_request(self, seq: int, msg: dict[str, Any]) -> None:
        """Note an agent->client request (frame `seq`)."""
        ...

    def refuse(self, why: str) -> None:
        """Note a request of the agent answered with an error for a limit."""
        ...


Answer = Callable[[dict[str, Any], int], Awaitable[dict[str, Any]]]
"""The response to one agent->client request (the message, its frame seq)."""


class AgentGone(Exception):
    """The agent closed stdout (or its stdin broke) while a step needed it."""


class OversizeAnswer(StepProblem):
    """The response a step waits for is a line over the line limit: it cannot be read,
    and waiting longer would only turn the limit into a timeout."""

    def __init__(self, seq: int, size: int) -> None:
        super().__init__(
            f"frame {seq} is {size} bytes, over the line limit ({jsonrpc.FRAME_LIMIT})"
        )

    def named(self, label: str) -> StepProblem:
        """The step's problem, naming it."""
        return StepProblem(f"the answer to {label} could not be read: {self}")


class StdinBlocked(Exception):
    """A line could not be written within the response timeout: the agent is not
    reading its stdin and the pipe is full."""


@dataclass(frozen=True)
class Reply:
    """A response to one of our requests: its frame, and the message in it (an element
    when the frame is a batch)."""

    frame: Frame
    message: dict[str, Any]


class Connection:
    """One agent process with its JSON-RPC traffic: reader task, pending requests."""

    def __init__(
        self,
        recorder: Recorder,
        answer: Answer,
        agent: AgentProcess,
        index: int,
        spawned_at: float,
        write_timeout: float,
    ) -> None:
        self.recorder = recorder
        self.answer = answer
        self.write_timeout = write_timeout
        """Seconds a write may wait for the agent to read (the response timeout)."""
        self.agent = agent
        self.index = index
        self.spawned_at = spawned_at
        self.initialized = False
        self.fresh = True
        """No step has used this process yet (an initialize now gets the startup timeout)."""
        self.pending: dict[Any, asyncio.Future[Reply]] = {}
        self.reported_exit = False
        self.eof = asyncio.Event()
        self.answering: dict[Any, asyncio.Task[None]] = {}
        self.withdrawn: dict[Any, bool] = {}
        self.reader = asyncio.get_running_loop().create_task(self._read())

    async def response(self, fut: asyncio.Future[Reply], timeout: float) -> Reply:
        """The response frame `fut` resolves to, within `timeout` seconds.

        Raises TimeoutError, or `AgentGone` when stdout ends or the process exits
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
            raise AgentGone() from None

    async def _read(self) -> None:
        try:
            while (line := await jsonrpc.read_line(self.agent.stdout)) is not None:
                frame = self.recorder.record_in(line, self.index)
                if line.oversize or frame is None:
                    # Over a limit; still answered, so neither side waits in vain.
                    self._limited(line, frame)
                else:
                    self._dispatch(frame)
        except Exception as exc:
            # A harness bug: say so in the transcript rather than pass it off as a crash.
            self.recorder.problem("driver", f"driver error: stdout reader failed: {exc!r}")
            raise
        finally:
            self.eof.set()
            for fut in self.pending.values():
                if not fut.done():
                    fut.set_exception(AgentGone())
            self.recorder.tick()

    def _dispatch(self, frame: Frame) -> None:
        value = frame.message
        if frame.parse_error is None and jsonrpc.is_batch(value):
            # JSON-RPC allows answering a batch (which only `send_raw` sends) with one.
            for item in value:
                self._dispatch_one(frame, item)
        else:
            self._dispatch_one(frame, value)
        self.recorder.tick()

    def _dispatch_one(self, frame: Frame, msg: Any) -> None:
        kind = jsonrpc.classify(msg) if frame.parse_error is None else "invalid"
        if kind == "response":
            fut = self.pending.pop(id_key(msg["id"]), None)
            if fut is not None and not fut.done():
                fut.set_result(Reply(frame, msg))
        elif kind == "request":
            self.recorder.note_request(frame.seq, msg)
            key = id_key(msg["id"])
            task = asyncio.get_running_loop().create_task(self._answer(msg, frame.seq))
            self.answering[key] = task
            task.add_done_callback(lambda _: self.answering.pop(key, None))
        elif kind == "notification":
            if msg["method"] == "session/update":
                self.recorder.note_update(frame.seq, msg.get("params"))
            elif msg["method"] == "$/cancel_request":
                self._withdrawn(msg.get("params"))
        elif frame.parse_error is None:
            self.recorder.problem(
                "not-jsonrpc",
                f"frame {frame.seq}: agent sent a JSON value that is not a JSON-RPC message",
            )

    def _limited(self, line: jsonrpc.Line, frame: Frame | None) -> None:
        """A line the run did not record (past the frame limit) or cannot read (over the
        line limit, `frame` then its head): a request of the agent in it gets an error
        answer, the step waiting for a response in it a reason (`OversizeAnswer`)."""
        if line.oversize:
            head = jsonrpc.head_members(line.data)
            items = [head] if "method" in head or "result" in head or "error" in head else []
            where = f"frame {frame.seq}" if frame is not None else "a line past a recording limit"
            why = f"{where}, {line.size} bytes over the line limit ({jsonrpc.FRAME_LIMIT})"
        elif b'"id"' in line.data and b'"method"' in line.data:
            value = jsonrpc.parse_line(line).message
            items = value if jsonrpc.is_batch(value) else [value]
            why = "past the frame limit"
        else:
            return
        for item in items:
            ident = item.get("id", jsonrpc.UNREAD) if isinstance(item, dict) else jsonrpc.UNREAD
            if ident is jsonrpc.UNREAD or ident is None or isinstance(ident, bool | float):
                continue  # no id to answer, or none the agent can match
            method = item.get("method")
            if isinstance(method, str):
                self.recorder.refuse(f"{method} ({why})")
                answer = jsonrpc.error(
                    ident,
                    jsonrpc.REFUSED,
                    f"the test client did not handle this request: {why}",
                )
                task = asyncio.get_running_loop().create_task(self._send_refusal(answer, frame))
                self._keep(("refused", id_key(ident)), task)
            elif line.oversize and frame is not None:
                fut = self.pending.pop(id_key(ident), None)
                if fut is not None and not fut.done():
                    fut.set_exception(OversizeAnswer(frame.seq, line.size))
        self.recorder.tick()

    def _keep(self, key: Any, task: asyncio.Task[None]) -> None:
        """Hold `task` among the answers being sent (`close` cancels them) until done."""
        self.answering[key] = task
        task.add_done_callback(lambda _: self.answering.pop(key, None))

    async def _send_refusal(self, answer: dict[str, Any], frame: Frame | None) -> None:
        """Send the error answer to a request refused for a limit: recorded when its
        request was (an oversize line's head), else written unrecorded."""
        with contextlib.suppress(AgentGone, StdinBlocked):
            if frame is not None:
                await self.send(answer)
            else:
                await self._write(jsonrpc.encode(answer))

    async def _answer(self, msg: dict[str, Any], seq: int) -> None:
        """Compute and send the answer to one agent request (a task per request)."""
        try:
            reply = await self.answer(msg, seq)
        except asyncio.CancelledError:
            if not self.withdrawn.pop(id_key(msg["id"]), False):
                raise
            reply = jsonrpc.error(msg["id"], -32800, "Request cancelled")
        except Exception as exc:
            self.recorder.problem("driver", f"driver error answering {msg['method']}: {exc!r}")
            reply = jsonrpc.error(msg["id"], -32603, f"Internal error: {exc}")
        try:
            await self.send(reply)
        except AgentGone:
            pass  # the step waiting on this agent reports it
        except StdinBlocked:
            self.recorder.problem("stdin", f"the agent did not read our answer to {msg['method']}")

    def _withdrawn(self, params: Any) -> None:
        # The agent cancels a request it made (e.g. a terminal wait): stop answering it
        # and reply -32800, as JSON-RPC cancellation asks.
        key = id_key(params.get("requestId") if isinstance(params, dict) else None)
        task = self.answering.get(key)
        if task is not None and not task.done():
            self.withdrawn[key] = True
            task.cancel()

    async def send(self, message: Any) -> Frame:
        """Record and write one message; raises `AgentGone` if stdin is broken."""
        return await self.send_text(jsonrpc.encode(message), message)

    async def send_text(self, text: str, message: Any = None, error: str | None = None) -> Frame:
        """Record and write one line (the frame is recorded unless the agent is known to
        be gone; a write that then fails still shows what was attempted)."""
        if self.eof.is_set() and self.agent.exited():
            raise AgentGone()
        frame = self.recorder.record_out(text, message, error, self.index)
        self.fresh = False
        await self._write(text)
        return frame

    async def _write(self, text: str) -> None:
        try:
            self.agent.stdin.write(text.encode("utf-8") + b"\n")
            await asyncio.wait_for(self.agent.stdin.drain(), self.write_timeout)
        except TimeoutError:
            raise StdinBlocked() from None
        except (ConnectionError, RuntimeError, OSError) as exc:
            raise AgentGone() from exc

    def expect(self, *ids: Any) -> asyncio.Future[Reply]:
        """A future for the first response carrying any of `ids` (fails if stdout
        ends). The caller removes the ids from `pending` when done."""
        fut: asyncio.Future[Reply] = asyncio.get_running_loop().create_future()
        # When the run is interrupted nobody awaits this future; reading its outcome here
        # keeps asyncio from logging "Future exception was never retrieved" for AgentGone.
        fut.add_done_callback(_consume_outcome)
        if self.eof.is_set():
            fut.set_exception(AgentGone())
        for id_ in ids:
            self.pending[id_key(id_)] = fut
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


def id_key(id_: Any) -> Any:
    """`id_` usable as a dict key (pending requests are keyed by id)."""
    # Ids are JSON values; make unhashable ones (agents can send anything) hashable.
    return id_ if isinstance(id_, (str, int, float, type(None))) else repr(id_)


def _consume_outcome(fut: asyncio.Future[Reply]) -> None:
    if not fut.cancelled():
        fut.exception()
