"""The transcript of one run: typed plain data, recorded by the driver and the fake LLM.

Everything downstream (normalization, snapshots, parity diffs, conformance findings, run
problems, failure reports) is a pure function of a `Transcript`, so it can be tested
without spawning anything. `to_dict` / `from_dict` carry it through JSON (the session's
run cache, `parity.engine.runner`) and back, typed again. Times are monotonic seconds
since the run started; they stay in the raw transcript and are removed by normalization.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import asdict, dataclass, field
from typing import Any, Literal

Direction = Literal["out", "in"]
"""`out`: harness -> agent (stdin). `in`: agent -> harness (stdout)."""


SET_ASIDE = "set aside: "
"""How a frame's `parse_error` starts when the harness dropped its parsed value after
the run: the normalizer or the conformance check could not follow it
(`parity.engine.postrun`); its line stays in `raw`."""


@dataclass
class Frame:
    """One line on the agent's stdio, kept raw and parsed."""

    seq: int
    t: float
    direction: Direction
    raw: str
    message: Any = None
    """The parsed JSON value (any JSON type), or None when `parse_error` is set."""
    parse_error: str | None = None
    oversize: bool = False
    """The line exceeded the driver's frame limit; `raw` then holds only its head."""
    process: int = 0
    """Index into `Transcript.processes` (a `restart` step starts a new process)."""


@dataclass
class StepRecord:
    """One client step: what was sent, what came back, and every frame in between."""

    index: int
    kind: str
    """The scenario step kind: initialize, new_session, prompt, request, restart, ..."""
    label: str
    """Human-readable, e.g. `prompt s1 "go"`; used in reports."""
    line: int = 0
    """The step's line in the scenario file (0 when unknown)."""
    request: Any = None
    """The JSON-RPC frame sent for this step (None for steps that send nothing)."""
    response: Any = None
    """The matching JSON-RPC response frame (result or error), None if none came."""
    frames: list[int] = field(default_factory=list)
    """Seq numbers of every frame in either direction from step start to step end,
    the request and response included, in wire order."""
    problem: str | None = None
    """What the harness saw go wrong: a timeout, the agent exiting, ... None if fine."""
    t_start: float = 0.0
    t_end: float = 0.0


@dataclass
class ModelRequest:
    """One HTTP request that reached the fake LLM during this run."""

    seq: int
    t: float
    method: str
    path: str
    """Path below the run's base, e.g. `/stream`, `/v1/chat/completions`, `/tools/call`."""
    dialect: str
    """parity-stream, openai-chat, openai-responses, anthropic-messages, gemini, mcp, or
    `other`."""
    body: Any
    status: int = 200
    entry: int | None = None
    """Index of the script entry it consumed; None for side requests and non-stream calls."""
    side: bool = False
    """Answered by a `match` entry without consuming the script."""
    aborted: bool = False
    aborted_at: float | None = None
    problem: str | None = None
    """e.g. `script exhausted`, `no entry matched`, `malformed request`."""
    agent: int = 0
    """Whose request: 0 for the client's own sessions (or a request naming none), n for
    the n-th child agent (a parity-stream `sessionId` the client never used: a subagent),
    numbered in the order of their first model request."""


@dataclass
class ProcessRecord:
    """One agent process (a run has more than one when a step restarts the agent)."""

    argv: list[str]
    pid: int = 0
    exit_code: int | None = None
    signal: int | None = None
    stopped_by: str | None = None
    """How the shutdown ladder ended it: `exit` (by itself), `eof`, `sigterm`, `sigkill`."""
    stderr_tail: str = ""
    leftovers: int = 0
    """Processes it started that were still running after it ended (in its group past
    a grace, or escaped from it: a double fork, `setsid`), killed by the harness."""


@dataclass
class Transcript:
    """Everything one (scenario, target) run recorded."""

    scenario: str
    target: str
    run_id: str
    frames: list[Frame] = field(default_factory=list)
    steps: list[StepRecord] = field(default_factory=list)
    model_requests: list[ModelRequest] = field(default_factory=list)
    processes: list[ProcessRecord] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)
    """Run-level problems: startup failure, run timeout, crash, garbage on stdout, ..."""
    paths: dict[str, str] = field(default_factory=dict)
    """Machine paths to mask: `workdir`, `home`, `tmp` -> absolute path."""
    timings: dict[str, float] = field(default_factory=dict)
    files: dict[str, str | None] = field(default_factory=dict)
    """The scenario's `expect_files` after the run (None: the file does not exist)."""
    dialect: str = ""
    """The target's declared fake-LLM dialect (`parity.checks.problems` checks the calls)."""
    agent: dict[str, str] = field(default_factory=dict)
    """What the launched agent says it is (e.g. the DSH version of a native run); the
    view carries it as `agent`, and the parity diff ignores it."""

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Transcript:
        """The inverse of `to_dict` (also after a JSON round trip)."""
        return cls(
            scenario=data["scenario"],
            target=data["target"],
            run_id=data["run_id"],
            frames=[Frame(**f) for f in data.get("frames", [])],
            steps=[StepRecord(**s) for s in data.get("steps", [])],
            model_requests=[ModelRequest(**r) for r in data.get("model_requests", [])],
            processes=[ProcessRecord(**p) for p in data.get("processes", [])],
            problems=list(data.get("problems", [])),
            paths=dict(data.get("paths", {})),
            timings=dict(data.get("timings", {})),
            files=dict(data.get("files", {})),
            dialect=data.get("dialect", ""),
            agent=dict(data.get("agent", {})),
        )

    def frame(self, seq: int) -> Frame:
        return self.frames[seq]
