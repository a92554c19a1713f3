"""Triggers: the one grammar that says when a prompt is cancelled and when a held
answer is sent (docs/scenarios.md, "Triggers").

A trigger (`after:` in a scenario) fires on what the run's recording sees:

- `{update: KIND, count: N}`: the N-th `session/update` of that kind (of the origin's
  session) since the origin;
- `{agent_request: METHOD, count: N}`: the agent's N-th request of that method (of the
  origin's session) since the origin;
- `{llm_request: N}`: the run's N-th model request arrived at the fake LLM;
- `{tool_call: NAME, count: N}`: the fake received the run's N-th call of fixture tool
  NAME (parity-stream `/tools/call`, or MCP `tools/call` forwarded there);
- either of those two with `since: origin`: counted from the origin instead of the run's
  start, so an agent that made one model request fewer earlier on (a prompt it refused)
  does not shift every later trigger;
- `{prompt: NAME}`: the prompt step named NAME (`as`) has ended;
- `{ms: N}`: N milliseconds after the origin.

The origin is the prompt's request for a cancel, and the agent's request for a held
answer (whose own frame does not count). The fake LLM runs in another thread; it tells
the recording through the driver's loop (`run.py`), so everything here is single-threaded.
"""

from __future__ import annotations

import asyncio
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from parity.driver.recording import ANY_SESSION, Recording


@dataclass(frozen=True)
class Origin:
    """What a trigger counts from: frames at or after `since` (updates and agent requests
    of `session`, or of any session), and `t0` (run seconds) for `ms`."""

    since: int
    t0: float
    session: Any = ANY_SESSION


def _count(after: Mapping[str, Any]) -> int:
    return int(after.get("count", 1))


def _from(after: Mapping[str, Any], origin: Origin) -> float:
    """Where a run-wide count starts: the run's start, or the origin (`since: origin`)."""
    return origin.t0 if after.get("since") == "origin" else float("-inf")


def seen(recording: Recording, after: Mapping[str, Any], origin: Origin) -> tuple[int, int]:
    """How far a counting trigger got: (seen, wanted); (0, 0) for `ms`."""
    if "update" in after:
        kind = after["update"]
        return len(recording.update_seqs(kind, origin.since, origin.session)), _count(after)
    if "agent_request" in after:
        method = str(after["agent_request"])
        found = recording.request_seqs(method, origin.since, origin.session)
        return len(found), _count(after)
    if "llm_request" in after:
        start = _from(after, origin)
        return sum(1 for t in recording.model_turns if t >= start), int(after["llm_request"])
    if "tool_call" in after:
        name, start = str(after["tool_call"]), _from(after, origin)
        return sum(1 for t, n in recording.tool_calls if n == name and t >= start), _count(after)
    if "prompt" in after:
        return int(str(after["prompt"]) in recording.ended_prompts), 1
    return 0, 0


async def fired(recording: Recording, after: Mapping[str, Any], origin: Origin) -> None:
    """Return once `after` has fired."""
    if "ms" in after:
        delay = float(after["ms"]) / 1000 - (recording.now() - origin.t0)
        await asyncio.sleep(max(delay, 0.0))
        return

    def done() -> bool:
        got, wanted = seen(recording, after, origin)
        return wanted > 0 and got >= wanted

    await recording.until(done)


def progress(recording: Recording, after: Mapping[str, Any], origin: Origin) -> str:
    """How far a trigger that never fired got: ` (1 of 2 tool_call update(s) came)`."""
    got, wanted = seen(recording, after, origin)
    if "update" in after:
        return f" ({got} of {wanted} {after['update']} update(s) came)"
    if "agent_request" in after:
        return f" ({got} of {wanted} {after['agent_request']} request(s) came)"
    if "llm_request" in after:
        return f" ({got} of {wanted} model request(s) came)"
    if "tool_call" in after:
        return f" ({got} of {wanted} {after['tool_call']} tool call(s) reached the fake)"
    if "prompt" in after:
        return f" (prompt {after['prompt']} had not ended)"
    return ""


def after_text(after: Any) -> str:
    """A trigger in words: `after update tool_call, count 2`, `after tool_call slow`,
    `after ms 500`, `never`."""
    if after == "never":
        return "never"
    after = after if isinstance(after, Mapping) else {}
    for key in ("update", "agent_request", "tool_call", "llm_request", "prompt", "ms"):
        if key in after:
            text = f"after {key} {after[key]}"
            count = _count(after) if key in ("update", "agent_request", "tool_call") else 1
            since = f", since {after['since']}" if "since" in after else ""
            return text + (f", count {count}" if count != 1 else "") + since
    return "after " + ", ".join(f"{k} {v}" for k, v in sorted(after.items()))


async def hold_answer(recording: Recording, after: Any, msg: Mapping[str, Any], seq: int) -> None:
    """Return once a held answer to the agent's request `msg` (frame `seq`) may be sent:
    its trigger counts from just after that frame, in the request's session when it names
    one. `never` never returns: the run's teardown (or the agent withdrawing the request)
    cancels the answer, and the request stays unanswered. A held answer whose trigger
    never fired is a run problem."""
    if after == "never":
        await asyncio.Event().wait()
    params = msg.get("params")
    sid = params.get("sessionId") if isinstance(params, Mapping) else None
    after = after if isinstance(after, Mapping) else {}
    origin = Origin(seq + 1, recording.now(), ANY_SESSION if sid is None else sid)

    def due() -> bool:
        got, wanted = seen(recording, after, origin)
        return wanted > 0 and got >= wanted

    recording.holds.add(due)
    try:
        await fired(recording, after, origin)
        # Returning now, the answer is recorded and written without yielding to the loop
        # (`Connection._answer`), so `released` can wait for it.
        recording.holds.discard(due)
        recording.tick()
    except asyncio.CancelledError:
        recording.holds.discard(due)
        recording.problem(
            "trigger",
            f"held answer to {msg.get('method')} (frame {seq}) was not sent: its trigger "
            f"`{after_text(after)}` never fired{progress(recording, after, origin)}",
        )
        raise


async def released(recording: Recording) -> None:
    """Return once every held answer whose trigger has fired has been sent: a step that
    fires a trigger (a prompt's end) lets those answers out before the next step starts,
    so the order of the two never depends on the event loop."""
    await recording.until(lambda: not any(due() for due in list(recording.holds)))
