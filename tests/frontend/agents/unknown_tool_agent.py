"""Calls a fixture tool the scenario does not declare (run problem: unknown-tool)."""

from __future__ import annotations

from stub import model_turn, post, serve


def guess(session_id: str, text: str) -> str:
    post("/tools/call", {"name": "ghost_tool", "callId": "guess-1", "arguments": {}})
    return model_turn(session_id, text)


serve(guess)
