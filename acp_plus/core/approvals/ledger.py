"""The approval ledger: every decision of a session joined to its tool call (pure).

Read from the log alone: `approval/asked` (the question), `approval/decided` (the outcome
and its `source`: `client`, `rule`, `grant`, `reviewer`, `override`, `pre-approval`,
`policy`, or `none` when nothing answered), `approval/grant` (a plan item approved),
and `tool/call` (what was asked about). A decision is joined to the one tool call of its
turn with its call id; when there is none, or more than one, the row says so instead
of guessing (`joined: false` and why).
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from dataclasses import asdict, dataclass
from typing import Any

from acp_plus.core.approvals.grants import grants

ARGUMENTS_SHOWN = 120
"""Characters of a call's arguments a text row shows (the JSON form has them whole)."""


@dataclass(frozen=True)
class Row:
    """One decision, as `/approvals` lists it."""

    n: int
    turn: int
    call_id: str
    outcome: str
    source: str
    question: str | None
    tool: str | None
    arguments: str | None
    joined: bool
    unjoined: str | None
    """Why the decision could not be joined to a tool call (None when it was)."""
    detail: dict[str, Any]
    """What the source added: `rule`, `grant`, `risk`, `reason`, `planItem`."""


_DETAIL_KEYS = ("rule", "grant", "risk", "reason", "suggestion", "planItem")


def rows(events: Iterable[Mapping[str, Any]]) -> list[Row]:
    """The session's decisions, oldest first."""
    listed = list(events)
    calls: dict[tuple[int, str], list[Mapping[str, Any]]] = {}
    for event in listed:
        if event.get("type") == "tool/call":
            key = (int(event.get("turn", 0)), str(event.get("callId", "")))
            calls.setdefault(key, []).append(event)
    questions: dict[tuple[int, str], str] = {}
    reviews: dict[tuple[int, str], str] = {}
    found: list[Row] = []
    for event in listed:
        kind = event.get("type")
        key = (int(event.get("turn", 0)), str(event.get("callId", "")))
        if kind == "approval/asked":
            questions[key] = str(event.get("reason", ""))
            continue
        if kind == "approval/reviewed":
            reviews[key] = _review(event)
            continue
        if kind != "approval/decided":
            continue
        matches = calls.get(key, [])
        call = matches[0] if len(matches) == 1 else None
        unjoined = None
        if not key[1]:
            unjoined = "the decision names no tool call"
        elif not matches:
            unjoined = f"no tool call {key[1]} in turn {key[0]}"
        elif call is None:
            unjoined = f"{len(matches)} tool calls {key[1]} in turn {key[0]}"
        found.append(
            Row(
                n=len(found) + 1,
                turn=key[0],
                call_id=key[1],
                outcome=str(event.get("outcome", "")),
                source=str(event.get("source", "client")),
                question=questions.pop(key, None),
                tool=None if call is None else str(call.get("name", "")),
                arguments=None if call is None else str(call.get("arguments", "")),
                joined=call is not None,
                unjoined=unjoined,
                detail={
                    **{k: event[k] for k in _DETAIL_KEYS if k in event},
                    **({"review": reviews.pop(key)} if key in reviews else {}),
                },
            )
        )
    return found


def _review(event: Mapping[str, Any]) -> str:
    # What the reviewer said before another source decided (a failure, an allow above
    # the risk cap, an uncertain verdict), so the ledger shows why the client was asked.
    if "failure" in event:
        return f"failed: {event['failure']}"
    verdict = event.get("verdict") or {}
    return f"{verdict.get('decision')} at risk {verdict.get('risk')}: {verdict.get('reason')}"


def as_json(events: Iterable[Mapping[str, Any]]) -> str:
    """`/approvals --json`: the decisions and the grants, as one JSON document."""
    listed = list(events)
    document = {
        "decisions": [_camel(asdict(row)) for row in rows(listed)],
        "grants": [_camel(asdict(grant)) for grant in grants(listed)],
    }
    return json.dumps(document, ensure_ascii=False, indent=2)


def _camel(row: dict[str, Any]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for key, value in row.items():
        head, *rest = key.split("_")
        out[head + "".join(part.title() for part in rest)] = value
    return out


def as_text(events: Iterable[Mapping[str, Any]]) -> str:
    """`/approvals`: a line per decision, then the session's grants."""
    listed = list(events)
    found = rows(listed)
    lines = ["Approval decisions (oldest first):" if found else "No approval decisions yet."]
    for row in found:
        if row.joined:
            args = row.arguments or ""
            if len(args) > ARGUMENTS_SHOWN:
                args = args[:ARGUMENTS_SHOWN] + "..."
            what = f"{row.tool} {args}"
        else:
            what = f"{row.call_id or '-'} [not joined: {row.unjoined}]"
        by = row.source
        if "rule" in row.detail:
            by += f" {row.detail['rule']}"
        if "grant" in row.detail:
            by += f" #{row.detail['grant']}"
        if "risk" in row.detail:
            by += f", risk {row.detail['risk']}"
        lines.append(f"  {row.n}. turn {row.turn} {what}: {row.outcome} ({by})")
        if row.question:
            lines.append(f"     asked: {row.question}")
        if "reason" in row.detail and row.source != "rule":
            lines.append(f"     reason: {row.detail['reason']}")
        if "review" in row.detail and row.source != "reviewer":
            lines.append(f"     reviewer: {row.detail['review']}")
    given = grants(listed)
    if given:
        lines.append("Session grants (from approved plans):")
        for grant in given:
            scope = f" on {grant.path}" if grant.path else ""
            lines.append(f"  {grant.n}. {grant.tool}{scope}: {grant.description}")
    return "\n".join(lines)
