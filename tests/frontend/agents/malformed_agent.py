"""Sends the fake LLM a model request without `messages` (run problem:
malformed-request)."""

from __future__ import annotations

from stub import model_turn, post, serve


def sloppy(session_id: str, text: str) -> str:
    post("/stream", {"provider": "mock", "model": "mock", "prompt": text})
    return model_turn(session_id, text)


serve(sloppy)
