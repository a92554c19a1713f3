"""Normalization: a `Transcript` -> the snapshot-ready view of one run.

The view is plain data (dicts, lists, str, int, ...) with a fixed skeleton key order, so
it dumps to readable YAML and compares with deepdiff. Everything random or machine
specific is replaced so two runs of the same agent give the same view:

- ids become positional tokens per kind (`<session:1>`, `<message:2>`, ..., any other
  UUID `<uuid:n>`), the same value always the same token within a run, wherever it
  appears, so references stay linked;
- the run's paths (`transcript.paths`) become `<workdir>`, `<home>`, `<tmp>`, ...;
- wall-clock values (frame times, ISO timestamps, `*At` fields) are removed or `<time>`,
  the run's calendar date `<date>`.

Profiles: `exact` keeps every wire fact; `semantic` (for unlike agents) merges adjacent
chunks of one message, folds each tool call into its final state, drops `_meta`, usage
numbers, side model requests and how processes ended. Masks (selectors, see `select`)
then replace values with `<masked>` and are counted in the view so masking never hides
an assertion silently.

Module map: `parity.tokens` (positional ids, paths, dates), `parity.semantic` (the
semantic profile's merging and folding) and `parity.selectors` (the selector grammar and
masks, shared with diverge rules in `parity.diff`; `docs/transcript.md` is its
reference). Their public names are re-exported here so `parity.normalize` stays the one
import for callers.
"""

from __future__ import annotations

import datetime as dt
import re
from collections.abc import Iterable, Sequence
from typing import Any

from parity.scenario.model import Rule, Scenario
from parity.semantic import CHUNK_KINDS as CHUNK_KINDS
from parity.semantic import link_tool_calls
from parity.semantic import merge_chunks as merge_chunks
from parity.semantic import semantic as semantic
from parity.semantic import semantic_updates as semantic_updates
from parity.tokens import DATE as DATE
from parity.tokens import ID_KEYS as ID_KEYS
from parity.tokens import ISO_TIME as ISO_TIME
from parity.tokens import SUBSTRING_MIN as SUBSTRING_MIN
from parity.tokens import TIME as TIME
from parity.tokens import TIME_KEYS as TIME_KEYS
from parity.tokens import UUID as UUID
from parity.tokens import Tokens as Tokens
from parity.tokens import date_spellings as date_spellings
from parity.tokens import hashable as _hashable
from parity.tokens import run_dates as run_dates
from parity.transcript import Frame, ModelRequest, ProcessRecord, StepRecord, Transcript
from parity.view.masks import apply_masks

PROFILES = ("exact", "semantic")

# Agent -> client request ids get a kind by method: the brief calls these out because
# peers use random ids for them.
AGENT_REQUEST_KINDS: dict[str, str] = {
    "session/request_permission": "permission",
    "elicitation/create": "elicitation",
}

RAW_HEAD = 200
"""Characters of an unparsable line kept in the view."""


_SCENARIO_LINE = re.compile(r"(<repo>/\S+?\.ya?ml):\d+:\d+:")
"""A step problem quoting the scenario's file:line:col (a script error): the view keeps
the file and drops the position, so editing the scenario above the step does not change
the snapshot (the live failure still shows the line)."""


def scripted_tool_call_ids(scenario: Scenario) -> list[str]:
    """Tool call ids the scenario's LLM script chooses (kept verbatim, never tokenized),
    in script order (the semantic profile links an agent's own ids to them in order)."""
    ids: dict[str, None] = {}
    for entry in scenario.llm:
        for call in entry.params.get("tool_calls") or []:
            if isinstance(call, dict) and isinstance(call.get("id"), str):
                ids[call["id"]] = None
        for chunk in entry.params.get("chunks") or []:
            if not isinstance(chunk, dict):
                continue
            if chunk.get("type") == "tool-call-delta" and isinstance(chunk.get("id"), str):
                ids[chunk["id"]] = None
            block = chunk.get("block")
            if isinstance(block, dict) and isinstance(block.get("id"), str):
                ids[block["id"]] = None
    return list(ids)


# --------------------------------------------------------------------------- view


