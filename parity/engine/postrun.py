"""After the agent exits: the run's view and conformance findings, contained and bounded.

Everything here works on what an agent sent, and nobody here wrote the agent:

- **Contained.** An exception the normalizer (the view, its YAML) or the
  conformance check raises on the agent's data is a run problem on the frame that
  caused it, never a crash: the frames are bisected for the first one without which the
  run goes through (`_culprit`), that frame is set aside (its parsed value dropped, its
  line kept, `parity.core.transcript.SET_ASIDE`) and named (`frame N (step S): the
  harness could not normalize this frame, set aside: TypeError: ...`), and the run
  is normalized again without it. A failure no frame explains is a problem of the run.
- **Bounded.** The checks of one run (normalization, conformance, then the judgement's
  diff and rendering, `parity.suite.target_item`) share one allowance proportional to
  what was recorded (`allowance`), never more than `CHECKS_LIMIT` (the judgement gets at
  least `JUDGE_FLOOR`). Reaching it is a problem of its own, stated first (`check limit
  (N s) reached during ...`), and the run's view is then only that problem.

The deadline is a real-time timer (`deadline`): it interrupts Python code wherever it
runs (jsonschema, the YAML emitter, difflib), in the main thread; elsewhere only the
conformance check's own budget applies.
"""

from __future__ import annotations

import contextlib
import dataclasses
import json
import os
import signal
import threading
import time
from collections.abc import Callable, Iterator
from typing import Any, TypeVar

from parity.checks.conformance import conformance_findings
from parity.core import collector
from parity.core.printable import printable
from parity.core.transcript import SET_ASIDE, Transcript
from parity.scenario.model import Scenario
from parity.view.dump import dump_view
from parity.view.normalize import scripted_tool_call_ids, supplied_texts, view

CHECKS_BASE = 60.0
"""Seconds every run's checks get, however little it recorded."""
CHECKS_PER_FRAME = 0.001
"""Seconds more per recorded frame (a 200,000-update flood takes about 0.2 ms a frame)."""
CHECKS_PER_MB = 10.0
"""Seconds more per megabyte of recorded lines (a 7 MB text holding a lone surrogate,
which only PyYAML's pure-Python emitter and parser can write and read, takes ~6 s/MB)."""
CHECKS_LIMIT = 300.0
"""The most the checks of one run may take, whatever it recorded; `PARITY_CHECKS_LIMIT`
(seconds) sets another (a CI job on a slow machine, a test)."""
JUDGE_FLOOR = 10.0
"""Seconds the judgement gets however much of the allowance the checks used: a run whose
checks reached the limit is still judged (its view is then only that problem)."""
MAX_SET_ASIDE = 20
"""Frames set aside per check before the run as a whole is given up on."""

T = TypeVar("T")


class TimeLimit(BaseException):
    """The checks' time is up. A BaseException, like KeyboardInterrupt: no `except
    Exception` on the way (the containment below among them) may take it for a frame's
    fault."""


def allowance(transcript: Transcript) -> float:
    """Seconds the checks of `transcript` may take: `CHECKS_BASE`, plus a share per
    frame and per megabyte recorded, at most `CHECKS_LIMIT`."""
    size = sum(len(f.raw) for f in transcript.frames)
    size += sum(len(json.dumps(r.body, default=str)) for r in transcript.model_requests)
    seconds = CHECKS_BASE + CHECKS_PER_FRAME * len(transcript.frames)
    return min(limit(), seconds + CHECKS_PER_MB * size / 1e6)


def limit() -> float:
    """`CHECKS_LIMIT`, or what `PARITY_CHECKS_LIMIT` says."""
    given = os.environ.get("PARITY_CHECKS_LIMIT", "")
    try:
        return float(given) if given else CHECKS_LIMIT
    except ValueError:
        return CHECKS_LIMIT


def judge_allowance(transcript: Transcript, used: float) -> float:
    """What is left of `transcript`'s allowance after the checks used `used` seconds,
    at least `JUDGE_FLOOR`."""
    return max(allowance(transcript) - used, JUDGE_FLOOR)


