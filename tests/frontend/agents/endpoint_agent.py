"""Asks the fake LLM for an endpoint it does not serve (run problem: unknown-endpoint)."""

from __future__ import annotations

from stub import model_turn, post, serve


def lost(session_id: str, text: str) -> str:
    post("/v9/completions", {"prompt": text})
    return model_turn(session_id, text)


serve(lost)
