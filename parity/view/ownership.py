"""Which step each frame of a transcript belongs to: the view's frame-to-step ownership.

The view (`parity.view.normalize`) lists each frame under one step, and conformance
findings (`parity.checks.conformance`) name the step a frame appears under, so both use
this one mapping. Step frame ranges overlap under `parallel` (the parent and every child
record all frames of the block), and a frame that comes late can fall into the next
step's time range by a race; the rules below give each frame one owner deterministically.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from parity.core.exact import exact_key
from parity.core.transcript import Frame, StepRecord, Transcript
from parity.view.tokens import hashable


@dataclass
class Ownership:
    """The frames of one transcript, assigned to steps."""

    owner: dict[int, int] = field(default_factory=dict)
    """Frame seq -> 0-based index of the step it belongs to. Frames outside every step
    (the view's `before` / `after`) and the harness's answers to agent requests are
    absent."""
    own: set[int] = field(default_factory=set)
    """The steps' own request and response frames."""
    answers: dict[int, int] = field(default_factory=dict)
    """Agent request seq -> seq of the harness's answer (first response with its id, of
    the same JSON type: `exact_key`)."""

    @property
    def used(self) -> set[int]:
        """The answer frames: the view shows each with the request it answers."""
        return set(self.answers.values())


def ownership(transcript: Transcript) -> Ownership:
    """Each frame -> the one step it belongs to, plus the steps' own request and
    response frames. A frame goes to the step whose request or response it is, else to
    a non-parallel step of the same session, else to the first step that recorded it;
    then a late frame about a session goes to the step that last answered about it
    (`_claim_late`), and a frame between two steps trails the earlier one."""
    t = transcript
    answers = _match_answers(t)
    used = set(answers.values())
    own: set[int] = set()
    requests: dict[int, int] = {}
    responses: dict[int, int] = {}
    candidates: dict[int, list[int]] = {}
    for i, step in enumerate(t.steps):
        req = resp = False
        for seq in step.frames:
            f = t.frames[seq]
            if not req and f.direction == "out" and same(f.message, step.request):
                req = True
                requests[seq] = i
            elif not resp and f.direction == "in" and same(f.message, step.response):
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
        plain = [i for i in steps if t.steps[i].kind != "parallel"] or steps
        session = _session_of(t.frames[seq].message)
        same_session = [
            i for i in plain if session is not None and _step_session(t.steps[i]) == session
        ]
        owner[seq] = (same_session or plain)[0]
    _claim_late(t, owner, requests, responses, used)
    last = len(t.steps) - 1
    for f in t.frames:
        if f.seq in owner or f.seq in used:
            continue
        # Outside every step's range: between two steps it trails the earlier one;
        # before the first or after the last it stays loose (`before` / `after`).
        earlier = [i for i, s in enumerate(t.steps) if began_before(s, f)]
        if earlier and earlier[-1] != last:
            owner[f.seq] = earlier[-1]
    return Ownership(owner, own, answers)


def frame_steps(transcript: Transcript) -> dict[int, int]:
    """Frame seq -> 0-based index of the step whose entry shows it in the view.

    Frames the view shows in `before`/`after` are absent; the harness's answer to an
    agent request goes with the request. Conformance findings use this so a finding
    names the step where the frame appears in the snapshot.
    """
    found = ownership(transcript)
    owner = dict(found.owner)
    for request, answer in found.answers.items():
        if request in owner:
            owner[answer] = owner[request]
    return owner


def _match_answers(t: Transcript) -> dict[int, int]:
    """Agent request seq -> seq of the harness's answer (first response with its id, of
    the same JSON type: `exact_key`)."""
    pending: dict[Any, int] = {}
    answers: dict[int, int] = {}
    for f in t.frames:
        msg = f.message
        if not isinstance(msg, dict) or not hashable(msg.get("id")):
            continue
        if f.direction == "in" and "method" in msg and "id" in msg:
            pending[exact_key(msg["id"])] = f.seq
        elif f.direction == "out" and "method" not in msg and exact_key(msg.get("id")) in pending:
            answers[pending.pop(exact_key(msg.get("id")))] = f.seq
    return answers


def _claim_late(
    t: Transcript,
    owner: dict[int, int],
    requests: dict[int, int],
    responses: dict[int, int],
    used: set[int],
) -> None:
    """Give a frame about a session that comes while no request about that session is
    in flight to the step that last answered one (it lands in that step's `late`).

    Which step's time range such a frame falls in is a race between the agent's
    trailing output and the harness's next step; the session it is about is not, so
    attributing it this way keeps two runs of one agent equal.
    """
    in_flight: dict[int, Any] = {}
    answered: dict[Any, int] = {}
    for f in t.frames:
        if f.seq in requests:
            i = requests[f.seq]
            in_flight[i] = _step_session(t.steps[i])
        elif f.seq in responses:
            i = responses[f.seq]
            in_flight.pop(i, None)
            session = _step_session(t.steps[i])
            if hashable(session) and session is not None:
                answered[session] = i
        elif f.direction == "in" and f.seq not in used:
            session = _session_of(f.message)
            busy = session in in_flight.values()
            if hashable(session) and session in answered and not busy:
                owner[f.seq] = answered[session]


def began_before(step: StepRecord, f: Frame) -> bool:
    """Whether `step` began before frame `f` (a step that recorded no frame, such as a
    wait or a restart, is placed by its start time)."""
    return step.frames[0] < f.seq if step.frames else step.t_start <= f.t


def same(message: Any, sent: Any) -> bool:
    """Whether a frame's message is the step's own request or response."""
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
