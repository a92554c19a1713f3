"""Run problems: everything that went wrong in one run.

A broken run is never a passing snapshot. `run_problems(scenario, transcript)` collects,
as one list of `Problem`s (a short `kind` and a message naming the step, 1-based):

- what the driver saw: a step's problem (no response within its timeout, the agent
  exiting, a cancel trigger that never fired, a step the harness could not carry out)
  and the run-level problems (the run stopping early, garbage on stdout, calls without
  the client capability, the agent exiting by itself, ...);
- what the fake LLM saw: every model or tool request recorded with a `problem`
  (unknown endpoint, script exhausted, no entry matched, malformed request, unknown
  tool, still open when the run ended);
- scripted consumable `llm` entries no request used (when the run played every step);
- a fixture tool declared `approval: ask` called via `/tools/call` (or MCP `tools/call`)
  with no `session/request_permission` sent for that call before it, or although the
  client refused it.

Whether the scenario expects them is `parity.checks.expected`; how the driver's and the
fake's texts are classified is `parity.checks.problem_kinds`. Pure functions over the
transcript and the scenario.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import Any

from parity.checks.problem_kinds import FLOOD_KINDS, RUN_TEXTS, STEP_TEXTS, classify, llm_kind
from parity.core.printable import printable
from parity.core.transcript import Frame, StepRecord, Transcript
from parity.scenario.model import Scenario


@dataclass(frozen=True)
class Problem:
    """One problem of a run."""

    kind: str
    message: str
    """Names the step (1-based, as the view numbers them) when there is one."""
    step: int | None = None
    """1-based step number; None for problems outside any step."""

    def __str__(self) -> str:
        return f"[{self.kind}] {self.message}"

    def indented(self, indent: str = "  ") -> str:
        """As a list item: continuation lines (a stderr tail) indented below it."""
        first, *rest = str(self).splitlines() or [""]
        return "\n".join([indent + first, *(f"{indent}    {line}" for line in rest)])

    def headline(self) -> str:
        """The first line only, saying how many more there are (for the summary)."""
        first, *rest = str(self).splitlines() or [""]
        return f"{first} (+{len(rest)} line(s))" if rest else first


_FLOOD = re.compile(r"\.\.\. and \d+ more \((.+)\)$")
_FRAME = re.compile(r"frame (\d+): ")
_STOPPED = re.compile(r"run stopped at step (\d+) ")
_CALLED = re.compile(r"agent called (\S+) without")


# -- the collector ---------------------------------------------------------------------


class _Steps:
    """Step records of the transcript: labels, and which step a frame or time is in."""

    def __init__(self, steps: Sequence[StepRecord], frames: Sequence[Frame]):
        self.steps = list(steps)
        self.frames = frames

    def name(self, index: int) -> str:
        """`step 3 (prompt s1 "go")` for the 0-based record index."""
        label = self.steps[index].label if 0 <= index < len(self.steps) else ""
        return f"step {index + 1} ({label})" if label else f"step {index + 1}"

    def prefix(self, index: int | None, text: str) -> str:
        """`text` introduced by the step it is about (without repeating the label)."""
        if index is None:
            return text
        label = self.steps[index].label if index < len(self.steps) else ""
        if label and label in text:
            return f"step {index + 1}: {text}"
        return f"{self.name(index)}: {text}"

    def of_frame(self, seq: int) -> int | None:
        """The innermost step that recorded frame `seq`, else the last one begun before it."""
        found = None
        for i, step in enumerate(self.steps):
            if seq in step.frames:
                found = i  # children follow their parallel parent: the last match is inner
        if found is not None:
            return found
        return self.at(self.frames[seq].t) if 0 <= seq < len(self.frames) else None

    def at(self, t: float) -> int | None:
        """The innermost step running at time `t`, else the last one begun before it."""
        running = [i for i, s in enumerate(self.steps) if s.t_start <= t <= s.t_end]
        if running:
            return running[-1]
        begun = [i for i, s in enumerate(self.steps) if s.t_start <= t]
        return begun[-1] if begun else None


def run_problems(scenario: Scenario, t: Transcript) -> list[Problem]:
    """Every problem of one run, in the order: steps, run level, fake LLM, approvals,
    unused script entries. Pure."""
    steps = _Steps(t.steps, t.frames)
    out: list[Problem] = []
    out += _step_problems(steps)
    run_level = _run_problems(t, steps)
    out += run_level
    out += _model_problems(t, steps)
    out += _dialect_problems(t, steps)
    out += _approval_problems(scenario, t, steps)
    stopped = any(p.kind == "stopped" for p in run_level)
    if not stopped:
        out += _unused_entries(scenario, t)
    # A limit reached comes first: it explains what follows it (a step that waited for
    # updates the limit dropped), and must never read as another cause.
    out.sort(key=lambda p: p.kind != "frame-limit")
    # A problem can quote the agent (a stderr tail, a method name it chose): every text
    # the summary, a failure or a report shows is escaped (`parity.core.printable`).
    return [replace(p, message=printable(p.message)) for p in out]


def _step_problems(steps: _Steps) -> list[Problem]:
    out = []
    with_problem = {i for i, s in enumerate(steps.steps) if s.problem}
    for i, step in enumerate(steps.steps):
        text = step.problem
        if not text:
            continue
        if step.kind == "parallel" and text.startswith("a parallel step failed: "):
            # The failing branch has the problem itself; the block only repeats it.
            if any(j > i and j in with_problem for j in range(len(steps.steps))):
                continue
            text = text.removeprefix("a parallel step failed: ")
        kind = classify(text, STEP_TEXTS)
        if kind == "other" and re.match(r".+:\d+:\d+: ", text):
            kind = "script"  # a ScriptError, introduced by the step's file:line:col
        out.append(Problem(kind, steps.prefix(i, text), i + 1))
    return out


def _run_problems(t: Transcript, steps: _Steps) -> list[Problem]:
    out = []
    calls: dict[str, int] = {}
    for text in t.problems:
        flood = _FLOOD.match(text)
        if flood:
            out.append(Problem(FLOOD_KINDS.get(flood.group(1), "other"), text))
            continue
        kind = classify(text, RUN_TEXTS)
        index: int | None = None
        if (m := _FRAME.match(text)) is not None:
            index = steps.of_frame(int(m.group(1)))
        elif (m := _STOPPED.match(text)) is not None:
            n = int(m.group(1))
            out.append(Problem(kind, text, n))
            continue
        elif (m := _CALLED.match(text)) is not None:
            method = m.group(1)
            seen = calls.get(method, 0)
            calls[method] = seen + 1
            index = _nth_request_step(t, steps, method, seen)
        out.append(Problem(kind, steps.prefix(index, text), None if index is None else index + 1))
    return out


def _nth_request_step(t: Transcript, steps: _Steps, method: str, n: int) -> int | None:
    """The step of the agent's `n`-th (0-based) request with `method`."""
    found = 0
    for frame in t.frames:
        msg = frame.message
        if frame.direction == "in" and isinstance(msg, dict) and msg.get("method") == method:
            if found == n:
                return steps.of_frame(frame.seq)
            found += 1
    return None


