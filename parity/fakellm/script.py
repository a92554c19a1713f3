"""The script engine: scenario `llm` entries -> canonical parity-stream responses.

Pure functions over plain data, no I/O. A scenario's `llm` entries (their validated YAML
mappings) become `Response`s: the parity-stream StreamChunk list a DSH-family target
would receive (docs/contract.md §8.1, helpers of §7.2), plus the few facts that are not
chunks (hang after the chunks, per-chunk delay, failure before any chunk). Every dialect
renderer translates this one canonical form, so all targets see the same script.

`Script` holds the only state: which consumable entries are used. Side entries (those
with `match`) answer matching requests without consuming anything.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from parity.core.job_ids import (
    agent_ids,
    expand_agents,
    expand_goals,
    expand_jobs,
    goal_ids,
    job_ids,
)
from parity.fakellm.identity import map_strings
from parity.fakellm.recorded import Projection, decode, stale_diff

Chunk = dict[str, Any]
"""One parity-stream StreamChunk (docs/contract.md §8.1)."""

DEFAULT_ERROR_CODE = "PROVIDER_ERROR"

FINISH_KINDS = frozenset({"stop", "tool-calls", "max-tokens"})
"""The finishes a script may ask for (errors and aborts come from `error` and hangs)."""


@dataclass(frozen=True)
class Response:
    """A scripted model response in canonical (parity-stream) form."""

    chunks: tuple[Chunk, ...]
    """Chunks streamed in order. With `error_status` set, the single finish{error}."""
    hang: bool = False
    """After the chunks, hold the response open until the client disconnects."""
    delay: float = 0.0
    """Seconds to pause before each chunk."""
    error_status: int | None = None
    """HTTP status of a provider failure that comes before any chunk (provider dialects
    answer with this status and their error JSON; parity-stream streams `chunks`)."""


EXTRA_SIDE_REQUEST = (
    "extra model call: a side request (no tools, while this agent's turns offer tools: a "
    "title, a summary, ...) after every consumable entry was used; answer side requests "
    "with a side entry, `match: {request: side}`"
)
"""The problem of a side request no entry answers (kind `extra-model-call`)."""


@dataclass(frozen=True)
class RequestView:
    """What side-entry matching looks at, extracted from any dialect's request body."""

    has_tools: bool
    purpose: str | None = None
    texts: tuple[str, ...] = ()
    side: bool = False
    """A side request by its shape (`parity.fakellm.side_requests`): tool-less while the
    agent's turns offer tools."""


@dataclass(frozen=True)
class Answer:
    """The outcome of offering a request to the script."""

    response: Response | None
    entry: int | None = None
    """Index into the scenario's `llm` list of the entry that answered."""
    side: bool = False
    problem: str | None = None
    """`script exhausted`, `no entry matched` or `stale recording`, when `response` is
    None."""
    detail: str | None = None
    """For a stale recording: the diff of the recorded and the new request."""


def arguments_json(arguments: Any) -> str:
    """Tool-call arguments as the raw JSON string a model emits.

    A string is taken as already-raw JSON (so scripts can send malformed arguments);
    anything else is serialized compactly, like JavaScript's `JSON.stringify`.
    """
    if isinstance(arguments, str):
        return arguments
    return json.dumps(arguments, separators=(",", ":"), ensure_ascii=False)


def _pieces(text: str, size: int) -> list[str]:
    """`text` cut into deltas of `size` characters (at least one delta, even if empty)."""
    if size <= 0 or not text:
        return [text]
    return [text[i : i + size] for i in range(0, len(text), size)]


def _failure(error: Mapping[str, Any]) -> dict[str, Any]:
    failure: dict[str, Any] = {
        "message": str(error.get("message", "provider error")),
        "code": str(error.get("code", DEFAULT_ERROR_CODE)),
    }
    if error.get("status") is not None:
        failure["status"] = int(error["status"])
    return failure


def _usage(usage: Mapping[str, Any]) -> Chunk:
    counts: dict[str, int] = {
        "inputTokens": int(usage.get("input", 0)),
        "outputTokens": int(usage.get("output", 0)),
    }
    if usage.get("reasoning") is not None:
        counts["reasoningTokens"] = int(usage["reasoning"])
    return {"type": "usage", "usage": counts}


def _text_block(index: int, kind: str, text: str, size: int, *, close: bool) -> list[Chunk]:
    delta = "text-delta" if kind == "text" else "reasoning-delta"
    chunks: list[Chunk] = [{"type": "block-start", "index": index, "blockType": kind}]
    chunks += [{"type": delta, "index": index, "text": piece} for piece in _pieces(text, size)]
    if close:
        chunks.append({"type": "block-end", "index": index, "block": {"type": kind, "text": text}})
    return chunks


