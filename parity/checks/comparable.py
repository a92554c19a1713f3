"""Two normalized views as the parity diff compares them (`parity.checks.differences`).

What differs between two runs only by how the harness ran or answered them is made
alike here, and nothing else: model requests in the fake's canonical form when the two
sides speak different dialects, and the seconds of a timeout in a step's problem note.
Every path a difference prints is a path in these views. Pure.
"""

from __future__ import annotations

import re
from typing import Any


def comparable_views(
    ref: dict[str, Any], other: dict[str, Any]
) -> tuple[dict[str, Any], dict[str, Any]]:
    """The two views as compared: as they are, except `model`, which is what
    `comparable_models` makes of the two sides, and the steps' problem notes, whose
    timeouts are the harness's (`comparable_steps`). Every path a difference prints is a
    path in these views, so `diverge` rules are applied to them (`parity.checks.diff`)."""
    mine, theirs = ref.get("model", []), other.get("model", [])
    ref_model, other_model = comparable_models(mine, theirs)
    ref = (
        comparable_steps(ref)
        if ref_model is mine
        else {**comparable_steps(ref), "model": ref_model}
    )
    if other_model is theirs:
        return ref, comparable_steps(other)
    return ref, {**comparable_steps(other), "model": other_model}


_SECONDS = re.compile(r"(\(|within )\d+(?:\.\d+)? s\b")
"""A timeout's seconds in a problem text: `(6 s)`, `within 20 s`."""


def comparable_steps(view: dict[str, Any]) -> dict[str, Any]:
    """`view` with the seconds of every timeout in its steps' problem notes as `<timeout>`:
    how long the harness waited is each target's tolerance (the larger of the scenario's
    and its table's timeouts, docs/scenarios.md), not what the agent did, so two targets
    that time out alike compare equal (parity explore found plus's 6 s against
    plus-openai's 20 s). The snapshots keep the seconds."""
    steps = view.get("steps")
    if not isinstance(steps, list) or not any(_timed(step) for step in steps):
        return view
    return {**view, "steps": [_untimed(step) if _timed(step) else step for step in steps]}


def _timed(step: Any) -> bool:
    notes = step.get("notes") if isinstance(step, dict) else None
    return isinstance(notes, list) and any(
        isinstance(n, dict) and isinstance(n.get("problem"), str) and _SECONDS.search(n["problem"])
        for n in notes
    )


def _untimed(step: dict[str, Any]) -> dict[str, Any]:
    notes = [
        {**n, "problem": _SECONDS.sub(r"\1<timeout> s", n["problem"])}
        if isinstance(n, dict) and isinstance(n.get("problem"), str)
        else n
        for n in step["notes"]
    ]
    return {**step, "notes": notes}


def comparable_models(ref: list[Any], other: list[Any]) -> tuple[list[Any], list[Any]]:
    """The two model views as compared: as recorded when both sides speak the same
    dialects; otherwise each side's model calls in the fake's canonical form (what the
    model was shown: messages, tools, system, model, effort), so agents on different
    provider dialects compare what their model saw instead of differing on every path.
    Non-call requests (catalog, tool calls, model lists) drop out, and so does a scripted
    failure's HTTP status, the dialect's rendering (parity-stream streams `finish{error}`
    with 200); a refusal's status (with its `problem`) stays."""
    from parity.fakellm.dialects import PARITY_STREAM, canonical_request, dialect_of

    def dialects(model: list[Any]) -> set[str]:
        # A parity-stream agent fetches `/catalog` before any call: that speaks its
        # dialect too, so a run without a model call still shows which route it took.
        catalog = {"/catalog": PARITY_STREAM.name}
        return {
            d
            for entry in model
            if isinstance(entry, dict)
            and (d := dialect_of(p := str(entry.get("path", ""))) or catalog.get(p))
        }

    mine, theirs = dialects(ref), dialects(other)
    if mine == theirs:
        return ref, other

    def calls(model: list[Any]) -> list[Any]:
        out = []
        for entry in (e for e in model if isinstance(e, dict)):
            canonical = canonical_request(str(entry.get("path", "")), entry.get("body"))
            drop = {"path", "body", "method"} | (set() if "problem" in entry else {"status"})
            if canonical is not None:
                out.append({"canonical": canonical} | {k: entry[k] for k in entry if k not in drop})
        return out

    return calls(ref), calls(other)
