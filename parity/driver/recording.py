"""The run's recording: every frame, the run-level problems, and what steps wait on.

Each line in either direction becomes a `Frame` of the transcript. Alongside, the
recording keeps the indexes the step handlers wait on (the `session/update` kinds seen,
the model requests made, each step's mark) and wakes them through `tick` whenever one
changes. A runaway agent cannot exhaust memory: frames past `MAX_FRAMES`, and unusable
lines past `MAX_GARBAGE_FRAMES`, are only counted, and a flood of one problem kind is
capped and summarised (`finish`).
"""

from __future__ import annotations

import asyncio
import bisect
import time
from collections.abc import Callable
from typing import Any

from parity.core.depth import MAX_DEPTH
from parity.core.transcript import Direction, Frame, ModelRequest, Transcript
from parity.driver import jsonrpc

MAX_FRAMES = 200_000
"""Frames recorded per run; a runaway agent's further lines are drained and counted,
so it cannot exhaust the harness's memory."""
MAX_GARBAGE_FRAMES = 200
"""Unusable lines (not JSON, oversize, JSON that is no JSON-RPC message) recorded as
frames per run. A garbage printer's later lines are only counted: its view, findings
and snapshot stay small, and its real answers still get through (the frame limit would
drop those too)."""
MAX_REQUESTS_PAST_LIMIT = 1000
"""The agent's own requests recorded and answered as the scenario says after the frame
limit. Later ones are answered with an error (`jsonrpc.REFUSED`), unrecorded: the agent never
waits for an answer that will not come, and memory stays bounded."""
MAX_PROBLEMS_PER_KIND = 20
"""Garbage lines beyond this many are counted instead of listed one by one."""

_MODEL_PATHS = ("/stream", "/chat/completions", "/responses", "/messages")

ANY_SESSION: Any = object()
"""`update_seqs` without a session filter."""


def is_model_request(req: ModelRequest) -> bool:
    """A call for a model response in any dialect (side requests included: the fake
    decides `side` only after telling listeners), not catalog, tool or MCP traffic."""
    return req.method == "POST" and req.path.endswith(_MODEL_PATHS)


def _past_limit(line: jsonrpc.Line) -> str | None:
    """What a line read past the frame limit still is: `response` (or a batch holding
    one), `request` (the agent's own, or a batch holding one), else None. Both are
    answers someone waits for: the step its response, the agent the client's answer;
    an agent streaming a long answer, or flooding, must turn neither into a hang or a
    timeout. A cheap test first: no `"id"`, neither."""
    if line.oversize or b'"id"' not in line.data:
        return None
    value = jsonrpc.parse_line(line).message
    kinds = {jsonrpc.classify(item) for item in (value if jsonrpc.is_batch(value) else [value])}
    if "response" in kinds:
        return "response"
    return "request" if "request" in kinds else None


def _unusable(parsed: jsonrpc.Parsed) -> bool:
    """A line that can never be part of the conversation: no JSON, or a JSON value
    that is neither a JSON-RPC message nor a batch."""
    if parsed.error is not None:
        return True
    value = parsed.message
    return jsonrpc.classify(value) == "invalid" and not jsonrpc.is_batch(value)