def view(
    transcript: Transcript,
    profile: str,
    masks: Sequence[Rule],
    *,
    scripted_ids: Iterable[str] = (),
    dates: Iterable[dt.date] | None = None,
) -> dict[str, Any]:
    """The normalized, snapshot-ready view of one run (see docs/transcript.md).

    `profile` is `exact` or `semantic`. `masks` apply when their `targets` is None or
    names `transcript.target`. `scripted_ids` are tool call ids chosen by the scenario
    (`scripted_tool_call_ids`); they stay verbatim because they are deterministic.
    `dates` are the calendar dates the run may have printed (peers put today's date in
    their system prompts), replaced by `<date>`; default `run_dates()`, which assumes
    the view is made right after the run (the transcript records no wall-clock time).
    """
    if profile not in PROFILES:
        raise ValueError(f"unknown profile {profile!r}: expected one of {', '.join(PROFILES)}")
    tokens = Tokens(
        transcript.paths,
        scripted_ids,
        run_dates() if dates is None else dates,
        pids=[process.pid for process in transcript.processes],
    )
    _discover(transcript, tokens)
    out = _Builder(transcript, tokens).build()
    if profile == "semantic":
        out = link_tool_calls(semantic(out), list(scripted_ids))
    applicable = [m for m in masks if m.targets is None or transcript.target in m.targets]
    out["masked"] = apply_masks(out, applicable)
    return out


def frame_steps(transcript: Transcript) -> dict[int, int]:
    """Frame seq -> 0-based index of the step whose entry shows it in the view.

    Frames the view shows in `before`/`after` are absent; the harness's answer to an
    agent request goes with the request. Conformance findings use this so a finding
    names the step where the frame appears in the snapshot.
    """
    builder = _Builder(transcript, Tokens({}))
    owner, _ = builder._own()
    for answer, request in builder.answered_by.items():
        if request in owner:
            owner[answer] = owner[request]
    return owner


def _discover(transcript: Transcript, tokens: Tokens) -> None:
    """Number ids in wire order: frames first, then model bodies."""
    for frame in transcript.frames:
        msg = frame.message
        if not isinstance(msg, dict):
            continue
        tokens.discover(msg.get("params"))
        tokens.discover(msg.get("result"))
        tokens.discover(msg.get("error"))
        if "method" in msg and "id" in msg and _hashable(msg["id"]):
            if frame.direction == "out":
                tokens.register("request", ("out", msg["id"]))
            else:
                kind = AGENT_REQUEST_KINDS.get(str(msg["method"]), "agent-request")
                tokens.register(kind, ("in", msg["id"]))
    for request in transcript.model_requests:
        tokens.discover(request.body)
    # Second pass: UUIDs nobody put under an id key (installation ids, trace ids, temp
    # file names) are random too; ids of a known kind keep that kind's token.
    for frame in transcript.frames:
        tokens.discover_uuids(frame.message)
    for request in transcript.model_requests:
        tokens.discover_uuids(request.body)


