"""Conformance findings: what an agent sent that the ACP protocol does not allow.

A pure function of the transcript (plus the client capabilities the run advertised and
the pinned ACP schema). Only the agent's frames (direction `in`) are judged: the
harness sends malformed frames on purpose in negative tests.

Finding kinds:
- `not_json`: a stdout line that is not JSON; `oversize`: a line over the frame limit;
- `not_jsonrpc`: JSON that is not a JSON-RPC 2.0 object (array, bare value, no version,
  a response with both or neither of result/error, a bad id);
- `schema`: a frame that fails the ACP schema entry of its method (requests and
  notifications by their method, responses by the method of the request they answer,
  errors by the JSON-RPC error object);
- `unknown_method`: an agent request or notification that is not in the schema and not
  an extension (`_` prefix);
- `unadvertised_call`: `fs/*`, `terminal/*` or `elicitation/create` the client did not
  advertise in its capabilities;
- `unknown_tool_call`: a `tool_call_update` for a toolCallId no `tool_call` announced;
- `late_update`: a `session/update` for a session whose prompt had been answered, while no
  request about that session was in flight;
- `unknown_response`: a response to an id the harness never sent or already saw answered.

`conformance_findings(transcript)` is what every run gets (`parity.engine.runner`): the
findings rendered, with the capabilities the run advertised, or one `unchecked` entry
when the schema is missing.
"""

from __future__ import annotations

import json
import time
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

from jsonschema import Draft202012Validator
from jsonschema.exceptions import ValidationError, best_match

from parity.checks.acp_schema import Kind, SchemaError, load_schema, method_defs
from parity.checks.shapes import Shapes
from parity.core.printable import printable
from parity.core.transcript import SET_ASIDE, Transcript
from parity.view.ownership import frame_steps

MAX_MESSAGE = 300
MAX_PER_KIND = 100
"""Findings of one kind listed per run; the rest are counted in one last finding."""
CHECK_BUDGET = 60.0
"""Seconds the check may take; past them it stops and says where (an `unchecked`
finding). Shapes make a 200,000-frame flood take seconds (bench/bench_flood.py)."""


@dataclass(frozen=True)
class Finding:
    """One protocol problem in one frame."""

    kind: str
    step: int | None
    """1-based number of the step the view shows the frame in
    (`parity.view.ownership.frame_steps`);
    None for frames in `before`/`after`."""
    seq: int | None
    """The frame's seq (None for findings about the run as a whole)."""
    message: str

    def __str__(self) -> str:
        where = f"step {self.step}, " if self.step is not None else ""
        return f"[{self.kind}] {where}frame {self.seq}: {self.message}"


class SchemaIndex:
    """Validators for the `$defs` entry of each (method, kind), built lazily."""

    def __init__(self, schema: Mapping[str, Any]) -> None:
        self.defs = schema["$defs"]
        self.methods = method_defs(dict(schema))
        self.dialect = schema.get("$schema", "https://json-schema.org/draft/2020-12/schema")
        self._validators: dict[str, Draft202012Validator] = {}
        self.shapes = Shapes(schema)
        self._verdicts: dict[tuple[str, Any], str | None] = {}
        """(def, shape) -> its verdict: each shape is validated once (`checks/shapes.py`)."""
        self.validated = 0
        """Values jsonschema validated (the rest were shapes already judged)."""

    def knows(self, method: str, kind: Kind) -> bool:
        return (method, kind) in self.methods

    def errors(self, def_name: str, value: Any) -> str | None:
        """None when `value` is valid for `$defs[def_name]`, else the best error. A value
        of a shape already judged gets that verdict (an error then says it repeats)."""
        key = (def_name, self.shapes.of(value))
        if key in self._verdicts:
            known = self._verdicts[key]
            return None if known is None else f"{known} (as an earlier frame of its shape)"
        verdict = self._validate(def_name, value)
        self._verdicts[key] = verdict
        return verdict

    def _validate(self, def_name: str, value: Any) -> str | None:
        self.validated += 1
        validator = self._validators.get(def_name)
        if validator is None:
            wrapper = {"$schema": self.dialect, "$defs": self.defs, "$ref": f"#/$defs/{def_name}"}
            validator = Draft202012Validator(wrapper)
            self._validators[def_name] = validator
        error = best_match(validator.iter_errors(value))
        if error is None:
            return None
        error, message = _explain(error)
        return f"{def_name}{_where(error.absolute_path)}: {message}"

    def check(self, method: str, kind: Kind, value: Any) -> str | None:
        return self.errors(self.methods[(method, kind)], value)


def _where(path: Iterable[Any]) -> str:
    return "".join(f"[{p!r}]" if isinstance(p, int) else f".{p}" for p in path)


