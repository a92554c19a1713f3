"""The `ralph` tool's words as native 0.1.0-rc.8 has them (the only native that mounts
it): its definition and system-prompt paragraph, the prompt each fresh round's worker
reads, the checks native's fixed loop makes of a worker's report (with the stack its
workflow engine prints for a failed check), and the texts a run ends with.

Native runs the loop as a fixed workflow script; the model supplies data only
(`objective`, `maxRounds`), so acp-plus runs the same loop in Python
(`ralph_family.py`). Where native's script throws, the model reads the engine's failure
text, `Ralph workflow failed: Error: <message>` and two frames that name the script's
line and column (`workflow:ralph-loop:L:C`): fixed positions of a fixed script, given
here with each check.
"""

from __future__ import annotations

import json
from typing import Any

from acp_plus.core.js_json import js_json, js_number, js_string, js_trim

DESCRIPTION = (
    "Run a foreground fresh-agent Ralph loop toward one immutable objective. Use only when "
    "the direct human explicitly asks for Ralph or fresh-agent iteration. Each round opens a "
    "new child with no parent conversation or prior child session; the shared workspace is "
    "long-term memory, and only a bounded structured report crosses rounds. The call returns "
    "when a worker reports completion or a concrete blocker, or at the round limit. Ordinary "
    "long-running same-session work belongs to goal tools."
)

PARAMETERS: dict[str, Any] = {
    "type": "object",
    "properties": {
        "objective": {
            "type": "string",
            "description": "The immutable completion objective for every fresh Ralph round.",
        },
        "maxRounds": {
            "type": "number",
            "description": (
                "Optional positive safe-integer round cap, bounded by the deployment ceiling."
            ),
        },
    },
    "required": ["objective"],
}

GUIDANCE = (
    "Use the ralph tool ONLY when the direct human explicitly asks for a Ralph loop or "
    "fresh-agent iterative execution. Each Ralph round starts a fresh child with no "
    "conversation seed and uses the shared workspace as durable memory. Completion and "
    "blockers are worker reports, not independent evaluation. Use same-session goal tools "
    "for ordinary long-running objectives, and plain subagents or workflows for bounded "
    "delegation and fan-out.",
)
"""The family's system-prompt paragraph (native's section after the workflow one)."""

MAX_ROUNDS = 256
"""Native's deployment ceiling and default for one call's rounds."""
MAX_HANDOFF_CHARS = 16_384
"""The longest report (compact JSON, UTF-16 units) that may cross to the next round."""
MAX_RESULT_CHARS = 16_384
"""The longest text the parent's model reads of a run (UTF-16 units)."""

CANCELLED = "Error: Ralph workflow was cancelled (workflow run cancelled: workflow signal aborted)"
"""What the model reads of a call cancelled while its rounds ran (native's engine sees
the turn's abort before the tool's own listener does)."""

STATUSES = ("continue", "complete", "blocked")
KEYS = ("status", "summary", "evidence", "nextSteps", "blocker")

REPORT_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "status": {"type": "string", "enum": list(STATUSES)},
        "summary": {"type": "string"},
        "evidence": {"type": "array", "items": {"type": "string"}},
        "nextSteps": {"type": "array", "items": {"type": "string"}},
        "blocker": {"type": "string"},
    },
    "required": list(KEYS),
    "additionalProperties": False,
}
"""The structured output every round's worker must give."""


class RalphError(Exception):
    """A call native refuses or a run that fails: the message is the model's error."""


def _utf16_length(text: str) -> int:
    return len(text.encode("utf-16-le", "surrogatepass")) // 2


def _utf16_head(text: str, units: int) -> str:
    return text.encode("utf-16-le", "surrogatepass")[: units * 2].decode(
        "utf-16-le", "surrogatepass"
    )


def max_rounds(requested: Any, ceiling: int = MAX_ROUNDS) -> int:
    """The call's round cap: the model's (a positive safe integer, at most the
    ceiling) or the ceiling."""
    value = ceiling if requested is None else requested
    safe = isinstance(value, int | float) and not isinstance(value, bool)
    if not safe or not float(value).is_integer() or not 1 <= value <= 2**53 - 1:
        raise RalphError("Ralph maxRounds must be a positive safe integer")
    if value > ceiling:
        raise RalphError(
            f"Ralph maxRounds {js_number(float(value))} exceeds the deployment ceiling {ceiling}"
        )
    return int(value)


def objective(requested: str) -> str:
    """The objective every round reads: trimmed as JavaScript trims, never empty."""
    text = js_trim(requested)
    if not text:
        raise RalphError("Ralph objective must be a non-empty string")
    return text


def round_prompt(goal: str, number: int, rounds: int, previous: dict[str, Any] | None) -> str:
    """What the worker of round `number` is told: no parent conversation, the objective,
    the workspace as memory, and the previous round's report as it was given."""
    prior = "(none \u2014 this is the first round)" if previous is None else js_json(previous)
    return "\n\n".join(
        [
            "You are one fresh worker in a foreground Ralph loop. You receive no parent "
            "conversation and no prior child session. Do not call the ralph tool: this round "
            "already is its worker.",
            f"Immutable objective:\n{goal}",
            f"Ralph round: {number} of {rounds}.",
            "The shared workspace and its current working tree are the long-term memory and "
            "source of truth. Inspect them before acting, preserve existing work, perform "
            "concrete in-scope work, and verify what you change. Treat the previous report "
            "only as a bounded handoff; confirm it against the workspace.",
            f"Previous structured handoff:\n{prior}",
            "Return one report with exact normalized strings. Use status continue with at "
            "least one nextSteps entry while useful work remains; complete only with concrete "
            "evidence and no nextSteps; blocked only when no meaningful progress is possible "
            "without human input or an external-state change. blocker must be empty unless "
            "blocked.",
        ]
    )


