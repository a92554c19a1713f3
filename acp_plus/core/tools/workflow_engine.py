"""One workflow run: the guest Node process (`workflow_guest.mjs`) and the host side of
its line protocol (the guest's header describes it).

The host starts the process (under the sandbox prefix the caller gives, as `bash` runs),
sends the run, answers the guest's child requests through `Children`, and returns the
guest's last word as a `RunResult`. Cancelling the awaiting task kills the whole process
group and disposes the children still running, so nothing of a run outlives its call.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import signal
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

GUEST = Path(__file__).with_name("workflow_guest.mjs")
GUEST_MARK = "acp-plus-workflow-guest"
"""The guest process's one argument: names it in a process listing."""
LINE_LIMIT = 64 * 1024 * 1024
"""The longest line the guest may write (a big return value travels as one line)."""
STDERR_TAIL = 4000


@dataclass(frozen=True)
class Limits:
    """Native's engine defaults: concurrency from the machine, the rest fixed."""

    max_concurrent_agents: int
    max_total_agents: int = 1000
    max_items_per_call: int = 4096
    sync_timeout_ms: int = 5000

    @staticmethod
    def for_machine() -> Limits:
        """min(16, max(1, cores - 2)) children at once, as native sizes it."""
        cores = os.cpu_count() or 1
        return Limits(max_concurrent_agents=min(16, max(1, cores - 2)))

    def wire(self) -> dict[str, int]:
        """The guest's spelling."""
        return {
            "maxConcurrentAgents": self.max_concurrent_agents,
            "maxTotalAgents": self.max_total_agents,
            "maxItemsPerCall": self.max_items_per_call,
            "syncTimeoutMs": self.sync_timeout_ms,
        }


class ChildRun(Protocol):
    """A child agent started for one `agent()` call."""

    @property
    def id(self) -> str:
        """The child's id (the workflow's progress events name it)."""
        ...

    async def result(self) -> dict[str, Any]:
        """`{output: [blocks], stopReason, structured?}` once the child settles."""
        ...

    async def dispose(self) -> None:
        """Stop the child if it still runs and release it."""
        ...


class Children(Protocol):
    """Where `agent()` calls get their child agents."""

    async def start(self, request: dict[str, Any]) -> ChildRun:
        """Start a child for `{prompt, schema?, provider?, model?}`; raise to refuse."""
        ...


class ParseError(Exception):
    """The body does not compile; nothing ran (the message is the model's)."""


@dataclass(frozen=True)
class RunResult:
    """How a run ended: `stop_reason` is completed, error or cancelled."""

    stop_reason: str
    agents_started: int
    rendered: str | None = None
    """The value as `JSON.stringify(value, null, 2)` (completed runs)."""
    error: str | None = None


Progress = Callable[[dict[str, Any]], None]


def _describe(error: BaseException) -> str:
    # The guest quotes it after "agent() could not start a child: ", as a JS stack would.
    return f"Error: {error}"


