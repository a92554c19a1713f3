"""The hook events around a turn, as native 0.1.0-rc.8's two bridges run them: what each
hook reads on stdin and what its merged answer does (the tool events are `core/hooks.py`).

- **SessionStart**, once a session is live (`source` `startup` for `session/new`,
  `resume` when it is brought back), not awaited: its context is queued for the
  session's next step, before the prompt; a slow hook may miss the first one.
- **UserPromptSubmit**, before each step that takes new input (the prompt, steered or
  injected messages): `prompt` is their text joined. A block (exit 2, `decision:
  block`) rejects the step: nothing of it is logged and no model request is made (a
  rejected prompt answers `end_turn`); context goes after the step's input.
- **Stop**, when the turn would end (no tool call, nothing steered): a block steers its
  reason (or `continue: blocked by Stop hook`) and another step runs. Like rc.8,
  nothing caps how often: a hook that always blocks must limit itself.

Codex's bridge also takes a hook's plain stdout (exit 0, not JSON) as context for
SessionStart and UserPromptSubmit, and its payloads carry `model`, `permission_mode`
and `turn_id`. Claude Code's bridge runs first; its reject ends the step before Codex's
hooks run, and its context follows Codex's.
"""

from __future__ import annotations

from typing import Any

from acp_plus.core import hooks as hk
from acp_plus.core.js_json import js_json

SESSION_START = "SessionStart"
PROMPT_SUBMIT = "UserPromptSubmit"
STOP = "Stop"
STOP_BLOCKED = "continue: blocked by Stop hook"


def payload_text(
    dialect: hk.Dialect,
    event: str,
    session: tuple[str, str, str],
    turn: int,
    **fields: Any,
) -> str:
    """The JSON a hook of `event` reads: `session` is (id, transcript path, cwd); Claude
    Code's has a final newline, Codex's none."""
    session_id, transcript, cwd = session
    payload: dict[str, Any] = {
        "session_id": session_id,
        "transcript_path": transcript,
        "cwd": cwd,
        "hook_event_name": event,
    }
    if dialect == hk.CODEX:
        payload |= {"model": "", "permission_mode": "default"}
        if event != SESSION_START:
            payload["turn_id"] = str(turn)
        if event == STOP:
            fields = {**fields, "last_assistant_message": None}
    return js_json(payload | fields) + ("\n" if dialect == hk.CLAUDE else "")


def fields(event: str, value: str) -> dict[str, Any]:
    """The event's own fields: SessionStart's `source`, UserPromptSubmit's `prompt`,
    Stop's `stop_hook_active` (always false: rc.8 has no loop guard)."""
    if event == SESSION_START:
        return {"source": value}
    if event == PROMPT_SUBMIT:
        return {"prompt": value}
    return {"stop_hook_active": False}


def plain_context(output: hk.Output, dialect: hk.Dialect, event: str) -> hk.Output:
    """Codex's SessionStart and UserPromptSubmit: clean plain stdout is context when the
    hook gave none in JSON."""
    if (
        dialect == hk.CODEX
        and event in (SESSION_START, PROMPT_SUBMIT)
        and output.exit_code == 0
        and output.additional_context is None
        and output.stdout
        and not output.stdout.startswith("{")
    ):
        return hk.Output(
            output.exit_code,
            output.stderr,
            output.stdout,
            output.decision,
            output.reason,
            output.stdout,
        )
    return output


def prompt_text(messages: list[dict[str, Any]]) -> str:
    """The text of a step's new input, joined as rc.8 joins its blocks (no separator)."""
    return "".join(
        str(block.get("text", ""))
        for message in messages
        for block in message.get("content", [])
        if block.get("type") == "text"
    )


def stop_text(merged: hk.Merged) -> str | None:
    """What a blocking Stop hook steers, or None to let the turn end."""
    return (merged.reason or STOP_BLOCKED) if merged.decision == "deny" else None


__all__ = [
    "PROMPT_SUBMIT",
    "SESSION_START",
    "STOP",
    "STOP_BLOCKED",
    "fields",
    "payload_text",
    "plain_context",
    "prompt_text",
    "stop_text",
]