def _explain(error: ValidationError) -> tuple[ValidationError, str]:
    """Descend through anyOf/oneOf to the branch the value meant, for a useful message.

    ACP unions are tagged (`sessionUpdate`, `type`, ...): the branch whose tag matched
    has no `const` failure, and its own errors say what is wrong. When no branch
    matched, the message lists the tags (or constants) that would have.
    """
    while error.validator in ("anyOf", "oneOf") and error.context:
        branches: dict[Any, list[ValidationError]] = {}
        for e in error.context:
            branches.setdefault(e.relative_schema_path[0], []).append(e)
        meant = [
            errs for errs in branches.values() if not any(e.validator == "const" for e in errs)
        ]
        if len(meant) == 1:
            deeper = best_match(meant[0])
            if deeper is None:
                break
            error = deeper
            continue
        tags = [
            next((e for e in errs if e.validator == "const"), None) for errs in branches.values()
        ]
        if meant or any(t is None for t in tags):
            break
        consts = sorted({json.dumps(t.validator_value) for t in tags if t is not None})
        where = {tuple(t.relative_path) for t in tags if t is not None}
        field = _where(next(iter(where))).lstrip(".") if len(where) == 1 else ""
        value = tags[0].instance if tags[0] is not None else None
        head = f"{field} {value!r}" if field else repr(value)
        return error, f"{head} is not one of {', '.join(consts)}"
    return error, error.message


@lru_cache(maxsize=1)
def _default_index() -> SchemaIndex:
    return SchemaIndex(load_schema())


def _advertised(method: str, caps: Mapping[str, Any]) -> bool | None:
    """Whether the client advertised `method`; None when no capability governs it."""
    fs = caps.get("fs")
    if not isinstance(fs, dict):
        fs = {}
    if method == "fs/read_text_file":
        return fs.get("readTextFile") is True
    if method == "fs/write_text_file":
        return fs.get("writeTextFile") is True
    if method.startswith("terminal/"):
        return caps.get("terminal") is True
    if method == "elicitation/create":
        return isinstance(caps.get("elicitation"), dict)
    return None


def findings(
    transcript: Transcript,
    client_capabilities: Mapping[str, Any],
    *,
    schema: Mapping[str, Any] | SchemaIndex | None = None,
) -> list[Finding]:
    """Every conformance finding of a run, in frame order.

    `schema` defaults to the cached pinned ACP schema
    (`parity.checks.acp_schema.load_schema`).
    """
    if schema is None:
        index = _default_index()
    elif isinstance(schema, SchemaIndex):
        index = schema
    else:
        index = SchemaIndex(schema)
    return _Checker(transcript, client_capabilities, index).run()


def client_capabilities(transcript: Transcript) -> Mapping[str, Any]:
    """The capabilities the harness advertised: the `clientCapabilities` of the first
    `initialize` request it sent ({} when it sent none, so every fs/terminal call counts
    as unadvertised)."""
    for frame in transcript.frames:
        msg = frame.message
        if frame.direction == "out" and isinstance(msg, dict) and msg.get("method") == "initialize":
            params = msg.get("params")
            caps = params.get("clientCapabilities") if isinstance(params, dict) else None
            return caps if isinstance(caps, dict) else {}
    return {}


def conformance_findings(transcript: Transcript) -> list[str]:
    """The run's conformance findings, rendered; without the ACP schema, one `unchecked`
    entry saying how to get it (a missing schema must not read as a clean run)."""
    try:
        # The schema is loaded and indexed once per process (`_default_index`).
        found = findings(transcript, client_capabilities(transcript))
        return [printable(str(f)) for f in found]
    except SchemaError as exc:
        return [f"[unchecked] conformance not checked: {exc}"]


