"""Run problems: everything that went wrong in one run, and whether the scenario expects it.

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

`judge(problems, scenario.expect_problems, target)` splits them into unexpected ones
(which fail the target's item, and which `parity record` refuses to record), expected
ones (listed in the summary with their reasons) and stale `expect_problems` entries
(declared for this target, matching nothing: they fail like stale diverge rules).

Pure functions over the transcript and the scenario; the driver's and the fake's
problem texts are classified here by their wording, and a text this module does not
recognise is kind `other`, never dropped.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

from parity.scenario.model import ExpectedProblem, Scenario
from parity.transcript import Frame, StepRecord, Transcript

KINDS: dict[str, str] = {
    "timeout": "a step got no response (or a `wait` not its updates) within its timeout",
    "trigger": "a prompt's cancel trigger never fired",
    "exit": "the agent exited, or closed its stdout, before the run was over",
    "stopped": "the run stopped at a step; the later steps did not run",
    "script": "a step the harness could not carry out as written (e.g. `cursor: next` "
    "after a list without nextCursor)",
    "garbage": "a stdout line that is not JSON, over the frame limit, or not JSON-RPC",
    "capability": "the agent called fs/* or terminal/* without the client capability",
    "stdin": "the agent stopped reading its stdin",
    "startup": "the target could not be started",
    "run-timeout": "the whole-run timeout (`timeouts.run`) ended the run",
    "frame-limit": "the agent sent more lines than the driver records",
    "driver": "a harness error while driving the run",
    "unknown-endpoint": "a request to an endpoint the fake LLM does not serve (HTTP 404)",
    "script-exhausted": "a model request after every consumable `llm` entry was used",
    "no-entry-matched": "a model request no side entry matched, in a script of side entries",
    "malformed-request": "a model or tool request the fake LLM could not read",
    "unknown-tool": "a /tools/call for a tool the scenario does not declare",
    "left-open": "a model or tool request still open when the run ended",
    "unused-llm": "a consumable `llm` entry no model request used",
    "approval": "an `approval: ask` fixture tool called without (or against) a "
    "session/request_permission",
    "dialect": "the agent's model calls came in another dialect than its target declares",
    "other": "a problem text this harness version does not classify",
}
"""Every problem kind, with what it means (the schema's `expect_problems.kind` enum and
docs/scenarios.md list the same kinds)."""


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


@dataclass
class Judged:
    """A run's problems against the scenario's `expect_problems`, for one target."""

    unexpected: list[Problem] = field(default_factory=list)
    expected: list[tuple[Problem, ExpectedProblem]] = field(default_factory=list)
    stale: list[ExpectedProblem] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        """Nothing fails the item: every problem expected, no stale entry."""
        return not self.unexpected and not self.stale


# -- classification of the driver's and the fake's texts -------------------------------

_STEP_TEXTS: tuple[tuple[str, str], ...] = (
    (r"cancel trigger ", "trigger"),
    (r"the cancel trigger ", "trigger"),
    (r"no response to ", "timeout"),
    (r".*: only \d+ of \d+ .* update\(s\) within ", "timeout"),
    (r"agent exited during ", "exit"),
    (r"agent closed its stdout during ", "exit"),
    (r"no agent process is running", "exit"),
    (r"could not send ", "stdin"),
    (r"cannot start target ", "startup"),
    (r"run timeout \(", "run-timeout"),
    (r"interrupted: ", "run-timeout"),
)

_RUN_TEXTS: tuple[tuple[str, str], ...] = (
    (r"frame \d+: (non-JSON line|oversize frame) on stdout", "garbage"),
    (r"frame \d+: agent sent a JSON value that is not a JSON-RPC message", "garbage"),
    (r"agent called \S+ without the client capability", "capability"),
    (r"driver error", "driver"),
    (r"the agent did not read our answer", "stdin"),
    (r"agent exited by itself before teardown", "exit"),
    (r"agent exited during |agent closed its stdout during ", "exit"),
    (r"cannot start target ", "startup"),
    (r"run timeout \(", "run-timeout"),
    (r"run stopped at step ", "stopped"),
    (r"frame limit \(", "frame-limit"),
    (r"(scenario|launch) file path escapes", "script"),
)

_FLOOD_KINDS = {
    "non-JSON line": "garbage",
    "oversize frame": "garbage",
    "not-jsonrpc": "garbage",
    "capability": "capability",
    "driver": "driver",
    "stdin": "stdin",
    "exit": "exit",
}
"""The driver's own problem kinds (`_Run.problem`), as named in its `... and N more`."""