def _tool_block(index: int, call: Mapping[str, Any]) -> list[Chunk]:
    call_id = str(call.get("id", f"call-{index}"))
    name = str(call["name"])
    args = arguments_json(call.get("arguments", {}))
    return [
        {"type": "block-start", "index": index, "blockType": "tool-call"},
        {
            "type": "tool-call-delta",
            "index": index,
            "id": call_id,
            "name": name,
            "argumentsDelta": args,
        },
        {
            "type": "block-end",
            "index": index,
            "block": {"type": "tool-call", "id": call_id, "name": name, "arguments": args},
        },
    ]


def build_response(params: Mapping[str, Any]) -> Response:
    """Turn one `llm` entry mapping into its canonical `Response`.

    Block order is reasoning, text, tool calls, with indexes counting up from 0
    (the order DSH adapters emit). `usage` precedes `finish`, nothing follows it
    (§8.1 stream rules). A mid-stream `error` streams the text/reasoning deltas
    without block-end so nothing commits (§7.2 errorResponse); `then: hang` leaves
    the text block open and sends no usage/finish (§7.2 'hang').
    """
    hang = params.get("then") == "hang"
    delay = float(params.get("delay_ms", 0)) / 1000.0
    error = params.get("error")

    if "chunks" in params:
        raw = tuple(dict(chunk) for chunk in params["chunks"])
        return Response(chunks=raw, hang=hang, delay=delay)

    if isinstance(error, Mapping) and error.get("status") is not None:
        finish = {"type": "finish", "reason": {"kind": "error", "failure": _failure(error)}}
        return Response(chunks=(finish,), delay=delay, error_status=int(error["status"]))

    size = int(params.get("deltas", 1))
    failing = isinstance(error, Mapping)
    chunks: list[Chunk] = []
    index = 0
    if params.get("reasoning") is not None:
        chunks += _text_block(index, "reasoning", str(params["reasoning"]), size, close=not failing)
        index += 1
    if params.get("text") is not None:
        close = not failing and not hang
        chunks += _text_block(index, "text", str(params["text"]), size, close=close)
        index += 1
    if isinstance(error, Mapping):
        failure = _failure(error)
        chunks.append({"type": "finish", "reason": {"kind": "error", "failure": failure}})
        return Response(chunks=tuple(chunks), hang=False, delay=delay)

    calls: Sequence[Mapping[str, Any]] = params.get("tool_calls") or []
    for call in calls:
        chunks += _tool_block(index, call)
        index += 1
    if not hang:
        if params.get("usage") is not None:
            chunks.append(_usage(params["usage"]))
        kind = str(params.get("finish", "tool-calls" if calls else "stop"))
        chunks.append(
            {"type": "finish", "reason": {"kind": kind if kind in FINISH_KINDS else "stop"}}
        )
    return Response(chunks=tuple(chunks), hang=hang, delay=delay)


def matches(match: Mapping[str, Any], view: RequestView) -> bool:
    """Whether a side entry's `match` conditions all hold for a request."""
    tools = match.get("tools")
    if tools == "none" and view.has_tools:
        return False
    if tools == "any" and not view.has_tools:
        return False
    if "purpose" in match and view.purpose != match["purpose"]:
        return False
    if match.get("request") == "side" and not view.side:
        return False
    needle = match.get("contains")
    return needle is None or any(str(needle) in text for text in view.texts)


def no_entry_for_prompts(owners: list[str], flying: frozenset[str]) -> str:
    """The problem of a request that only entries of other prompts' turns are left for."""
    now = ", ".join(sorted(flying)) or "none"
    return (
        f"no entry matched: the unused entries are for prompt(s) {', '.join(owners)}; "
        f"in flight: {now}"
    )


def entry_agent(params: Mapping[str, Any]) -> int:
    """The agent an entry answers: its `agent` (the n-th child agent), else 0 (the
    client's own sessions)."""
    agent = params.get("agent")
    return agent if isinstance(agent, int) and not isinstance(agent, bool) else 0


def no_entry_for_child(agent: int, for_prompts: bool, flying: frozenset[str]) -> str:
    """The problem of a child agent's request that no entry of its own answers: the
    agent's child asks the model, and the script wrote nothing for it (a clear failure
    of its model call, never a hang)."""
    now = ", ".join(sorted(flying)) or "none"
    why = (
        f"its entries are for prompts not in flight (in flight: {now})"
        if for_prompts
        else f"no `agent: {agent}` entry is left"
    )
    return (
        f"no entry matched: a request of child agent {agent} (a session the client never "
        f"used, numbered by its first model request), and {why}"
    )