class Recording:
    """What one run has recorded so far (see the module docstring)."""

    def __init__(self, transcript: Transcript) -> None:
        self.transcript = transcript
        self.t0 = time.monotonic()
        self.dropped = 0
        """Lines read after the frame limit (neither recorded nor acted on)."""
        self.past_limit_requests = 0
        """The agent's requests read after the frame limit (recorded and answered up to
        `MAX_REQUESTS_PAST_LIMIT`)."""
        self.refused = 0
        """Requests of the agent the client answered with an error for a limit."""
        self.refused_shown: list[str] = []
        """The first few of them: method and why."""
        self.garbage = 0
        """Unusable lines read; only the first `MAX_GARBAGE_FRAMES` become frames."""
        self.problem_counts: dict[str, int] = {}
        self.updates: dict[str, list[tuple[int, Any]]] = {}
        """sessionUpdate kind -> (frame seq, sessionId) of each such update, in order."""
        self.tool_titles: dict[str, str] = {}
        """toolCallId -> the title its latest tool_call(_update) gave it."""
        self.model_turns: list[float] = []
        """When each model request arrived (run seconds)."""
        self.tool_calls: list[tuple[float, str]] = []
        """When each `/tools/call` the fake received (parity-stream or forwarded from MCP
        `tools/call`) arrived (run seconds), and the fixture tool it named; in order."""
        self.agent_requests: dict[str, list[tuple[int, Any]]] = {}
        """Agent->client request method -> (frame seq, its params' sessionId), in order."""
        self.ended_prompts: set[str] = set()
        """Names (`as`) of the prompts whose step has ended."""
        self.holds: set[Callable[[], bool]] = set()
        """Held answers not sent yet: each says whether its trigger has fired."""
        self.marks: dict[int, int] = {}
        """Step index -> the frame seq from which the next step counts "more" updates."""
        self.on_session: Callable[[str], None] | None = None
        """Told every session id the client uses: a `sessionId` in the params it sends or
        in a result it gets (the fake LLM tells child agents apart by them)."""
        self._tick = asyncio.Event()

    def now(self) -> float:
        return time.monotonic() - self.t0

    # -- frames and problems --

    def _append(self, frame_args: dict[str, Any]) -> Frame:
        frame = Frame(seq=len(self.transcript.frames), t=self.now(), **frame_args)
        self.transcript.frames.append(frame)
        return frame

    def record_in(self, line: jsonrpc.Line, process: int) -> Frame | None:
        """Record a line read from `process`; None past `MAX_FRAMES` (the line is then
        only counted in `dropped`, so a runaway agent cannot exhaust memory; responses,
        and the agent's requests up to `MAX_REQUESTS_PAST_LIMIT`, are still recorded) and
        for unusable lines past `MAX_GARBAGE_FRAMES` (counted in `garbage`)."""
        if len(self.transcript.frames) >= MAX_FRAMES:
            kind = _past_limit(line)
            if kind == "request":
                self.past_limit_requests += 1
            if kind is None or (
                kind == "request" and self.past_limit_requests > MAX_REQUESTS_PAST_LIMIT
            ):
                self.dropped += 1
                return None
        parsed = jsonrpc.parse_line(line)
        if _unusable(parsed):
            self.garbage += 1
            if self.garbage > MAX_GARBAGE_FRAMES:
                return None
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
        if isinstance(parsed.message, dict) and "id" in parsed.message:
            self._client_session(parsed.message.get("result"))
        if parsed.error is not None:
            what = "oversize frame" if line.oversize else "non-JSON line"
            self.problem(what, f"frame {frame.seq}: {what} on stdout: {parsed.error}")
        elif parsed.long_int:
            self.problem(
                "long number",
                f"frame {frame.seq}: too long a number on stdout: an integer of"
                f" {parsed.long_int} digits, over the {jsonrpc.MAX_INT_DIGITS} the harness"
                " reads, stands as text (the line is kept whole)",
            )
        if parsed.cut_from:
            self.problem(
                "too deep",
                f"frame {frame.seq}: too deeply nested frame on stdout: JSON nested"
                f" {parsed.cut_from} levels deep, cut at {MAX_DEPTH} (the line is kept whole)",
            )
        return frame

    def record_out(self, raw: str, message: Any, error: str | None, process: int) -> Frame:
        """Record a line about to be written to `process`."""
        direction: Direction = "out"
        if isinstance(message, dict):
            self._client_session(message.get("params"))
        return self._append(
            {
                "direction": direction,
                "raw": raw,
                "message": message,
                "parse_error": error,
                "process": process,
            }
        )

    def _client_session(self, holder: Any) -> None:
        session = holder.get("sessionId") if isinstance(holder, dict) else None
        if isinstance(session, str) and self.on_session is not None:
            self.on_session(session)

    def problem(self, kind: str, text: str) -> None:
        """A run-level problem; a flood of one kind is capped and then summarised."""
        n = self.problem_counts.get(kind, 0) + 1
        self.problem_counts[kind] = n
        if n <= MAX_PROBLEMS_PER_KIND:
            self.transcript.problems.append(text)

    def refuse(self, why: str) -> None:
        """Note a request of the agent the client answered with an error for a limit."""
        self.refused += 1
        if len(self.refused_shown) < 3:
            self.refused_shown.append(why)

    def finish(self) -> None:
        """The run's closing problems: frames past the limit, requests refused for a
        limit, floods beyond the cap."""
        if self.refused:
            # First, with the frame limit's: a limit explains what follows it.
            shown = "; ".join(self.refused_shown) + ("; ..." if self.refused > 3 else "")
            self.transcript.problems.insert(
                0,
                f"requests refused: {self.refused} request(s) of the agent were answered"
                f" with error {jsonrpc.REFUSED} for a limit, not as the scenario says: {shown}",
            )
        if self.dropped:
            # First: a limit reached explains what follows it (a step's missing update).
            self.transcript.problems.insert(
                0,
                f"frame limit ({MAX_FRAMES}) reached: {self.dropped} later line(s) from the"
                " agent were read but not recorded or acted on (responses, and the agent's"
                f" first {MAX_REQUESTS_PAST_LIMIT} requests, still were)",
            )
        if self.garbage > MAX_GARBAGE_FRAMES:
            self.transcript.problems.append(
                f"garbage limit ({MAX_GARBAGE_FRAMES}) reached: "
                f"{self.garbage - MAX_GARBAGE_FRAMES} later unusable line(s) from the agent"
                " were counted, not recorded"
            )
        for kind, n in sorted(self.problem_counts.items()):
            if n > MAX_PROBLEMS_PER_KIND:
                self.transcript.problems.append(
                    f"... and {n - MAX_PROBLEMS_PER_KIND} more ({kind})"
                )

    # -- what steps wait on --

    def tick(self) -> None:
        """Wake everything waiting for a frame, an update or a model request."""
        self._tick.set()
        self._tick = asyncio.Event()

    async def until(self, predicate: Callable[[], bool]) -> None:
        while not predicate():
            await self._tick.wait()

    def note_update(self, seq: int, params: Any) -> None:
        """Index a session/update notification (frame `seq`, its params)."""
        params = params if isinstance(params, dict) else {}
        update = params.get("update") if isinstance(params.get("update"), dict) else {}
        kind = update.get("sessionUpdate")
        if isinstance(kind, str):
            self.updates.setdefault(kind, []).append((seq, params.get("sessionId")))
        if kind in ("tool_call", "tool_call_update") and isinstance(update.get("title"), str):
            self.tool_titles[str(update.get("toolCallId"))] = update["title"]

    def note_request(self, seq: int, msg: dict[str, Any]) -> None:
        """Index an agent->client request (frame `seq`)."""
        params = msg.get("params")
        sid = params.get("sessionId") if isinstance(params, dict) else None
        self.agent_requests.setdefault(str(msg.get("method")), []).append((seq, sid))

    def note_model_request(self, req: ModelRequest) -> None:
        """A request the fake LLM received (called on the driver's loop): model requests
        and fixture tool calls are what triggers count."""
        if is_model_request(req):
            self.model_turns.append(self.now())
            self.tick()
        elif req.method == "POST" and req.path.endswith("/tools/call"):
            body = req.body if isinstance(req.body, dict) else {}
            self.tool_calls.append((self.now(), str(body.get("name"))))
            self.tick()

    def prompt_ended(self, name: str) -> None:
        self.ended_prompts.add(name)
        self.tick()

    def update_seqs(self, kind: Any, since: int, session: Any = ANY_SESSION) -> list[int]:
        """Frame seqs of the session/update notifications of `kind` (of `session`, when
        given) received at or after frame `since`."""
        updates = self.updates.get(kind, []) if isinstance(kind, str) else []
        start = bisect.bisect_left(updates, since, key=lambda u: u[0])
        return [seq for seq, sid in updates[start:] if session is ANY_SESSION or sid == session]

    def request_seqs(self, method: str, since: int, session: Any = ANY_SESSION) -> list[int]:
        """Frame seqs of the agent's requests of `method` (of `session`, when given, or
        carrying no sessionId) received at or after frame `since`."""
        found = self.agent_requests.get(method, [])
        start = bisect.bisect_left(found, since, key=lambda r: r[0])
        return [
            seq
            for seq, sid in found[start:]
            if session is ANY_SESSION or sid is None or sid == session
        ]