def _dialect_problems(t: Transcript, steps: _Steps) -> list[Problem]:
    """A target's `dialect` says what it speaks; a model call in another one means the
    declaration is wrong (or the agent changed), reported once per dialect seen."""
    from parity.fakellm.dialects import dialect_of

    declared = t.dialect
    if not declared:
        return []
    out: list[Problem] = []
    seen: set[str] = set()
    for req in t.model_requests:
        spoken = dialect_of(req.path)
        if spoken is None or spoken == declared or spoken in seen:
            continue
        seen.add(spoken)
        text = (
            f"the target declares dialect {declared}, but the agent's model calls came as "
            f'{spoken} ({req.path}): set `dialect = "{spoken}"` for it'
        )
        index = steps.at(req.t)
        out.append(
            Problem("dialect", steps.prefix(index, text), None if index is None else index + 1)
        )
    return out


def _model_problems(t: Transcript, steps: _Steps) -> list[Problem]:
    out = []
    for req in t.model_requests:
        problem = req.problem
        if not problem:
            continue
        kind = llm_kind(problem)
        what = f"{req.method} {req.path}"
        if kind == "left-open":
            text = f"the fake LLM's {what} was still open when the run ended"
        else:
            text = f"the fake LLM answered {what} with {req.status}: {problem}"
        index = steps.at(req.t)
        out.append(Problem(kind, steps.prefix(index, text), None if index is None else index + 1))
    return out


