"""Session data shaped like a release-day run, built through the report's own functions
(`Outcome`, `Collected`, `compare`, `session_data`): 60 scenarios, six targets (or more),
one failure: `plus`'s snapshot of `FAILING` drifted (a changed stop reason and an extra
update deep in a long view). Everything else passes or skips as on a machine without DSH.
"""

from __future__ import annotations

from typing import Any

from parity.checks.diff import compare
from parity.report.collected import Collected
from parity.report.outcome import Outcome
from parity.report.results import session_data
from parity.view.dump import dump_view

TARGETS = ("native", "codex-acp", "opencode", "plus", "plus-openai", "qwen-code")
FAILING = "protocol/tool-call-approval-denied"
RECORDED = "native unavailable, compared with its recorded snapshot"


def long_view(n_steps: int, stop: str, extra: bool) -> dict[str, Any]:
    """A view long enough that the drift would be far down a plain listing."""
    steps: list[dict[str, Any]] = []
    for i in range(n_steps):
        updates: list[dict[str, Any]] = [
            {"sessionUpdate": "agent_message_chunk", "content": {"type": "text", "text": f"t{i}"}}
        ]
        if extra and i == n_steps - 2:
            updates.append({"sessionUpdate": "plan", "entries": [{"content": "a new plan"}]})
        steps.append(
            {
                "step": i + 1,
                "send": {"method": "session/prompt", "params": {"sessionId": "<session:1>"}},
                "updates": updates,
                "result": {"stopReason": stop if i == n_steps - 2 else "end_turn"},
            }
        )
    return {"steps": steps}


def _names(n: int) -> list[str]:
    groups = ("baseline", "peers", "protocol", "providers")
    names = [f"{groups[i % 4]}/scenario-with-a-long-name-{i:02d}" for i in range(n - 1)]
    return sorted([*names, FAILING])


def release_day(n: int = 60, targets: tuple[str, ...] = TARGETS) -> dict[str, Any]:
    """The session data (see the module doc); `targets[0]` is the reference."""
    reference, others = targets[0], targets[1:]
    collected = Collected(keep_views=True)
    outcomes: list[Outcome] = []
    for name in _names(n):
        collected.scenarios[name] = {
            "name": name,
            "description": f"{name}, as shipped",
            "file": f"scenarios/{name}.yaml",
            "targets": list(targets),
            "reference": reference,
            "compare": "exact",
            "profile": "exact",
            "diverge": [],
            "masks": [],
        }
        outcomes.append(Outcome(name, "target", reference, "skip", reason="DSH not found"))
        for t in others:
            failing = name == FAILING and t == "plus"
            reason = "snapshot differs" if failing else ""
            outcomes.append(Outcome(name, "target", t, "fail" if failing else "pass", "", reason))
            outcomes.append(Outcome(name, "parity", t, "pass", reference, RECORDED))
        view = long_view(30, "end_turn", extra=False)
        collected.view(name, reference, view, live=False)
        for t in others:
            collected.view(name, t, view, live=True)
    old = long_view(30, "end_turn", extra=False)
    new = long_view(30, "max_tokens", extra=True)
    report = compare(old, new, profile="exact", diverge=[], ref_name="snapshot", other_name="plus")
    collected.diff(FAILING, "target", "plus", "snapshot", report)
    collected.view(FAILING, "plus", new, live=True)
    collected.drift(FAILING, "plus", dump_view(old), dump_view(new))
    return session_data(outcomes=outcomes, collected=collected, generated="2026-12-02T08:00:00")