class _Builder:
    """Assembles the view of one transcript; one instance per call."""

    def __init__(self, transcript: Transcript, tokens: Tokens) -> None:
        self.t = transcript
        self.tokens = tokens
        self.multi_session = tokens.count("session") > 1
        self.answers = self._match_answers()
        self.used: set[int] = set(self.answers.values())
        self.answered_by = {answer: request for request, answer in self.answers.items()}

    def _match_answers(self) -> dict[int, int]:
        """Agent request seq -> seq of the harness's answer (first response with its id)."""
        pending: dict[Any, int] = {}
        answers: dict[int, int] = {}
        for f in self.t.frames:
            msg = f.message
            if not isinstance(msg, dict) or not _hashable(msg.get("id")):
                continue
            if f.direction == "in" and "method" in msg and "id" in msg:
                pending[msg["id"]] = f.seq
            elif f.direction == "out" and "method" not in msg and msg.get("id") in pending:
                answers[pending.pop(msg["id"])] = f.seq
        return answers

    def _own(self) -> tuple[dict[int, int], set[int]]:
        """Each frame -> the one step it belongs to, plus the steps' own request and
        response frames. Step frame ranges overlap under `parallel` (the parent and every
        child record all frames of the block), so a frame goes to the step whose request
        or response it is, else to a non-parallel step of the same session, else to the
        first step that recorded it. Then `_claim_late` moves late frames."""
        own: set[int] = set()
        requests: dict[int, int] = {}
        responses: dict[int, int] = {}
        candidates: dict[int, list[int]] = {}
        for i, step in enumerate(self.t.steps):
            req = resp = False
            for seq in step.frames:
                f = self.t.frames[seq]
                if not req and f.direction == "out" and _same(f.message, step.request):
                    req = True
                    requests[seq] = i
                elif not resp and f.direction == "in" and _same(f.message, step.response):
                    resp = True
                    responses[seq] = i
                else:
                    candidates.setdefault(seq, []).append(i)
                    continue
                own.add(seq)
                candidates[seq] = [i]
        owner: dict[int, int] = {}
        for seq, steps in candidates.items():
            if seq in own or len(steps) == 1:
                owner[seq] = steps[0]
                continue
            plain = [i for i in steps if self.t.steps[i].kind != "parallel"] or steps
            session = _session_of(self.t.frames[seq].message)
            same = [
                i
                for i in plain
                if session is not None and _step_session(self.t.steps[i]) == session
            ]
            owner[seq] = (same or plain)[0]
        self._claim_late(owner, requests, responses)
        last = len(self.t.steps) - 1
        for f in self.t.frames:
            if f.seq in owner or f.seq in self.used:
                continue
            # Outside every step's range: between two steps it trails the earlier one;
            # before the first or after the last it stays loose (`before` / `after`).
            earlier = [i for i, s in enumerate(self.t.steps) if _began_before(s, f)]
            if earlier and earlier[-1] != last:
                owner[f.seq] = earlier[-1]
        return owner, own

    def _claim_late(
        self, owner: dict[int, int], requests: dict[int, int], responses: dict[int, int]
    ) -> None:
        """Give a frame about a session that comes while no request about that session is
        in flight to the step that last answered one (it lands in that step's `late`).

        Which step's time range such a frame falls in is a race between the agent's
        trailing output and the harness's next step; the session it is about is not, so
        attributing it this way keeps two runs of one agent equal.
        """
        in_flight: dict[int, Any] = {}
        answered: dict[Any, int] = {}
        for f in self.t.frames:
            if f.seq in requests:
                i = requests[f.seq]
                in_flight[i] = _step_session(self.t.steps[i])
            elif f.seq in responses:
                i = responses[f.seq]
                in_flight.pop(i, None)
                session = _step_session(self.t.steps[i])
                if _hashable(session) and session is not None:
                    answered[session] = i
            elif f.direction == "in" and f.seq not in self.used:
                session = _session_of(f.message)
                busy = session in in_flight.values()
                if _hashable(session) and session in answered and not busy:
                    owner[f.seq] = answered[session]

    def build(self) -> dict[str, Any]:
        owner, own = self._own()
        before: list[Any] = []
        after: list[Any] = []
        for f in self.t.frames:
            if f.seq not in owner and f.seq not in self.used:
                loose = self._loose(f)
                (after if any(_began_before(s, f) for s in self.t.steps) else before).append(loose)
        by_step: dict[int, list[int]] = {}
        for seq in sorted(owner):
            by_step.setdefault(owner[seq], []).append(seq)
        steps = [
            self._step(i, step, by_step.get(i, []), own) for i, step in enumerate(self.t.steps)
        ]
        out: dict[str, Any] = {}
        if self.t.agent:
            out["agent"] = dict(self.t.agent)
        if before:
            out["before"] = before
        out["steps"] = steps
        out["after"] = after
        if self.t.files:
            out["files"] = {name: self.tokens.scrub(text) for name, text in self.t.files.items()}
        out["model"] = [self._model(r) for r in self.t.model_requests]
        out["process"] = self._process()
        return out

    def _step(self, i: int, step: StepRecord, frames: list[int], own: set[int]) -> dict[str, Any]:
        item: dict[str, Any] = {
            "step": i + 1,
            "do": step.kind,
            "label": self.tokens.scrub(step.label),
        }
        if step.request is not None:
            item["send"] = self._send(step.request)
        if isinstance(step.response, dict):
            if "error" in step.response:
                item["error"] = self._error(step.response["error"])
            else:
                item["result"] = self.tokens.scrub(step.response.get("result"))
        # What the agent sends after answering the step's request is late (a prompt is
        # settled only once its updates are out, contract §2); keep it apart so the diff
        # sees the difference between an update on time and the same update too late.
        answered = next(
            (q for q in frames if q in own and _same(self.t.frames[q].message, step.response)),
            None,
        )
        updates: list[Any] = []
        requests: list[Any] = []
        notes: list[Any] = []
        late: list[Any] = []
        for seq in frames:
            if seq in own or seq in self.used:
                continue
            if answered is not None and seq > answered:
                late.append(self._loose(self.t.frames[seq]))
                continue
            bucket, entry = self._classify(self.t.frames[seq])
            if bucket == "agent_request":
                # Updates and agent requests are separate lists; this keeps their
                # interleaving (contract §2: a permission request follows its tool_call).
                answer = entry.pop("answer")
                entry.update(after_updates=len(updates), answer=answer)
            {"update": updates, "agent_request": requests}.get(bucket, notes).append(entry)
        if step.problem:
            notes.append(
                {"problem": _SCENARIO_LINE.sub(r"\1:", self.tokens.scrub_text(step.problem))}
            )
        for key, value in (
            ("updates", updates),
            ("agent_requests", requests),
            ("notes", notes),
            ("late", late),
        ):
            if value:
                item[key] = value
        return item

    def _send(self, request: Any) -> dict[str, Any]:
        if isinstance(request, dict) and "method" in request:
            sent: dict[str, Any] = {"method": request["method"]}
            if "params" in request:
                sent["params"] = self._params(request["method"], request["params"], "out")
            return sent
        if isinstance(request, str):
            return {"raw": self.tokens.scrub_text(request)}
        return {"raw": self.tokens.scrub(request)}

    def _params(self, method: Any, params: Any, direction: str) -> Any:
        scrubbed = self.tokens.scrub(params)
        # `$/cancel_request` names one of the sender's own request ids; keep the link.
        if method == "$/cancel_request" and isinstance(params, dict) and "requestId" in params:
            scrubbed["requestId"] = self._request_token(direction, params["requestId"])
        return scrubbed

    def _request_token(self, direction: str, ident: Any) -> Any:
        """The token of a JSON-RPC id sent by `direction`'s side, else the scrubbed id."""
        kinds = (
            ("request",) if direction == "out" else ("permission", "elicitation", "agent-request")
        )
        for kind in kinds:
            token = self.tokens.lookup(kind, (direction, ident))
            if isinstance(token, str):
                return token
        return self.tokens.scrub(ident)

    def _error(self, error: Any) -> Any:
        if not isinstance(error, dict):
            return self.tokens.scrub(error)
        out = {k: self.tokens.scrub(error[k]) for k in ("code", "message") if k in error}
        if "data" in error:
            out["data"] = self.tokens.scrub(error["data"])
        out.update({k: self.tokens.scrub(v) for k, v in error.items() if k not in out})
        return out

    def _classify(self, f: Frame) -> tuple[str, Any]:
        """(bucket, entry) for one frame that is not the step's own request/response."""
        if f.parse_error is not None or f.oversize:
            entry: dict[str, Any] = {"unparsable": _head(self.tokens.scrub_text(f.raw))}
            if f.direction == "out":
                entry = {"sent_raw": entry["unparsable"]}
            if f.oversize:
                entry["oversize"] = True
            return "note", entry
        msg = f.message
        if not isinstance(msg, dict):
            key = "sent_raw" if f.direction == "out" else "not_jsonrpc"
            return "note", {key: self.tokens.scrub(msg)}
        method = msg.get("method")
        if f.direction == "in" and method is not None and "id" in msg:
            return "agent_request", self._agent_request(f)
        if f.direction == "in" and method == "session/update" and "id" not in msg:
            return "update", self._update(msg.get("params"))
        if f.direction == "in" and method is not None:
            return "note", {"notify": self._call(msg, "in")}
        if f.direction == "in":
            return "note", {"response": self._response(msg, "out")}
        if method is not None:
            return "note", {"sent": self._call(msg, "out")}
        return "note", {"sent_response": self._response(msg, "in")}

    def _call(self, msg: dict[str, Any], direction: str) -> dict[str, Any]:
        call: dict[str, Any] = {"method": msg["method"]}
        if "params" in msg:
            call["params"] = self._params(msg["method"], msg["params"], direction)
        return call

    def _response(self, msg: dict[str, Any], request_direction: str) -> dict[str, Any]:
        out: dict[str, Any] = {}
        if "id" in msg:
            out["id"] = self._request_token(request_direction, msg["id"])
        if "result" in msg:
            out["result"] = self.tokens.scrub(msg["result"])
        if "error" in msg:
            out["error"] = self._error(msg["error"])
        return out

    def _agent_request(self, f: Frame) -> dict[str, Any]:
        entry = self._call(f.message, "in")
        answer_seq = self.answers.get(f.seq)
        if answer_seq is None:
            entry["answer"] = None
        else:
            answer = self.t.frames[answer_seq].message
            entry["answer"] = (
                {"error": self._error(answer["error"])}
                if "error" in answer
                else {"result": self.tokens.scrub(answer.get("result"))}
            )
        return entry

    def _update(self, params: Any) -> dict[str, Any]:
        if not isinstance(params, dict) or not isinstance(params.get("update"), dict):
            return {"malformed": self.tokens.scrub(params)}
        update = self.tokens.scrub(params["update"])
        entry: dict[str, Any] = {}
        if "sessionUpdate" in update:
            entry["sessionUpdate"] = update.pop("sessionUpdate")
        if self.multi_session:
            entry["session"] = self.tokens.lookup("session", params.get("sessionId"))
        entry.update(update)
        extra = {k: v for k, v in params.items() if k not in ("sessionId", "update")}
        if extra:
            entry["notification"] = self.tokens.scrub(extra)
        return entry

    def _loose(self, f: Frame) -> dict[str, Any]:
        """A frame outside every step, as one tagged entry."""
        bucket, entry = self._classify(f)
        if bucket == "update":
            return {"update": entry}
        if bucket == "agent_request":
            return {"agent_request": entry}
        return dict(entry)

    def _model(self, r: ModelRequest) -> dict[str, Any]:
        item: dict[str, Any] = {"path": r.path}
        if r.method != "POST":
            item["method"] = r.method
        item["body"] = self.tokens.scrub(r.body)
        if r.status != 200:
            item["status"] = r.status
        if r.aborted:
            item["aborted"] = True
        if r.side:
            item["side"] = True
        if r.problem:
            item["problem"] = self.tokens.scrub_text(r.problem)
        return item

    def _process(self) -> dict[str, Any]:
        out: dict[str, Any] = {"exit": [_exit(p) for p in self.t.processes]}
        if self.t.problems:
            out["problems"] = [self.tokens.scrub_text(p) for p in self.t.problems]
        return out


