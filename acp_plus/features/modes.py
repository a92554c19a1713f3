"""M5 session modes: `default` and `plan` (docs/contract.md §6.3). Pure.

The mode is a durable fact of the session: switching commits a `plan/mode` event
(`{"type": "plan/mode", "mode": ...}`), the projection turns it into
`current_mode_update` (`acp_plus/protocol/updates.py`), and `current_mode` reads it back from
the log, so a resumed or loaded session is in the mode it was left in.

Plan mode changes what the model is told, nothing else: the mode's note rides on the
runtime-context message (`acp_plus/core/context.py`), which the agent re-sends whenever
its text changes, so the model learns of a switch at the next prompt. The sandbox and
the approval chain are never touched (§6.3: switching never changes them).

Modes are offered twice: the ACP `modes` state (`session/set_mode`) and a `configOptions`
entry with category `mode`, because ACP clients that see config options use them
instead of `modes` (Zed hides its mode selector then); docs/contract-notes.md, "Modes".
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from acp_plus.core.events import MODE_SET
from acp_plus.wire.errors import RpcError, invalid_params

DEFAULT = "default"
PLAN = "plan"
CONFIG_ID = "mode"


@dataclass(frozen=True)
class Mode:
    """One session mode as ACP lists it."""

    id: str
    name: str
    description: str


MODES: tuple[Mode, ...] = (
    Mode(DEFAULT, "Default", "Carry out the task directly."),
    Mode(PLAN, "Plan", "Research and present a plan before making changes."),
)

PLAN_NOTE = (
    "Session mode: plan. Research the task and present a plan before making changes: read "
    "what you need, then describe the changes you propose and wait until the user approves "
    "them or switches the session back to the default mode. The mode changes nothing about "
    "the file policy or the approvals above."
)
DEFAULT_NOTE = (
    "Session mode: default. Plan mode is off: carry out the task directly, making the "
    "changes it needs."
)
_NOTES = (PLAN_NOTE, DEFAULT_NOTE)


def check_mode(mode_id: Any) -> str:
    """`mode_id` when it names a mode, else -32602 `unknown session mode: <id>`."""
    if isinstance(mode_id, str) and any(m.id == mode_id for m in MODES):
        return mode_id
    raise unknown_mode(mode_id)


def unknown_mode(mode_id: Any) -> RpcError:
    """The contract's refusal of a mode id (§6.3)."""
    return invalid_params(f"unknown session mode: {mode_id}")


def mode_event(mode: str) -> dict[str, Any]:
    """The event a switch commits (uncommitted form)."""
    return {"type": MODE_SET, "mode": mode}


def current_mode(events: Iterable[Mapping[str, Any]]) -> str:
    """The mode the log leaves the session in: the last `plan/mode`, else `default`."""
    mode = DEFAULT
    for event in events:
        if event.get("type") == MODE_SET and event.get("mode") in (DEFAULT, PLAN):
            mode = str(event["mode"])
    return mode


def ever_switched(events: Iterable[Mapping[str, Any]]) -> bool:
    """Whether the session ever changed mode (then the model is told the mode even in
    `default`, so leaving plan mode is explicit; a session that never switched keeps
    native's runtime context byte for byte)."""
    return any(event.get("type") == MODE_SET for event in events)


def modes_state(current: str) -> dict[str, Any]:
    """The `modes` member of a new/resume/load answer."""
    return {
        "currentModeId": current,
        "availableModes": [
            {"id": m.id, "name": m.name, "description": m.description} for m in MODES
        ],
    }


def mode_option(current: str) -> dict[str, Any]:
    """The `configOptions` entry that offers the same modes as a select."""
    return {
        "id": CONFIG_ID,
        "name": "Mode",
        "category": "mode",
        "type": "select",
        "currentValue": current,
        "options": [{"value": m.id, "name": m.name, "description": m.description} for m in MODES],
    }


def _without_note(runtime: str | None) -> str | None:
    if runtime is None or runtime in _NOTES:
        return None
    for note in _NOTES:
        if runtime.endswith("\n\n" + note):
            return runtime[: -len(note) - 2]
    return runtime


def runtime_for_mode(runtime: str | None, mode: str, *, switched: bool) -> str | None:
    """The runtime-context text for `mode`, from the text the agent holds now (which may
    carry an earlier mode's note). Plan mode appends `PLAN_NOTE`; the default mode appends
    `DEFAULT_NOTE` only once the session has switched (`switched`), so the model hears
    that plan mode ended. None (runtime context off and nothing to say) stays None."""
    base = _without_note(runtime)
    note = PLAN_NOTE if mode == PLAN else DEFAULT_NOTE if switched else None
    if note is None:
        return base
    return note if base is None else f"{base}\n\n{note}"