def _allowed(answer: Any, params: Any) -> bool:
    """Whether the harness's answer to a permission request granted it."""
    result = answer.get("result") if isinstance(answer, dict) else None
    outcome = result.get("outcome") if isinstance(result, dict) else None
    if not isinstance(outcome, dict) or outcome.get("outcome") != "selected":
        return False
    options = params.get("options") if isinstance(params, dict) else None
    for option in options if isinstance(options, list) else []:
        if isinstance(option, dict) and option.get("optionId") == outcome.get("optionId"):
            return str(option.get("kind", "")).startswith("allow")
    return False


@dataclass
class _Permission:
    t: float
    call_id: Any
    allowed: bool
    used: bool = False


def _permissions(t: Transcript) -> list[_Permission]:
    """Every session/request_permission the agent sent, with whether it was granted."""
    answers: dict[Any, Any] = {}
    for frame in t.frames:
        msg = frame.message
        outgoing = frame.direction == "out" and isinstance(msg, dict)
        if outgoing and "method" not in msg and isinstance(msg.get("id"), str | int):
            answers.setdefault(msg["id"], msg)
    out = []
    for frame in t.frames:
        msg = frame.message
        if not (frame.direction == "in" and isinstance(msg, dict)):
            continue
        if msg.get("method") != "session/request_permission" or "id" not in msg:
            continue
        params = msg.get("params")
        call = params.get("toolCall") if isinstance(params, dict) else None
        call_id = call.get("toolCallId") if isinstance(call, dict) else None
        req_id = msg["id"] if isinstance(msg["id"], str | int) else None
        allowed = _allowed(answers.get(req_id), params)
        out.append(_Permission(frame.t, call_id, allowed))
    return out


def _approval_problems(scenario: Scenario, t: Transcript, steps: _Steps) -> list[Problem]:
    ask = {tool.name for tool in scenario.tools if tool.approval == "ask"}
    if not ask:
        return []
    calls = [
        r
        for r in t.model_requests
        if r.path == "/tools/call" and isinstance(r.body, dict) and r.body.get("name") in ask
    ]
    if not calls:
        return []
    permissions = _permissions(t)
    call_ids = {r.body.get("callId") for r in calls}
    out = []
    for req in sorted(calls, key=lambda r: r.t):
        body = req.body
        at = req.t
        before = [p for p in permissions if not p.used and p.t <= at]
        # Linked by the tool call id where the agent forwards it (DSH family); an MCP
        # call carries its own id, so it takes the earliest permission no other call owns.
        mine = [p for p in before if p.call_id == body.get("callId")]
        mine = mine or [p for p in before if p.call_id not in call_ids]
        via = "MCP tools/call" if req.dialect == "mcp" else "/tools/call"
        what = f"fixture tool `{body.get('name')}` (approval: ask) was called via {via}"
        what += f" ({body.get('callId')})" if body.get("callId") else ""
        index = steps.at(at)
        if not mine:
            text = f"{what} without a session/request_permission for it"
        else:
            mine[0].used = True
            if mine[0].allowed:
                continue
            text = f"{what} although the client refused its session/request_permission"
        out.append(
            Problem("approval", steps.prefix(index, text), None if index is None else index + 1)
        )
    return out


def _unused_entries(scenario: Scenario, t: Transcript) -> list[Problem]:
    if not scenario.llm:
        return []
    script = scenario.script_for(t.target)
    used = {r.entry for r in t.model_requests if not r.side and r.entry is not None}
    positions = {id(e): i for i, e in enumerate(scenario.llm)}
    out = []
    for index, entry in enumerate(script):
        if "match" in entry.params or entry.params.get("optional") or index in used:
            continue
        number = positions.get(id(entry), index)
        where = f" (line {entry.where.line})" if entry.where.line else ""
        owner = entry.params.get("prompt")
        where += f", for prompt {owner}," if isinstance(owner, str) else ""
        out.append(
            Problem("unused-llm", f"scripted llm[{number}]{where} was never used by the run")
        )
    return out