def _head(text: str) -> str:
    # Unparsable lines can be megabytes (an oversize frame's head alone is large); the
    # view keeps enough to recognise the line.
    return text if len(text) <= RAW_HEAD else text[:RAW_HEAD] + f"... ({len(text)} chars)"


def _began_before(step: StepRecord, f: Frame) -> bool:
    # A step that recorded no frame (wait, restart) is placed by its start time.
    return step.frames[0] < f.seq if step.frames else step.t_start <= f.t


def _same(message: Any, sent: Any) -> bool:
    return sent is not None and message == sent


def _session_of(message: Any) -> Any:
    """The sessionId a frame is about (params), if any."""
    if isinstance(message, dict) and isinstance(message.get("params"), dict):
        return message["params"].get("sessionId")
    return None


def _step_session(step: StepRecord) -> Any:
    """The session a step is about: its request's, else the one its response created."""
    session = _session_of(step.request)
    if session is None and isinstance(step.response, dict):
        result = step.response.get("result")
        if isinstance(result, dict):
            session = result.get("sessionId")
    return session


def _exit(p: ProcessRecord) -> dict[str, Any]:
    # pid, argv (ports, paths) and stderr are machine noise; how it ended is not.
    out: dict[str, Any] = {}
    if p.stopped_by is not None:
        out["by"] = p.stopped_by
    if p.exit_code is not None:
        out["code"] = p.exit_code
    if p.signal is not None:
        out["signal"] = p.signal
    return out