class _Checker:
    def __init__(self, t: Transcript, caps: Mapping[str, Any], index: SchemaIndex) -> None:
        self.t = t
        self.caps = caps
        self.index = index
        self.out: list[Finding] = []
        self.step_of = {seq: i + 1 for seq, i in frame_steps(t).items()}
        self.pending: dict[Any, tuple[str, Any]] = {}
        """Harness request id -> (method, sessionId) until answered."""
        self.answered: set[Any] = set()
        self.prompted: set[Any] = set()
        """Sessions whose prompt has been answered at least once."""
        self.tools: dict[Any, set[Any]] = {}
        self.counts: dict[str, int] = {}

    def add(self, kind: str, seq: int | None, message: str) -> None:
        # A flood of one kind is counted past `MAX_PER_KIND`: what the summary, the
        # ledger and the reports carry stays proportional to what a reader can use.
        self.counts[kind] = self.counts.get(kind, 0) + 1
        if self.counts[kind] > MAX_PER_KIND:
            return
        if len(message) > MAX_MESSAGE:
            message = message[: MAX_MESSAGE - 3] + "..."
        step = self.step_of.get(seq) if seq is not None else None
        self.out.append(Finding(kind, step, seq, message))

    def run(self) -> list[Finding]:
        process = 0
        deadline = time.monotonic() + CHECK_BUDGET
        for f in self.t.frames:
            if f.seq % 4096 == 0 and time.monotonic() > deadline:
                self.add(
                    "unchecked",
                    f.seq,
                    f"conformance stopped after {CHECK_BUDGET:g} s at frame {f.seq} of"
                    f" {len(self.t.frames)}: the later frames were not checked",
                )
                break
            msg = f.message
            if f.process != process:
                # A restarted agent answers nothing the previous process was asked.
                process = f.process
                self.pending.clear()
                self.answered.clear()
            if f.direction == "out":
                self.outbound(msg)
                continue
            if f.oversize:
                self.add("oversize", f.seq, f"line over the frame limit: {f.raw[:80]!r}...")
                continue
            if f.parse_error is not None and f.parse_error.startswith(SET_ASIDE):
                self.add("unchecked", f.seq, f.parse_error)
                continue
            if f.parse_error is not None:
                self.add("not_json", f.seq, f"{f.parse_error}: {f.raw[:120]!r}")
                continue
            problem = _envelope(msg)
            if problem:
                self.add("not_jsonrpc", f.seq, problem)
                continue
            if "method" in msg:
                self.inbound_call(f.seq, msg)
            else:
                self.response(f.seq, msg)
        for kind, n in self.counts.items():
            if n > MAX_PER_KIND:
                more = f"... and {n - MAX_PER_KIND} more {kind} finding(s)"
                self.out.append(Finding(kind, None, self.t.frames[-1].seq, more))
        return self.out

    def outbound(self, msg: Any) -> None:
        if (
            isinstance(msg, dict)
            and "method" in msg
            and "id" in msg
            and _key(msg["id"]) is not None
        ):
            params = msg.get("params")
            session = params.get("sessionId") if isinstance(params, dict) else None
            self.pending[_key(msg["id"])] = (str(msg["method"]), session)

    def inbound_call(self, seq: int, msg: dict[str, Any]) -> None:
        method = msg["method"]
        kind: Kind = "request" if "id" in msg else "notification"
        if self.index.knows(method, kind):
            problem = self.index.check(method, kind, msg.get("params"))
            if problem:
                self.add("schema", seq, f"{method} {kind}: {problem}")
        elif not method.startswith("_"):
            self.add("unknown_method", seq, f"agent sent {kind} {method!r}, not an ACP method")
        if kind == "request" and _advertised(method, self.caps) is False:
            self.add(
                "unadvertised_call",
                seq,
                f"agent called {method} but the client did not advertise it",
            )
        if method == "session/update":
            self.update(seq, msg.get("params"))

    def update(self, seq: int, params: Any) -> None:
        if not isinstance(params, dict):
            return
        session = params.get("sessionId")
        update = params.get("update")
        if not isinstance(update, dict):
            return  # the schema finding already says so
        kind, call = update.get("sessionUpdate"), update.get("toolCallId")
        if _key(session) is None:
            return
        busy = any(s == session for _, s in self.pending.values())
        if session in self.prompted and not busy:
            self.add(
                "late_update", seq, f"{kind} for session {session} after its prompt was answered"
            )
        known = self.tools.setdefault(session, set())
        if kind == "tool_call" and _key(call) is not None:
            known.add(call)
        elif kind == "tool_call_update" and (_key(call) is None or call not in known):
            self.add(
                "unknown_tool_call",
                seq,
                f"tool_call_update for {call!r}, which no tool_call announced",
            )

    def response(self, seq: int, msg: dict[str, Any]) -> None:
        key = _key(msg.get("id"))
        if msg.get("id") is None and "error" in msg:
            # JSON-RPC's answer to a line it could not read (the harness sends such
            # lines in negative tests): no request to match, only the error to check.
            problem = self.index.errors("Error", msg["error"])
            if problem:
                self.add("schema", seq, f"error response: {problem}")
            return
        if key is None or key not in self.pending:
            state = "already answered" if key in self.answered else "never sent"
            self.add(
                "unknown_response",
                seq,
                f"response to id {msg.get('id')!r}, which the client {state}",
            )
            return
        method, session = self.pending.pop(key)
        self.answered.add(key)
        if "error" in msg:
            problem = self.index.errors("Error", msg["error"])
        elif self.index.knows(method, "response"):
            problem = self.index.check(method, "response", msg["result"])
        else:
            problem = None
        if problem:
            self.add("schema", seq, f"{method} response: {problem}")
        if method == "session/prompt" and _key(session) is not None:
            self.prompted.add(session)


def _key(ident: Any) -> Any:
    """A hashable form of a JSON-RPC id (None when the id is not a valid id type)."""
    if isinstance(ident, bool) or not isinstance(ident, str | int):
        return None
    return (type(ident).__name__, ident)


def _envelope(msg: Any) -> str | None:
    """What is wrong with a JSON-RPC 2.0 envelope, or None."""
    if not isinstance(msg, dict):
        return f"a JSON {type(msg).__name__}, not a JSON-RPC object"
    if msg.get("jsonrpc") != "2.0":
        return f"jsonrpc is {msg.get('jsonrpc')!r}, not '2.0'"
    if "id" in msg and msg["id"] is not None and _key(msg["id"]) is None:
        return f"id {msg['id']!r} is not a string or integer"
    if "method" in msg:
        if not isinstance(msg["method"], str):
            return f"method {msg['method']!r} is not a string"
        return None
    if "id" not in msg:
        return "neither a request, a notification nor a response"
    if ("result" in msg) == ("error" in msg):
        return "a response needs exactly one of result and error"
    return None