@dataclass
class Script:
    """The consumable script of one run plus its side entries.

    `entries` are the scenario's `llm` mappings in file order; indexes reported in
    `Answer.entry` refer to this list. Entries of a captured scenario may carry the
    `request` they answered (`parity.fakellm.recorded`): such an entry answers only a
    request with that projection, and the first unused one that does is taken, so an
    agent that sends two requests at once (a title and the turn) may send them in either
    order. An entry without `request` answers any request, in file order as before.

    An entry with `prompt: NAME` belongs to that prompt step's turn: it answers only
    while the driver has that prompt in flight (`in_flight`), so a turn one agent never
    asks the model for (a prompt it refused) leaves its own entries unused instead of
    handing them to the next turn.
    """

    entries: list[Mapping[str, Any]]
    expand: Callable[[Any], Any] | None = None
    """Applied to an entry before it is built (the run's paths into `<workdir>`...)."""
    in_flight: frozenset[str] = frozenset()
    """Names of the prompt steps sent and not yet answered (set by the driver's thread,
    `Run.prompt_in_flight`; replaced whole, never mutated)."""
    client_sessions: tuple[str, ...] = ()
    """The session ids the client used, in order (`Run.client_session`): other ids are
    children's, and `<session:n>` names the n-th."""
    _responses: dict[int, Response] = field(default_factory=dict, repr=False)
    _used: set[int] = field(default_factory=set, repr=False)
    _recorded: list[Projection | None] = field(default_factory=list, repr=False)

    def __post_init__(self) -> None:
        stored = [None if "match" in params else params.get("request") for params in self.entries]
        self._recorded = decode([item if isinstance(item, Mapping) else None for item in stored])

    @property
    def used(self) -> int:
        """How many consumable entries have answered a request."""
        return len(self._used)

    @property
    def answers_side_requests(self) -> bool:
        """Whether an entry answers side requests by their shape (`request: side`): only
        then does a run wait to tell a side request from a turn."""
        return any(
            isinstance(params.get("match"), Mapping) and params["match"].get("request") == "side"
            for params in self.entries
        )

    @property
    def checks_requests(self) -> bool:
        """Whether any entry carries a recorded request (a captured scenario's own target)."""
        return any(item is not None for item in self._recorded)

    def _response(self, index: int) -> Response:
        if index not in self._responses:
            params = self.entries[index]
            if self.expand is not None:
                params = self.expand(params)
            self._responses[index] = build_response(params)
        return self._responses[index]

    def _job_response(self, index: int, view: RequestView) -> Response:
        """The entry's response, with `<job:n>` (`<goal:n>`) made the n-th background job
        (goal) id the request's texts name, and `<agent:n>` the n-th child agent id (ids
        are random per run: the script can only point at them)."""
        written = json.dumps(self.entries[index])
        if not any(t in written for t in ("<job:", "<goal:", "<agent:", "<session:")):
            return self._response(index)
        jobs, goals = job_ids(view.texts), goal_ids(view.texts)
        agents = agent_ids(view.texts, self.client_sessions)
        params = map_strings(
            self.entries[index],
            lambda text: expand_agents(
                expand_goals(expand_jobs(text, jobs), goals), agents, self.client_sessions
            ),
        )
        return build_response(self.expand(params) if self.expand is not None else params)

    def answer(
        self, view: RequestView, projection: Projection | None = None, agent: int = 0
    ) -> Answer:
        """Answer one model request of `agent` (0: the client's sessions; n: the n-th
        child agent): a matching side entry, else the agent's next entry.

        Side entries are tried first and in file order; they never use anything up.
        Consumable entries answer only their own agent (`agent: n`, none for the main
        agent). With no consumable entry left the answer carries a problem; with entries
        left but none recorded for this request (`projection`), the problem is a stale
        recording and `detail` shows the difference from the next one.
        """
        for index, params in enumerate(self.entries):
            match = params.get("match")
            if isinstance(match, Mapping) and matches(match, view):
                return Answer(self._response(index), entry=index, side=True)
        left = [
            index
            for index, params in enumerate(self.entries)
            if "match" not in params and index not in self._used and entry_agent(params) == agent
        ]
        flying = self.in_flight
        unused = [i for i in left if self.entries[i].get("prompt") in (None, *flying)]
        if not unused and agent:
            return Answer(None, problem=no_entry_for_child(agent, bool(left), flying))
        if not unused:
            consumable = any("match" not in params for params in self.entries)
            if not consumable and self.entries:
                return Answer(None, problem="no entry matched")
            if left:
                owners = sorted({str(self.entries[i].get("prompt")) for i in left})
                return Answer(None, problem=no_entry_for_prompts(owners, flying))
            if view.side:
                return Answer(None, problem=EXTRA_SIDE_REQUEST)
            return Answer(None, problem="script exhausted")
        for index in unused:
            recorded = self._recorded[index]
            if recorded is None or projection is None or recorded == projection:
                self._used.add(index)
                return Answer(self._job_response(index, view), entry=index)
        expected = next(i for i in unused if self._recorded[i] is not None)
        diff = stale_diff(self._recorded[expected] or {}, projection or {})
        return Answer(None, entry=expected, problem="stale recording", detail=diff)