def compare_allowance(*transcripts: Transcript | None) -> float:
    """Seconds a parity check of two runs may take: their allowances added (a recorded
    snapshot's side counts as `CHECKS_BASE`), at most `CHECKS_LIMIT`."""
    total = sum(allowance(t) if t is not None else CHECKS_BASE for t in transcripts)
    return min(limit(), total)


def _in_finalizer(frame: Any) -> bool:
    while frame is not None:
        if frame.f_code.co_name == "__del__":
            return True
        frame = frame.f_back
    return False


AGAIN = 0.01
"""Seconds after which an expired deadline raises again, its last raise having been
swallowed (by a finalizer)."""


@contextlib.contextmanager
def deadline(seconds: float) -> Iterator[None]:
    """Raise `TimeLimit` in the block once `seconds` have passed (main thread only; an
    outer timer, if any, is restored with what it has left). The block runs with the
    cyclic garbage collector paused (`parity.core.collector`): every bounded stage is
    one of the checks after a run, which build millions of acyclic objects."""
    with collector.paused():
        if threading.current_thread() is not threading.main_thread():
            yield
        else:
            with _timer(seconds):
                yield


@contextlib.contextmanager
def _timer(seconds: float) -> Iterator[None]:
    """`deadline`'s real-time timer (main thread)."""

    def expire(signum: int, frame: Any) -> None:
        # The signal lands in whatever Python code runs, a finalizer (`__del__`) among
        # them, where an exception is printed ("Exception ignored in") and dropped: there,
        # ring again soon instead; and after any raise, in case another such place took it.
        signal.setitimer(signal.ITIMER_REAL, AGAIN)
        if not _in_finalizer(frame):
            raise TimeLimit(seconds)

    start = time.monotonic()
    previous = signal.signal(signal.SIGALRM, expire)
    outer, _ = signal.setitimer(signal.ITIMER_REAL, max(seconds, 0.001))
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)
        if outer:
            left = outer - (time.monotonic() - start)
            signal.setitimer(signal.ITIMER_REAL, max(left, 0.001))


@dataclasses.dataclass(frozen=True)
class Checked:
    """A run's view and conformance findings, and the seconds they took."""

    view: Any
    findings: list[str]
    seconds: float
    text: str | None = None
    """The view's snapshot YAML (None when the run could not be normalized)."""


def normalized(scenario: Scenario, transcript: Transcript) -> Any:
    """The view a snapshot holds for this run (masks for other targets are ignored by
    `view` itself). A JSON round trip makes it the same plain data whether it was just
    computed or read back from the session cache."""
    data = view(
        transcript,
        scenario.profile,
        scenario.masks,
        scripted_ids=scripted_tool_call_ids(scenario),
        supplied=supplied_texts(scenario),
    )
    return json.loads(json.dumps(data))


def written(data: Any) -> tuple[Any, str]:
    """`data` and its snapshot YAML: writing it is part of normalizing, so a value YAML
    cannot take is set aside with its frame, and the judgement reuses the text (a
    flood's YAML takes seconds a pass). That it reads back exactly, whatever the agent
    sent, is `tests/view/test_any_json.py`'s to hold: reading it back here would cost
    as much again on every run."""
    return data, dump_view(data)


def check_run(scenario: Scenario, transcript: Transcript) -> Checked:
    """The run's view and findings, contained and bounded (see the module doc); set-aside
    frames and a limit reached become problems of `transcript`."""
    start = time.monotonic()
    seconds = allowance(transcript)
    stage = "normalization"
    try:
        with deadline(seconds):
            try:
                data, text = contained(
                    lambda t: written(normalized(scenario, t)), transcript, "normalize"
                )
            except Unfollowable as exc:
                data, text = _bare(str(exc)), None
            stage = "the conformance check"
            try:
                found = contained(conformance_findings, transcript, "check")
            except Unfollowable as exc:
                found = [f"[unchecked] conformance not checked: {exc}"]
    except TimeLimit:
        problem = limit_problem(seconds, stage, transcript)
        transcript.problems.insert(0, problem)
        data, text = _bare(problem), None
        found = [f"[unchecked] conformance not checked: {problem}"]
    return Checked(data, found, time.monotonic() - start, text)


