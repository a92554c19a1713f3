"""Exits with code 3 in the middle of `session/prompt` (run problems: exit, stopped)."""

from __future__ import annotations

import sys

from stub import say, serve


def crash(session_id: str, text: str) -> str:
    say(session_id, "about to fail")
    sys.stderr.write("fatal: the exit agent crashed on purpose\n")
    raise SystemExit(3)


serve(crash)