class _Link:
    """The host end of one guest process."""

    def __init__(
        self,
        proc: asyncio.subprocess.Process,
        children: Children,
        progress: Progress,
        parsed: asyncio.Future[None] | None,
    ):
        self.proc = proc
        self.parsed = parsed
        self.children = children
        self.progress = progress
        self.runs: dict[int, ChildRun] = {}
        self.tasks: set[asyncio.Task[None]] = set()

    def send(self, message: dict[str, Any]) -> None:
        assert self.proc.stdin is not None
        if not self.proc.stdin.is_closing():
            self.proc.stdin.write((json.dumps(message) + "\n").encode())

    async def serve(self) -> dict[str, Any] | None:
        """Answer the guest until its last word (None: it ended without one)."""
        assert self.proc.stdout is not None
        while line := await self.proc.stdout.readline():
            message = json.loads(line)
            op = message.get("op")
            if op in ("result", "parse-error"):
                return dict(message)
            if op == "parsed":
                if self.parsed is not None and not self.parsed.done():
                    self.parsed.set_result(None)
            elif op == "progress":
                self.progress(message["event"])
            elif op == "start-child":
                task = asyncio.create_task(self._child(int(message["call"]), message["request"]))
                self.tasks.add(task)
                task.add_done_callback(self.tasks.discard)
            elif op == "dispose-child":
                run = self.runs.pop(int(message["call"]), None)
                if run is not None:
                    await run.dispose()
        return None

    async def _child(self, call: int, request: dict[str, Any]) -> None:
        try:
            run = await self.children.start(request)
        except Exception as exc:  # the guest turns it into the script's fatal error
            self.send({"op": "child-failed", "call": call, "error": _describe(exc)})
            return
        self.runs[call] = run
        self.send({"op": "child", "call": call, "childId": run.id})
        try:
            result = await run.result()
        except Exception as exc:
            self.send({"op": "child-error", "call": call, "error": _describe(exc)})
            return
        self.send({"op": "child-result", "call": call, "result": result})

    async def close(self) -> None:
        """End the process group and every child still running."""
        for task in list(self.tasks):
            task.cancel()
        for run in list(self.runs.values()):
            with contextlib.suppress(Exception):
                await run.dispose()
        self.runs.clear()
        if self.proc.returncode is None:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(self.proc.pid, signal.SIGKILL)
        await self.proc.wait()


async def run_workflow(
    *,
    node: str,
    prefix: Sequence[str],
    cwd: Path,
    meta: dict[str, Any],
    body: str,
    args: Any,
    limits: Limits,
    children: Children,
    progress: Progress = lambda event: None,
    env: dict[str, str] | None = None,
    parsed: asyncio.Future[None] | None = None,
) -> RunResult:
    """Run one script to its end; raise `ParseError` when it does not compile. `parsed`,
    when given, is resolved once the body compiles (a background call's answer waits for
    it), or fails with the `ParseError`."""
    # The program goes on the command line, not as a path: the sandbox gives the process a
    # private /tmp, where an acp-plus installed under /tmp would not be found.
    proc = await asyncio.create_subprocess_exec(
        *prefix,
        node,
        "--input-type=module",
        "--eval",
        GUEST.read_text(encoding="utf-8"),
        GUEST_MARK,
        cwd=cwd,
        stdin=asyncio.subprocess.PIPE,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
        start_new_session=True,
        limit=LINE_LIMIT,
        env=env,
    )
    link = _Link(proc, children, progress, parsed)
    run: dict[str, Any] = {"op": "run", "meta": meta, "body": body, "limits": limits.wire()}
    if args is not None:
        run["args"] = args
    stderr = asyncio.create_task(_read_all(proc.stderr))
    try:
        link.send(run)
        last = await link.serve()
    finally:
        await link.close()
    err = (await stderr).decode("utf-8", "replace")
    if parsed is not None and not parsed.done():
        parsed.set_result(None)  # it ended before compiling: the run's result says how
    if last is None:
        detail = err.strip()[-STDERR_TAIL:] or f"exit code {proc.returncode}"
        return RunResult("error", 0, error=f"the workflow process ended early: {detail}")
    if last["op"] == "parse-error":
        error = ParseError(str(last["message"]))
        if parsed is not None and not parsed.done():
            parsed.set_exception(error)
        raise error
    result = last["result"]
    return RunResult(
        stop_reason=str(result["stopReason"]),
        agents_started=int(result["agentsStarted"]),
        rendered=result.get("rendered"),
        error=result.get("error"),
    )


async def _read_all(stream: asyncio.StreamReader | None) -> bytes:
    # Only the tail is kept: a script that escapes the vm may print without end.
    tail = b""
    while stream is not None and (block := await stream.read(65536)):
        tail = (tail + block)[-STDERR_TAIL * 4 :]
    return tail


__all__ = [
    "GUEST_MARK",
    "ChildRun",
    "Children",
    "Limits",
    "ParseError",
    "RunResult",
    "run_workflow",
]