def _bare(problem: str) -> dict[str, Any]:
    """The view of a run the harness could not normalize: only why (never recorded:
    the run has that problem)."""
    return {"steps": [], "after": [], "model": [], "process": {"problems": [problem]}}


def limit_problem(seconds: float, stage: str, transcript: Transcript) -> str:
    """The problem of checks that reached their time limit during `stage`."""
    return (
        f"check limit ({seconds:.3g} s) reached during {stage}: the checks after the run"
        f" may take {CHECKS_BASE:g} s, {CHECKS_PER_FRAME * 1000:g} ms a frame and"
        f" {CHECKS_PER_MB:g} s a MB recorded, at most {limit():g} s; this run"
        f" recorded {len(transcript.frames)} frames"
    )


def contained(check: Callable[[Transcript], T], transcript: Transcript, doing: str) -> T:
    """`check(transcript)`, with each frame whose data makes it raise set aside and
    named as a run problem (see the module doc); past `MAX_SET_ASIDE` frames, or when
    no frame explains the failure, the run's problem (and the exception) stands."""
    for attempt in range(MAX_SET_ASIDE + 1):
        try:
            return check(transcript)
        except Exception as exc:  # the agent's data, found below; TimeLimit passes
            seq = _culprit(check, transcript) if attempt < MAX_SET_ASIDE else None
            if seq is None:
                more = f" ({attempt} frames set aside)" if attempt else ""
                problem = f"the harness could not {doing} this run{more}: {_exception(exc)}"
                transcript.problems.append(problem)
                raise Unfollowable(problem) from exc
            _set_aside(transcript, seq, f"the harness could not {doing} this frame", exc)
    raise AssertionError("unreachable: the last attempt returns or raises")


class Unfollowable(Exception):
    """A check failed on the run as a whole (no single frame set aside helps)."""


def _exception(exc: BaseException) -> str:
    text = printable(f"{type(exc).__name__}: {exc}")
    return text if len(text) <= 200 else text[:197] + "..."


def _culprit(check: Callable[[Transcript], Any], transcript: Transcript) -> int | None:
    """The seq of the frame the failure of `check` needs: with the frames from it on set
    aside, it goes through; with those after it, it still fails (bisected)."""
    frames = transcript.frames
    candidates = [i for i, f in enumerate(frames) if f.message is not None]

    def fails(k: int) -> bool:
        """Whether `check` fails with candidates[k:] set aside."""
        trial = _without(transcript, {frames[i].seq for i in candidates[k:]})
        try:
            check(trial)
        except Exception:
            return True
        return False

    if not candidates or fails(0):
        return None
    low, high = 0, len(candidates)  # fails(high) (the run as it is), not fails(low)
    while high - low > 1:
        mid = (low + high) // 2
        if fails(mid):
            high = mid
        else:
            low = mid
    return frames[candidates[low]].seq


def _without(transcript: Transcript, seqs: set[int]) -> Transcript:
    """A copy of `transcript` with the frames `seqs` set aside (and the step responses
    they carried)."""
    trial = dataclasses.replace(transcript, frames=list(transcript.frames))
    trial.steps = [dataclasses.replace(s) for s in transcript.steps]
    trial.problems = list(transcript.problems)
    for seq in seqs:
        _set_aside(trial, seq, "", None)
    return trial


def _set_aside(transcript: Transcript, seq: int, why: str, exc: BaseException | None) -> None:
    """Drop frame `seq`'s parsed value (its line stays) and any step response it was;
    with `exc`, name it as a run problem."""
    frame = transcript.frames[seq]
    for step in transcript.steps:
        if seq in step.frames and step.response is not None and step.response == frame.message:
            step.response = None
    reason = f"{why}: {_exception(exc)}" if exc is not None else why
    transcript.frames[seq] = dataclasses.replace(
        frame, message=None, parse_error=f"{SET_ASIDE}{reason}"
    )
    if exc is not None:
        number = next((i + 1 for i, s in enumerate(transcript.steps) if seq in s.frames), None)
        where = f"frame {seq} (step {number})" if number is not None else f"frame {seq}"
        transcript.problems.append(f"{where}: {why}, set aside: {_exception(exc)}")
