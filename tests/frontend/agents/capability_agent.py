"""Calls fs/read_text_file although the client did not advertise it (run problem:
capability)."""

from __future__ import annotations

from stub import ask_client, model_turn, serve


def reads(session_id: str, text: str) -> str:
    ask_client("fs/read_text_file", {"sessionId": session_id, "path": "/etc/hostname"})
    return model_turn(session_id, text)


serve(reads)
