"""Never answers `session/prompt` (run problems: timeout, stopped; with a cancel
trigger: trigger; with a short `timeouts.run`: run-timeout). It keeps reading stdin,
so closing it (teardown) ends the process."""

from __future__ import annotations

import sys

from stub import serve


def never(session_id: str, text: str) -> str:
    for _ in sys.stdin:
        pass
    raise SystemExit(0)


serve(never)