def _normalized(value: Any) -> bool:
    return isinstance(value, str) and value != "" and value == js_trim(value)


def _normalized_list(value: Any) -> bool:
    return isinstance(value, list) and all(_normalized(item) for item in value)


def _failed(message: str, line: int, column: int) -> RalphError:
    """Native's engine failure for a check the fixed script threw at `line:column`,
    called from the loop (line 82, column 18)."""
    return RalphError(
        f"Ralph workflow failed: Error: {message}\n"
        f"    at validateReport (workflow:ralph-loop:{line}:{column})\n"
        "    at workflow:ralph-loop:82:18"
    )


def check_report(report: dict[str, Any], max_handoff: int = MAX_HANDOFF_CHARS) -> None:
    """Native's checks of a worker's schema-valid report, in its order; raises the
    run's failure. Every string is trimmed and, `blocker` aside, non-empty; the status
    decides which lists and blocker the report needs."""
    if not _normalized(report.get("summary")):
        raise _failed("Ralph round report summary must be non-empty and normalized", 28, 11)
    if not _normalized_list(report.get("evidence")) or not _normalized_list(
        report.get("nextSteps")
    ):
        raise _failed(
            "Ralph round report evidence and nextSteps must contain only non-empty "
            "normalized strings",
            31,
            11,
        )
    blocker = report.get("blocker")
    if not isinstance(blocker, str) or blocker != js_trim(blocker):
        raise _failed("Ralph round report blocker must be a normalized string", 34, 11)
    status, evidence, steps = report.get("status"), report["evidence"], report["nextSteps"]
    if status == "continue" and (not steps or blocker):
        raise _failed("a continuing Ralph report needs nextSteps and an empty blocker", 39, 15)
    if status == "complete" and (not evidence or steps or blocker):
        raise _failed(
            "a complete Ralph report needs evidence, no nextSteps, and an empty blocker", 44, 15
        )
    if status == "blocked" and not _normalized(blocker):
        raise _failed("a blocked Ralph report needs a concrete blocker", 49, 15)
    size = _utf16_length(js_json(report))
    if size > max_handoff:
        raise _failed(
            f"Ralph round report exceeds maxHandoffChars ({size} > {max_handoff})", 57, 11
        )


def _pretty(report: dict[str, Any]) -> str:
    """`JSON.stringify(report, null, 2)` of a report, its keys in native's order."""
    lines = ["{"]
    for index, key in enumerate(KEYS):
        value = report[key]
        if isinstance(value, list):
            items = ",\n".join(f"    {js_string(item)}" for item in value)
            shown = f"[\n{items}\n  ]" if value else "[]"
        else:
            shown = js_string(value)
        comma = "," if index < len(KEYS) - 1 else ""
        lines.append(f"  {json.dumps(key)}: {shown}{comma}")
    lines.append("}")
    return "\n".join(lines)


TRUNCATION = "\n\u2026 [truncated]"


def bounded(text: str, cap: int = MAX_RESULT_CHARS) -> str:
    """`text` cut to `cap` UTF-16 units, the truncation notice included."""
    if _utf16_length(text) <= cap:
        return text
    notice = len(TRUNCATION)
    if cap <= notice:
        return TRUNCATION[:cap]
    return _utf16_head(text, cap - notice) + TRUNCATION


def render_result(
    status: str, rounds: int, report: dict[str, Any], cap: int = MAX_RESULT_CHARS
) -> str:
    """A finished run as the model reads it: the worker's word, not a certification."""
    count = f"{rounds} round{'' if rounds == 1 else 's'}"
    head = {
        "complete": f"Ralph worker reported completion after {count}.",
        "blocked": f"Ralph worker reported a blocker after {count}.",
        "budget-limited": f"Ralph reached its {count} limit; the worker reported work remaining.",
    }[status]
    return bounded(f"{head}\nFinal report:\n{_pretty(report)}", cap)


def round_failure(rounds: int, last: dict[str, Any] | None, cap: int = MAX_RESULT_CHARS) -> str:
    """A round whose worker gave no report (the call's error, after `Error: `)."""
    header = f"Ralph round {rounds} child failed before producing a structured report."
    if last is None:
        return bounded(f"{header}\nNo previous handoff was available.", cap)
    return bounded(f"{header}\nLast successful handoff:\n{_pretty(last)}", cap)


__all__ = [
    "CANCELLED",
    "DESCRIPTION",
    "GUIDANCE",
    "MAX_ROUNDS",
    "PARAMETERS",
    "REPORT_SCHEMA",
    "RalphError",
    "bounded",
    "check_report",
    "max_rounds",
    "objective",
    "render_result",
    "round_failure",
    "round_prompt",
]
