"""Session grants from an approved plan (pure): what they are, and whether one answers a question.

The model may ask up front for a plan of actions (`request_approval_plan`,
`features/approval_plan.py`); each item the user approves is committed as an
`approval/grant` event. A grant answers a later approval question for a matching call
with `allowed-once` (source `grant`), without asking anyone. Grants are read from the
log, so a resumed or loaded session keeps them. The guard's deny rules still come
first: a grant can never allow what a rule denies.
"""

from __future__ import annotations

import fnmatch
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from acp_plus.core.approvals.rules import path_arguments
from acp_plus.core.sandbox import resolve_path

GRANT = "approval/grant"


@dataclass(frozen=True)
class Grant:
    """One approved plan item: calls of `tool` (a glob), on `path` (a glob) when given."""

    n: int
    tool: str
    path: str | None
    description: str
    call_id: str
    """The plan call that asked for it."""


def plan_items(args: Any) -> list[dict[str, Any]] | str:
    """The plan's items, each `{tool, path?, description}`, or why the arguments are wrong."""
    items = args.get("items") if isinstance(args, dict) else None
    if not isinstance(items, list) or not items:
        return "items must be a non-empty list of {tool, path?, description}"
    for i, item in enumerate(items, 1):
        if not isinstance(item, dict):
            return f"item {i} must be an object"
        for key in ("tool", "description"):
            if not isinstance(item.get(key), str) or not item[key].strip():
                return f"item {i}: {key} must be a non-empty string"
        if "path" in item and not isinstance(item["path"], str):
            return f"item {i}: path must be a string"
    return items


def grant_event(n: int, call_id: str, item: Mapping[str, Any]) -> dict[str, Any]:
    """The event that makes an approved item a session grant."""
    event = {"type": GRANT, "n": n, "callId": call_id, "tool": item["tool"]}
    if item.get("path"):
        event["path"] = item["path"]
    event["description"] = item["description"]
    return event


def grants(events: Iterable[Mapping[str, Any]]) -> list[Grant]:
    """The session's grants, in the order they were given."""
    return [
        Grant(
            int(e["n"]),
            str(e["tool"]),
            e.get("path"),
            str(e.get("description", "")),
            str(e.get("callId", "")),
        )
        for e in events
        if e.get("type") == GRANT
    ]


def matching(found: Iterable[Grant], tool: str, args: Any, cwd: Path) -> Grant | None:
    """The first grant covering a call of `tool` with `args`, or None.

    A grant with a path covers a call only when every path argument of the call matches
    it (as given, or workspace-relative); a call without path arguments is not covered."""
    for grant in found:
        if not fnmatch.fnmatchcase(tool, grant.tool):
            continue
        if grant.path is None:
            return grant
        paths = path_arguments(args)
        if paths and all(_covers(grant.path, p, cwd) for p in paths):
            return grant
    return None


def _covers(pattern: str, given: str, cwd: Path) -> bool:
    # Only resolved forms: the path as given (`docs/../.env`) could match `docs/*` while
    # naming a file outside it, and a grant must never cover more than it says.
    absolute = resolve_path(given, cwd)
    root = resolve_path(".", cwd)
    forms = [str(absolute)]
    if root in absolute.parents:
        forms.append(absolute.relative_to(root).as_posix())
    return any(fnmatch.fnmatchcase(form, pattern) for form in forms)
