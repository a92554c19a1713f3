"""Writes a line that is not JSON to stdout before its answer (run problem: garbage)."""

from __future__ import annotations

import sys

from stub import model_turn, serve


def noisy(session_id: str, text: str) -> str:
    sys.stdout.write("debug: this line is not JSON\n")
    return model_turn(session_id, text)


serve(noisy)