_FLOOD = re.compile(r"\.\.\. and \d+ more \((.+)\)$")
_FRAME = re.compile(r"frame (\d+): ")
_STOPPED = re.compile(r"run stopped at step (\d+) ")
_CALLED = re.compile(r"agent called (\S+) without")


def _classify(text: str, table: Iterable[tuple[str, str]]) -> str:
    for pattern, kind in table:
        if re.match(pattern, text):
            return kind
    return "other"


def _llm_kind(problem: str) -> str:
    if problem == "unknown endpoint":
        return "unknown-endpoint"
    if problem == "script exhausted":
        return "script-exhausted"
    if problem == "no entry matched":
        return "no-entry-matched"
    if problem.startswith("malformed request"):
        return "malformed-request"
    if problem.startswith("unknown tool"):
        return "unknown-tool"
    if problem == "run closed":
        return "left-open"
    return "other"


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
    return out


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
        kind = _classify(text, _STEP_TEXTS)
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
            out.append(Problem(_FLOOD_KINDS.get(flood.group(1), "other"), text))
            continue
        kind = _classify(text, _RUN_TEXTS)
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
    from parity.fakellm.canonical import dialect_of

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
        kind = _llm_kind(problem)
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
        if "match" in entry.params or index in used:
            continue
        number = positions.get(id(entry), index)
        where = f" (line {entry.where.line})" if entry.where.line else ""
        out.append(
            Problem("unused-llm", f"scripted llm[{number}]{where} was never used by the run")
        )
    return out


# -- expected problems -----------------------------------------------------------------


def applies(entry: ExpectedProblem, target: str) -> bool:
    return entry.targets is None or target in entry.targets


def explains(entry: ExpectedProblem, problem: Problem) -> bool:
    return entry.kind == problem.kind and (entry.match is None or entry.match in problem.message)


def judge(problems: Sequence[Problem], expected: Sequence[ExpectedProblem], target: str) -> Judged:
    """Each problem against the entries that apply to `target` (the first explaining one
    claims it); an applicable entry that explains nothing is stale."""
    entries = [e for e in expected if applies(e, target)]
    out = Judged()
    used: set[int] = set()
    for problem in problems:
        hit = next((i for i, e in enumerate(entries) if explains(e, problem)), None)
        if hit is None:
            out.unexpected.append(problem)
        else:
            used.add(hit)
            out.expected.append((problem, entries[hit]))
    out.stale = [e for i, e in enumerate(entries) if i not in used]
    return out


def describe(entry: ExpectedProblem) -> str:
    """`kind` plus its match and where it is declared, for stale-entry messages."""
    text = f"kind {entry.kind}"
    if entry.match is not None:
        text += f", match {entry.match!r}"
    return (
        f"{entry.where}: expect_problems ({text})" if entry.where else f"expect_problems ({text})"
    )


def failure_block(judged: Judged, target: str) -> str:
    """The text a failing item shows for its run problems and stale entries."""
    lines = []
    if judged.unexpected:
        lines.append(f"run problems ({len(judged.unexpected)}), not declared in expect_problems:")
        lines += [p.indented() for p in judged.unexpected]
    if judged.stale:
        lines.append(
            f"stale expect_problems ({len(judged.stale)}): declared for {target}, did not occur:"
        )
        lines += [f"  {describe(e)}: {e.reason}" for e in judged.stale]
    if judged.expected:
        lines.append(f"expected problems ({len(judged.expected)}):")
        lines += [f"{p.indented()}\n      ({e.reason})" for p, e in judged.expected]
    if judged.unexpected:
        lines.append(
            "a run with problems is never a passing snapshot: fix the cause, or declare it "
            "under `expect_problems` with a reason (docs/scenarios.md)"
        )
    return "\n".join(lines)


ExpectedRow = tuple[str, str, str, str, int]
"""(scenario, target, problem headline, reason, how many such problems) of one run."""


def summary_lines(rows: Sequence[ExpectedRow]) -> list[str]:
    """The summary's list of expected problems, per scenario x target."""
    if not rows:
        return []
    runs = {(r[0], r[1]) for r in rows}
    lines = [f"expected problems: {sum(r[4] for r in rows)} in {len(runs)} run(s)"]
    for scenario, target, problem, reason, times in sorted(rows):
        again = f" (x{times})" if times > 1 else ""
        lines.append(f"  {scenario} {target}: {problem}{again} ({reason})")
    return lines
